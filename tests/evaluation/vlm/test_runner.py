"""The runner end to end on the fixture benchmark with the chance backend."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bspatial.evaluation.vlm.backend_api import Request, Response

from bspatial.evaluation.vlm.fixtures import FIXTURE_CONFIGS, write_readme
from bspatial.evaluation.vlm.predicted_ir import predict_ir_point
from bspatial.evaluation.vlm.runner import (
    ERRORS_FILE,
    FINGERPRINT_FILE,
    SAMPLES_FILE,
    SUMMARY_FILE,
    IncompatibleRunError,
    part_dir,
    read_jsonl,
    run_suite,
)
from bspatial.scoring import parse_choice

from .conftest import InterruptAfter

def strip_volatile(row: dict) -> dict:
    """A log row or summary without the fields that legitimately differ between sessions (timings)."""
    return {k: v for k, v in row.items() if k != "latency_s"}


ALL_PARTS = [(suite, config) for suite, configs in FIXTURE_CONFIGS.items() for config in configs]


def _run(repos, suite, config, out, model="chance", **kwargs):
    return run_suite(model, suite, config, out, data=str(repos[suite]), progress=False, **kwargs)


def _task_mean(rows, key):
    tasks = sorted({r["task"] for r in rows})
    return float(np.mean([100 * np.mean([r[key] for r in rows if r["task"] == t]) for t in tasks]))


@pytest.mark.parametrize(("suite", "config"), ALL_PARTS)
def test_summary_equals_an_independent_recomputation_from_the_log(repos, tmp_path, suite, config):
    summary = _run(repos, suite, config, tmp_path)
    rows = read_jsonl(part_dir(tmp_path, suite, config) / SAMPLES_FILE)
    assert summary["complete"] and summary["n_scored"] == summary["n_items"] == len(rows)
    assert json.loads((part_dir(tmp_path, suite, config) / SUMMARY_FILE).read_text()) == summary
    if suite == "ir":
        assert summary["metrics"]["strict_accuracy"] == pytest.approx(100 * np.mean([r["strict"] for r in rows]))
        assert summary["cells"]["ir/strict"]["accuracy"] == pytest.approx(_task_mean(rows, "strict"))
        assert summary["cells"]["ir/tolerant"]["accuracy"] == pytest.approx(_task_mean(rows, "tolerant"))
        assert {r["label"] for r in rows} <= {"correct", "wrong", "none"}
        return
    for row in rows:  # the logged correctness is the parse of the raw output against the answer
        assert row["correct"] == (parse_choice(row["raw_output"], row["options"]).letter == row["answer"])
    assert summary["metrics"]["accuracy"] == pytest.approx(100 * np.mean([r["correct"] for r in rows]))
    cells = summary["cells"]
    if config == "general":
        single = [r for r in rows if r["setting"] == "single_frame"]
        multi = [r for r in rows if r["setting"].startswith("multi_frame")]
        direction = [r for r in single if r["category"] == "direction"]
        assert any(r["subtype"] == "locate" for r in direction)  # Dir. includes locate
        assert cells["single_frame/all"]["accuracy"] == pytest.approx(100 * np.mean([r["correct"] for r in single]))
        assert cells["single_frame/direction"]["accuracy"] == pytest.approx(100 * np.mean([r["correct"] for r in direction]))
        assert cells["multi_frame/all"]["accuracy"] == pytest.approx(100 * np.mean([r["correct"] for r in multi]))
    elif config == "task_manipulation":
        assert cells["task_manipulation/all"]["accuracy"] == pytest.approx(_task_mean(rows, "correct"))
        direction = [r for r in rows if r["category"] == "direction"]
        assert cells["task_manipulation/direction"]["accuracy"] == pytest.approx(_task_mean(direction, "correct"))
    else:
        assert cells["task_navigation/all"]["accuracy"] == pytest.approx(100 * np.mean([r["correct"] for r in rows]))


def test_log_rows_carry_the_documented_fields(repos, tmp_path):
    _run(repos, "vqa", "general", tmp_path, limit=2)
    _run(repos, "ir", "all", tmp_path, limit=2)
    vqa = read_jsonl(part_dir(tmp_path, "vqa", "general") / SAMPLES_FILE)[0]
    ir = read_jsonl(part_dir(tmp_path, "ir", "all") / SAMPLES_FILE)[0]
    common = {"id", "task", "variant", "raw_output", "output", "parsed", "parse_status", "parse_reason", "latency_s", "fingerprint"}
    assert common | {"setting", "category", "subtype", "answer", "options", "correct"} == set(vqa)
    assert common | {"target", "point_px", "strict", "tolerant", "label", "detail"} == set(ir)
    assert vqa["parse_status"] == "parsed" and vqa["parsed"] in "ABCD"
    assert ir["parse_status"] == "parsed" and 0 <= ir["parsed"][0] <= 1000


@pytest.mark.parametrize(("suite", "config", "budget"), [("vqa", "general", 5), ("ir", "all", 3)])
def test_interrupted_run_resumes_to_the_uninterrupted_result(malformed_repos, tmp_path, suite, config, budget):
    whole = _run(malformed_repos, suite, config, tmp_path / "whole", batch_size=2)
    with pytest.raises(KeyboardInterrupt):
        _run(malformed_repos, suite, config, tmp_path / "killed", model=InterruptAfter(seed=0, budget=budget), batch_size=2)
    killed = part_dir(tmp_path / "killed", suite, config)
    partial = json.loads((killed / SUMMARY_FILE).read_text())
    assert not partial["complete"] and 0 < partial["n_scored"] <= budget
    resumed = _run(malformed_repos, suite, config, tmp_path / "killed", batch_size=3)
    rows = read_jsonl(killed / SAMPLES_FILE)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    reference = read_jsonl(part_dir(tmp_path / "whole", suite, config) / SAMPLES_FILE)
    assert [strip_volatile(r) for r in rows] == [strip_volatile(r) for r in reference]
    errors = read_jsonl(killed / ERRORS_FILE)
    assert len(errors) == 1 and errors == read_jsonl(part_dir(tmp_path / "whole", suite, config) / ERRORS_FILE)
    assert strip_volatile(resumed) == strip_volatile(whole)


def test_a_line_cut_off_by_a_hard_kill_is_redone(repos, tmp_path):
    whole = _run(repos, "vqa", "task_navigation", tmp_path / "whole")
    _run(repos, "vqa", "task_navigation", tmp_path / "cut", limit=3)
    samples = part_dir(tmp_path / "cut", "vqa", "task_navigation") / SAMPLES_FILE
    lines = samples.read_text().splitlines(keepends=True)
    samples.write_text("".join(lines[:2]) + lines[2][:25])  # the process died mid-write
    resumed = _run(repos, "vqa", "task_navigation", tmp_path / "cut")
    assert [r["id"] for r in read_jsonl(samples)] == [r["id"] for r in read_jsonl(part_dir(tmp_path / "whole", "vqa", "task_navigation") / SAMPLES_FILE)]
    assert strip_volatile(resumed) == strip_volatile(whole)


def test_limit_then_full_run_continues(repos, tmp_path):
    first = _run(repos, "vqa", "task_manipulation", tmp_path, limit=4)
    assert first["n_scored"] == 4 and first["n_items"] == 4 and first["complete"]
    second = _run(repos, "vqa", "task_manipulation", tmp_path)
    assert second["n_scored"] == second["n_items"] == 12


def test_fingerprint_mismatch_refuses_to_mix(repos, malformed_repos, tmp_path):
    _run(repos, "vqa", "general", tmp_path, limit=2)
    with pytest.raises(IncompatibleRunError, match=r"differing: model: .*\"seed\": 0.*\"seed\": 1"):
        _run(repos, "vqa", "general", tmp_path, model="chance:1")
    with pytest.raises(IncompatibleRunError, match=r"differing: data"):
        _run(malformed_repos, "vqa", "general", tmp_path)
    stored = json.loads((part_dir(tmp_path, "vqa", "general") / FINGERPRINT_FILE).read_text())
    assert set(stored["components"]) >= {"prompts", "data", "model", "generation"}


def test_malformed_rows_go_to_the_errors_file_and_are_counted(malformed_repos, tmp_path):
    for suite, config, bad_id, field in (("vqa", "general", "bad_answer_letter", "answer"), ("ir", "all", "bad_region_json", "region")):
        summary = _run(malformed_repos, suite, config, tmp_path)
        errors = read_jsonl(part_dir(tmp_path, suite, config) / ERRORS_FILE)
        assert [(e["id"], e["field"]) for e in errors] == [(bad_id, field)]
        assert summary["n_errors"] == 1 and not summary["complete"]  # an unscored item is not a finished one
        assert bad_id not in {r["id"] for r in read_jsonl(part_dir(tmp_path, suite, config) / SAMPLES_FILE)}
        again = _run(malformed_repos, suite, config, tmp_path)  # resuming does not log it twice
        assert again["n_errors"] == 1


def test_missing_column_fails_before_the_first_sample(tmp_path):
    import datasets

    repo = tmp_path / "repo"
    (repo / "general").mkdir(parents=True)
    datasets.Dataset.from_dict({"id": ["a"], "question": ["q"]}).to_parquet(str(repo / "general" / "test-00000-of-00001.parquet"))
    write_readme(repo, ("general",))
    with pytest.raises(ValueError, match=r"lacks columns \['suite', 'setting'"):
        run_suite("chance", "vqa", "general", tmp_path / "run", data=str(repo), progress=False)
    assert not (tmp_path / "run").exists()


class _Echo:
    spec = "echo"

    def __init__(self, text):
        self.text, self.requests = text, []

    def generate(self, requests):
        self.requests += requests
        return [Response(self.text, 0.0) for _ in requests]


def test_predicted_ir_point_is_rescaled_and_failure_gives_none():
    from PIL import Image

    image = np.zeros((180, 320, 3), dtype=np.uint8)
    backend = _Echo('{"results": {"target": {"x": 500, "y": 250}}}')
    assert predict_ir_point(backend, image, "Place the bowl in the layer 3 of the bottom cabinet.", "placement") == (112.0, 56.0)
    (request,) = backend.requests
    assert isinstance(request, Request) and Image.open(__import__("io").BytesIO(request.images[0])).size == (512, 512)
    assert "layer 5" in request.prompt  # the layer hint of Appendix 15.2
    assert predict_ir_point(_Echo("I cannot see it."), image, "Reach the dice.", "object") is None
