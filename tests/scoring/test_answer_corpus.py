"""The answer-parser corpus (tests/fixtures/answer_corpus.json): real reply shapes read as a careful reader does.

The rule: the explicit final answer wins; ambiguity stays unparseable. Each case's expected letter is
written in the fixture (from the peer suite it cites, or by hand for a constructed shape), never
computed by the parser. The strict cases (peer_parser_cases.json, test_choice.py) are tested there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bspatial.scoring.choice import LETTERS, PARSED_REASONS, UNPARSEABLE_REASONS, parse_choice, parse_choices

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "answer_corpus.json"
CORPUS = json.loads(FIXTURE.read_text(encoding="utf-8"))
CASES = CORPUS["cases"]
# repository@40-hex commit:path:line..., the project's own tiny model, or a shape built for the issue.
CITATION = re.compile(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}:[\w./-]+:\d+|bspatial tiny random Qwen3\.5 |constructed for issue #21")
# The shapes issue #21 item 3 names; the corpus must hold each of them.
ISSUE_SHAPES = {"answer_line_then_explanation", "letter_punctuation", "other_language", "rejected_then_chosen", "ambiguity"}


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_corpus_case_parses_as_expected(case):
    parse = parse_choice(case["text"], case["options"])
    assert parse.letter == case["expected"], (case["text"], parse)
    assert parse.reason in (PARSED_REASONS if case["expected"] else UNPARSEABLE_REASONS)


def test_every_case_is_well_formed_and_cites_its_source():
    assert len({case["id"] for case in CASES}) == len(CASES)
    for case in CASES:
        assert case["expected"] is None or case["expected"] in LETTERS, case["id"]
        assert case["options"] is None or len(case["options"]) == len(LETTERS), case["id"]
        assert CITATION.match(case["source"]), (case["id"], case["source"])
        assert case["shape"] in CORPUS["shapes"], case["id"]


def test_corpus_covers_the_issue_shapes_and_real_replies():
    shapes = {case["shape"] for case in CASES}
    assert ISSUE_SHAPES <= shapes
    recorded = [case for case in CASES if not case["source"].startswith("constructed")]
    assert len(recorded) >= 20  # peer suites' recorded replies and patterns, and a reply of a model run here
    languages = [case for case in CASES if case["shape"] == "other_language" and not case["text"].isascii()]
    assert any("答案" in case["text"] for case in languages) and any("Die Antwort" in case["text"] for case in CASES)


def test_batch_path_reads_the_corpus_as_the_single_path():
    batch = parse_choices([case["text"] for case in CASES], [case["options"] for case in CASES])
    assert [parse.letter for parse in batch] == [case["expected"] for case in CASES]
