"""The OpenAI-compatible backend against the local server (same tiny model) and against faulty servers."""

from __future__ import annotations

import base64
import io
import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from bspatial.evaluation.vlm import backend_openai
from bspatial.evaluation.vlm.backend_openai import MAX_RETRIES, OpenAIBackend, RequestFailedError, ServerError, png_data_url
from bspatial.evaluation.vlm.backend_api import Request
from bspatial.evaluation.vlm.backends import load_backend
from bspatial.evaluation.vlm.runner import SAMPLES_FILE, part_dir, read_jsonl, run_suite
from bspatial.evaluation.vlm.serve import ChatCompletionServer
from bspatial.evaluation.vlm.tiny_checkpoint import write_tiny_checkpoint

pytestmark = [pytest.mark.slow]

MAX_NEW_TOKENS = 8
FAST = {"backoff_s": 0.001}  # retries without real waiting


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    checkpoint = write_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny", seed=0)
    return load_backend(str(checkpoint), max_new_tokens=MAX_NEW_TOKENS)


@pytest.fixture(scope="module")
def server(tiny):
    with ChatCompletionServer(tiny, "tiny", max_batch=8) as running:
        yield running


def test_openai_backend_matches_the_direct_backend(tiny, server, repos, tmp_path):
    remote = load_backend(f"openai:{server.base_url}#tiny", concurrency=4, max_tokens=MAX_NEW_TOKENS)
    assert remote.identity() == {"kind": "openai", "model": "tiny", "root": tiny.spec}
    assert remote.generation_settings() == {"max_tokens": MAX_NEW_TOKENS, "temperature": 0.0}
    outputs = {}
    for name, backend in (("direct", tiny), ("openai", remote)):
        summary = run_suite(backend, "vqa", "general", tmp_path / name, data=str(repos["vqa"]), progress=False)
        assert summary["complete"] and summary["n_scored"] == 33
        outputs[name] = [(r["id"], r["raw_output"], r["parse_status"]) for r in read_jsonl(part_dir(tmp_path / name, "vqa", "general") / SAMPLES_FILE)]
    assert outputs["openai"] == outputs["direct"]  # multi-frame items included: images travel as PNG data URLs


def test_server_refuses_what_it_cannot_serve(server):
    def post(body):
        backend = OpenAIBackend(server.base_url, "tiny", check=False, max_retries=0)
        return backend._call("POST", "/chat/completions", body)

    import urllib.error

    for body, message in [
        ({"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.7}, "only greedy"),
        ({"model": "other", "messages": [{"role": "user", "content": "hi"}]}, "not served here"),
        ({"model": "tiny", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/a.png"}}]}]}, "data: URL"),
        ({"model": "tiny", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]}, "exactly one user"),
    ]:
        with pytest.raises(urllib.error.HTTPError) as caught:
            post(body)
        assert caught.value.code == 400 and message in json.loads(caught.value.read())["error"]["message"]


def test_unreachable_server_and_unknown_model_fail_before_the_first_sample(server, repos, tmp_path):
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "run"
    with pytest.raises(ServerError, match=r"cannot reach http://127.0.0.1:\d+/v1 .*connection refused"):
        run_suite(f"openai:http://127.0.0.1:{port}/v1#m", "vqa", "general", out, data=str(repos["vqa"]), progress=False)
    # The run took its folder's lock before asking the server, and gave it back: no file is left.
    assert not any(path.is_file() for path in out.rglob("*"))
    unknown = load_backend(f"openai:{server.base_url}#gpt-x")  # building sends nothing; the first use asks
    with pytest.raises(ServerError, match=r"model 'gpt-x' is not served .*\['tiny'\]"):
        unknown.identity()
    with pytest.raises(ValueError, match="openai:<base url>#<model>"):
        load_backend(f"openai:{server.base_url}")


# --------------------------------------------------------------------------- faulty servers


class FlakyServer:
    """Fails the first ``failures`` chat requests with ``status`` (0: drop the connection), then answers 'A.x'."""

    def __init__(self, failures: int, status: int = 503, retry_after: str | None = None) -> None:
        self.failures, self.status, self.retry_after = failures, status, retry_after
        self.chat_calls, self.auth = 0, []
        self.lock = threading.Lock()
        flaky = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                self._send(200, {"data": [{"id": "m"}]})

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                with flaky.lock:
                    flaky.chat_calls += 1
                    flaky.auth.append(self.headers.get("Authorization"))
                    fail = flaky.chat_calls <= flaky.failures
                if fail and flaky.status == 0:
                    self.connection.shutdown(socket.SHUT_RDWR)  # a network error: no HTTP reply at all
                    return
                if fail:
                    self._send(flaky.status, {"error": {"message": f"injected {flaky.status}"}})
                    return
                self._send(200, {"choices": [{"message": {"role": "assistant", "content": "A.x"}}]})

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                if flaky.retry_after and status == 429:
                    self.send_header("Retry-After", flaky.retry_after)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


REQUEST = Request("q1", "Question?", (), "choice", ("x", "y", "z", "w"))


@pytest.mark.parametrize("status", [503, 500, 429, 0])
def test_retries_recover_from_transient_failures(status):
    with FlakyServer(failures=MAX_RETRIES, status=status) as flaky:
        (response,) = OpenAIBackend(flaky.url, "m", **FAST).generate([REQUEST])
    assert response.text == "A.x" and flaky.chat_calls == MAX_RETRIES + 1


def test_gives_up_after_four_retries_with_every_error_recorded(caplog):
    assert MAX_RETRIES == 4  # the paper's count
    with FlakyServer(failures=100) as flaky, pytest.raises(RequestFailedError) as caught:
        OpenAIBackend(flaky.url, "m", **FAST).generate([REQUEST])
    assert flaky.chat_calls == 5 and len(caught.value.attempts) == 5
    assert caught.value.request_id == "q1" and "HTTP 503: injected 503" in str(caught.value)
    assert "item q1 failed" in caplog.text


def test_client_errors_are_not_retried():
    with FlakyServer(failures=100, status=400) as flaky, pytest.raises(RequestFailedError, match="after 1 attempt"):
        OpenAIBackend(flaky.url, "m", **FAST).generate([REQUEST])
    assert flaky.chat_calls == 1


def test_retry_after_is_honoured(monkeypatch):
    waits = []
    monkeypatch.setattr(backend_openai.time, "sleep", waits.append)
    with FlakyServer(failures=1, status=429, retry_after="0.5") as flaky:
        OpenAIBackend(flaky.url, "m", **FAST).generate([REQUEST])
    assert waits == [0.5]


def test_a_failed_batch_stops_the_run_resumably(repos, tmp_path):
    out = tmp_path / "run"
    with FlakyServer(failures=0) as flaky:
        backend = OpenAIBackend(flaky.url, "m", concurrency=1, **FAST)
        run_suite(backend, "vqa", "general", out, data=str(repos["vqa"]), batch_size=8, progress=False, limit=8)
        flaky.failures = flaky.chat_calls + MAX_RETRIES + 1  # the next request exhausts its retries
        with pytest.raises(RequestFailedError):
            run_suite(backend, "vqa", "general", out, data=str(repos["vqa"]), batch_size=8, progress=False)
        summary = json.loads((part_dir(out, "vqa", "general") / "summary.json").read_text())
        assert not summary["complete"] and summary["n_scored"] == 8  # nothing guessed for the failed batch
        done = run_suite(backend, "vqa", "general", out, data=str(repos["vqa"]), batch_size=8, progress=False)
    assert done["complete"] and done["n_scored"] == 33


def test_api_key_from_the_environment_is_sent_never_shown(monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("BSPATIAL_TEST_KEY", "sk-secret-123")
    with FlakyServer(failures=1) as flaky:
        backend = OpenAIBackend(flaky.url, "m", api_key_env="BSPATIAL_TEST_KEY", **FAST)
        backend.generate([REQUEST])
    assert flaky.auth == ["Bearer sk-secret-123"] * 2
    assert "sk-secret" not in repr(backend) + caplog.text + json.dumps(backend.identity())
    monkeypatch.delenv("BSPATIAL_TEST_KEY")
    with pytest.raises(ValueError, match="'BSPATIAL_TEST_KEY' is not set"):
        OpenAIBackend(flaky.url, "m", api_key_env="BSPATIAL_TEST_KEY", check=False)


def test_images_travel_as_png_data_urls():
    from PIL import Image

    pixels = np.random.default_rng(0).integers(0, 256, (16, 16, 3), dtype=np.uint8)
    png, bmp = io.BytesIO(), io.BytesIO()
    Image.fromarray(pixels).save(png, format="PNG")
    Image.fromarray(pixels).save(bmp, format="BMP")
    assert png_data_url(png.getvalue()) == "data:image/png;base64," + base64.b64encode(png.getvalue()).decode()
    decoded = base64.b64decode(png_data_url(bmp.getvalue()).split(",", 1)[1])
    assert decoded.startswith(b"\x89PNG") and (np.asarray(Image.open(io.BytesIO(decoded))) == pixels).all()
    body = OpenAIBackend("http://127.0.0.1:1/v1", "m", check=False)._body(Request("i", "text", (png.getvalue(),) * 2, "choice"))
    assert [p["type"] for p in body["messages"][0]["content"]] == ["image_url", "image_url", "text"]
    assert "max_tokens" not in body and body["temperature"] == 0.0


def test_server_module_runs_with_chance(tmp_path):
    from bspatial.evaluation.vlm.backend_chance import ChanceBackend

    with ChatCompletionServer(ChanceBackend(seed=0), "chance") as running:
        remote = load_backend(f"openai:{running.base_url}#chance")
        texts = [r.text for r in remote.generate([Request(f"q{i}", "p", (), "choice") for i in range(4)])]
    assert all(t in "ABCD" for t in texts)  # without options chance answers the bare letter
    assert Path(__file__).name  # keeps the import list honest for linters


def test_drain_waits_for_a_request_whose_client_is_gone():
    from bspatial.evaluation.vlm.backend_api import Response

    class Gated:
        spec = "gated"

        def __init__(self) -> None:
            self.gate, self.entered, self.answered = threading.Event(), threading.Event(), 0

        def generate(self, requests):
            self.entered.set()
            self.gate.wait()
            self.answered += len(requests)
            return [Response("A", 0.0) for _ in requests]

    backend = Gated()
    with ChatCompletionServer(backend, "gated", max_batch=1) as running:
        running.submit(Request("q", "p", (), "choice"), None)   # nobody reads this future: a dead client's request
        assert backend.entered.wait(10)
        with pytest.raises(TimeoutError, match="1 requests still unanswered after 0.2 s"):
            running.drain(timeout_s=0.2)
        assert backend.answered == 0
        backend.gate.set()
        running.drain(timeout_s=10)
        assert backend.answered == 1   # counted the moment drain returns, not after a guessed sleep
