"""The OpenAI-compatible backend: chat completions over HTTP (vLLM, SGLang, hosted APIs). Stdlib only.

Spec: ``openai:<base url>#<model>``, e.g. ``openai:http://127.0.0.1:8000/v1#Qwen/Qwen3.5-4B``.

* Each request is one user message: its images as base64 PNG ``data:`` URLs (PNG bytes are sent
  as they are, other formats are re-encoded losslessly to PNG), then the prompt text.
* ``concurrency`` requests are in flight at once (a thread pool); replies come back in order. The
  runner hands over ``batch_size`` requests per call, so use a batch size >= the concurrency.
* Network errors, HTTP 5xx and 429 are retried up to :data:`MAX_RETRIES` times with exponential
  backoff (honouring ``Retry-After``); other 4xx are not retried. When a request still fails,
  ``generate`` raises :class:`RequestFailedError` with every attempt's error: the batch is not
  logged, the run stops resumably, and a rerun retries those items. A failed request is never
  turned into an answer.
* The API key comes from the environment (``OPENAI_API_KEY`` or ``api_key_env``); it is sent as a
  bearer token and never logged or shown in ``repr``.
* Building the backend asks ``GET <base>/models``: an unreachable server, a rejected key or an
  unknown model fails before the first sample, with the reason.

The fingerprint names the served model (and the checkpoint the server reports as ``root``, as vLLM
does), not the URL: restarting the server on another port resumes the same run.
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import logging
import os
import random
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from bspatial.evaluation.vlm.backend_api import Request, Response

logger = logging.getLogger(__name__)

# The paper's tools "retry network errors up to four times" (Appendix, code-as-policy evaluation).
MAX_RETRIES = 4
DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT_S = 120.0  # per attempt: connect and each read
DEFAULT_BACKOFF_S = 1.0  # first retry waits ~1 s, then 2, 4, 8 (+-25% jitter)
MAX_BACKOFF_S = 60.0
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class ServerError(ValueError):
    """The server cannot be used (unreachable, key rejected, model not served); raised at build time."""


class RequestFailedError(RuntimeError):
    """A request failed after all retries, or with a non-retryable status; ``attempts`` lists the errors."""

    def __init__(self, request_id: str, attempts: list[str]) -> None:
        self.request_id, self.attempts = request_id, attempts
        super().__init__(f"request for item {request_id!r} failed after {len(attempts)} attempt(s): " + "; ".join(attempts))


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
        timeout_s: socket timeout of each attempt.
        max_tokens: reply budget sent as ``max_tokens`` (None: the server's default).
        temperature: sent as is; 0 (greedy) by default.
        api_key_env: environment variable holding the key. The default variable may be unset
            (local servers need no key); a variable named explicitly must be set.
        max_retries: retries after the first attempt (the paper's 4).
        backoff_s: first backoff; doubles on each retry.
        check: ask ``/models`` when built (tests of the transport may turn it off).
    """

    base_url: str
    model: str
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_tokens: int | None = None
    temperature: float = 0.0
    api_key_env: str = DEFAULT_API_KEY_ENV
    max_retries: int = MAX_RETRIES
    backoff_s: float = DEFAULT_BACKOFF_S
    check: bool = True
    spec: str = ""
    _api_key: str | None = field(default=None, init=False, repr=False)
    _served: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

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
        if not self.timeout_s > 0:
            raise ValueError(f"openai: timeout_s must be > 0, got {self.timeout_s!r}")
        self.spec = self.spec or f"openai:{self.base_url}#{self.model}"
        self._api_key = os.environ.get(self.api_key_env) or None
        if self._api_key is None and self.api_key_env != DEFAULT_API_KEY_ENV:
            raise ValueError(f"openai: the API key variable {self.api_key_env!r} is not set")
        if self.check:
            self._served = self.check_server()

    # ------------------------------------------------------------------ protocol

    def identity(self) -> dict[str, Any]:
        root = self._served.get("root")
        return {"kind": "openai", "model": self.model, **({"root": root} if isinstance(root, str) else {})}

    def generation_settings(self) -> dict[str, Any]:
        """What is sent besides the messages; concurrency, timeouts and retries are left out."""
        return {"max_tokens": self.max_tokens, "temperature": self.temperature}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        if len(requests) <= 1 or self.concurrency == 1:
            return [self._complete(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests)), thread_name_prefix="openai") as pool:
            return list(pool.map(self._complete, requests))

    # ------------------------------------------------------------------ HTTP

    def check_server(self) -> dict[str, Any]:
        """``GET /models``: the served model's entry ({} if the server has no such route).

        Raises:
            ServerError: unreachable, key rejected, or the model is not among the served ones.
        """
        try:
            listing = self._call("GET", "/models", None)
        except urllib.error.HTTPError as error:
            if error.code in (401, 403):
                raise ServerError(f"openai: {self.base_url} rejected the API key (HTTP {error.code}); "
                                  f"set {self.api_key_env}") from None
            if error.code == 404:  # some compatible servers have no model listing
                logger.warning("openai: %s has no /models route; cannot check that %r is served", self.base_url, self.model)
                return {}
            raise ServerError(f"openai: {self.base_url}/models answered HTTP {error.code}: {_error_text(error)}") from None
        except (OSError, http.client.HTTPException, ValueError) as error:
            raise ServerError(f"openai: cannot reach {self.base_url} ({type(error).__name__}: {_reason(error)}); "
                              "is the server running?") from None
        entries = {m.get("id"): m for m in listing.get("data", []) if isinstance(m, dict)}
        if entries and self.model not in entries:
            raise ServerError(f"openai: model {self.model!r} is not served at {self.base_url}; served: {sorted(entries)}")
        return entries.get(self.model, {})

    def _complete(self, request: Request) -> Response:
        return self.chat(self._body(request), request.id)

    def chat(self, body: dict[str, Any], request_id: str) -> Response:
        """POST one chat-completions ``body`` as it is (other message shapes than ``generate``'s: the
        code-as-policy writers' system prompt and history), with the same retries and errors."""
        attempts: list[str] = []
        start = time.perf_counter()
        for attempt in range(self.max_retries + 1):
            try:
                reply = self._call("POST", "/chat/completions", body)
                return Response(text=_content(reply, request_id), latency_s=time.perf_counter() - start)
            except _Retryable as error:
                attempts.append(str(error))
                if attempt == self.max_retries:
                    break
                wait = self._backoff(attempt, error.wait_s)
                logger.warning("openai: item %s attempt %d failed (%s); retrying in %.2f s", request_id, attempt + 1, error, wait)
                time.sleep(wait)
            except urllib.error.HTTPError as error:  # not retryable (4xx other than 429)
                attempts.append(f"HTTP {error.code}: {_error_text(error)}")
                break
        logger.error("openai: item %s failed: %s", request_id, "; ".join(attempts))
        raise RequestFailedError(request_id, attempts)

    def _call(self, method: str, route: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """One HTTP exchange; retryable failures become :class:`_Retryable` for ``_complete``."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        http_request = urllib.request.Request(self.base_url + route, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(http_request, timeout=self.timeout_s) as handle:
                payload = handle.read()
        except urllib.error.HTTPError as error:
            if error.code in RETRY_STATUS and body is not None:
                raise _Retryable(f"HTTP {error.code}: {_error_text(error)}", _retry_after(error)) from None
            raise
        except (OSError, http.client.HTTPException) as error:  # URLError, timeouts, resets
            if body is None:
                raise
            raise _Retryable(f"{type(error).__name__}: {_reason(error)}") from None
        try:
            return json.loads(payload)
        except json.JSONDecodeError:
            if body is None:
                raise ValueError(f"{route} did not answer JSON: {payload[:200]!r}") from None
            raise _Retryable(f"invalid JSON reply: {payload[:200]!r}") from None

    def _body(self, request: Request) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": png_data_url(image)}} for image in request.images]
        parts.append({"type": "text", "text": request.prompt})
        body: dict[str, Any] = {"model": self.model, "messages": [{"role": "user", "content": parts}], "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def _backoff(self, attempt: int, hint_s: float | None) -> float:
        wait = self.backoff_s * 2**attempt * random.uniform(0.75, 1.25)
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


def _reason(error: BaseException) -> str:
    reason = getattr(error, "reason", None)
    if isinstance(reason, socket.timeout | TimeoutError):
        return "timed out"
    return str(reason or error) or type(error).__name__


def build(argument: str, **options: Any) -> OpenAIBackend:
    """Registry factory for ``openai:<base url>#<model>``."""
    base_url, sep, model = argument.partition("#")
    if not sep or not base_url or not model:
        raise ValueError(f"openai: spec must be 'openai:<base url>#<model>', got 'openai:{argument}'")
    return OpenAIBackend(base_url, model, spec=f"openai:{argument}", **options)


__all__ = ["MAX_RETRIES", "OpenAIBackend", "RequestFailedError", "ServerError", "png_data_url"]
