"""Tests for bspatial.scoring.choice: the four-option answer parser (paper Appendix 15.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bspatial.scoring import choice
from bspatial.scoring.choice import (
    LETTERS,
    PARSED_REASONS,
    UNPARSEABLE_REASONS,
    ChoiceParse,
    ParseStatus,
    parse_choice,
    parse_choices,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "peer_parser_cases.json"
PEER_CASES = json.loads(FIXTURE.read_text(encoding="utf-8"))["mcq"]
# VLMEvalKit's "Z" is its no-answer sentinel: our UNPARSEABLE.
PEER_NO_ANSWER = "Z"

DIRECTIONS = ["above", "under", "front", "behind"]  # Appendix 15.1's own example
CORNERS = ["left", "front-left", "right", "front-right"]  # options that contain one another
OBJECTS = ["the bowl", "the mug", "the plate", "the cutting board"]

# (reply, options, expected letter, expected reason): hand-written, in the shapes real models emit.
REAL_WORLD = [
    # The format the prompt asks for, and its near misses.
    ("C.front", DIRECTIONS, "C", "letter"),
    ("C. front", DIRECTIONS, "C", "letter"),
    ("C. Front.", DIRECTIONS, "C", "letter"),
    ("c. front", DIRECTIONS, "C", "letter"),
    ("(C) front", DIRECTIONS, "C", "letter"),
    ("C) front", DIRECTIONS, "C", "letter"),
    ("C: front", DIRECTIONS, "C", "letter"),
    ("C - front", DIRECTIONS, "C", "letter"),
    ("  C.front\n", DIRECTIONS, "C", "letter"),
    ("C", None, "C", "letter"),
    ("c", None, "C", "letter"),
    ("C.", None, "C", "letter"),
    ("(C)", None, "C", "letter"),
    ("C)", None, "C", "letter"),
    ("[C]", None, "C", "letter"),
    ("'C'", None, "C", "letter"),
    ("Option C", None, "C", "letter"),
    ("C is correct.", None, "C", "letter"),
    # Statements.
    ("Answer: C", None, "C", "answer_statement"),
    ("answer: c", None, "C", "answer_statement"),
    ("The answer is C", None, "C", "answer_statement"),
    ("The answer is: (C) front.", DIRECTIONS, "C", "answer_statement"),
    ("the correct option is (c)", None, "C", "answer_statement"),
    ("My answer: C", None, "C", "answer_statement"),
    ("**Answer:** C", None, "C", "answer_statement"),
    ("Answer: C, because the mug is farther away.", DIRECTIONS, "C", "answer_statement"),
    ("Neither A nor B is correct, the answer is D.", None, "D", "answer_statement"),
    ("I pick B and stop.", None, "B", "answer_statement"),
    ("答案是C。", None, "C", "answer_statement"),
    # Reasoning before the final answer.
    (
        "Looking at the image, the mug is farther from the camera than the plate, so it is in front.\n\n"
        "Answer: C. front",
        DIRECTIONS,
        "C",
        "answer_statement",
    ),
    ("The mug appears deeper in the scene. Therefore, the answer is C.front", DIRECTIONS, "C", "answer_statement"),
    ("<think>Is it A? The cup is left... no, B.</think>\nC. front", DIRECTIONS, "C", "letter"),
    ("<think>maybe the answer is (A)?</think> The answer is (c)", None, "C", "answer_statement"),
    ("I first thought the answer is A. Looking again, the answer is D.", None, "D", "answer_statement"),
    ("C. front\nExplanation: the mug is farther from the camera.", DIRECTIONS, "C", "letter"),
    ("Based on the image, C", None, "C", "letter"),
    ("The mug is farther from the camera.\r\nC\r\n", None, "C", "letter"),  # Windows line breaks
    ("Answer:\r\nC. front\r\n", DIRECTIONS, "C", "answer_statement"),
    # Markdown and containers.
    ("**C**", None, "C", "letter"),
    ("*C. front*", DIRECTIONS, "C", "letter"),
    ("`C`", None, "C", "letter"),
    ("### Final Answer\n\\boxed{C}", None, "C", "container"),
    ("<answer>C. front</answer>", DIRECTIONS, "C", "container"),
    ('```json\n{"answer": "C"}\n```', None, "C", "container"),
    # Option text alone; options that contain one another.
    ("front", DIRECTIONS, "C", "option_text"),
    ("Front.", DIRECTIONS, "C", "option_text"),
    ("The answer is front.", DIRECTIONS, "C", "option_text"),
    ("left", CORNERS, "A", "option_text"),
    ("front-left", CORNERS, "B", "option_text"),
    ("Front left", CORNERS, "B", "option_text"),
    ("**front-right**", CORNERS, "D", "option_text"),
    ("the mug", OBJECTS, "B", "option_text"),
    ("mug", OBJECTS, "B", "option_text"),
    # Never guessed.
    ("A cup is on the left", None, None, "no_answer"),
    ("A cup is on the left of the plate.", DIRECTIONS, None, "no_answer"),
    ("The mug is in front of the plate.", DIRECTIONS, None, "no_answer"),  # option text in prose
    ("The mug is not in front.", DIRECTIONS, None, "no_answer"),
    ("It is more to the left than front-left.", CORNERS, None, "no_answer"),
    ("I think it's C.", None, None, "no_answer"),  # hedged, no answer statement: not guessed
    ("The cup is to the left of the plate. A", None, None, "no_answer"),  # may be a cut-off article
    ("A or B", None, None, "ambiguous"),
    ("A and C are both plausible.", None, None, "ambiguous"),
    ("The answer is B or C.", None, None, "ambiguous"),
    ("A. above\nB. under\nC. front\nD. behind", DIRECTIONS, None, "ambiguous"),
    ("A: C", None, None, "ambiguous"),
    ("C. behind", DIRECTIONS, None, "conflict"),  # letter C, text of option D
    ("Answer: C. behind", DIRECTIONS, None, "conflict"),
    ("E", None, None, "invalid_letter"),
    ("The answer is E.", None, None, "invalid_letter"),
    ("I cannot determine the answer from the image.", None, None, "refusal"),
    ("Sorry, I can't tell from this view.", DIRECTIONS, None, "refusal"),
    ("The answer is B.</answer>", None, None, "malformed_container"),
    ("\\boxed{B", None, None, "malformed_container"),
    ("<think>The mug is left of", None, None, "unfinished_reasoning"),
    ("<think>The mug is farther.</think>", None, None, "empty"),
    ("", None, None, "empty"),
    ("   \n", None, None, "empty"),
    (None, None, None, "empty"),
    ("2", DIRECTIONS, None, "no_answer"),  # an index is not a letter
]


@pytest.mark.parametrize(("text", "options", "letter", "reason"), REAL_WORLD)
def test_real_world_replies(text, options, letter, reason):
    parse = parse_choice(text, options)
    assert (parse.letter, parse.reason) == (letter, reason)
    assert parse.status is (ParseStatus.PARSED if letter else ParseStatus.UNPARSEABLE)


@pytest.mark.parametrize("case", PEER_CASES, ids=[c["id"] for c in PEER_CASES])
def test_peer_cases(case):
    letters = tuple(case["choices"]) if case["choices"] else LETTERS
    expected = case["our_expected"] if "our_expected" in case else case["source_expected"]
    if expected == PEER_NO_ANSWER:
        expected = None
    assert parse_choice(case["text"], case["options"], letters).letter == expected, case.get("why", case["source"])


def test_peer_differences_are_documented():
    differing = [c for c in PEER_CASES if "our_expected" in c]
    assert differing, "the fixture records where we differ on purpose"
    for case in differing:
        assert case["why"] and case["source"] and case["our_expected"] != case["source_expected"]


def test_reasons_are_from_the_documented_sets():
    for text, options, _, _ in REAL_WORLD:
        parse = parse_choice(text, options)
        assert parse.reason in (PARSED_REASONS if parse.letter else UNPARSEABLE_REASONS)


def test_batch_matches_single_and_dedupes():
    texts = [t for t, *_ in REAL_WORLD]
    options = [o for _, o, *_ in REAL_WORLD]
    batch = parse_choices(texts * 2, options * 2)
    assert batch[: len(texts)] == [parse_choice(t, o) for t, o in zip(texts, options)]
    assert all(a is b for a, b in zip(batch[: len(texts)], batch[len(texts) :]))
    assert [p.letter for p in parse_choices(["C", "b. under", None])] == ["C", "B", None]


def test_batch_accepts_tuples_and_custom_letters():
    parses = parse_choices(["B", "No"], [("No", "Yes"), ("No", "Yes")], letters=("A", "B"))
    assert [p.letter for p in parses] == ["B", "A"]


def test_custom_letter_count():
    letters = tuple("ABCDEFGHIJKLMN")
    assert parse_choice("The correct answer is (N).", letters=letters).letter == "N"
    assert parse_choice("N", letters=LETTERS).reason == "invalid_letter"


def test_results_are_frozen_and_shared():
    a, b = parse_choice("C"), parse_choice(" (C) ")
    assert a == ChoiceParse("C", ParseStatus.PARSED, "letter") and a is b
    with pytest.raises(AttributeError):
        a.letter = "D"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"options": ["above", "under", "front"]}, "options must hold one text per letter"),
        ({"options": "front"}, "options must be a sequence of strings, got 'front'"),
        ({"options": ["above", "under", "", "behind"]}, "options must be non-empty strings"),
        ({"options": ["above", "under", 3, "behind"]}, "options must be non-empty strings"),
        ({"options": ["above", "under", ["front"], "behind"]}, "options must be a sequence of strings"),
        ({"letters": ("A", "B", "B", "C")}, "letters must be at least two distinct"),
        ({"letters": ("a", "b", "c", "d")}, "'a'"),
        ({"letters": "ABCD"}, "letters must be a sequence of strings, got 'ABCD'"),
        ({"options": ["No", "Yes"]}, "got 2: ['No', 'Yes']"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(")):
        parse_choice("C", **kwargs)


def test_batch_errors_name_the_entry():
    with pytest.raises(ValueError, match=r"options\[1\]: options must hold one text per letter"):
        parse_choices(["C", "C"], [DIRECTIONS, ["a", "b"]])
    with pytest.raises(ValueError, match="options has 1 entries but texts has 2"):
        parse_choices(["C", "D"], [DIRECTIONS])


@pytest.mark.parametrize("bad", [3, b"C", ["C"]])
def test_non_string_text_is_a_type_error(bad):
    with pytest.raises(TypeError, match="text must be a string or None"):
        parse_choice(bad)
    with pytest.raises(TypeError, match="text must be a string or None"):
        parse_choices([bad])


CLEAN_FORMS = ["{L}", "{l}", "{L}.", "({L})", "{L})", "[{L}]", "{L}:", "{L}.{t}", "{L}. {t}", "({L}) {t}", "{l}. {t}",
               "{L}: {t}", "{L}) {t}", "{L}. {t}.", "The answer is {L}.", "Answer: {L}", "Answer: {L}. {t}",
               "The answer is ({l}) {t}", "{t}", "{t}.", " {L}. {t} \n"]  # fmt: skip
OPTION_SETS = [DIRECTIONS, CORNERS, OBJECTS, ["1x1", "2x3", "layer 2", "3x1"], ["Front", "front", "back", "left"],
               ["a", "b", "answer is D", "C or D"], ["it is C", "(B)", "A. B", "no"]]  # fmt: skip


@pytest.mark.parametrize("options", OPTION_SETS, ids=[",".join(o) for o in OPTION_SETS])
def test_fast_path_agrees_with_the_cascade(options):
    choices = choice._choices(LETTERS, tuple(options))
    fired = 0
    for letter, option in zip(LETTERS, options):
        for form in CLEAN_FORMS:
            text = form.format(L=letter, l=letter.lower(), t=option)
            fast = choice._fast_path(text, choices)
            if fast is not None:
                fired += 1
                assert fast == choice._cascade(text, choices), text
    assert fired > 0   # the comparison above ran: the fast path answered some clean form


def test_only_a_leading_article_is_ignored_when_matching_option_text():
    options = ("banana split", "apple pie", "the cake", "an orange")
    assert parse_choice("cake", options).letter == "C" and parse_choice("orange", options).letter == "D"
    # An "a " inside the option is part of it: "banansplit" is not "banana split" with its article dropped.
    assert parse_choice("banansplit", options).letter is None
