"""Model backends behind one interface, and the registry that builds them from a ``--model`` spec.

A backend turns a batch of :class:`Request` (images + prompt text) into one :class:`Response`
(raw text + latency) each, in order. It never parses or scores: the runner does that through
``bspatial.scoring``, the same code for every backend.

Model specs (``load_backend``):

===============================  ==============  =============================================
spec                             kind            status
===============================  ==============  =============================================
``chance`` / ``chance:<seed>``   ``chance``      here: the reference row of every table
``openai:<base url>#<model>``    ``openai``      OpenAI-compatible chat completions (``backend_openai``)
``transformers:<id or path>``,   ``transformers``  ``AutoModelForImageTextToText`` (``backend_transformers``)
a bare hub id or local path
===============================  ==============  =============================================

The ``transformers`` and ``openai`` factories import their modules only when a spec names them,
so ``import backends`` (and ``bspatial --help``) stays free of torch / transformers.

Extension point: a later module registers its factory with ``@register_backend("<kind>")``; the
factory receives the text after ``<kind>:`` (for bare specs, the whole spec) and keyword options
from the CLI. Unknown kinds raise an error listing the registered ones.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from bspatial.scoring.choice import LETTERS
from bspatial.scoring.point import POINT_SCALE

RequestKind = Literal["choice", "point"]


@dataclass(frozen=True)
class Request:
    """One model call.

    Attributes:
        id: the item id (backends may use it as a stable key, e.g. for seeding).
        prompt: the full text prompt (Appendix 15); images go before it in the user turn.
        images: encoded images (PNG / JPEG bytes) in order; ``images_pil()`` decodes them.
        kind: ``"choice"`` (four-option VQA) or ``"point"`` (IR point grounding).
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


@runtime_checkable
class VLMBackend(Protocol):
    """What the runner needs from a model.

    ``spec`` is the string it was built from. ``identity()`` describes the model (what makes its
    outputs differ: checkpoint, revision, dtype, seed) and ``generation_settings()`` the decoding
    settings; both go into the run fingerprint, so they must be JSON-serialisable and stable.
    ``generate`` must return one response per request, in order, and raise (not return a
    placeholder) when the model cannot answer.
    """

    spec: str

    def identity(self) -> dict[str, Any]: ...

    def generation_settings(self) -> dict[str, Any]: ...

    def generate(self, requests: Sequence[Request]) -> list[Response]: ...


# --------------------------------------------------------------------------- chance


def _choice_reply(letter: str, options: Sequence[str]) -> str:
    """The answer-format form (Appendix 15.1): 'C.front'."""
    return f"{letter}.{options[LETTERS.index(letter)]}" if options else letter


def _point_reply(x: int, y: int) -> str:
    """The IR prompt's JSON (Appendix 15.2) on the 0-1000 scale."""
    return json.dumps({"results": {"target": {"x": x, "y": y}}})


@dataclass
class ChanceBackend:
    """Seeded chance: a uniform option for VQA, a uniform 0-1000 point for IR.

    Each reply depends only on ``(seed, request.id)``, never on batch composition or order, so
    a resumed or re-batched run gives the same answers.

    Example:
        >>> req = Request("q1", "prompt", (), "choice", ("above", "under", "front", "behind"))
        >>> ChanceBackend(seed=0).generate([req])[0].text == ChanceBackend(seed=0).generate([req])[0].text
        True
    """

    seed: int = 0
    spec: str = field(default="")

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"chance: seed must be an int, got {self.seed!r}")
        self.spec = self.spec or f"chance:{self.seed}"

    def identity(self) -> dict[str, Any]:
        return {"kind": "chance", "seed": self.seed}

    def generation_settings(self) -> dict[str, Any]:
        return {}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for request in requests:
            start = time.perf_counter()
            rng = self._rng(request.id)
            if request.kind == "choice":
                text = _choice_reply(LETTERS[rng.randrange(len(LETTERS))], request.options)
            elif request.kind == "point":
                text = _point_reply(rng.randint(0, POINT_SCALE), rng.randint(0, POINT_SCALE))
            else:
                raise ValueError(f"request {request.id}: kind must be 'choice' or 'point', got {request.kind!r}")
            out.append(Response(text=text, latency_s=time.perf_counter() - start))
        return out

    def _rng(self, item_id: str) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}\x00{item_id}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))


# --------------------------------------------------------------------------- registry

BackendFactory = Callable[..., VLMBackend]
_REGISTRY: dict[str, BackendFactory] = {}
# Kinds that later slices register; named here so a spec using them gets a precise message.
PLANNED_KINDS = {
    "transformers": "the transformers backend (hub id or local checkpoint path)",
    "openai": "the OpenAI-compatible backend ('openai:<base url>#<model>')",
}
DEFAULT_KIND = "transformers"  # a spec without a known '<kind>:' prefix is a hub id or a path


def register_backend(kind: str) -> Callable[[BackendFactory], BackendFactory]:
    """Register ``factory(argument: str, **options) -> VLMBackend`` for specs ``<kind>:<argument>``.

    Raises:
        ValueError: the kind is already registered.
    """

    def decorate(factory: BackendFactory) -> BackendFactory:
        if kind in _REGISTRY:
            raise ValueError(f"backend kind {kind!r} is already registered (by {_REGISTRY[kind]!r})")
        _REGISTRY[kind] = factory
        return factory

    return decorate


def known_kinds() -> list[str]:
    return sorted(_REGISTRY)


def parse_spec(spec: str) -> tuple[str, str]:
    """Split a model spec into ``(kind, argument)``.

    Examples:
        >>> parse_spec("chance"), parse_spec("chance:3")
        (('chance', ''), ('chance', '3'))
        >>> parse_spec("openai:http://127.0.0.1:8000/v1#qwen")
        ('openai', 'http://127.0.0.1:8000/v1#qwen')
        >>> parse_spec("Qwen/Qwen3.5-4B")
        ('transformers', 'Qwen/Qwen3.5-4B')
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"model spec must be a non-empty string, got {spec!r}")
    head, sep, rest = spec.partition(":")
    if head in _REGISTRY or head in PLANNED_KINDS:
        return head, rest
    if not sep and spec in _REGISTRY:
        return spec, ""
    if sep and not rest.startswith(("/", "\\")) and "/" not in head and "." not in head:
        # '<word>:<something>' with an unknown word: a mistyped kind, not a path or hub id.
        raise ValueError(f"unknown model kind {head!r} in spec {spec!r}; known kinds: {_known_message()}")
    return DEFAULT_KIND, spec


def load_backend(spec: str, **options: Any) -> VLMBackend:
    """Build the backend a ``--model`` spec names (see the module docstring).

    Raises:
        ValueError: the spec's kind is unknown or not available yet; the message lists the known kinds.

    Example:
        >>> load_backend("chance:7").identity()
        {'kind': 'chance', 'seed': 7}
    """
    kind, argument = parse_spec(spec)
    factory = _REGISTRY.get(kind)
    if factory is None:
        raise ValueError(
            f"model spec {spec!r} needs {PLANNED_KINDS.get(kind, repr(kind))}, which is not available in this "
            f"version; known kinds: {_known_message()}"
        )
    return factory(argument, **options)


def _known_message() -> str:
    return ", ".join(f"{k} ({_USAGE.get(k, k + ':<argument>')})" for k in known_kinds())


_USAGE = {
    "chance": "'chance' or 'chance:<seed>'",
    "openai": "'openai:<base url>#<model>'",
    "transformers": "'transformers:<hub id or path>' or a bare hub id / path",
}


@register_backend("chance")
def _chance(argument: str, seed: int | None = None, **options: Any) -> ChanceBackend:
    if options:
        raise ValueError(f"chance: unexpected options {sorted(options)}; the chance backend takes only a seed")
    if argument:
        try:
            parsed = int(argument)
        except ValueError:
            raise ValueError(f"chance: the seed in 'chance:<seed>' must be an int, got {argument!r}") from None
        if seed is not None and seed != parsed:
            raise ValueError(f"chance: seed given twice with different values ({parsed} in the spec, {seed} as option)")
        seed = parsed
    seed = 0 if seed is None else seed
    return ChanceBackend(seed=seed, spec=f"chance:{seed}")


@register_backend("transformers")
def _transformers(argument: str, **options: Any) -> VLMBackend:
    from bspatial.evaluation.vlm.backend_transformers import build

    return build(argument, **options)


@register_backend("openai")
def _openai(argument: str, **options: Any) -> VLMBackend:
    from bspatial.evaluation.vlm.backend_openai import build

    return build(argument, **options)
