"""Paired comparison of two runs (``bspatial report --paired``) on hand-made run folders.

The McNemar p-value is checked against ``scipy.stats.binomtest`` (the exact McNemar test is the two-sided
binomial test of one discordant count out of all discordant pairs at 1/2); the discordant counts and the
clustered difference interval are worked by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

from bspatial.evaluation.vlm.paired import paired_rows
from bspatial.evaluation.vlm.report import write_report

Z95 = 1.959963984540054
# Hand-made 2x2 table over 30 questions (10 apartments x 3): both right 10, only A 9, only B 2, neither 9.
TABLE = {"both": 10, "a_only": 9, "b_only": 2, "neither": 9}


def _outcomes() -> tuple[list[bool], list[bool]]:
    a, b = [], []
    for kind, count in TABLE.items():
        a += [kind in ("both", "a_only")] * count
        b += [kind in ("both", "b_only")] * count
    return a, b


def _ids(n: int) -> list[str]:
    return [f"gs-make_fried_rice-l{i // 3}-v0-{i % 3:02d}" for i in range(n)]  # 3 questions per apartment


def write_run(folder: Path, correct: list[bool], ids: list[str] | None = None, data: str = "d0",
              part: str = "vqa-general") -> Path:
    ids = ids or _ids(len(correct))
    part_dir = folder / part
    part_dir.mkdir(parents=True)
    suite = part.split("-")[0]
    rows = [{"id": i, "setting": "single_frame", "category": "direction", "subtype": "object_relative", "task": None,
             "correct": ok} for i, ok in zip(ids, correct)]
    (part_dir / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (part_dir / "summary.json").write_text(json.dumps({"suite": suite, "model": folder.name, "complete": True,
                                                       "cells": {}}))
    (part_dir / "fingerprint.json").write_text(json.dumps({"components": {"data": data}}))
    return folder


def test_mcnemar_and_discordant_counts_match_scipy(tmp_path):
    a, b = _outcomes()
    (row,) = paired_rows(write_run(tmp_path / "A", a), write_run(tmp_path / "B", b))
    assert (row["part"], row["metric"], row["n"], row["a_only"], row["b_only"]) == ("vqa-general", "correct", 30, 9, 2)
    assert row["mcnemar_p"] == pytest.approx(binomtest(2, 11, 0.5).pvalue, rel=1e-12)
    assert row["mcnemar_p"] == pytest.approx(0.06543, abs=1e-5)  # 2 · (1 + 11 + 55) / 2**11
    assert row["accuracy_a"] == pytest.approx(100 * 19 / 30) and row["difference"] == pytest.approx(100 * 7 / 30)
    # Newcombe's paired interval by hand (z = 1.959964): Wilson(19, 30) = [0.45514, 0.78126] and Wilson(12, 30) =
    # [0.24591, 0.57680]; phi = (10·9 - 9·2 - 30/2) / sqrt(19·11·12·18) = 57 / 212.471 = 0.26827;
    # delta = sqrt(0.17820² + 0.17680² - 2·phi·0.17820·0.17680) = 0.21473, epsilon = sqrt(0.15409² +
    # 0.14793² - 2·phi·0.15409·0.14793) = 0.18275: 23.333 - 21.473 = 1.861 to 23.333 + 18.275 = 41.608.
    assert row["newcombe_low"] == pytest.approx(1.860620, abs=1e-5)
    assert row["newcombe_high"] == pytest.approx(41.608198, abs=1e-5)


def test_clustered_difference_interval_by_hand(tmp_path):
    # Ten apartments of 3 questions, items in the table's order (both: 0-9, only A: 10-18, only B: 19-20,
    # neither: 21-29); CR1 of the mean of d = a - b from each apartment's summed residual.
    a, b = _outcomes()
    d = [int(x) - int(y) for x, y in zip(a, b)]
    mean = sum(d) / 30
    sums = [sum(v - mean for v in d[3 * g: 3 * g + 3]) for g in range(10)]
    se = math.sqrt(10 / 9 * sum(s * s for s in sums) / 900)
    (row,) = paired_rows(write_run(tmp_path / "A", a), write_run(tmp_path / "B", b))
    assert row["clusters"] == 10
    assert row["clustered_low"] == pytest.approx(100 * (mean - Z95 * se))
    assert row["clustered_high"] == pytest.approx(100 * (mean + Z95 * se))


def test_different_item_sets_are_an_error_naming_the_counts(tmp_path):
    a, b = _outcomes()
    run_a = write_run(tmp_path / "A", a)
    run_b = write_run(tmp_path / "B", b[:25])
    with pytest.raises(ValueError, match=r"vqa-general: the runs scored different items \(A: 30, B: 25, both: 25, "
                                         r"only A: 5, only B: 0\)"):
        paired_rows(run_a, run_b)


def test_different_datasets_and_no_shared_part_are_errors(tmp_path):
    a, b = _outcomes()
    with pytest.raises(ValueError, match="different datasets"):
        paired_rows(write_run(tmp_path / "A", a), write_run(tmp_path / "B", b, data="d1"))
    with pytest.raises(ValueError, match="share no part"):
        paired_rows(tmp_path / "A", write_run(tmp_path / "C", b, part="vqa-task_navigation"))


def test_report_cli_writes_paired_md(tmp_path):
    from bspatial.cli import app

    a, b = _outcomes()
    run_a, run_b = write_run(tmp_path / "A", a), write_run(tmp_path / "B", b)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["report", str(run_a), str(run_b), "--out", str(out), "--paired", str(run_a),
                                      str(run_b)])
    assert result.exit_code == 0, result.output
    text = (out / "paired.md").read_text()
    assert "McNemar exact p" in text and "| vqa-general | correct | A | B | 30 |" in text and "0.0654" in text
    assert "paired.md" in result.output
    bad = CliRunner().invoke(app, ["report", str(run_a), "--out", str(out), "--paired", str(run_a),
                                   str(write_run(tmp_path / "D", b[:3]))])
    assert bad.exit_code == 2 and "different items" in bad.output


def test_write_report_checks_the_pair_before_writing(tmp_path):
    a, b = _outcomes()
    with pytest.raises(ValueError, match="different items"):
        write_report([write_run(tmp_path / "A", a)], tmp_path / "out",
                     paired=(tmp_path / "A", write_run(tmp_path / "B", b[:3])))
    assert not (tmp_path / "out").exists()
