"""``bspatial analyze correlate`` end to end on real run folders (see conftest), and its refusals.

Expected values are recomputed here from the run folders' own files (summary.json per_task, the episode
result files), with scipy's spearmanr when installed and otherwise the standard library's ranked
correlation (``statistics.correlation(method="ranked")``, average ranks for ties): neither is our code.
"""

from __future__ import annotations

import csv
import json
import shutil
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bspatial.cli import app

pytestmark = [pytest.mark.slow]


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _reference_rho(x: list[float], y: list[float]) -> float:
    try:
        from scipy.stats import spearmanr
    except ImportError:
        return statistics.correlation(x, y, method="ranked")
    return float(spearmanr(x, y).statistic)


def _summary_scores(vlm_run: Path, measure: str) -> dict[str, float]:
    part, field = {"vqa": ("vqa-task_manipulation", "accuracy"), "nav_vqa": ("vqa-task_navigation", "accuracy"),
                   "ir_tolerant": ("ir-all", "tolerant"), "ir_strict": ("ir-all", "strict")}[measure]
    per_task = json.loads((vlm_run / part / "summary.json").read_text())["per_task"]
    return {task: entry[field] for task, entry in per_task.items()}


def _episode_rates(run: Path, rate: str) -> dict[str, float]:
    """Per-task success from the result files, by Table S4's reading: strict = "correct"; soft adds a
    "none" with soft credit; a crashed episode is a failure."""
    hits: dict[str, list[bool]] = {}
    for path in sorted((run / "episodes").glob("*.json")):
        r = json.loads(path.read_text())
        ok = r["status"] != "error" and (r["outcome"] == "correct" or (rate == "soft" and r["outcome"] == "none"
                                                                        and r["soft_credit"]))
        hits.setdefault(r["task"], []).append(ok)
    return {task: 100.0 * sum(v) / len(v) for task, v in hits.items()}


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def report(vlm_run, rollout_runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    result = invoke("analyze", "correlate", "--vlm", str(vlm_run), "--rollout", str(rollout_runs["scripted"]),
                    "--rollout", str(rollout_runs["random"]), "--rollout", str(rollout_runs["navigation"]),
                    "--out", str(out), "--n-resamples", "300")
    assert result.exit_code == 0, result.output
    return out, result.output


def test_writes_the_files_and_prints_the_markdown(report):
    out, output = report
    for name in ("correlation.md", "correlation.csv", "correlation_per_task.csv"):
        assert (out / name).is_file()
    markdown = (out / "correlation.md").read_text()
    assert markdown.strip() in output
    assert "| Policy | VQA ρ | IR (tolerant) ρ | IR strict ρ |" in markdown   # Table 3's layout
    assert "### Navigation (Table S11 pairing)" in markdown and "| Policy | Navigation VQA ρ |" in markdown


def test_joined_tasks_are_the_intersection_and_the_rest_is_listed(report, vlm_run, rollout_runs):
    rows = _rows(report[0] / "correlation.csv")
    assert {(r["measure"], r["success"], r["policy_spec"], r["split"]) for r in rows} == {
        *((m, s, p, "held_out") for m in ("vqa", "ir_tolerant", "ir_strict") for s in ("soft", "strict")
          for p in ("scripted", "random")),
        ("nav_vqa", "strict", "scripted", "navigation")}
    for row in rows:
        vlm = set(_summary_scores(vlm_run, row["measure"]))
        run = rollout_runs["navigation" if row["split"] == "navigation" else row["policy_spec"]]
        rollout = {json.loads(p.read_text())["task"] for p in (run / "episodes").glob("*.json")}
        assert set(row["tasks"].split("|")) == vlm & rollout
        assert set(filter(None, row["only_vlm"].split("|"))) == vlm - rollout
        assert set(filter(None, row["only_rollout"].split("|"))) == rollout - vlm
        assert int(row["n_tasks"]) == len(vlm & rollout) >= 3
    # The fixture's IR tasks and the rollout's tasks overlap only partly: something is dropped on each side.
    ir = next(r for r in rows if r["measure"] == "ir_tolerant" and r["policy_spec"] == "scripted")
    assert ir["only_vlm"] == "place_tupperware_in_fridge" and ir["only_rollout"] == "reach_tool"


def test_rho_equals_an_independent_recomputation(report, vlm_run, rollout_runs):
    defined, undefined = 0, set()
    for row in _rows(report[0] / "correlation.csv"):
        run = rollout_runs["navigation" if row["split"] == "navigation" else row["policy_spec"]]
        tasks = row["tasks"].split("|")
        x = [_summary_scores(vlm_run, row["measure"])[t] for t in tasks]
        y = [_episode_rates(run, row["success"])[t] for t in tasks]
        if row["policy_spec"] == "random":
            assert set(y) == {0.0}   # the random policy never succeeds in 5 steps: rho is undefined
        if len(set(x)) < 2 or len(set(y)) < 2:
            side = "perception" if len(set(x)) < 2 else f"{row['success']} success"   # the first constant side
            assert row["rho"] == "" and row["undefined"] == f"{side} is equal on every joined task", row
            assert row["tasks_ci_low"] == row["items_ci_low"] == ""
            undefined.add((row["measure"], row["success"]))
            continue
        defined += 1
        rho = float(row["rho"])
        assert -1.0 <= rho <= 1.0
        assert rho == pytest.approx(_reference_rho(x, y), abs=1e-12)
        for kind in ("tasks", "items"):
            low, high = float(row[f"{kind}_ci_low"]), float(row[f"{kind}_ci_high"])
            assert -1.0 <= low <= high <= 1.0
            assert 0 < int(row[f"{kind}_resamples_defined"]) <= 300 == int(row["n_resamples"])
    # The fixtures' preconditions: four scripted cells have a rho (VQA vs soft and strict, tolerant IR vs
    # soft, navigation); strict IR is 0 on every joined task, so tolerant and strict IR differ.
    assert defined == 4
    assert {("ir_strict", "soft"), ("ir_strict", "strict")} <= undefined


def test_per_task_points_are_the_runs_numbers(report, vlm_run, rollout_runs):
    rows = _rows(report[0] / "correlation_per_task.csv")
    vqa_soft = [r for r in rows if r["measure"] == "vqa" and r["success"] == "soft" and r["policy"].startswith("scripted")]
    assert [r["task"] for r in vqa_soft] == [t for t in ("reach_dice", "reach_tool", "reach_hardback")]  # Table S2 order
    scores, rates = _summary_scores(vlm_run, "vqa"), _episode_rates(rollout_runs["scripted"], "soft")
    for r in vqa_soft:
        assert float(r["perception"]) == pytest.approx(scores[r["task"]])
        assert float(r["success_rate"]) == pytest.approx(rates[r["task"]])
        assert (r["n_items"], r["n_episodes"]) == ("3", "3")


def test_same_seed_same_intervals_other_seed_other_intervals(report, vlm_run, rollout_runs, tmp_path):
    def run(seed: str) -> list[dict[str, str]]:
        out = tmp_path / seed
        result = invoke("analyze", "correlate", "--vlm", str(vlm_run), "--rollout", str(rollout_runs["scripted"]),
                        "--rollout", str(rollout_runs["random"]), "--rollout", str(rollout_runs["navigation"]),
                        "--out", str(out), "--n-resamples", "300", "--seed", seed)
        assert result.exit_code == 0, result.output
        return _rows(out / "correlation.csv")

    first = _rows(report[0] / "correlation.csv")
    assert run("0") == first
    other = run("1")
    assert [r["rho"] for r in other] == [r["rho"] for r in first]
    # With 3 tasks the intervals' ends are few discrete values; the resamples drawn show the seed.
    draws = ("tasks_resamples_defined", "items_resamples_defined")
    assert [[r[k] for k in draws] for r in other] != [[r[k] for k in draws] for r in first]


def test_a_folder_that_is_not_a_vlm_run_is_refused_by_name(rollout_runs, tmp_path):
    result = invoke("analyze", "correlate", "--vlm", str(rollout_runs["scripted"]), "--rollout",
                    str(rollout_runs["scripted"]), "--out", str(tmp_path))
    assert result.exit_code == 2
    assert f"--vlm {rollout_runs['scripted']} is not an eval-vlm run folder" in result.output
    assert "vqa-task_manipulation/summary.json" in result.output
    missing = invoke("analyze", "correlate", "--vlm", str(tmp_path / "absent"), "--rollout", str(rollout_runs["scripted"]))
    assert missing.exit_code == 2 and f"--vlm {tmp_path / 'absent'}: not a folder" in missing.output


def test_a_folder_that_is_not_a_rollout_run_is_refused_by_name(vlm_run, tmp_path):
    result = invoke("analyze", "correlate", "--vlm", str(vlm_run), "--rollout", str(vlm_run), "--out", str(tmp_path))
    assert result.exit_code == 2
    assert f"--rollout {vlm_run} is not a rollout run folder: it has no rollout.json" in result.output


def test_no_overlapping_tasks_is_an_error_naming_both_sides(vlm_run, make_rollout, tmp_path):
    other = make_rollout(tmp_path / "other", "random", "held_out", ("reach_plate", "reach_toys", "reach_item"), 1, 5)
    result = invoke("analyze", "correlate", "--vlm", str(vlm_run), "--rollout", str(other), "--out", str(tmp_path / "r"))
    assert result.exit_code == 2
    assert "only 0 task(s) [] are in both" in result.output
    assert str(vlm_run / "vqa-task_manipulation" / "summary.json") in result.output and str(other) in result.output
    assert "needs at least 3" in result.output
    assert not (tmp_path / "r" / "correlation.csv").exists()


def _copy(vlm_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "vlm"
    shutil.copytree(vlm_run, copy, ignore=shutil.ignore_patterns("*.lock"))
    return copy


def test_a_summary_without_per_task_is_refused_naming_the_field(vlm_run, rollout_runs, tmp_path):
    copy = _copy(vlm_run, tmp_path)
    path = copy / "ir-all" / "summary.json"
    summary = json.loads(path.read_text())
    del summary["per_task"]
    path.write_text(json.dumps(summary))
    result = invoke("analyze", "correlate", "--vlm", str(copy), "--rollout", str(rollout_runs["scripted"]))
    assert result.exit_code == 2 and f"{path}: field 'per_task' is missing or empty" in result.output


def test_a_stale_summary_is_refused(vlm_run, rollout_runs, tmp_path):
    copy = _copy(vlm_run, tmp_path)
    path = copy / "vqa-task_manipulation" / "summary.json"
    summary = json.loads(path.read_text())
    summary["per_task"]["reach_dice"]["accuracy"] = 12.5   # not what its 3 sample rows give
    path.write_text(json.dumps(summary))
    result = invoke("analyze", "correlate", "--vlm", str(copy), "--rollout", str(rollout_runs["scripted"]))
    assert result.exit_code == 2
    assert "per_task['reach_dice']['accuracy'] is 12.5" in result.output and "stale" in result.output


def test_an_incomplete_summary_needs_allow_incomplete(vlm_run, rollout_runs, tmp_path):
    copy = _copy(vlm_run, tmp_path)
    path = copy / "vqa-task_manipulation" / "summary.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "complete": False}))
    args = ["analyze", "correlate", "--vlm", str(copy), "--rollout", str(rollout_runs["scripted"]), "--out",
            str(tmp_path / "r"), "--n-resamples", "10"]
    refused = invoke(*args)
    assert refused.exit_code == 2 and f"{path}: field 'complete' is False" in refused.output
    assert invoke(*args, "--allow-incomplete").exit_code == 0


def test_the_analyze_group_is_wired_into_the_main_app():
    result = invoke("analyze", "--help")
    assert result.exit_code == 0 and "correlate" in result.output
