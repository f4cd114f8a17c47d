"""Servers that fail loudly (issue 30): the real ``bspatial eval-vlm`` against real sockets that never answer.

Three servers, each a real socket in this test process:

* mute: accepts TCP connections and never sends a byte (a model server wedged before HTTP);
* nothing listening: the port is closed, so the connection is refused;
* chat-mute: answers ``GET /models`` but never a chat request (a server whose generation hangs).

The command runs as a subprocess (as a user runs it) with small timeouts. Each must end with a non-zero exit
and one ``error:`` line that names the URL and what happened, print no traceback, log the URL while it
waits, take the run folder's lock before its first request, and end within a generous multiple of the
time the user set (the machine is noisy: the bound only catches a run that ignores the setting).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bspatial.common.locks import LOCK_FILE
from bspatial.evaluation.vlm.backend_openai import (CHECK_READ_TIMEOUT_S, DEFAULT_CONNECT_TIMEOUT_S,
                                                    DEFAULT_READ_TIMEOUT_S, OpenAIBackend)

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

CONFIG = "general"
TIMEOUT_S = 1.0  # connect and read timeout given to the command
TOTAL_S = 4.0  # total_timeout_s given to the command: room for two attempts and a backoff
BOUND_S = 10 * TOTAL_S  # generous: a run that ignored the settings would take minutes
COMMAND_LIMIT_S = 240  # start-up (imports, data) on a loaded machine, plus the run
LAUNCH_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS")


class MuteServer:
    """Accepts connections and never answers; ``accepts`` holds (time, lock file text or None) per accept."""

    def __init__(self, lock_file: Path) -> None:
        self.lock_file = lock_file
        self.accepts: list[tuple[float, str | None]] = []
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self._socket.settimeout(0.1)  # lets the accept loop see the stop flag
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            self.accepts.append((time.monotonic(), _read_lock(self.lock_file)))
            self._held.append(connection)  # kept open, never read, never answered

    def __enter__(self) -> "MuteServer":
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        for connection in self._held:
            connection.close()
        self._socket.close()


class ChatMuteServer:
    """Lists model ``m`` at ``GET /models``; takes chat requests and never answers them."""

    def __init__(self, lock_file: Path) -> None:
        self.lock_file = lock_file
        self.gets: list[tuple[float, str | None]] = []
        self.posts: list[float] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                server.gets.append((time.monotonic(), _read_lock(server.lock_file)))
                data = json.dumps({"data": [{"id": "m"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                server.posts.append(time.monotonic())
                server.release.wait()  # no reply; the connection closes at teardown

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "ChatMuteServer":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def _read_lock(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def eval_vlm(url: str, repos, out: Path, *extra_args: str) -> tuple[subprocess.Popen, str, str]:
    """Run ``bspatial eval-vlm`` on the fixture suite against ``url``; returns (process, stdout, stderr)."""
    model_args = (f"connect_timeout_s={TIMEOUT_S},read_timeout_s={TIMEOUT_S},total_timeout_s={TOTAL_S},"
                  "max_retries=1,backoff_s=0.2,wait_log_s=0.5")
    command = [sys.executable, "-m", "bspatial.cli", "eval-vlm", "--model", f"openai:{url}#m", "--suite", "vqa",
               "--config", CONFIG, "--data", str(repos["vqa"]), "--out", str(out), "--no-progress",
               "--model-args", model_args, *extra_args]
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARIABLES}
    process = subprocess.Popen(command, env={**env, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    stdout, stderr = process.communicate(timeout=COMMAND_LIMIT_S)
    return process, stdout, stderr


def error_line(stdout: str, stderr: str) -> str:
    assert "Traceback" not in stdout + stderr, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


def test_a_mute_server_fails_at_first_contact_naming_the_url(repos, tmp_path):
    out = tmp_path / "run"
    lock_file = out / f"vqa-{CONFIG}" / LOCK_FILE
    with MuteServer(lock_file) as mute:
        process, stdout, stderr = eval_vlm(mute.url, repos, out)
        ended = time.monotonic()
    assert process.returncode == 2, stderr[-3000:]
    line = error_line(stdout, stderr)
    assert mute.url in line and "no reply within 1 s" in line and "'m'" in line
    assert f"{mute.url} (model 'm'): first contact" in stderr  # logged before the wait, naming whom we wait for
    assert f"{mute.url} (model 'm'): waiting for the /models check" in stderr  # and while it waits
    first_accept, lock_text = mute.accepts[0]
    assert lock_text is not None, "the run talked to the server before taking its run folder's lock"
    assert json.loads(lock_text)["pid"] == process.pid
    assert ended - first_accept < BOUND_S
    assert not lock_file.exists()  # given back on the way out
    assert not any(path.is_file() for path in out.rglob("*"))  # nothing half-written


def test_a_port_with_nothing_listening_fails_at_once_naming_the_url(repos, tmp_path):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    process, stdout, stderr = eval_vlm(url, repos, tmp_path / "run")
    assert process.returncode == 2, stderr[-3000:]
    line = error_line(stdout, stderr)
    assert f"cannot reach {url}" in line and "connection refused" in line


def test_a_server_that_never_answers_a_chat_stops_the_run_within_the_total_time(repos, tmp_path):
    out = tmp_path / "run"
    lock_file = out / f"vqa-{CONFIG}" / LOCK_FILE
    with ChatMuteServer(lock_file) as server:
        process, stdout, stderr = eval_vlm(server.url, repos, out)
        ended = time.monotonic()
    assert process.returncode == 1, stderr[-3000:]
    line = error_line(stdout, stderr)
    assert server.url in line and "'m'" in line and "no reply within 1 s" in line and "request for item" in line
    assert "rerun the same command to resume" in line
    assert f"{server.url} (model 'm'): waiting for replies" in stderr  # lines while the server is silent
    assert f"{server.url} (model 'm'): item" in stderr and "retrying in" in stderr
    _, lock_text = server.gets[0]
    assert lock_text is not None and json.loads(lock_text)["pid"] == process.pid
    assert server.posts and ended - server.posts[0] < BOUND_S
    summary = json.loads((out / f"vqa-{CONFIG}" / "summary.json").read_text())
    assert summary["complete"] is False and summary["n_scored"] == 0  # nothing guessed for the silent batch


def test_timeout_shorthand_and_defaults():
    url = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens: building must not send anything
    default = OpenAIBackend(url, "m")
    assert (default.connect_timeout_s, default.read_timeout_s) == (DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_READ_TIMEOUT_S)
    # The default total is five full attempts plus the backoffs between them (1, 2, 4, 8 s at +25% jitter).
    assert default.total_timeout_s == pytest.approx(5 * (10 + 120) + 1.25 * (1 + 2 + 4 + 8))
    assert CHECK_READ_TIMEOUT_S < DEFAULT_READ_TIMEOUT_S
    both = OpenAIBackend(url, "m", timeout_s=5)
    assert (both.connect_timeout_s, both.read_timeout_s) == (5.0, 5.0)  # timeout_s keeps its old meaning
    mixed = OpenAIBackend(url, "m", timeout_s=5, connect_timeout_s=2, total_timeout_s=30)
    assert (mixed.connect_timeout_s, mixed.read_timeout_s, mixed.total_timeout_s) == (2.0, 5.0, 30.0)
    for name, value in (("read_timeout_s", 0), ("connect_timeout_s", -1), ("total_timeout_s", float("inf")),
                        ("timeout_s", "5"), ("wait_log_s", True)):
        with pytest.raises(ValueError, match=f"{name} must be a number of seconds > 0, got {value!r}"):
            OpenAIBackend(url, "m", **{name: value})
