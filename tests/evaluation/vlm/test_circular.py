"""eval-vlm --circular: every VQA item asked in each rotation of its options, correct only if all are right.

Expected numbers are counted by hand from the fixture benchmark (bspatial.evaluation.vlm.fixtures, seed 0):
the 33 answers of vqa/general, in dataset order, are ``BABDDACCDDABDCBDBCACACCBBDBCBBDAA``. The first 21 items
are single-frame (5 answered A), the last 12 multi-frame (2 answered A); over all 33: A 7, B 10, C 8, D 8.
"""

from __future__ import annotations

import csv
import json
import re

import datasets
import pytest
from typer.testing import CliRunner

from bspatial.cli import app
from bspatial.evaluation.vlm.backend_api import Response
from bspatial.evaluation.vlm.runner import (FINGERPRINT_FILE, SAMPLES_FILE, SUMMARY_FILE, IncompatibleRunError,
                                           part_dir, read_jsonl, run_suite)
from bspatial.scoring import circular_verdict, rotate_choice

from .conftest import InterruptAfter

GENERAL_ANSWERS = "BABDDACCDDABDCBDBCACACCBBDBCBBDAA"
LETTERS = "ABCD"


class AlwaysA:
    """A position-biased model: whatever it is shown, it answers option A."""

    spec = "always-a"

    def __init__(self) -> None:
        self.requests = []

    def identity(self):
        return {"kind": "always-a"}

    def generation_settings(self):
        return {}

    def generate(self, requests):
        self.requests += requests
        return [Response("A", 0.0) for _ in requests]


class Oracle(AlwaysA):
    """Knows each item's correct option *text* and finds its letter in the prompt's ``Options:`` line, as a
    reader who knows the answer would: right under any order of the options."""

    spec = "oracle"

    def __init__(self, correct_text: dict[str, str]) -> None:
        super().__init__()
        self.correct_text = correct_text

    def identity(self):
        return {"kind": "oracle"}

    def generate(self, requests):
        self.requests += requests
        return [Response(self._letter(r), 0.0) for r in requests]

    def _letter(self, request) -> str:
        line = next(line for line in request.prompt.splitlines() if line.startswith("Options: "))
        # "Options: A.left B.right C.above D.behind": texts may hold spaces, so split at the letter marks.
        parts = re.split(r"(?:^| )([ABCD])\.", line.removeprefix("Options: "))
        shown = dict(zip(parts[1::2], parts[2::2]))
        item_id = request.id.partition("#")[0]  # a rotation's request id is "<item id>#rotation<k>"
        (letter,) = [k for k, text in shown.items() if text == self.correct_text[item_id]]
        return letter


def _correct_texts(repo, config) -> dict[str, str]:
    rows = datasets.load_dataset(str(repo), config, split="test")
    return {r["id"]: r["options"][LETTERS.index(r["answer"])] for r in rows}


def _run(repos, config, out, model, **kwargs):
    return run_suite(model, "vqa", config, out, data=str(repos["vqa"]), progress=False, circular=True, **kwargs)


def test_rotations_move_the_answer_with_its_option():
    options = ("left", "right", "above", "behind")
    assert rotate_choice(options, "B", 0) == (options, "B")
    assert rotate_choice(options, "B", 1) == (("right", "above", "behind", "left"), "A")
    assert rotate_choice(options, "B", 2) == (("above", "behind", "left", "right"), "D")
    assert rotate_choice(options, "B", 3) == (("behind", "left", "right", "above"), "C")
    assert circular_verdict([True] * 4) and not circular_verdict([True, True, True, False])
    with pytest.raises(ValueError, match="shift must be in 0..3, got 4"):
        rotate_choice(options, "A", 4)
    with pytest.raises(ValueError, match="needs 4 rotation results, got 3"):
        circular_verdict([True] * 3)


def test_position_bias_keeps_its_plain_accuracy_and_scores_zero_circular(repos, tmp_path):
    assert "".join(r["answer"] for r in datasets.load_dataset(str(repos["vqa"]), "general", split="test")) == GENERAL_ANSWERS
    backend = AlwaysA()
    summary = _run(repos, "general", tmp_path, backend)
    assert len(backend.requests) == 4 * 33
    assert summary["metrics"]["accuracy"] == pytest.approx(100 * 7 / 33)  # rotation 0: the 7 items answered A
    assert summary["circular_metrics"]["plain_accuracy"] == pytest.approx(100 * 7 / 33)
    assert summary["circular_metrics"]["accuracy"] == 0.0
    # Rotation k puts the original option k at letter A: right for the items whose answer is the k-th letter.
    assert summary["circular_metrics"]["rotation_accuracy"] == pytest.approx([100 * 7 / 33, 100 * 10 / 33,
                                                                              100 * 8 / 33, 100 * 8 / 33])
    assert summary["cells"]["single_frame/all"]["accuracy"] == pytest.approx(100 * 5 / 21)
    assert summary["cells"]["multi_frame/all"]["accuracy"] == pytest.approx(100 * 2 / 12)
    assert summary["circular_cells"]["single_frame/all"]["accuracy"] == 0.0
    assert summary["circular_cells"]["multi_frame/all"]["accuracy"] == 0.0
    assert summary["circular"] is True and summary["complete"]


def test_an_oracle_scores_100_both_ways(repos, tmp_path):
    for config in ("general", "task_manipulation"):
        backend = Oracle(_correct_texts(repos["vqa"], config))
        summary = _run(repos, config, tmp_path, backend)
        assert summary["metrics"]["accuracy"] == 100.0
        assert summary["circular_metrics"]["accuracy"] == 100.0
        assert summary["circular_metrics"]["rotation_accuracy"] == [100.0] * 4
        assert {cell["accuracy"] for cell in summary["circular_cells"].values()} == {100.0}
    assert summary["circular_cells"]["task_manipulation/all"]["accuracy"] == 100.0  # the task mean of Appendix 14


def test_the_log_keeps_every_rotation_and_the_item_verdict(repos, tmp_path):
    _run(repos, "general", tmp_path, AlwaysA())
    rows = read_jsonl(part_dir(tmp_path, "vqa", "general") / SAMPLES_FILE)
    assert [r["answer"] for r in rows] == list(GENERAL_ANSWERS)
    for row in rows:
        records = row["rotations"]
        assert [r["rotation"] for r in records] == [0, 1, 2, 3]
        assert all(r["raw_output"] == "A" and r["parsed"] == "A" for r in records)
        # The correct option's text sits at a new letter in each rotation: rotation k shows option k first.
        original = LETTERS.index(row["answer"])
        assert [r["answer"] for r in records] == [LETTERS[(original - k) % 4] for k in range(4)]
        assert [r["options"][LETTERS.index(r["answer"])] for r in records] == [row["options"][original]] * 4
        assert [r["correct"] for r in records] == [original == k for k in range(4)]
        assert row["circular_correct"] is False
        assert {k: records[0][k] for k in ("options", "answer", "raw_output", "parsed", "correct")} == \
            {k: row[k] for k in ("options", "answer", "raw_output", "parsed", "correct")}  # rotation 0 is the item


def _stable(row: dict) -> dict:
    """A log row without timings (they differ between sessions)."""
    rotations = [{k: v for k, v in r.items() if k != "latency_s"} for r in row["rotations"]]
    return {**{k: v for k, v in row.items() if k != "latency_s"}, "rotations": rotations}


def test_an_interrupted_circular_run_resumes_without_losing_or_repeating_a_rotation(repos, tmp_path):
    _run(repos, "general", tmp_path / "whole", "chance", batch_size=2)
    with pytest.raises(KeyboardInterrupt):  # 2 items = 8 requests per call: two calls, then Ctrl-C
        _run(repos, "general", tmp_path / "killed", InterruptAfter(seed=0, budget=20), batch_size=2)
    killed = part_dir(tmp_path / "killed", "vqa", "general")
    assert len(read_jsonl(killed / SAMPLES_FILE)) == 4
    samples = killed / SAMPLES_FILE
    samples.write_text(samples.read_text()[:-40])  # and a hard kill cut the last line short
    resumed = _run(repos, "general", tmp_path / "killed", "chance", batch_size=3)
    rows = read_jsonl(samples)
    whole = read_jsonl(part_dir(tmp_path / "whole", "vqa", "general") / SAMPLES_FILE)
    assert [r["id"] for r in rows] == [r["id"] for r in whole]  # every item once, in order
    assert all(len(r["rotations"]) == 4 for r in rows)
    assert [_stable(r) for r in rows] == [_stable(r) for r in whole]
    assert resumed["complete"] and resumed["n_scored"] == 33


def test_circular_is_refused_for_ir_and_kept_apart_from_a_plain_run(repos, tmp_path):
    with pytest.raises(ValueError, match=r"--circular rotates the four options of VQA items; ir items \(pointing\) "
                                         r"have no options"):
        run_suite("chance", "ir", "all", tmp_path / "ir", data=str(repos["ir"]), progress=False, circular=True)
    assert not (tmp_path / "ir").exists()
    _run(repos, "task_navigation", tmp_path, "chance")
    with pytest.raises(IncompatibleRunError, match=r"differing: circular: \{.*\} \(stored\) vs null \(now\)"):
        run_suite("chance", "vqa", "task_navigation", tmp_path, data=str(repos["vqa"]), progress=False)
    run_suite("chance", "vqa", "task_navigation", tmp_path / "plain", data=str(repos["vqa"]), progress=False)
    with pytest.raises(IncompatibleRunError, match="differing: circular"):
        _run(repos, "task_navigation", tmp_path / "plain", "chance")
    stored = json.loads((part_dir(tmp_path, "vqa", "task_navigation") / FINGERPRINT_FILE).read_text())
    assert stored["components"]["circular"] == {"rotations": 4, "direction": "left"}


def test_the_command_line_and_the_report_show_plain_and_circular_accuracy(repos, tmp_path):
    runner = CliRunner()
    out = tmp_path / "runs" / "chance-circular"
    args = ["eval-vlm", "--model", "chance", "--suite", "vqa", "--data", str(repos["vqa"]), "--out", str(out),
            "--no-progress", "--circular"]
    for config in ("general", "task_manipulation"):
        result = runner.invoke(app, [*args, "--config", config])
        assert result.exit_code == 0, result.output
        summary = json.loads((part_dir(out, "vqa", config) / SUMMARY_FILE).read_text())
        assert f"accuracy {summary['metrics']['accuracy']:.1f}" in result.output
        assert f"circular_accuracy {summary['circular_metrics']['accuracy']:.1f}" in result.output
    refused = runner.invoke(app, [*args[:3], "--suite", "ir", "--config", "all", "--data", str(repos["ir"]),
                                  "--out", str(out), "--circular"])
    assert refused.exit_code == 2 and "ir items (pointing) have no options" in refused.output
    result = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "reports")])
    assert result.exit_code == 0, result.output
    assert "Circular evaluation" in result.output
    with open(tmp_path / "reports" / "circular.csv", encoding="utf-8") as handle:
        rows = {(r["part"], r["cell"]): r for r in csv.DictReader(handle)}
    general = json.loads((part_dir(out, "vqa", "general") / SUMMARY_FILE).read_text())
    single = rows[("vqa-general", "single_frame/all")]
    assert float(single["plain_accuracy"]) == pytest.approx(general["cells"]["single_frame/all"]["accuracy"], abs=1e-4)
    assert float(single["circular_accuracy"]) == pytest.approx(
        general["circular_cells"]["single_frame/all"]["accuracy"], abs=1e-4)
    assert ("vqa-task_manipulation", "task_manipulation/all") in rows
