"""eval-vlm killed with SIGKILL at a chosen moment and resumed, alone and sharded; sharding with real launchers
and 2 CPU processes: torchrun, a SLURM-style environment, and a
torchrun run killed mid-way then resumed (sharded and plain). Nothing may be lost or logged twice.

The model is a real OpenAI-compatible HTTP server (``bspatial.evaluation.vlm.serve``) in this test
process, answering from the prompt's content (so every run gives the same answers whatever the order)
and able to stop answering after a set number of requests: that is the "chosen moment" of the kill.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bspatial.evaluation.vlm.backend_api import Response
from bspatial.evaluation.vlm.run_files import SAMPLES_FILE, SUMMARY_FILE
from bspatial.common.jsonl import read_jsonl
from bspatial.evaluation.vlm.serve import ChatCompletionServer
from bspatial.scoring.choice import LETTERS

TORCHRUN = Path(sys.executable).parent / "torchrun"
CONFIG = "general"
LAUNCH_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                    "SLURM_PROCID", "SLURM_NTASKS", "GROUP_RANK", "ROLE_RANK")

pytestmark = [pytest.mark.skipif(not TORCHRUN.exists(), reason="torchrun console script"), pytest.mark.slow, pytest.mark.subprocess]


class _ContentModel:
    """Answers a letter chosen by the prompt's hash; after ``budget`` requests it waits for ``gate``."""

    spec = "content-hash"

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.budget: int | None = None
        self.answered = 0
        self.server: ChatCompletionServer | None = None
        self._lock = threading.Lock()

    def identity(self) -> dict:
        return {"kind": "content-hash"}

    def generation_settings(self) -> dict:
        return {}

    def generate(self, requests):
        out = []
        for request in requests:
            with self._lock:
                blocked = self.budget is not None and self.answered >= self.budget
            if blocked:
                self.gate.wait()
            with self._lock:
                self.answered += 1
            digest = hashlib.sha256(request.prompt.encode() + b"".join(request.images)).digest()
            out.append(Response(text=LETTERS[digest[0] % len(LETTERS)], latency_s=0.0))
        return out


@pytest.fixture(scope="module")
def model():
    backend = _ContentModel()
    with ChatCompletionServer(backend, "content", max_batch=1) as server:
        backend.server = server   # the kill tests drain it before counting
        yield backend, f"openai:{server.base_url}#content"
        backend.gate.set()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARIABLES}
    return {**env, "PYTHONUNBUFFERED": "1", **extra}


def _args(spec: str, repos, out: Path) -> list[str]:
    return ["eval-vlm", "--model", spec, "--suite", "vqa", "--config", CONFIG, "--data", str(repos["vqa"]),
            "--out", str(out), "--batch-size", "1", "--model-args", "concurrency=1", "--no-progress"]


def _torchrun(spec, repos, out) -> list[str]:
    return [str(TORCHRUN), "--standalone", "--nproc_per_node", "2", "-m", "bspatial.cli", *_args(spec, repos, out)]


def _plain(spec, repos, out) -> list[str]:
    return [sys.executable, "-m", "bspatial.cli", *_args(spec, repos, out)]


def _run(command: list[str], **env: str) -> None:
    done = subprocess.run(command, env=_env(**env), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]


def _rows(out: Path) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "latency_s"} for row in read_jsonl(out / f"vqa-{CONFIG}" / SAMPLES_FILE)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def reference(model, repos, tmp_path_factory):
    """The rows of one plain single-process run: what every sharded run must reproduce, in order."""
    _, spec = model
    out = tmp_path_factory.mktemp("single")
    _run(_plain(spec, repos, out))
    rows = _rows(out)
    assert len(rows) == 33 and len({r["id"] for r in rows}) == 33
    return rows


def _assert_same_as_reference(out: Path, reference: list[dict], *, resumed: bool = False) -> None:
    part = out / f"vqa-{CONFIG}"
    if resumed:  # rows a killed run left come first, then the rest: every item once, with the same answers
        assert sorted(_rows(out), key=lambda r: r["id"]) == sorted(reference, key=lambda r: r["id"])
    else:
        assert _rows(out) == reference  # every item once, in dataset order, with the same answers
    assert not list(part.glob("*.rank*.jsonl"))  # rank files merged and removed
    summary = json.loads((part / SUMMARY_FILE).read_text())
    assert summary["complete"] and summary["n_scored"] == summary["n_items"] == 33


def _kill_tree(launcher: subprocess.Popen) -> None:
    """SIGKILL a process and its descendants (torchrun's ranks run in their own sessions and outlive it otherwise)."""
    import psutil

    tree = [psutil.Process(launcher.pid), *psutil.Process(launcher.pid).children(recursive=True)]
    for process in tree:
        process.send_signal(signal.SIGKILL)
    psutil.wait_procs(tree, timeout=30)


def test_torchrun_on_cpu_keeps_every_rank_s_rows(model, repos, reference, tmp_path):
    _run(_torchrun(model[1], repos, tmp_path))
    _assert_same_as_reference(tmp_path, reference)


def test_a_slurm_style_environment_is_a_real_barrier(model, repos, reference, tmp_path):
    port = str(_free_port())
    ranks = [subprocess.Popen(_plain(model[1], repos, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=_env(SLURM_PROCID=str(r), SLURM_NTASKS="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=port))
             for r in (1, 0)]   # rank 1 first: were there no barrier, rank 0 would merge before it finished
    for process in ranks:
        _, err = process.communicate(timeout=240)
        assert process.returncode == 0, err[-4000:]
    _assert_same_as_reference(tmp_path, reference)


def test_ranks_without_a_rendezvous_address_are_refused(model, repos, tmp_path):
    done = subprocess.run(_plain(model[1], repos, tmp_path), env=_env(RANK="0", WORLD_SIZE="2"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "MASTER_ADDR/MASTER_PORT is unset" in done.stderr
    assert not (tmp_path / f"vqa-{CONFIG}" / SAMPLES_FILE).exists()


def _kill_after(backend: _ContentModel, command: list[str], logs: Path, pattern: str, rows: int) -> None:
    """Start ``command``, let the model answer ``rows`` requests, wait until they are logged, SIGKILL it all."""
    backend.answered, backend.budget = 0, rows
    backend.gate.clear()
    try:
        launcher = subprocess.Popen(command, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 180
        while sum(len(read_jsonl(p)) for p in logs.glob(pattern)) < rows:
            assert launcher.poll() is None and time.monotonic() < deadline, "the run ended or stalled early"
            time.sleep(0.1)
        _kill_tree(launcher)
    finally:
        backend.budget = None
        backend.gate.set()


def test_killed_run_resumes_without_losing_or_repeating_rows(model, repos, reference, tmp_path):
    backend, spec = model
    part = tmp_path / f"vqa-{CONFIG}"
    _kill_after(backend, _plain(spec, repos, tmp_path), part, SAMPLES_FILE, 5)
    assert len(read_jsonl(part / SAMPLES_FILE)) == 5
    backend.server.drain(timeout_s=60)  # the requests the kill left waiting are answered (to nobody) first
    backend.answered = 0
    _run(_plain(spec, repos, tmp_path))
    assert backend.answered == 33 - 5
    _assert_same_as_reference(tmp_path, reference)


def test_killed_sharded_run_resumes_without_losing_or_repeating_rows(model, repos, reference, tmp_path):
    backend, spec = model
    killed = tmp_path / "killed"
    part = killed / f"vqa-{CONFIG}"
    _kill_after(backend, _torchrun(spec, repos, killed), part, "samples.rank*.jsonl", 7)
    stranded = sorted(part.glob("samples.rank*.jsonl"))
    assert [p.name for p in stranded] == ["samples.rank0.jsonl", "samples.rank1.jsonl"]
    assert sum(len(read_jsonl(p)) for p in stranded) == 7 and not read_jsonl(part / SAMPLES_FILE)

    plain = tmp_path / "plain"
    shutil.copytree(killed, plain)
    backend.server.drain(timeout_s=60)  # the requests the kill left waiting are answered (to nobody) first
    for out, command in ((killed, _torchrun), (plain, _plain)):  # resumed sharded, and by a single process
        backend.answered = 0
        _run(command(spec, repos, out))
        assert backend.answered == 33 - 7  # the stranded rows are merged, not asked again
        _assert_same_as_reference(out, reference, resumed=True)
