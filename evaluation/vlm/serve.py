"""A minimal OpenAI-compatible chat-completions server over any local backend (stdlib only).

It exists so that the OpenAI backend can be tested and benchmarked against a real model without a
vLLM install, and so that a user can put a local transformers checkpoint behind an HTTP endpoint:

    python -m bspatial.evaluation.vlm.serve /path/to/checkpoint --port 8000 --name tiny
    bspatial eval-vlm --model openai:http://127.0.0.1:8000/v1#tiny ...

Endpoints: ``GET /v1/models`` and ``POST /v1/chat/completions`` (non-streaming). A request holds
one user message whose content is image parts (``data:`` URLs only: the server never fetches
anything) followed by text; it becomes one :class:`Request`, the same one the harness would build,
so a model answers identically through the server and directly.

Concurrent requests are batched like a (much simpler) vLLM: a worker thread takes the first waiting
request, gathers up to ``max_batch - 1`` more that arrive within ``batch_wait_s`` and share its
``max_tokens``, and answers them with one ``backend.generate`` call. Only greedy decoding is served
(``temperature`` absent or 0); anything else is refused with HTTP 400 rather than silently ignored.
Binds to loopback by default.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import inspect
import itertools
import json
import logging
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bspatial.evaluation.vlm.backend_api import Request, VLMBackend

logger = logging.getLogger(__name__)

DEFAULT_MAX_BATCH = 8
DEFAULT_BATCH_WAIT_S = 0.005  # how long the worker waits for more requests to join a batch
_MAX_BODY = 256 * 1024 * 1024  # bytes; a request larger than this is refused (413)


class BadRequest(ValueError):
    """A request the server cannot serve; answered with HTTP 400 and the message."""


@dataclass
class _Job:
    request: Request
    max_tokens: int | None
    future: Future


class ChatCompletionServer:
    """Serve ``backend`` as model ``name`` at ``http://<host>:<port>/v1``.

    Use as a context manager (or call :meth:`start` / :meth:`stop`); ``port=0`` picks a free port,
    readable from :attr:`base_url` after start.

    Example:
        >>> from bspatial.evaluation.vlm.backend_chance import ChanceBackend
        >>> with ChatCompletionServer(ChanceBackend(seed=0), "chance") as server:
        ...     server.base_url.startswith("http://127.0.0.1:")
        True
    """

    def __init__(
        self,
        backend: VLMBackend,
        name: str,
        host: str = "127.0.0.1",
        port: int = 0,
        max_batch: int = DEFAULT_MAX_BATCH,
        batch_wait_s: float = DEFAULT_BATCH_WAIT_S,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"serve: max_batch must be >= 1, got {max_batch}")
        self.backend, self.name, self.max_batch, self.batch_wait_s = backend, name, max_batch, batch_wait_s
        self._takes_budget = "max_new_tokens" in inspect.signature(backend.generate).parameters
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._unanswered = 0                     # jobs submitted and not yet answered
        self._answered = threading.Condition()
        self._ids = itertools.count()
        self._httpd = ThreadingHTTPServer((host, port), _handler_class(self))
        self._httpd.daemon_threads = True
        self._threads: list[threading.Thread] = []

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ChatCompletionServer:
        self._threads = [
            threading.Thread(target=self._httpd.serve_forever, name="serve-http", daemon=True),
            threading.Thread(target=self._work, name="serve-batch", daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        logger.info("serving %s (%s) at %s", self.name, self.backend.spec, self.base_url)
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._jobs.put(None)
        for thread in self._threads:
            thread.join(timeout=10)

    def drain(self, timeout_s: float) -> None:
        """Wait until every submitted request is answered: a client that died mid-request leaves its request
        to be answered to nobody, and a caller counting the backend's calls must wait for it, not guess a time.

        Raises:
            TimeoutError: requests are still unanswered after ``timeout_s``.
        """
        with self._answered:
            if not self._answered.wait_for(lambda: self._unanswered == 0, timeout=timeout_s):
                raise TimeoutError(f"serve: {self._unanswered} requests still unanswered after {timeout_s} s")

    def __enter__(self) -> ChatCompletionServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ batching

    def submit(self, request: Request, max_tokens: int | None) -> Future:
        if max_tokens is not None and not self._takes_budget:
            raise BadRequest(f"max_tokens is not supported by backend {self.backend.spec!r}; leave it out")
        job = _Job(request, max_tokens, Future())
        with self._answered:
            self._unanswered += 1
        self._jobs.put(job)
        return job.future

    def _work(self) -> None:
        pending: list[_Job | None] = []  # a job taken from the queue that did not fit the last batch
        while True:
            first = pending.pop() if pending else self._jobs.get()
            if first is None:
                return
            batch, deadline = [first], time.monotonic() + self.batch_wait_s
            while len(batch) < self.max_batch:
                try:
                    job = self._jobs.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if job is None or job.max_tokens != first.max_tokens:
                    pending.append(job)  # served next (None: stop after this batch)
                    break
                batch.append(job)
            self._run(batch)

    def _run(self, batch: list[_Job]) -> None:
        try:
            self._answer(batch)
        finally:
            with self._answered:
                self._unanswered -= len(batch)
                self._answered.notify_all()

    def _answer(self, batch: list[_Job]) -> None:
        try:
            requests = [job.request for job in batch]
            if batch[0].max_tokens is not None:
                responses = self.backend.generate(requests, max_new_tokens=batch[0].max_tokens)
            else:
                responses = self.backend.generate(requests)
        except Exception as error:  # answered as HTTP 500 to each client of the batch
            logger.exception("backend failed on a batch of %d", len(batch))
            for job in batch:
                job.future.set_exception(error)
            return
        for job, response in zip(batch, responses):
            job.future.set_result(response)

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        """Answer one parsed ``/v1/chat/completions`` body (blocks until its batch is done)."""
        request, max_tokens = parse_chat_request(body, self.name, f"req-{next(self._ids)}")
        response = self.submit(request, max_tokens).result()
        return {
            "id": f"chatcmpl-{request.id}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": response.text}, "finish_reason": "stop"}],
        }

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": self.name, "object": "model", "owned_by": "bspatial", "root": self.backend.spec}]}


def parse_chat_request(body: dict[str, Any], served: str, request_id: str) -> tuple[Request, int | None]:
    """A chat-completions body -> ``(Request, max_tokens)``; raises :class:`BadRequest` naming the field."""
    if body.get("model") not in (None, served):
        raise BadRequest(f"model {body.get('model')!r} is not served here; this server serves {served!r}")
    if body.get("stream"):
        raise BadRequest("stream=true is not supported by this server")
    if body.get("temperature") not in (None, 0, 0.0) or body.get("n") not in (None, 1):
        raise BadRequest(f"only greedy single replies are served (temperature 0, n 1), got temperature "
                         f"{body.get('temperature')!r}, n {body.get('n')!r}")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        raise BadRequest(f"max_tokens must be a positive int, got {max_tokens!r}")
    messages = body.get("messages")
    if not isinstance(messages, list) or len(messages) != 1 or not isinstance(messages[0], dict) or messages[0].get("role") != "user":
        raise BadRequest("messages must hold exactly one user message (images, then text)")
    content = messages[0].get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise BadRequest(f"messages[0].content must be a string or a list of parts, got {type(content).__name__}")
    images, texts = [], []
    for k, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "image_url":
            images.append(_decode_data_url(part.get("image_url"), k))
        elif kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            raise BadRequest(f"messages[0].content[{k}] must be an image_url or a text part, got {str(part)[:80]!r}")
    return Request(request_id, "".join(texts), tuple(images), "choice"), max_tokens


def _decode_data_url(image_url: Any, index: int) -> bytes:
    url = image_url.get("url") if isinstance(image_url, dict) else image_url
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        raise BadRequest(f"messages[0].content[{index}].image_url must be a base64 data: URL (this server fetches nothing)")
    try:
        return base64.b64decode(url.split(";base64,", 1)[1], validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(f"messages[0].content[{index}].image_url is not valid base64") from None


def _handler_class(server: ChatCompletionServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive for clients that reuse connections
        disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms delayed-ACK stalls

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.rstrip("/") == "/v1/models":
                self._reply(200, server.models())
            else:
                self._reply(404, _error(f"no route GET {self.path}"))

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._reply(404, _error(f"no route POST {self.path}"))
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > _MAX_BODY:
                self._reply(413, _error(f"request body of {length} bytes exceeds {_MAX_BODY}"))
                return
            try:
                body = json.loads(self.rfile.read(length) or b"null")
                if not isinstance(body, dict):
                    raise BadRequest("the body must be a JSON object")
                self._reply(200, server.completion(body))
            except (BadRequest, json.JSONDecodeError) as error:
                self._reply(400, _error(str(error)))
            except Exception as error:  # the backend failed: the client may retry (HTTP 500)
                self._reply(500, _error(f"{type(error).__name__}: {error}"))

        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
            logger.debug("%s " + format, self.address_string(), *args)

    return Handler


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def main(argv: list[str] | None = None) -> None:
    """``python -m bspatial.evaluation.vlm.serve <model spec> [--port N] [--name NAME] ...``"""
    from bspatial.evaluation.vlm.backends import load_backend

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="model spec: a local checkpoint folder, a cached hub id, or 'chance'")
    parser.add_argument("--name", help="model name clients ask for (default: the spec)")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default loopback)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-batch", type=int, default=DEFAULT_MAX_BATCH)
    parser.add_argument("--max-new-tokens", type=int, help="transformers backends: default reply budget")
    parser.add_argument("--dtype", help="transformers backends: auto, float32, bfloat16, float16")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    options = {k: v for k, v in (("max_new_tokens", args.max_new_tokens), ("dtype", args.dtype)) if v is not None}
    backend = load_backend(args.model, **options)
    server = ChatCompletionServer(backend, args.name or args.model, args.host, args.port, args.max_batch)
    with server:
        logger.info("OpenAI-compatible endpoint: %s (model %r); Ctrl-C stops", server.base_url, server.name)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            logger.info("stopping")


if __name__ == "__main__":
    main()


__all__ = ["ChatCompletionServer", "parse_chat_request"]
