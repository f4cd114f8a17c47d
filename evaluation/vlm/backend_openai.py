"""The OpenAI-compatible backend: chat completions over HTTP (vLLM, SGLang, hosted APIs). Stdlib only.

Spec: ``openai:<base url>#<model>``, e.g. ``openai:http://127.0.0.1:8000/v1#Qwen/Qwen3.5-4B``.

* Each request is one user message: its images as base64 PNG ``data:`` URLs (PNG bytes are sent
  as they are, other formats are re-encoded losslessly to PNG), then the prompt text.
* ``concurrency`` requests are in flight at once (a thread pool); replies come back in order. The
  runner hands over ``batch_size`` requests per call, so use a batch size >= the concurrency.
* Network errors, HTTP 5xx and 429 are retried up to :data:`MAX_RETRIES` times with exponential
  backoff (honouring ``Retry-After``); other 4xx are not retried. Each attempt connects within
  ``connect_timeout_s`` and waits ``read_timeout_s`` for the reply (``timeout_s`` sets both); one item
  takes at most ``total_timeout_s`` over all its attempts. When a request still fails, ``generate``
  raises :class:`RequestFailedError` (one line naming the server, the model, the item and every
  attempt's error): the batch is not logged, the run stops resumably, and a rerun retries those items.
  A failed request is never turned into an answer.
* Nothing is silent: the first contact logs the URL, the model and the timeouts; a retry logs a
  warning; while no reply arrives a line says so every ``wait_log_s`` seconds.
* The API key comes from the environment (``OPENAI_API_KEY`` or ``api_key_env``); it is sent as a
  bearer token and never logged or shown in ``repr``.
* Building the backend sends nothing. The first use (``identity()``, ``generate``, ``chat`` or
  ``connect()``) asks ``GET <base>/models``: an unreachable or mute server, a rejected key or an unknown
  model fails there, before the first sample, with the reason (:class:`ServerError`). The runner asks
  for ``identity()`` only once it holds the run folder's lock.

The fingerprint names the served model (and the checkpoint the server reports as ``root``, as vLLM
does), not the URL: restarting the server on another port resumes the same run.
"""

from __future__ import annotations

import base64
import concurrent.futures
import io
import json
import logging
import math
import os
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, TypeVar

from bspatial.evaluation.vlm.backend_api import BackendFailedError, Request, Response
from bspatial.evaluation.vlm.http_exchange import NoReplyError, exchange

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

# The paper's tools "retry network errors up to four times" (Appendix, code-as-policy evaluation).
MAX_RETRIES = 4
DEFAULT_CONCURRENCY = 8
# Timeouts, in seconds. A live server accepts a connection in milliseconds; 10 s still covers three
# resends of a lost SYN (Linux resends after 1, 3 and 7 s), so waiting longer only delays the news that
# the host is down or filtered.
DEFAULT_CONNECT_TIMEOUT_S = 10.0
# A non-streaming reply comes only when generation ends: 120 s (the single timeout used before connect
# and read were separate) fits a few thousand tokens of reasoning from a busy server.
DEFAULT_READ_TIMEOUT_S = 120.0
# GET /models is answered from memory, even by a server busy generating: a server silent for 30 s there
# will not answer a chat request either, so the check gives up sooner than a chat request would.
CHECK_READ_TIMEOUT_S = 30.0
# More than ~20 s without a line reads as a hang: say that we are waiting, and for whom.
WAIT_LOG_S = 15.0
DEFAULT_BACKOFF_S = 1.0  # first retry waits ~1 s, then 2, 4, 8 (+-25% jitter)
MAX_BACKOFF_S = 60.0
_JITTER = 0.25
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class ServerError(ValueError):
    """The server cannot be used (unreachable, mute, key rejected, model not served); raised at first contact."""


class RequestFailedError(BackendFailedError):
    """A request failed after all retries, or with a non-retryable status; ``attempts`` lists the errors."""

    def __init__(self, request_id: str, attempts: list[str], server: str = "", stopped: str = "") -> None:
        self.request_id, self.attempts = request_id, attempts
        where = f"{server}: " if server else ""
        message = (f"{where}request for item {request_id!r} failed after {len(attempts)} attempt(s): "
                   + "; ".join(attempts) + (f"; {stopped}" if stopped else ""))
        super().__init__(" ".join(message.split()))  # one line, whatever a server put in its error text


class _Retryable(Exception):
    def __init__(self, message: str, wait_s: float | None = None) -> None:
        super().__init__(message)
        self.wait_s = wait_s


@dataclass
class OpenAIBackend:
    """Chat completions against an OpenAI-compatible server.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1``.
        model: the served model name.
        concurrency: requests in flight at once.
        timeout_s: shorthand for both ``connect_timeout_s`` and ``read_timeout_s`` (its meaning before the
            two were separate); a value given for either of those wins over it.
        connect_timeout_s: seconds to establish the connection (TCP and TLS); default
            :data:`DEFAULT_CONNECT_TIMEOUT_S`.
        read_timeout_s: seconds to wait for the reply once connected; default :data:`DEFAULT_READ_TIMEOUT_S`.
            The ``/models`` check waits at most :data:`CHECK_READ_TIMEOUT_S` of it.
        total_timeout_s: the most seconds one item may take over all its attempts and backoffs; default
            the worst case of ``max_retries + 1`` full attempts and their backoffs (so nothing is cut
            shorter than before it existed), logged at first contact.
        max_tokens: reply budget sent as ``max_tokens`` (None: the server's default).
        temperature: sent as is; 0 (greedy) by default.
        api_key_env: environment variable holding the key. The default variable may be unset
            (local servers need no key); a variable named explicitly must be set.
        max_retries: retries after the first attempt (the paper's 4).
        backoff_s: first backoff; doubles on each retry.
        check: ask ``/models`` at first contact (tests of the transport may turn it off).
        wait_log_s: while no reply arrives, a line says so this often.
    """

    base_url: str
    model: str
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float | None = None
    connect_timeout_s: float | None = None
    read_timeout_s: float | None = None
    total_timeout_s: float | None = None
    max_tokens: int | None = None
    temperature: float = 0.0
    api_key_env: str = DEFAULT_API_KEY_ENV
    max_retries: int = MAX_RETRIES
    backoff_s: float = DEFAULT_BACKOFF_S
    check: bool = True
    wait_log_s: float = WAIT_LOG_S
    spec: str = ""
    _api_key: str | None = field(default=None, init=False, repr=False)
    # A request without images is a text-only user message, which chat-completions servers (vLLM, SGLang,
    # hosted APIs, our serve.py) accept.
    accepts_text_only: ClassVar[bool] = True
    _served: dict[str, Any] | None = field(default=None, init=False, repr=False)  # None: not asked yet
    _contact: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"openai: base url must start with http:// or https://, got {self.base_url!r}")
        if not self.model:
            raise ValueError("openai: the spec needs a model name after '#': 'openai:<base url>#<model>'")
        for name, value, low in (("concurrency", self.concurrency, 1), ("max_retries", self.max_retries, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"openai: {name} must be an int >= {low}, got {value!r}")
        if self.max_tokens is not None and (isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1):
            raise ValueError(f"openai: max_tokens must be a positive int or None, got {self.max_tokens!r}")
        self._resolve_timeouts()
        self.spec = self.spec or f"openai:{self.base_url}#{self.model}"
        self._api_key = os.environ.get(self.api_key_env) or None
        if self._api_key is None and self.api_key_env != DEFAULT_API_KEY_ENV:
            raise ValueError(f"openai: the API key variable {self.api_key_env!r} is not set")

    def _resolve_timeouts(self) -> None:
        for name in ("timeout_s", "connect_timeout_s", "read_timeout_s", "total_timeout_s"):
            if getattr(self, name) is not None:
                _check_seconds(name, getattr(self, name))
        _check_seconds("wait_log_s", self.wait_log_s)
        _check_seconds("backoff_s", self.backoff_s, zero_ok=True)

        def pick(specific: float | None, default: float) -> float:
            return float(next(v for v in (specific, self.timeout_s, default) if v is not None))

        self.connect_timeout_s = pick(self.connect_timeout_s, DEFAULT_CONNECT_TIMEOUT_S)
        self.read_timeout_s = pick(self.read_timeout_s, DEFAULT_READ_TIMEOUT_S)
        if self.total_timeout_s is None:
            backoffs = sum(min(self.backoff_s * 2**i * (1 + _JITTER), MAX_BACKOFF_S) for i in range(self.max_retries))
            self.total_timeout_s = (self.max_retries + 1) * (self.connect_timeout_s + self.read_timeout_s) + backoffs
        self.total_timeout_s = float(self.total_timeout_s)

    @property
    def server(self) -> str:
        """How messages name the other end: its URL and the model asked for."""
        return f"openai: {self.base_url} (model {self.model!r})"

    # ------------------------------------------------------------------ protocol

    def identity(self) -> dict[str, Any]:
        root = self.connect().get("root")
        return {"kind": "openai", "model": self.model, **({"root": root} if isinstance(root, str) else {})}

    def generation_settings(self) -> dict[str, Any]:
        """What is sent besides the messages; concurrency, timeouts and retries are left out."""
        return {"max_tokens": self.max_tokens, "temperature": self.temperature}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.connect()
        return self._gather([partial(self._complete, r) for r in requests], "replies")

    # ------------------------------------------------------------------ HTTP

    def connect(self) -> dict[str, Any]:
        """First contact, once: log where we talk to, then (``check``) ask ``/models``; returns the model's entry.

        Raises:
            ServerError: see :meth:`check_server`; a later call tries again.
        """
        with self._contact:
            if self._served is None:
                logger.info("%s: first contact; connect timeout %g s, read timeout %g s, max_retries %d, "
                            "at most %g s per item", self.server, self.connect_timeout_s, self.read_timeout_s,
                            self.max_retries, self.total_timeout_s)
                self._served = self.check_server() if self.check else {}
            return self._served

    def check_server(self) -> dict[str, Any]:
        """``GET /models``: the served model's entry ({} if the server has no such route).

        Raises:
            ServerError: unreachable or mute, key rejected, or the model is not among the served ones.
        """
        read_s = min(self.read_timeout_s, CHECK_READ_TIMEOUT_S, self.total_timeout_s)
        ask = partial(self._call, "GET", "/models", None, min(self.connect_timeout_s, self.total_timeout_s), read_s)
        try:
            (listing,) = self._gather([ask], "the /models check")
        except urllib.error.HTTPError as error:
            if error.code in (401, 403):
                raise ServerError(f"openai: {self.base_url} rejected the API key (HTTP {error.code}); "
                                  f"set {self.api_key_env}") from None
            if error.code == 404:  # some compatible servers have no model listing
                logger.warning("openai: %s has no /models route; cannot check that %r is served", self.base_url, self.model)
                return {}
            raise ServerError(f"openai: {self.base_url}/models answered HTTP {error.code}: {_error_text(error)}") from None
        except NoReplyError as error:
            verb = "no reply from" if error.connected else "cannot reach"
            raise ServerError(f"openai: {verb} {self.base_url} (GET /models for model {self.model!r}): {error}; "
                              "is an OpenAI-compatible server running there?") from None
        except ValueError as error:
            raise ServerError(f"openai: {self.base_url}: {error}") from None
        listed = listing.get("data", []) if isinstance(listing, dict) else []
        entries = {m.get("id"): m for m in listed if isinstance(m, dict)}
        if entries and self.model not in entries:
            raise ServerError(f"openai: model {self.model!r} is not served at {self.base_url}; served: {sorted(entries)}")
        return entries.get(self.model, {})

    def _complete(self, request: Request) -> Response:
        return self._chat(self._body(request), request.id)

    def chat(self, body: dict[str, Any], request_id: str) -> Response:
        """POST one chat-completions ``body`` as it is (other message shapes than ``generate``'s: the
        code-as-policy writers' system prompt and history), with the same retries, logs and errors."""
        self.connect()
        (response,) = self._gather([partial(self._chat, body, request_id)], "a reply")
        return response

    def _chat(self, body: dict[str, Any], request_id: str) -> Response:
        attempts: list[str] = []
        start = time.monotonic()
        deadline = start + self.total_timeout_s
        stopped = ""
        for attempt in range(self.max_retries + 1):
            left = deadline - time.monotonic()
            try:
                reply = self._call("POST", "/chat/completions", body, min(self.connect_timeout_s, left),
                                   min(self.read_timeout_s, left))
                return Response(text=_content(reply, request_id), latency_s=time.monotonic() - start)
            except _Retryable as error:
                attempts.append(str(error))
                if attempt == self.max_retries:
                    break
                wait = self._backoff(attempt, error.wait_s)
                if time.monotonic() + wait >= deadline:
                    stopped = f"gave up: another attempt would pass total_timeout_s={self.total_timeout_s:g} s"
                    break
                logger.warning("%s: item %s attempt %d of %d failed (%s); retrying in %.2f s", self.server,
                               request_id, attempt + 1, self.max_retries + 1, error, wait)
                time.sleep(wait)
            except urllib.error.HTTPError as error:  # not retryable (4xx other than 429)
                attempts.append(f"HTTP {error.code}: {_error_text(error)}")
                break
        # Logged here as well: with several requests in flight only the first failure reaches the caller.
        logger.error("%s: item %s failed after %d attempt(s): %s", self.server, request_id, len(attempts),
                     "; ".join([*attempts, stopped] if stopped else attempts))
        raise RequestFailedError(request_id, attempts, self.server, stopped)

    def _call(self, method: str, route: str, body: dict[str, Any] | None, connect_s: float | None = None,
              read_s: float | None = None) -> dict[str, Any]:
        """One HTTP exchange (under the backend's timeouts unless given shorter ones); a chat request's
        retryable failures become :class:`_Retryable` for ``_chat``.

        Raises:
            urllib.error.HTTPError: an error status that is not retried here.
            NoReplyError: the ``/models`` check got no reply (a chat request's becomes ``_Retryable``).
            ValueError: the ``/models`` reply is not JSON.
        """
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        http_request = urllib.request.Request(self.base_url + route, data=data, headers=headers, method=method)
        try:
            # Never 0: a socket timeout of 0 means non-blocking, not "no time left".
            connect_s = self.connect_timeout_s if connect_s is None else connect_s
            read_s = self.read_timeout_s if read_s is None else read_s
            payload = exchange(http_request, max(connect_s, 0.001), max(read_s, 0.001))
        except urllib.error.HTTPError as error:
            if error.code in RETRY_STATUS and body is not None:
                raise _Retryable(f"HTTP {error.code}: {_error_text(error)}", _retry_after(error)) from None
            raise
        except NoReplyError as error:
            if body is None:
                raise
            raise _Retryable(str(error)) from None
        try:
            return json.loads(payload)
        except json.JSONDecodeError:
            if body is None:
                raise ValueError(f"{route} did not answer JSON: {payload[:200]!r}") from None
            raise _Retryable(f"invalid JSON reply: {payload[:200]!r}") from None

    def _gather(self, calls: Sequence[Callable[[], _T]], waiting_for: str) -> list[_T]:
        """Run ``calls`` on up to ``concurrency`` threads; results in order, the first failure raised.

        The calling thread watches: whenever ``wait_log_s`` pass without a result, it logs that it is
        waiting, for whom and for how long, so a mute server never means a silent run. The workers are
        daemon threads, not a ``ThreadPoolExecutor``'s: on a failure or Ctrl-C the caller returns at once
        (an executor, and the interpreter at exit, would first wait out every request still in flight).
        """
        futures: list[concurrent.futures.Future] = [concurrent.futures.Future() for _ in calls]
        jobs, taking, stop = iter(range(len(calls))), threading.Lock(), threading.Event()

        def work() -> None:
            while not stop.is_set():
                with taking:
                    index = next(jobs, None)
                if index is None or not futures[index].set_running_or_notify_cancel():
                    return
                try:
                    futures[index].set_result(calls[index]())
                except BaseException as error:  # noqa: BLE001 - handed to the caller, which re-raises it
                    futures[index].set_exception(error)

        for _ in range(min(self.concurrency, len(calls))):
            threading.Thread(target=work, name="openai", daemon=True).start()
        start, pending = time.monotonic(), set(futures)
        try:
            while pending:
                done, pending = concurrent.futures.wait(pending, self.wait_log_s, concurrent.futures.FIRST_EXCEPTION)
                failed = [f for f in futures if f in done and f.exception() is not None]
                if failed:
                    raise failed[0].exception()
                if not done:
                    logger.info("%s: waiting for %s: %d of %d after %.1f s", self.server, waiting_for,
                                len(calls) - len(pending), len(calls), time.monotonic() - start)
        finally:
            stop.set()  # no new request starts once the caller has stopped waiting
        return [future.result() for future in futures]

    def _body(self, request: Request) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": png_data_url(image)}} for image in request.images]
        parts.append({"type": "text", "text": request.prompt})
        body: dict[str, Any] = {"model": self.model, "messages": [{"role": "user", "content": parts}], "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def _backoff(self, attempt: int, hint_s: float | None) -> float:
        wait = self.backoff_s * 2**attempt * random.uniform(1 - _JITTER, 1 + _JITTER)
        if hint_s is not None:
            wait = max(wait, hint_s)
        return min(wait, MAX_BACKOFF_S)


def png_data_url(image: bytes) -> str:
    """A ``data:image/png;base64,`` URL; PNG bytes pass through, other formats are re-encoded losslessly."""
    if not image.startswith(_PNG_MAGIC):
        from PIL import Image

        buffer = io.BytesIO()
        Image.open(io.BytesIO(image)).save(buffer, format="PNG")
        image = buffer.getvalue()
    return "data:image/png;base64," + base64.b64encode(image).decode("ascii")


def _content(reply: dict[str, Any], request_id: str) -> str:
    try:
        content = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise _Retryable(f"reply without choices[0].message.content: {json.dumps(reply)[:200]}") from None
    return "" if content is None else str(content)  # None: the model produced no visible text


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    try:
        return float(error.headers.get("Retry-After", ""))
    except (TypeError, ValueError):
        return None


def _error_text(error: urllib.error.HTTPError) -> str:
    try:
        text = error.read().decode("utf-8", "replace")
        return str(json.loads(text).get("error", {}).get("message", text))[:300]
    except (OSError, ValueError, AttributeError):
        return str(error.reason)[:300]


def _check_seconds(name: str, value: Any, zero_ok: bool = False) -> None:
    number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not number or value < 0 or (value == 0 and not zero_ok):
        raise ValueError(f"openai: {name} must be a number of seconds {'>=' if zero_ok else '>'} 0, got {value!r}")


def build(argument: str, **options: Any) -> OpenAIBackend:
    """Registry factory for ``openai:<base url>#<model>``."""
    base_url, sep, model = argument.partition("#")
    if not sep or not base_url or not model:
        raise ValueError(f"openai: spec must be 'openai:<base url>#<model>', got 'openai:{argument}'")
    return OpenAIBackend(base_url, model, spec=f"openai:{argument}", **options)


__all__ = ["MAX_RETRIES", "OpenAIBackend", "RequestFailedError", "ServerError", "png_data_url"]
