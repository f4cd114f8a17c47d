"""The transformers backend: any ``AutoModelForImageTextToText`` + ``AutoProcessor`` with a chat template.

Spec: ``transformers:<hub id or local path>`` or the bare id / path. Hub ids resolve through the
user's HF cache; with ``HF_HUB_OFFLINE=1`` nothing touches the network (``local_files_only``).
Everything is loaded and checked when the backend is built, so a missing checkpoint, missing
weights (never a random init) or a processor without a chat template fail before the first sample.

Each request becomes one user turn: its images first (one ``{"type": "image"}`` part each, in
order), then the prompt text. A batch is padded on the left and decoded greedily in one
``generate`` call; replies are the new tokens decoded without special tokens.

Under ``accelerate launch`` each process puts its model on its own device (``LOCAL_RANK``); the
runner shards the pending items across processes.

Example:
    >>> import tempfile
    >>> from bspatial.evaluation.vlm.tiny_checkpoint import write_tiny_checkpoint
    >>> path = write_tiny_checkpoint(tempfile.mkdtemp() + "/tiny")
    >>> backend = TransformersBackend(str(path), max_new_tokens=4)
    >>> backend.generation_settings()
    {'do_sample': False, 'max_new_tokens': 4}
    >>> backend.identity()["dtype"]
    'float32'
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from bspatial.evaluation.vlm.backend_api import Request, Response

logger = logging.getLogger(__name__)

# Not from the paper (it reports hosted / vLLM runs): room for a short reasoning trace before the
# answer; lmms-eval's default for chat VLMs. Thinking models may need --max-new-tokens 4096+.
DEFAULT_MAX_NEW_TOKENS = 1024
DTYPES = ("auto", "float32", "bfloat16", "float16")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: missing, incomplete, or without a chat template."""


@dataclass
class TransformersBackend:
    """Greedy (by default batched) generation with a local image-text model.

    Args:
        model: a local checkpoint folder or a hub id (resolved from the HF cache).
        revision: hub branch, tag or commit (hub ids only).
        dtype: ``auto`` (the checkpoint's), ``float32``, ``bfloat16`` or ``float16``.
        device_map: passed to ``from_pretrained`` (e.g. ``"auto"`` to spread a large model over
            GPUs); None puts the whole model on this process's device.
        max_new_tokens: generation budget per reply.
        chat_template_kwargs: extra variables for the chat template (e.g. ``{"enable_thinking": False}``).
        trust_remote_code: allow checkpoints whose classes live in the checkpoint.
    """

    model: str
    revision: str | None = None
    dtype: str = "auto"
    device_map: str | dict | None = None
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    trust_remote_code: bool = False
    spec: str = ""
    # Requests without images reach the processor as text only (_encode passes no images). A checkpoint whose
    # processor insists on an image fails at its first request with the processor's own error.
    accepts_text_only: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"transformers: dtype must be one of {DTYPES}, got {self.dtype!r}")
        if isinstance(self.max_new_tokens, bool) or not isinstance(self.max_new_tokens, int) or self.max_new_tokens < 1:
            raise ValueError(f"transformers: max_new_tokens must be a positive int, got {self.max_new_tokens!r}")
        self.spec = self.spec or f"transformers:{self.model}"
        self._source, self._resolved, self._commit = resolve_checkpoint(self.model, self.revision)
        self._processor = self._load_processor()
        self._model = self._load_model()

    # ------------------------------------------------------------------ protocol

    def identity(self) -> dict[str, Any]:
        """Checkpoint (hub id + commit, or resolved local path + file stamps), dtype, chat template hash."""
        where = {"model": self.model, "revision": self._commit} if self._commit else {"path": str(self._resolved), "files": _stamp(self._resolved)}
        template = self._processor.chat_template or ""
        return {
            "kind": "transformers",
            **where,
            "class": type(self._model).__name__,
            "dtype": str(self._model.dtype).removeprefix("torch."),
            "chat_template": hashlib.sha256(template.encode()).hexdigest()[:16],
        }

    def generation_settings(self) -> dict[str, Any]:
        """Decoding settings; the batch size is left out (greedy replies do not depend on it)."""
        settings: dict[str, Any] = {"do_sample": False, "max_new_tokens": self.max_new_tokens}
        if self.chat_template_kwargs:
            settings["chat_template_kwargs"] = dict(sorted(self.chat_template_kwargs.items()))
        return settings

    def generate(self, requests: Sequence[Request], max_new_tokens: int | None = None) -> list[Response]:
        """One greedy ``generate`` call for the whole batch (left padding); replies in order.

        ``max_new_tokens`` overrides the backend's budget for this call (the local server uses it
        for clients that ask for fewer tokens).
        """
        import torch

        if not requests:
            return []
        start = time.perf_counter()
        inputs = self._encode(requests)
        with torch.inference_mode():
            output = self._model.generate(
                **inputs,
                do_sample=False,
                max_new_tokens=max_new_tokens or self.max_new_tokens,
                pad_token_id=self._processor.tokenizer.pad_token_id,
            )
        new_tokens = output[:, inputs["input_ids"].shape[1] :]
        texts = self._processor.batch_decode(new_tokens, skip_special_tokens=True)
        latency = (time.perf_counter() - start) / len(requests)
        return [Response(text=text, latency_s=latency) for text in texts]

    # ------------------------------------------------------------------ internals

    def _encode(self, requests: Sequence[Request]):
        prompts = [
            self._processor.apply_chat_template(
                [_user_turn(r)], add_generation_prompt=True, tokenize=False, **self.chat_template_kwargs
            )
            for r in requests
        ]
        images = [[image.convert("RGB") for image in r.images_pil()] for r in requests]
        kwargs: dict[str, Any] = {"text": prompts, "padding": True, "return_tensors": "pt"}
        if any(images):
            kwargs["images"] = images
        inputs = self._processor(**kwargs)
        return inputs.to(self._model.device)

    def _load_processor(self):
        from transformers import AutoProcessor

        try:
            processor = AutoProcessor.from_pretrained(self._source, **self._hub_kwargs())
        except (OSError, ValueError) as error:
            raise CheckpointError(f"transformers: cannot load the processor of {self.model!r}: {error}") from error
        if not getattr(processor, "chat_template", None):
            raise CheckpointError(f"transformers: the processor of {self.model!r} has no chat template; "
                                  "the harness sends chat messages (images, then the prompt)")
        return self._ready_for_batching(processor, "transformers")

    def _ready_for_batching(self, processor, label: str):
        """Left padding (decoder-only batching: new tokens follow the prompt) and a pad token, or an error."""
        processor.tokenizer.padding_side = "left"
        if processor.tokenizer.pad_token_id is None:
            raise CheckpointError(f"{label}: the tokenizer of {self.model!r} has no pad token; batching needs one")
        return processor

    def _load_kwargs(self) -> dict[str, Any]:
        """``from_pretrained`` keyword arguments of ``dtype`` and ``device_map``."""
        import torch

        kwargs: dict[str, Any] = {"dtype": self.dtype if self.dtype == "auto" else getattr(torch, self.dtype)}
        if self.device_map is not None:
            kwargs["device_map"] = self.device_map
        return kwargs

    def _load_model(self):
        from transformers import AutoModelForImageTextToText

        kwargs = self._load_kwargs()
        try:
            model, info = AutoModelForImageTextToText.from_pretrained(
                self._source, output_loading_info=True, **kwargs, **self._hub_kwargs()
            )
        except (OSError, ValueError) as error:
            raise CheckpointError(f"transformers: cannot load the model {self.model!r}: {error}") from error
        if info.get("missing_keys"):
            missing = sorted(info["missing_keys"])
            raise CheckpointError(
                f"transformers: {self.model!r} lacks {len(missing)} weights (e.g. {missing[:3]}); "
                "refusing to evaluate a partly random model"
            )
        if self.device_map is None:
            model.to(default_device())
        return model.eval()

    def _hub_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"trust_remote_code": self.trust_remote_code}
        if self._commit:
            kwargs.update(revision=self._commit, local_files_only=hub_offline())
        return kwargs


def _user_turn(request: Request) -> dict[str, Any]:
    """Images first, in order, then the prompt text (Appendix 15 prompts follow the frames)."""
    parts: list[dict[str, Any]] = [{"type": "image"} for _ in request.images]
    parts.append({"type": "text", "text": request.prompt})
    return {"role": "user", "content": parts}


def hub_offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` is set to a true value (then nothing may be downloaded)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def default_device() -> str:
    """This process's device: its ``LOCAL_RANK`` GPU under ``accelerate launch``, else cuda:0 or cpu."""
    import torch

    if torch.cuda.is_available():
        return f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}"
    return "cpu"


def resolve_checkpoint(model: str, revision: str | None = None) -> tuple[str, Path, str | None]:
    """``(source for from_pretrained, resolved folder, hub commit or None)``.

    A string naming an existing folder is a local checkpoint; a string that looks like a path
    (``/``, ``./``, ``../``, ``~``) but does not exist is an error; anything else is a hub id whose
    ``config.json`` is looked up in the HF cache (downloaded only when ``HF_HUB_OFFLINE`` is unset).

    Raises:
        CheckpointError: the folder or hub id cannot be found, with the reason.
    """
    path = Path(model).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise CheckpointError(f"transformers: {model!r} is a folder without config.json, not a checkpoint")
        if revision:
            raise CheckpointError(f"transformers: revision {revision!r} applies to hub ids, not the local folder {model!r}")
        return str(path.resolve()), path.resolve(), None
    if model.startswith(("/", "./", "../", "~", ".\\")) or path.exists():
        raise CheckpointError(f"transformers: checkpoint folder {model!r} does not exist")
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    offline = hub_offline()
    try:
        config = Path(hf_hub_download(model, "config.json", revision=revision, local_files_only=offline))
    except LocalEntryNotFoundError as error:
        hint = "HF_HUB_OFFLINE is set and it is not in the HF cache" if offline else "it is not cached and the Hub is unreachable"
        raise CheckpointError(f"transformers: cannot find {model!r}: {hint} (download it first, e.g. "
                              f"`hf download {model}`, or pass a local folder)") from error
    except (HfHubHTTPError, ValueError, OSError) as error:
        raise CheckpointError(f"transformers: cannot resolve {model!r} on the Hub: {error}") from error
    folder = config.parent  # <cache>/models--org--name/snapshots/<commit>/
    return model, folder, folder.name


def _stamp(folder: Path) -> str:
    """A digest of the checkpoint's top-level files (name, size, mtime): a rewritten checkpoint differs."""
    entries = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file())
    return hashlib.sha256(repr(entries).encode()).hexdigest()[:16]


def build(argument: str, **options: Any) -> TransformersBackend:
    """Registry factory for ``transformers:<id or path>`` (and bare ids / paths)."""
    if not argument:
        raise ValueError("transformers: the spec needs a hub id or a local path, e.g. 'transformers:Qwen/Qwen3.5-4B'")
    return TransformersBackend(argument, spec=f"transformers:{argument}", **options)


__all__ = ["DEFAULT_MAX_NEW_TOKENS", "CheckpointError", "TransformersBackend", "resolve_checkpoint"]
