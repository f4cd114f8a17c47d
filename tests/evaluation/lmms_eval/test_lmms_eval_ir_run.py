"""The real lmms-eval 0.7.3 (its own venv, see conftest.py) runs the shipped bspatial_ir tasks end to end against
bspatial's local OpenAI-compatible server, and every number it reports is what ``evaluate.load`` of
``metrics/bspatial_ir`` computes on the replies lmms-eval logged, with the regions read from the suite itself.

One lmms-eval run over ``bspatial_ir_all`` and the tag ``bspatial_ir_tasks`` (the fixture's four tasks) with
``--log_samples``. The server's reply is a function of the prompt and the decoded pixels only, cycling through
point forms real models produce (the prompt's JSON, Qwen ``point_2d``, a tuple, prose, an out-of-frame point,
a ``<think>`` block); points inside / outside the fixture's known regions are checked by hand in
test_ir_task_folder.py.
"""

from __future__ import annotations

import collections
import hashlib
import io
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from bspatial.evaluation.lmms_eval_tasks import IR_TAG, include_path, ir_task_name
from bspatial.evaluation.lmms_eval_tasks.bspatial_ir.utils import ALL_METRICS, TASK_METRICS
from bspatial.evaluation.vlm.fixtures import SPLIT
from bspatial.evaluation.vlm.prompts import build_ir_prompt

pytestmark = [pytest.mark.slow]

METRICS = Path(__file__).resolve().parents[3] / "metrics"
SERVED_NAME = "bspatial-point-echo"  # conftest.py: no o1 / o3 / o4 / gpt-5 in the name
POINT_FORMS = (
    '{{"results": {{"target": {{"x": {x}, "y": {y}}}}}}}',
    '[{{"point_2d": [{x}, {y}], "label": "target"}}]',
    "({x}, {y})",
    "The target is at x={x}, y={y}.",
    "<think>first I thought ({y}, {x})</think>{{\"results\": {{\"target\": {{\"x\": {x}, \"y\": {y}}}}}}}",
    '{{"results": {{"target": {{"x": {x}, "y": 1500}}}}}}',
    "I cannot find the target.",
    '{{"results": {{"target": {{"x": 500, "y": 500}}}}}}',
)


class PointEchoBackend:
    """Replies with a point form and a point drawn from a digest of the prompt and the decoded pixels."""

    spec = "point-echo"

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[tuple[str, tuple[str, ...]]] = []

    def identity(self) -> dict[str, str]:
        return {"kind": "point-echo"}

    def generation_settings(self) -> dict[str, str]:
        return {}

    def generate(self, requests: Sequence, max_new_tokens: int | None = None) -> list:
        from bspatial.evaluation.vlm.backend_api import Response

        out = []
        for request in requests:
            frames = tuple(_digest(image) for image in request.images_pil())
            digest = hashlib.sha256("\x00".join((request.prompt, *frames)).encode()).digest()
            form = POINT_FORMS[digest[0] % len(POINT_FORMS)]
            x, y = int.from_bytes(digest[1:3], "big") % 1001, int.from_bytes(digest[3:5], "big") % 1001
            with self.lock:
                self.seen.append((request.prompt, frames))
            out.append(Response(text=form.format(x=x, y=y), latency_s=0.0))
        return out


def _digest(image) -> str:
    pixels = image.convert("RGB")
    return hashlib.sha256(f"{pixels.size}".encode() + pixels.tobytes()).hexdigest()


@dataclass(frozen=True)
class PointServer:
    url: str  # the API root, .../v1
    name: str
    backend: PointEchoBackend


@pytest.fixture(scope="module")
def point_server() -> Iterator[PointServer]:
    from bspatial.evaluation.vlm.serve import ChatCompletionServer

    backend = PointEchoBackend()
    with ChatCompletionServer(backend, SERVED_NAME) as server:
        yield PointServer(server.base_url, SERVED_NAME, backend)


@pytest.fixture(scope="module")
def ir_suite(tmp_path_factory) -> tuple[Path, list[str]]:
    """The fixture benchmark's IR rows as a built suite: config ``all`` and one per task present."""
    import pyarrow.parquet as pq

    from bspatial.evaluation.vlm.fixtures import write_fixture_repos, write_parquet_config, write_readme

    fixture = write_fixture_repos(tmp_path_factory.mktemp("fixture"))["ir"]
    rows = pq.read_table(fixture / "all" / f"{SPLIT}-00000-of-00001.parquet").to_pylist()
    tasks = sorted({r["task"] for r in rows})
    repo = tmp_path_factory.mktemp("suite") / "ir"
    write_parquet_config(repo, "ir", "all", rows)
    for task in tasks:
        write_parquet_config(repo, "ir", task, [r for r in rows if r["task"] == task])
    write_readme(repo, ("all", *tasks))
    return repo, tasks


def _rows(repo: Path, config: str) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(repo / config / f"{SPLIT}-00000-of-00001.parquet").to_pylist()


_SCRIPT = """
import json, runpy, sys
from lmms_eval.tasks import TaskManager
out, shipped = sys.argv[1], sys.argv[2]
manager = TaskManager(include_path=shipped, include_defaults=False)
index = {name: manager.task_index[name] for name in manager.all_tasks}
with open(out, "w") as handle:
    json.dump({"types": {n: t["type"] for n, t in index.items() if n.startswith("bspatial_ir")},
               "tag": sorted(index.get(sys.argv[3], {}).get("task", []))}, handle)
sys.argv = ["lmms_eval", *sys.argv[4:]]
runpy.run_module("lmms_eval", run_name="__main__", alter_sys=True)
"""


@pytest.fixture(scope="module")
def lmms_ir_run(run_lmms, ir_suite, point_server, tmp_path_factory) -> dict:
    repo, tasks = ir_suite
    tmp = tmp_path_factory.mktemp("lmms-eval-ir")
    helper = run_lmms(["-m", "bspatial.evaluation.lmms_eval_tasks", "--suite", "ir", "--dataset-path", str(repo),
                       "--out", str(tmp / "tasks")], tmp)
    assert helper.returncode == 0, helper.stderr
    assert Path(helper.stdout.strip()) == tmp / "tasks"
    point_server.backend.seen.clear()
    cli = ["--model", "openai", "--model_args", f"model={point_server.name},base_url={point_server.url},api_key=EMPTY",
           "--tasks", f"{ir_task_name('all')},{IR_TAG}", "--include_path", str(tmp / "tasks"), "--log_samples",
           "--output_path", str(tmp / "out"), "--verbosity", "DEBUG"]
    run = run_lmms(["-c", _SCRIPT, str(tmp / "registered.json"), str(include_path()), IR_TAG, *cli], tmp)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    (results,) = sorted((tmp / "out").rglob("*_results.json"))
    samples = {}
    for config in ("all", *tasks):
        (path,) = (tmp / "out").rglob(f"*_samples_{ir_task_name(config)}.jsonl")
        samples[config] = [json.loads(line) for line in path.read_text().splitlines()]
    return {"results": json.loads(results.read_text())["results"], "samples": samples, "seen": list(point_server.backend.seen),
            "registered": json.loads((tmp / "registered.json").read_text())}


def _replies(run: dict, repo: Path, config: str) -> tuple[list[dict], list[str]]:
    rows = _rows(repo, config)
    by_doc = {s["doc_id"]: s for s in run["samples"][config]}
    assert sorted(by_doc) == list(range(len(rows)))
    return rows, [by_doc[i]["filtered_resps"] for i in range(len(rows))]


def test_lmms_eval_sends_the_appendix_prompt_and_the_head_frame(lmms_ir_run, ir_suite):
    from PIL import Image

    from bspatial.evaluation.vlm.records import ir_item

    repo, tasks = ir_suite
    expected = collections.Counter()
    for config in ("all", *tasks):  # each query is asked once per task that holds it
        for row in _rows(repo, config):
            item = ir_item(row)
            expected[(build_ir_prompt(item.instruction, item.target), (_digest(Image.open(io.BytesIO(item.image.data))),))] += 1
    assert collections.Counter(lmms_ir_run["seen"]) == expected


def test_lmms_eval_reports_what_bspatial_ir_computes_on_its_logged_replies(lmms_ir_run, ir_suite):
    import evaluate

    repo, tasks = ir_suite
    metric = evaluate.load(str(METRICS / "bspatial_ir"))
    for config in ("all", *tasks):
        rows, replies = _replies(lmms_ir_run, repo, config)
        expected = metric.compute(predictions=replies, references=[r["region"] for r in rows], tasks=[r["task"] for r in rows])
        reported = lmms_ir_run["results"][ir_task_name(config)]
        for key in ALL_METRICS if config == "all" else TASK_METRICS:
            assert reported[f"{key},none"] == expected[key], (config, key)
        assert ("task_mean_strict_accuracy,none" in reported) == (config == "all"), config


def test_the_replies_exercise_the_parser_and_the_labels(lmms_ir_run):
    rows = [s["strict_accuracy"] for s in lmms_ir_run["samples"]["all"]]
    assert all(s["filtered_resps"] == s["strict_accuracy"]["raw_output"] for s in lmms_ir_run["samples"]["all"])
    statuses = collections.Counter(r["parse_status"] for r in rows)
    assert statuses["parsed"] and statuses["parsed"] < len(rows), statuses
    labels = collections.Counter(r["label"] for r in rows)
    assert len(labels) >= 2, labels  # not a trivial agreement: the numbers are neither all nor nothing


def test_the_shipped_include_path_registers_the_ir_tasks(lmms_ir_run):
    from bspatial.evaluation.lmms_eval_tasks import IR_CONFIGS, IR_TASKS

    found = lmms_ir_run["registered"]
    assert found["types"] == {**{ir_task_name(c): "task" for c in IR_CONFIGS}, IR_TAG: "tag"}
    assert found["tag"] == sorted(ir_task_name(t) for t in IR_TASKS)
