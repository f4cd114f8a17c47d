"""The real lmms-eval 0.7.3 (its own venv, see conftest.py) runs the shipped bspatial_vqa tasks end to end
against bspatial's local OpenAI-compatible server, and every number it reports is bspatial's.

One lmms-eval run over the four tasks (tag ``bspatial_vqa``) with ``--log_samples``; then, in ``.venv``:

* what the server received from lmms-eval is, item for item, the Appendix 15.1 prompt and the item's frames
  in order (the server's replies depend on exactly that, so the next checks compare like with like);
* lmms-eval's ``accuracy`` / ``task_mean_accuracy`` / ``unparseable_rate`` equal ``evaluate.load`` of
  ``metrics/bspatial_vqa`` on the replies lmms-eval logged, with labels read from the suite itself;
* ``bspatial eval-vlm --model openai:<server>#<name>`` on the same data sends the same requests, gets the same
  reply per item, and its summary.json (metrics and Table 1 / 2 cells) equals lmms-eval's numbers.

Equalities are exact: both sides run the same bspatial functions on the same inputs.
"""

from __future__ import annotations

import collections
import hashlib
import io
import json
from pathlib import Path

import pytest

from bspatial.evaluation.lmms_eval_tasks import VQA_CONFIGS, VQA_TAG, include_path, vqa_task_name
from bspatial.evaluation.vlm.fixtures import SPLIT
from bspatial.evaluation.vlm.prompts import build_vqa_prompt

pytestmark = [pytest.mark.slow]

METRICS = Path(__file__).resolve().parents[3] / "metrics"
# The cells of summary.json that the tasks report as direction / distance / size, per config.
FAMILY = {"general_single_frame": "single_frame", "general_multi_frame": "multi_frame",
          "task_manipulation": "task_manipulation", "task_navigation": "task_navigation"}


def _suite_rows(suite: Path, config: str) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(suite / config / f"{SPLIT}-00000-of-00001.parquet").to_pylist()


def _frame_digest(data: bytes) -> str:
    from PIL import Image

    image = Image.open(io.BytesIO(data)).convert("RGB")
    return hashlib.sha256(f"{image.size}".encode() + image.tobytes()).hexdigest()


def _requests(seen: list[tuple[str, tuple[str, ...], int]]) -> collections.Counter:
    return collections.Counter((prompt, frames) for prompt, frames, _ in seen)


def _expected_requests(suite: Path) -> collections.Counter:
    """(prompt, frame digests) of every item, as bspatial itself builds them."""
    return collections.Counter(
        (build_vqa_prompt(r["setting"], r["category"], r["subtype"], r["question"], r["options"]),
         tuple(_frame_digest(f["bytes"]) for f in r["frames"]))
        for config in VQA_CONFIGS for r in _suite_rows(suite, config)
    )


# One interpreter for two jobs, since importing lmms-eval costs ~10 s on this machine kind: lmms-eval's own
# TaskManager indexes the *shipped* folder (no local override) and resolves its hooks; then lmms-eval's CLI runs
# exactly as `python -m lmms_eval ...` does (runpy, run_name "__main__"), on the local task files.
_SCRIPT = """
import json, runpy, sys
from lmms_eval import utils
from lmms_eval.tasks import TaskManager
out, shipped, doc = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
manager = TaskManager(include_path=shipped, include_defaults=False)
index = {name: manager.task_index[name] for name in manager.all_tasks}
configs = {n: utils.load_yaml_config(t["yaml_path"], mode="full") for n, t in index.items() if t["type"] == "task"}
with open(out, "w") as handle:
    json.dump({"types": {n: t["type"] for n, t in index.items()},
               "tag": sorted(index.get("bspatial_vqa", {}).get("task", [])),
               "data": {n: [c["dataset_path"], c["dataset_name"], c["test_split"]] for n, c in configs.items() if n.startswith("bspatial_vqa")},
               "prompt": {n: c["doc_to_text"](doc) for n, c in configs.items() if n.startswith("bspatial_vqa")}}, handle)
sys.argv = ["lmms_eval", *sys.argv[4:]]
runpy.run_module("lmms_eval", run_name="__main__", alter_sys=True)
"""
PROBE_DOC = {"setting": "single_frame", "category": "distance", "subtype": "camera_relative",
             "question": "Which object is closest to the camera?", "options": ["mug", "bowl", "plate", "apple"]}


@pytest.fixture(scope="module")
def lmms_run(run_lmms, suite, echo_server, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("lmms-eval")
    # The helper runs in lmms-eval's env too (bspatial installed there --no-deps): the README's command.
    helper = run_lmms(["-m", "bspatial.evaluation.lmms_eval_tasks", "--dataset-path", str(suite), "--out", str(tmp / "tasks")], tmp)
    assert helper.returncode == 0, helper.stderr
    tasks_dir = helper.stdout.strip()
    assert Path(tasks_dir) == tmp / "tasks"
    echo_server.backend.take_seen()
    # --verbosity DEBUG: lmms-eval logs an evaluation error and exits 0 at any other verbosity.
    cli = ["--model", "openai", "--model_args", f"model={echo_server.name},base_url={echo_server.url},api_key=EMPTY",
           "--tasks", VQA_TAG, "--include_path", tasks_dir, "--log_samples", "--output_path", str(tmp / "out"),
           "--verbosity", "DEBUG"]
    run = run_lmms(["-c", _SCRIPT, str(tmp / "registered.json"), str(include_path()), json.dumps(PROBE_DOC), *cli], tmp)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    results = sorted((tmp / "out").rglob("*_results.json"))
    assert len(results) == 1, (run.stdout + run.stderr)[-4000:]
    samples = {}
    for config in VQA_CONFIGS:
        (path,) = (tmp / "out").rglob(f"*_samples_{vqa_task_name(config)}.jsonl")
        samples[config] = [json.loads(line) for line in path.read_text().splitlines()]
    return {"results": json.loads(results[0].read_text())["results"], "samples": samples,
            "seen": echo_server.backend.take_seen(), "registered": json.loads((tmp / "registered.json").read_text())}


@pytest.fixture(scope="module")
def harness_run(lmms_run, suite, echo_server, tmp_path_factory) -> dict:
    """bspatial eval-vlm on the same suite and server (after lmms-eval, so the server's log is its own)."""
    from typer.testing import CliRunner

    from bspatial.cli import app

    out = tmp_path_factory.mktemp("eval-vlm")
    for config in VQA_CONFIGS:
        result = CliRunner().invoke(app, ["eval-vlm", "--model", f"openai:{echo_server.url}#{echo_server.name}", "--suite", "vqa",
                                          "--config", config, "--data", str(suite), "--out", str(out), "--no-progress"])
        assert result.exit_code == 0, result.output
    parts = {}
    for config in VQA_CONFIGS:
        folder = out / f"vqa-{config}"
        parts[config] = {"summary": json.loads((folder / "summary.json").read_text()),
                         "samples": [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]}
    return {"parts": parts, "seen": echo_server.backend.take_seen()}


def _replies(lmms_run: dict, suite: Path, config: str) -> tuple[list[dict], list[str]]:
    """The suite's rows of a config and lmms-eval's logged reply of each (matched by doc_id, its row index)."""
    rows = _suite_rows(suite, config)
    by_doc = {s["doc_id"]: s for s in lmms_run["samples"][config]}
    assert sorted(by_doc) == list(range(len(rows)))
    return rows, [by_doc[i]["filtered_resps"] for i in range(len(rows))]


def test_lmms_eval_sends_the_appendix_prompt_and_the_frames_in_order(lmms_run, suite):
    assert _requests(lmms_run["seen"]) == _expected_requests(suite)


def test_lmms_eval_reports_what_bspatial_vqa_computes_on_its_logged_replies(lmms_run, suite):
    import evaluate

    metric = evaluate.load(str(METRICS / "bspatial_vqa"))
    for config in VQA_CONFIGS:
        rows, replies = _replies(lmms_run, suite, config)
        tasks = [r["task"] for r in rows]
        expected = metric.compute(
            predictions=replies, references=[r["answer"] for r in rows], options=[r["options"] for r in rows],
            settings=[r["setting"] for r in rows], categories=[r["category"] for r in rows],
            subtypes=[r["subtype"] for r in rows], tasks=tasks if all(tasks) else None,
        )
        reported = lmms_run["results"][vqa_task_name(config)]
        for key in ("accuracy", "task_mean_accuracy", "unparseable_rate"):
            if f"{key},none" in reported:
                assert reported[f"{key},none"] == expected[key], (config, key)
        assert ("task_mean_accuracy,none" in reported) == config.startswith("task_"), config


def test_eval_vlm_on_the_same_server_gets_the_same_replies_and_numbers(lmms_run, harness_run, suite):
    assert collections.Counter(harness_run["seen"]) == collections.Counter(lmms_run["seen"])  # replies too
    for config in VQA_CONFIGS:
        rows, replies = _replies(lmms_run, suite, config)
        harness = harness_run["parts"][config]
        assert {s["id"]: s["raw_output"] for s in harness["samples"]} == {r["id"]: t for r, t in zip(rows, replies)}
        summary, reported = harness["summary"], lmms_run["results"][vqa_task_name(config)]
        for key in ("accuracy", "task_mean_accuracy", "unparseable_rate"):
            if f"{key},none" in reported:
                assert reported[f"{key},none"] == summary["metrics"][key], (config, key)
        for category in ("direction", "distance", "size"):
            if f"{category},none" in reported:
                assert reported[f"{category},none"] == summary["cells"][f"{FAMILY[config]}/{category}"]["accuracy"], (config, category)


def test_the_logged_rows_are_the_harness_rows_and_the_replies_are_raw(lmms_run, harness_run):
    # lmms-eval strips <think>/<analysis> blocks before scoring unless the task says reasoning_tags: none;
    # the <analysis> replies below would have parsed to a letter had it stripped them.
    fields = ("id", "answer", "options", "raw_output", "parsed", "parse_status", "parse_reason", "correct")
    for config in VQA_CONFIGS:
        harness = {s["id"]: {f: s[f] for f in fields} for s in harness_run["parts"][config]["samples"]}
        logged = {s["accuracy"]["id"]: {f: s["accuracy"][f] for f in fields} for s in lmms_run["samples"][config]}
        assert logged == harness, config
        assert all(s["filtered_resps"] == s["accuracy"]["raw_output"] for s in lmms_run["samples"][config])


def test_the_replies_exercise_the_parser(lmms_run, echo_server):
    """Not a trivial agreement: every reply form occurs, unparseable ones included, and nothing is all or none."""
    forms = collections.Counter(form for _, _, form in lmms_run["seen"])
    assert sorted(forms) == list(range(len(echo_server.backend.forms))), forms
    rows = [s["accuracy"] for config in VQA_CONFIGS for s in lmms_run["samples"][config]]
    statuses = collections.Counter(r["parse_status"] for r in rows)
    assert statuses["parsed"] and statuses["unparseable"], statuses
    assert 0 < sum(r["correct"] for r in rows) < statuses["parsed"]
    analysis = [r for r in rows if r["raw_output"].startswith("<analysis>")]
    assert analysis and all(r["parse_status"] == "unparseable" for r in analysis)


def test_the_shipped_include_path_registers_the_tasks_on_the_hub_repo(lmms_run):
    """lmms-eval's TaskManager on the shipped folder: four tasks and the tag, reading the Hub repo, and hooks that
    build the Appendix 15.1 prompt in lmms-eval's environment."""
    found = lmms_run["registered"]
    names = sorted(vqa_task_name(c) for c in VQA_CONFIGS)
    vqa = {n: t for n, t in found["types"].items() if n.startswith(VQA_TAG)}  # the folder ships bspatial_ir_* too
    assert vqa == {**{n: "task" for n in names}, VQA_TAG: "tag"}
    assert found["tag"] == names
    assert found["data"] == {vqa_task_name(c): ["behavior-spatial/vqa", c, "test"] for c in VQA_CONFIGS}
    doc = PROBE_DOC
    prompt = build_vqa_prompt(doc["setting"], doc["category"], doc["subtype"], doc["question"], doc["options"])
    assert set(found["prompt"].values()) == {prompt}
