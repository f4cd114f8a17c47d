"""What every VLM backend exchanges with the runner: :class:`Request`, :class:`Response`, :class:`VLMBackend`.

The backend modules (``backend_chance``, ``backend_openai``, ``backend_transformers``) implement
:class:`VLMBackend` over these types; :mod:`bspatial.evaluation.vlm.backends` builds them from a
``--model`` spec. Keeping the types apart from the registry is what lets the registry import its
backends without an import cycle.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

RequestKind = Literal["choice", "point", "text"]


@dataclass(frozen=True)
class Request:
    """One model call.

    Attributes:
        id: the item id (backends may use it as a stable key, e.g. for seeding).
        prompt: the full text prompt (Appendix 15); images go before it in the user turn.
        images: encoded images (PNG / JPEG bytes) in order; ``images_pil()`` decodes them.
        kind: ``"choice"`` (four-option VQA), ``"point"`` (IR point grounding) or ``"text"`` (a free-form
            answer: the code-as-policy agents' ``ask_vlm``).
        options: the option texts of a choice request (empty for a point request).
    """

    id: str
    prompt: str
    images: tuple[bytes, ...]
    kind: RequestKind
    options: tuple[str, ...] = ()

    def images_pil(self) -> list:
        """The images as ``PIL.Image`` objects (decoded lazily by PIL)."""
        import io

        from PIL import Image

        return [Image.open(io.BytesIO(data)) for data in self.images]


@dataclass(frozen=True)
class Response:
    """A model's reply: raw text exactly as generated, and the seconds attributed to it.

    Batched backends split a batch's wall time evenly over its requests.
    """

    text: str
    latency_s: float


def answer_each(requests: Sequence[Request], reply: Callable[[Request], str]) -> list[Response]:
    """One :class:`Response` per request from ``reply(request) -> text``, each timed on its own: the backends that
    answer without a model call (chance, a replay)."""
    out = []
    for request in requests:
        start = time.perf_counter()
        text = reply(request)
        out.append(Response(text=text, latency_s=time.perf_counter() - start))
    return out


class BackendFailedError(RuntimeError):
    """The model could not answer (e.g. its server stopped replying): the run stops resumably.

    The message is one line that names the model and says what happened, so the command line shows it
    as it is, without a traceback, whatever the backend.
    """


@runtime_checkable
class VLMBackend(Protocol):
    """What the runner needs from a model.

    ``spec`` is the string it was built from. ``identity()`` describes the model (what makes its
    outputs differ: checkpoint, revision, dtype, seed) and ``generation_settings()`` the decoding
    settings; both go into the run fingerprint, so they must be JSON-serialisable and stable.
    ``generate`` must return one response per request, in order, and raise (not return a
    placeholder) when the model cannot answer: :class:`BackendFailedError` when the reason is the
    model's side (a server that does not answer), not a bug.

    ``accepts_text_only`` (a class attribute, False when absent) says the backend answers requests without
    images (``eval-vlm --blind none``); a backend that does not declare it is refused such a run by name.

    A remote backend talks to its server first in ``identity()`` (which needs the served checkpoint),
    so the runner calls it only once it holds the run folder's lock.
    """

    spec: str

    def identity(self) -> dict[str, Any]: ...

    def generation_settings(self) -> dict[str, Any]: ...

    def generate(self, requests: Sequence[Request]) -> list[Response]: ...
