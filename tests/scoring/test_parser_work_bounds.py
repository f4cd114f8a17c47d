"""Long and adversarial replies: both answer parsers finish 1 MB inputs in linear work and never raise.

The bound is on work, not on a wall clock. A child process parses every 1 MB adversarial reply below
under a CPU-time limit (:data:`CPU_BOUND_S`, ``RLIMIT_CPU``, so other processes on a busy machine do
not count). Linear parsing of the whole set takes seconds of CPU; a parser that is quadratic on any
one family (a regex that rescans a long span from each of many starting points, or splits a run of
spaces between two ``\\s*``) needs on the order of 1e12 steps on 1 MB: hours. So a quadratic parser
cannot pass on a fast machine, and a linear one does not fail on a slow one. Each family marked
"before the fix" was quadratic or worse in the parsers of commit e00d4df.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bspatial.scoring.choice import LETTERS, PARSED_REASONS, UNPARSEABLE_REASONS, ParseStatus, parse_choice
from bspatial.scoring.point import POINT_SCALE, PointStatus, parse_point

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

SIZE = 1_000_000  # characters per adversarial reply (the size the tester measured: > 120 s before)
CPU_BOUND_S = 60  # CPU seconds for the whole set; linear parsing takes 5-15, quadratic takes hours
WALL_GUARD_S = 1200  # only so that a broken child cannot hang the suite; the CPU limit decides
OPTIONS = ["front", "back", "left", "right"]
SPACES, NEWLINES, TABS = " " * SIZE, "\n" * SIZE, "\t" * SIZE


def _repeat(unit: str) -> str:
    return unit * (SIZE // len(unit))


def _random_printable(seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("ABCDabcd(){}[]<>\"'.,:;=%x y 0123456789\n\t") for _ in range(SIZE))


def _random_bytes(seed: int) -> str:
    # Arbitrary bytes as a model server might pass them on: every code point 0-255 occurs.
    return random.Random(seed).randbytes(SIZE).decode("latin-1")


ADVERSARIAL: dict[str, Callable[[], str]] = {
    # Before the fix (point.py): Molmo tags that never close rescanned the rest of the reply from every "<point".
    "repeated <point": lambda: _repeat("<point "),
    "repeated <points": lambda: _repeat("<points x1="),
    "unclosed attribute in a tag": lambda: '<point x="' + SPACES + "1>",
    # Before the fix (point.py): "x=1 <spaces> ..." and a bare pair followed by spaces split the run between two \s*.
    "x= then spaces": lambda: "x=1" + SPACES + "q",
    "x= repeated": lambda: _repeat("x=1 "),
    "bare pair then spaces": lambda: "1,2" + SPACES + "x",
    "percent then spaces": lambda: "(1" + SPACES + "%",
    # Brackets: bounded by the literal caps, must stay so.
    "repeated (": lambda: "(" * SIZE,
    "repeated [": lambda: "[" * SIZE,
    "repeated {": lambda: "{" * SIZE,
    "deep nesting": lambda: _repeat("[{(") + _repeat(")}]"),
    "open list of numbers": lambda: "[" + _repeat("1, ["),
    # Before the fix (choice.py): the fast path's "letter, text, optional full stop" forms were cubic in spaces.
    "label then spaces": lambda: "A. x" + SPACES + "y",
    "statement then spaces": lambda: "answer is A x" + SPACES + "y",
    "line label then spaces": lambda: "A:" + SPACES[: SIZE // 2] + "C" + SPACES[: SIZE // 2] + "x",
    "alternative then spaces": lambda: "answer: A" + SPACES[: SIZE // 2] + "or" + SPACES[: SIZE // 2] + "x",
    "anchor then spaces": lambda: "answer:" + SPACES + "1",
    "prefixed letter then spaces": lambda: "answer" + SPACES + "x",
    "open container then spaces": lambda: "<answer>A" + SPACES + "x",
    "tabs after a label": lambda: "(A)" + TABS + "x=1",
    "repeated A.": lambda: _repeat("A."),
    "repeated A. lines": lambda: _repeat("A.\n"),
    "repeated answer is": lambda: _repeat("the answer is "),
    "repeated <answer>": lambda: _repeat("<answer>"),
    "repeated boxed": lambda: _repeat("\\boxed{"),
    "repeated underscores": lambda: _repeat("_a"),
    # The answer-corpus forms (issue #21 item 3): other-language and rejection anchors, letter assertions,
    # hedges and the answer-line rule must stay linear too.
    "I then spaces": lambda: "x I" + SPACES + "say",
    "not A then spaces": lambda: "not A" + SPACES + "x",
    "respuesta then spaces": lambda: "la respuesta" + SPACES + "x",
    "letter then spaces then is": lambda: "x B" + SPACES + "is",
    "answer line then hedge and spaces": lambda: "B\nor" + SPACES + "x",
    "repeated not A": lambda: _repeat("not A "),
    "repeated 选项 B": lambda: _repeat("选项 B "),
    "repeated B lines": lambda: _repeat("B\nx\n"),
    "only newlines": lambda: NEWLINES,
    "random printable": lambda: _random_printable(0),
    "random bytes": lambda: _random_bytes(1),
}

# Long replies whose answer is known by hand: length alone must not lose it (no silent cap).
LONG_ANSWERS = {
    "point": ("Let me look. " * (SIZE // 13) + '{"results": {"target": {"x": 512, "y": 300}}}', (512.0, 300.0)),
    "choice": ("<think>" + "Is it the left one? " * (SIZE // 20) + "</think>\nC. left", "C"),
}


def _parse(parser: str, text: str) -> str:
    if parser == "point":
        return parse_point(text).status.value
    return parse_choice(text, OPTIONS).status.value


def child(parser: str) -> None:
    """Run in a fresh interpreter: parse every family, print one JSON line (statuses, the long answer)."""
    statuses = {name: _parse(parser, build()) for name, build in ADVERSARIAL.items()}
    text, _ = LONG_ANSWERS[parser]
    long_answer = parse_point(text).xy if parser == "point" else parse_choice(text, OPTIONS).letter
    print(json.dumps({"statuses": statuses, "long_answer": long_answer}))


@pytest.mark.parametrize("parser", ["point", "choice"])
def test_one_megabyte_adversarial_replies_finish_in_linear_work(parser):
    pytest.importorskip("resource")  # the child's RLIMIT_CPU: POSIX only
    code = (
        "import importlib.util, resource\n"
        f"resource.setrlimit(resource.RLIMIT_CPU, ({CPU_BOUND_S}, {CPU_BOUND_S + 5}))\n"
        f"spec = importlib.util.spec_from_file_location('work_bounds', {str(Path(__file__))!r})\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        f"module.child({parser!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WALL_GUARD_S)
    assert done.returncode not in (-signal.SIGXCPU, -signal.SIGKILL), (
        f"parse_{parser} used more than {CPU_BOUND_S} CPU seconds on {len(ADVERSARIAL)} replies of {SIZE} "
        "characters: super-linear work on some family")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(result["statuses"]) == set(ADVERSARIAL)
    if parser == "point":
        # No family but the random ones writes two coordinates in any form the parser reads.
        readable = {name for name, status in result["statuses"].items() if status != PointStatus.UNPARSEABLE.value}
        assert readable <= {"random printable", "random bytes"}
    expected = LONG_ANSWERS[parser][1]
    assert (tuple(result["long_answer"]) if parser == "point" else result["long_answer"]) == expected


# --------------------------------------------------------------------------- seeded fuzz, short replies

FRAGMENTS = [
    "A", "B", "C", "D", "E", "a", "I", " ", "  ", "\n", "\t", "\r\n", ".", ",", ";", ":", "(", ")", "[", "]",
    "{", "}", "<", ">", '"', "'", "*", "_", "%", "=", "0", "1", "0.5", "512", "1e999", "-3", "answer", "Answer: ",
    "The answer is ", "option ", " or ", "front", "left", "<answer>", "</answer>", "\\boxed{", "<think>", "</think>",
    '"x": ', '"y": ', '{"results": {"target": ', "<point x=\"", "\" y=\"", "<points x1=", "x=", "y=", "答案是",
]  # fmt: skip
N_FUZZ = 4000


def _fuzz_texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(N_FUZZ):
        kind = rng.random()
        if kind < 0.6:
            texts.append("".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(1, 40))))
        elif kind < 0.8:
            texts.append(rng.randbytes(rng.randrange(0, 300)).decode("latin-1"))
        else:  # any code point, surrogates excluded (not valid text)
            texts.append("".join(chr(rng.choice([rng.randrange(0x20, 0x7F), rng.randrange(0x80, 0xD800)]))
                                 for _ in range(rng.randrange(0, 200))))
    return texts


def test_fuzzed_replies_never_raise_and_keep_invariants():
    for text in _fuzz_texts(seed=14):
        point = parse_point(text)
        if point.status is PointStatus.PARSED:
            assert point.xy is not None and all(0 <= v <= POINT_SCALE for v in point.xy), text
        else:
            assert point.xy is None, text
        letter = parse_choice(text, OPTIONS)
        if letter.status is ParseStatus.PARSED:
            assert letter.letter in LETTERS and letter.reason in PARSED_REASONS, text
        else:
            assert letter.letter is None and letter.reason in UNPARSEABLE_REASONS, text
