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
``vla-backbone:<VLA folder>``    ``vla-backbone``  the VLM inside a VLA checkpoint (``backend_vla_backbone``)
``policy-point:<rollout runs>``  ``policy-point``  a policy's recorded pointing-head points (registered by
                                                  ``bspatial.evaluation.analysis.policy_point``)
===============================  ==============  =============================================

The ``transformers`` and ``openai`` factories import their modules only when a spec names them,
so ``import backends`` (and ``bspatial --help``) stays free of torch / transformers.

Extension point: a later module registers its factory with ``@register_backend("<kind>")``; the
factory receives the text after ``<kind>:`` (for bare specs, the whole spec) and keyword options
from the CLI. Unknown kinds raise an error listing the registered ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bspatial.evaluation.vlm.backend_api import VLMBackend
from bspatial.evaluation.vlm.backend_chance import ChanceBackend
# --------------------------------------------------------------------------- registry

BackendFactory = Callable[..., VLMBackend]
_REGISTRY: dict[str, BackendFactory] = {}
# Kinds that later slices register; named here so a spec using them gets a precise message.
PLANNED_KINDS = {
    "transformers": "the transformers backend (hub id or local checkpoint path)",
    "openai": "the OpenAI-compatible backend ('openai:<base url>#<model>')",
    # Registered by the analysis layer (it reads rollout records, which this layer may not import).
    "policy-point": "the policy-point replay, registered by bspatial.evaluation.analysis.policy_point (the bspatial "
                    "command imports it; a script imports it or passes a PolicyPointBackend)",
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
    "vla-backbone": "'vla-backbone:<pretrained_model, checkpoint or training output folder>'",
    "policy-point": "'policy-point:<rollout run folder>[,<rollout run folder>...]' (episode_aligned IR only)",
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


@register_backend("vla-backbone")
def _vla_backbone(argument: str, **options: Any) -> VLMBackend:
    from bspatial.evaluation.vlm.backend_vla_backbone import build

    return build(argument, **options)
