"""Property tests for the answer parsers: any string is handled, results keep their invariants."""

from __future__ import annotations

import json
import math

from hypothesis import example, given, settings
from hypothesis import strategies as st

from bspatial.scoring import choice
from bspatial.scoring.choice import (
    LETTERS,
    PARSED_REASONS,
    UNPARSEABLE_REASONS,
    ParseStatus,
    parse_choice,
    parse_choices,
)
from bspatial.scoring.point import POINT_SCALE, PointStatus, parse_point

# Fast by default; deadline=None because the first examples pay for regex and cache warm-up.
PROPERTY = settings(max_examples=250, deadline=None)

# Pieces real replies are made of, so that generated text often hits the parsers' branches.
FRAGMENTS = [
    "A", "B", "C", "D", "E", "a", "c", "I", " ", "\n", ".", ",", ";", ":", "(", ")", "[", "]", "{", "}", "<", ">",
    '"', "'", "*", "**", "`", "_", "/", "-", "%", "=", "0", "1", "7", "0.5", "512", "1000", "1e999", "-10", "NaN",
    "answer", "Answer: ", "The answer is ", "I choose ", "option ", " or ", " and ", " because ", "front", "left",
    "front-left", "<answer>", "</answer>", "\\boxed{", "<think>", "</think>", '"x": ', '"y": ', '"results"',
    '"target"', '"point_2d"', '"point"', '"bbox_2d"', "<point x=\"", "\" y=\"", "<points x1=", "答案是", "정답은",
    "です", "null", "true", "cannot", "Sorry",
]  # fmt: skip
fragment_text = st.lists(st.sampled_from(FRAGMENTS), max_size=24).map("".join)
any_text = st.one_of(st.none(), st.text(max_size=300), fragment_text)
option_sets = st.one_of(
    st.none(),
    st.just(["above", "under", "front", "behind"]),
    st.just(["left", "front-left", "right", "front-right"]),
    st.lists(st.text(min_size=1, max_size=12).filter(str.strip), min_size=4, max_size=4),
)
# Texts the fast path may take after a label: words of letters and digits.
plain_option = st.from_regex(r"[a-z][a-z0-9]{1,8}( [a-z0-9]{2,6})?", fullmatch=True)


@PROPERTY
@given(text=any_text, options=option_sets)
def test_parse_choice_handles_any_text(text, options):
    parse = parse_choice(text, options)
    assert (parse.letter is not None) == (parse.status is ParseStatus.PARSED)
    if parse.letter is not None:
        assert parse.letter in LETTERS and parse.reason in PARSED_REASONS
    else:
        assert parse.reason in UNPARSEABLE_REASONS


@PROPERTY
@given(texts=st.lists(any_text, max_size=8), options=option_sets)
def test_batch_equals_single(texts, options):
    per_item = [options] * len(texts)
    assert parse_choices(texts, per_item) == [parse_choice(t, options) for t in texts]


@PROPERTY
@given(text=st.one_of(st.text(max_size=200), fragment_text), options=option_sets)
@example(text="q\x1f", options=None)  # found by hypothesis: \s also matches \x1f
@example(text="The cup.\r\nC\r\n", options=None)  # found by hypothesis: \r\n line breaks
def test_fast_path_never_disagrees_with_the_cascade(text, options):
    choices = choice._choices(LETTERS, None if options is None else tuple(options))
    fast = choice._fast_path(text, choices)
    if fast is not None:
        assert fast == choice._cascade(text, choices)


@PROPERTY
@given(
    options=st.lists(plain_option, min_size=4, max_size=4, unique=True),
    index=st.integers(0, 3),
    form=st.sampled_from(["{L}.{t}", "{L}. {t}", "({L}) {t}", "{l}. {t}", "Answer: {L}. {t}", "{t}", "**{L}**"]),
    prefix=st.sampled_from(["", "<think>A or B? Maybe (D).</think>\n", "  "]),
)
def test_prompt_format_round_trip(options, index, form, prefix):
    # The options are distinct lower-case words without punctuation, so no two read alike: every form names one.
    letter = LETTERS[index]
    text = prefix + form.format(L=letter, l=letter.lower(), t=options[index])
    assert parse_choice(text, options).letter == letter


@PROPERTY
@given(text=any_text)
def test_parse_point_handles_any_text(text):
    parse = parse_point(text)
    if parse.status is PointStatus.PARSED:
        assert parse.xy is not None and parse.raw_xy is not None
        assert all(0 <= v <= POINT_SCALE for v in parse.xy)
        pixels = parse.to_pixels(640, 480)
        assert pixels is not None and 0 <= pixels[0] <= 640 and 0 <= pixels[1] <= 480
    elif parse.status is PointStatus.OUT_OF_RANGE:
        assert parse.xy is None and parse.raw_xy is not None and parse.reason == "out_of_range"
    else:
        assert parse.xy is None and parse.raw_xy is None


@PROPERTY
@given(
    x=st.integers(0, POINT_SCALE),
    y=st.integers(0, POINT_SCALE),
    before=st.text(st.characters(blacklist_characters="{}[]()<>0123456789"), max_size=60),
    fenced=st.booleans(),
)
def test_prompt_json_round_trip(x, y, before, fenced):
    answer = json.dumps({"results": {"target": {"x": x, "y": y}}})
    if fenced:
        answer = f"```json\n{answer}\n```"
    parse = parse_point(f"<think>{before}</think>{before}\n{answer}")
    assert (parse.status, parse.xy, parse.reason) == (PointStatus.PARSED, (float(x), float(y)), "results_json")


@PROPERTY
@given(x=st.floats(-5e3, 5e3, allow_nan=False), y=st.floats(-5e3, 5e3, allow_nan=False))
def test_range_policy(x, y):
    parse = parse_point(json.dumps({"results": {"target": {"x": x, "y": y}}}))
    if 0 <= x <= 1 and 0 <= y <= 1:
        assert parse.reason == "normalized_float" and parse.xy == (x * POINT_SCALE, y * POINT_SCALE)
    elif 0 <= x <= POINT_SCALE and 0 <= y <= POINT_SCALE:
        assert parse.xy == (x, y) and parse.status is PointStatus.PARSED
    else:
        assert parse.status is PointStatus.OUT_OF_RANGE and parse.raw_xy == (x, y)
    assert not (parse.xy and any(math.isnan(v) for v in parse.xy))
