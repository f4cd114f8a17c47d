"""Program writers: the scripted reference writer and writers served over the OpenAI-compatible API.

A writer answers a conversation (:func:`bspatial.evaluation.agents.prompts.conversation`) with a reply
that holds a short plan and a complete module defining ``run(api)`` (:func:`parse_reply` takes it apart).

* ``scripted``: :class:`ScriptedWriter`, the upper reference row and the test writer: it always answers
  with the known-good program of the task's family (:mod:`bspatial.evaluation.agents.programs`), written
  against the API only.
* ``openai:<base url>#<model>``: :class:`OpenAIWriter`, chat completions against vLLM, SGLang or a hosted
  API through :class:`~bspatial.evaluation.vlm.backend_openai.OpenAIBackend` (its retries, its key
  handling). The generation settings are :class:`GenerationSettings`; :data:`GENERATION_PRESETS` holds the
  paper's (Appendix 16.5: the Qwen3.5 writers' sampling, thinking mode on).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any, Protocol, Sequence

from bspatial.catalog.tasks import TASKS
from bspatial.evaluation.agents.prompts import Message

FAMILY_PROGRAMS: dict[str, str] = {"reach": "reach", "reach_base_proximity": "reach",
                                   "directional_placement": "placement", "container_placement": "container"}
"""The reference program (a module of :mod:`bspatial.evaluation.agents.programs`) of each task family."""
_CODE_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)


class ReplyError(ValueError):
    """A writer's reply holds no usable program (the attempt is rejected, with this message)."""


def parse_reply(text: str) -> tuple[str, str]:
    """(plan, program source) of a reply: the last fenced code block that defines ``run(api)``, and the text
    before it (a reasoning model's ``<think>`` section left out).

    Raises:
        ReplyError: no fenced code block defines ``run``.

    Example:
        >>> parse_reply("Plan: wait.\\n```python\\ndef run(api):\\n    api.wait(1)\\n```")
        ('Plan: wait.', 'def run(api):\\n    api.wait(1)\\n')
    """
    visible = _THINKING.sub("", text)
    blocks = [m for m in _CODE_BLOCK.finditer(visible) if re.search(r"^def run\(", m.group(1), re.MULTILINE)]
    if not blocks:
        raise ReplyError("the reply has no ```python block defining run(api)")
    last = blocks[-1]
    return visible[:last.start()].strip(), last.group(1)


class Writer(Protocol):
    """What the development loop needs from a writer."""

    spec: str

    def identity(self) -> dict[str, Any]: ...

    def write(self, messages: Sequence[Message], request_id: str) -> str: ...


def reference_program(task: str) -> str:
    """The scripted reference program's text for ``task``'s family.

    Raises:
        ValueError: the family has no reference program yet.
    """
    family = TASKS[task].family
    name = FAMILY_PROGRAMS.get(family)
    if name is None:
        raise ValueError(f"the scripted writer has no program for family {family!r} (task {task!r}); "
                         f"families with one: {sorted(FAMILY_PROGRAMS)}")
    try:
        return resources.files("bspatial.evaluation.agents.programs").joinpath(f"{name}.py").read_text("utf-8")
    except FileNotFoundError:
        raise ValueError(f"the scripted writer has no program for family {family!r} (task {task!r}): "
                         f"programs/{name}.py is missing") from None


@dataclass
class ScriptedWriter:
    """The reference writer: answers every request with the family's known-good program."""

    task: str
    spec: str = "scripted"

    def __post_init__(self) -> None:
        self.program = reference_program(self.task)

    def identity(self) -> dict[str, Any]:
        return {"kind": "scripted", "family": TASKS[self.task].family}

    def write(self, messages: Sequence[Message], request_id: str) -> str:
        return (f"Plan: the {TASKS[self.task].family} reference program: point at the instruction's target, "
                f"act on what the pointer returns.\n```python\n{self.program}```\n")


@dataclass(frozen=True)
class GenerationSettings:
    """What an OpenAI-compatible writer sends besides the messages (None: the server's default).

    ``extra`` is merged into the request body as is (e.g. vLLM's
    ``{"chat_template_kwargs": {"enable_thinking": true}}``).
    """

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    presence_penalty: float | None = None
    max_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("temperature", "top_p", "min_p", "presence_penalty"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ValueError(f"{name} must be a number or None, got {value!r}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        for name in ("top_k", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive int or None, got {value!r}")
        if not isinstance(self.extra, dict):
            raise ValueError(f"extra must be a JSON object, got {self.extra!r}")

    def body(self) -> dict[str, Any]:
        sent = {k: v for k, v in asdict(self).items() if k != "extra" and v is not None}
        return {**sent, **self.extra}


GENERATION_PRESETS: dict[str, GenerationSettings] = {
    "default": GenerationSettings(),
    "paper-qwen": GenerationSettings(temperature=1.0, top_p=0.95, top_k=20, min_p=0.0, presence_penalty=1.5,
                                     extra={"chat_template_kwargs": {"enable_thinking": True}}),
}
"""Appendix 16.5: the Qwen3.5 writers (vLLM, thinking mode, temperature 1.0, top-p 0.95, top-k 20, min-p 0,
presence penalty 1.5); hosted writers use their APIs' defaults ("default")."""


def _wire(message: Message) -> dict[str, Any]:
    from bspatial.evaluation.vlm.backend_openai import png_data_url

    if not message.images:
        return {"role": message.role, "content": message.text}
    parts: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": png_data_url(image)}}
                                   for image in message.images]
    return {"role": message.role, "content": [*parts, {"type": "text", "text": message.text}]}


class OpenAIWriter:
    """A writer behind an OpenAI-compatible chat-completions server (module docstring)."""

    def __init__(self, base_url: str, model: str, settings: GenerationSettings = GenerationSettings(), *,
                 timeout_s: float = 600.0, check: bool = True, backoff_s: float | None = None) -> None:
        from bspatial.evaluation.vlm.backend_openai import OpenAIBackend

        options = {} if backoff_s is None else {"backoff_s": backoff_s}
        self.backend = OpenAIBackend(base_url, model, timeout_s=timeout_s, check=check, **options)
        self.settings, self.spec = settings, f"openai:{self.backend.base_url}#{model}"

    def identity(self) -> dict[str, Any]:
        return {**self.backend.identity(), "generation": self.settings.body()}

    def write(self, messages: Sequence[Message], request_id: str) -> str:
        body = {"model": self.backend.model, "messages": [_wire(m) for m in messages], **self.settings.body()}
        return self.backend.chat(body, request_id).text


def make_writer(spec: str, task: str, settings: GenerationSettings = GenerationSettings(), **options: Any) -> Writer:
    """The writer of ``spec``: ``scripted`` or ``openai:<base url>#<model>``."""
    if spec == "scripted":
        return ScriptedWriter(task)
    kind, _, argument = spec.partition(":")
    if kind == "openai":
        base_url, sep, model = argument.partition("#")
        if not sep or not base_url or not model:
            raise ValueError(f"writer must be 'openai:<base url>#<model>', got {spec!r}")
        return OpenAIWriter(base_url, model, settings, **options)
    raise ValueError(f"writer must be 'scripted' or 'openai:<base url>#<model>', got {spec!r}")


def writer_label(spec: str) -> str:
    """The table row's writer name: ``scripted``, or the served model's name."""
    return spec if spec == "scripted" else spec.partition("#")[2] or spec
