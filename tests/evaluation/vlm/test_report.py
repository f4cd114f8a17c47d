"""Table 1 / Table 2 reports: columns, values from the summaries, breakdowns, bad input."""

from __future__ import annotations

import csv
import io
import json

import pytest

from bspatial.evaluation.vlm.fixtures import FIXTURE_CONFIGS
from bspatial.evaluation.vlm.report import (INTERVAL_COLUMNS, PER_SUBTYPE_COLUMNS, PER_TASK_COLUMNS, load_run,
                                            write_report)
from bspatial.evaluation.vlm.runner import SUMMARY_FILE, part_dir, run_suite
from bspatial.reference import load_table

TABLE1 = ["run", "model", "single_all", "single_dir", "single_dist", "single_size", "multi_all", "multi_dir"]
TABLE2 = ["run", "model", "task_all", "task_dir", "task_dist", "task_size", "ir_strict", "ir_tolerant"]


@pytest.fixture(scope="module")
def runs(repos, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for seed in (0, 1):
        for suite, configs in FIXTURE_CONFIGS.items():
            for config in configs:
                run_suite(f"chance:{seed}", suite, config, root / f"chance{seed}", data=str(repos[suite]), progress=False)
    run_suite("chance:2", "vqa", "general", root / "partial", data=str(repos["vqa"]), progress=False, limit=5)
    return root


def _csv(path):
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_tables_have_the_paper_columns_and_one_row_per_run(runs, tmp_path):
    written = write_report([runs / "chance0", runs / "chance1", runs / "partial"], tmp_path)
    table1, table2 = _csv(written["table1.csv"]), _csv(written["table2.csv"])
    assert list(table1[0]) == TABLE1 and list(table2[0]) == TABLE2
    assert list(table1[0])[2:] == list(load_table("table1_vlm_vqa")[0])[2:]  # the paper table's names
    assert list(table2[0])[1:] == list(load_table("table2_task_vqa_ir")[0])
    assert [r["run"] for r in table1] == ["chance0", "chance1", "partial"]
    summary = json.loads((part_dir(runs / "chance0", "vqa", "general") / SUMMARY_FILE).read_text())
    assert float(table1[0]["single_dir"]) == pytest.approx(summary["cells"]["single_frame/direction"]["accuracy"], abs=1e-4)
    ir = json.loads((part_dir(runs / "chance1", "ir", "all") / SUMMARY_FILE).read_text())
    assert float(table2[1]["ir_tolerant"]) == pytest.approx(ir["metrics"]["task_mean_tolerant_accuracy"], abs=1e-4)
    assert table2[2]["task_all"] == "" and table2[2]["ir_strict"] == ""  # the partial run has no such part
    markdown = written["table1.md"].read_text()
    assert "| Run | Model | Single-frame All | Single-frame Dir. |" in markdown
    assert "Run partial is incomplete" not in markdown  # limited to 5 items and finished them
    assert "| partial | chance:2 |" in written["table2.md"].read_text() and "—" in written["table2.md"].read_text()


def test_breakdowns(runs, tmp_path):
    written = write_report([runs / "chance0"], tmp_path)
    per_task, per_subtype = _csv(written["per_task.csv"]), _csv(written["per_subtype.csv"])
    assert list(per_task[0]) == list(PER_TASK_COLUMNS) and list(per_subtype[0]) == list(PER_SUBTYPE_COLUMNS)
    settings = {(r["suite"], r["setting"]) for r in per_task}
    assert settings == {("vqa", "task_manipulation"), ("vqa", "task_navigation"), ("ir", "ir")}
    assert {r["metric"] for r in per_task if r["suite"] == "ir"} == {"strict", "tolerant"}
    assert ("single_frame", "direction", "locate") in {(r["setting"], r["category"], r["subtype"]) for r in per_subtype}
    assert sum(int(r["n"]) for r in per_subtype if r["setting"] == "single_frame") == 21


def test_intervals_beside_each_cell_and_paired_runs(runs, tmp_path):
    written = write_report([runs / "chance0"], tmp_path, paired=(runs / "chance0", runs / "chance1"))
    intervals = _csv(written["intervals.csv"])
    assert list(intervals[0]) == list(INTERVAL_COLUMNS)
    summary = json.loads((part_dir(runs / "chance0", "vqa", "general") / SUMMARY_FILE).read_text())
    cell = summary["cells"]["single_frame/all"]
    (row,) = [r for r in intervals if r["column"] == "single_all"]
    assert (int(row["n"]), int(row["clusters"])) == (cell["n"], cell["clusters"])
    assert [float(row["clustered_low"]), float(row["clustered_high"])] == pytest.approx(cell["ci_clustered"], abs=1e-4)
    assert [float(row["independent_low"]), float(row["independent_high"])] == pytest.approx(cell["ci_independent"], abs=1e-4)
    low, high = cell["ci_clustered"]
    assert f"| {cell['accuracy']:.1f} [{low:.1f}, {high:.1f}] |" in written["table1.md"].read_text()
    assert "Clustered by scene/frame 95% (CR1)" in written["intervals.md"].read_text()
    per_task = _csv(written["per_task.csv"])
    assert all(r["clusters"] for r in per_task)
    paired = _csv(written["paired.csv"])
    assert {(r["part"], r["metric"]) for r in paired} >= {("vqa-general", "correct"), ("ir-all", "strict")}
    with pytest.raises(ValueError, match=r"vqa-general: the runs scored different items \(A: 33, B: 5, both: 5"):
        write_report([runs / "chance0"], tmp_path / "other", paired=(runs / "chance0", runs / "partial"))


def test_paper_rows_and_single_part_folders(runs, tmp_path):
    written = write_report([part_dir(runs / "chance0", "vqa", "general")], tmp_path, paper=True)
    rows = _csv(written["table1.csv"])
    assert rows[0]["run"] == "vqa-general" and rows[-1]["model"] == "Chance" and rows[-1]["run"] == "paper"


def test_bad_report_input(runs, tmp_path):
    with pytest.raises(ValueError, match="no summary.json"):
        write_report([tmp_path], tmp_path / "out")
    with pytest.raises(ValueError, match="must be distinct"):
        write_report([runs / "chance0", runs / "chance0"], tmp_path / "out")
    mixed = tmp_path / "mixed"
    for name, run in (("vqa-general", "chance0"), ("ir-all", "chance1")):
        (mixed / name).mkdir(parents=True)
        source = part_dir(runs / run, *name.split("-", 1)) / SUMMARY_FILE
        (mixed / name / SUMMARY_FILE).write_text(source.read_text())
    with pytest.raises(ValueError, match="different models"):
        load_run(mixed)
