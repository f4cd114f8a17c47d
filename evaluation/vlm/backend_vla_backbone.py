"""The VLM inside a VLA checkpoint, evaluated as a VLM: ``vla-backbone:<checkpoint>``.

Table 1's "VLM backbones extracted from released VLA models" rows, in one step: the language model a
policy was trained on is pulled out of the policy checkpoint and answers the VQA suite through the
same chat-template and greedy-generation path as :class:`TransformersBackend` (this class only
changes where the weights and the processor come from), so forgetting during action training is the
difference between this row and the base VLM's ``transformers:<base>`` row.

``<checkpoint>`` is a local folder, one of:

- a ``pretrained_model/`` export (``config.json`` + safetensors weights + the policy's processor);
- a training checkpoint ``checkpoints/step_<n>/`` (its ``pretrained_model/``);
- a training output folder (its final ``pretrained_model/``; a run that has not finished has none,
  and the error names its newest checkpoint instead of silently evaluating it).

Which VLA: any transformers checkpoint whose ``config.json`` holds exactly one sub-config
``<name>_config`` of an image-text-to-text model type (ours: ``vlm_config``, a ``qwen3_5`` config)
and whose weights keep that model under ``<name>.`` (ours: ``vlm.``). The weights are renamed
``<name>.`` -> ``model.`` while loading (transformers' ``key_mapping``), so the extracted backbone
is exactly the VLA's tensors; every weight under ``<name>.`` must land in the backbone and every
backbone weight must come from the checkpoint, else loading fails (never a random init).

The LM head: our policy holds the backbone as ``Qwen3_5Model`` (no head; the action expert reads
hidden states). A backbone that ties its head to the token embeddings is complete; an untied one
needs ``base=<hub id or folder of the backbone VLM>`` (``--model-args base=Qwen/Qwen3.5-4B``), whose
``lm_head.weight`` is read from its safetensors. The error for a missing head names the base the
VLA recorded.

The processor is the policy's own (its tokenizer with its chat template, its image processor), wrapped
in the backbone model type's transformers processor class; that class's video processor is built with
the image processor's patch sizes (the harness sends no videos). The run fingerprint names the VLA
checkpoint (path + file stamps), the weight prefix, that it is a backbone extraction, and the base.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bspatial.evaluation.vlm.backend_transformers import CheckpointError, TransformersBackend, _stamp, resolve_checkpoint

logger = logging.getLogger(__name__)

KIND = "vla-backbone"
# Where the extracted backbone's weights go: the ``model`` attribute of an
# ``AutoModelForImageTextToText`` (``Qwen3_5ForConditionalGeneration.model`` is a ``Qwen3_5Model``).
TARGET_PREFIX = "model."
LM_HEAD = "lm_head.weight"
SUB_CONFIG_SUFFIX = "_config"
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json")


def resolve_vla_export(checkpoint: str) -> Path:
    """The ``pretrained_model/``-style folder a ``vla-backbone:`` argument names (see module docstring).

    Raises:
        CheckpointError: the folder is missing, holds no export, or the export lacks config or weights;
            the message names the path.
    """
    from bspatial.modeling.train import PRETRAINED_DIR, latest_checkpoint

    path = Path(checkpoint).expanduser()
    if not path.is_dir() and not path.exists() and _looks_like_hub_id(checkpoint):
        raise CheckpointError(f"{KIND}: {checkpoint!r} is not a local folder; {KIND} reads a local checkpoint "
                              f"(download it first, e.g. `hf download {checkpoint} --local-dir <folder>`)")
    if not path.is_dir():
        raise CheckpointError(f"{KIND}: checkpoint folder {checkpoint!r} does not exist "
                              "(a pretrained_model/ export, a checkpoints/step_<n>/ folder or a training output folder)")
    if not (path / "config.json").is_file():
        if not (path / PRETRAINED_DIR).is_dir():
            newest = latest_checkpoint(path)
            hint = (f"; the run has no final export yet, its newest checkpoint is {newest} "
                    f"(evaluate it with '{KIND}:{newest}')") if newest else ""
            raise CheckpointError(f"{KIND}: {str(path)!r} holds neither config.json nor {PRETRAINED_DIR}/{hint}")
        path = path / PRETRAINED_DIR
    if not (path / "config.json").is_file():
        raise CheckpointError(f"{KIND}: {str(path)!r} has no config.json")
    if not any((path / name).is_file() for name in WEIGHT_FILES):
        raise CheckpointError(f"{KIND}: {str(path)!r} has no weights (expected one of {list(WEIGHT_FILES)})")
    return path.resolve()


def _looks_like_hub_id(text: str) -> bool:
    """``org/name``: one slash, no leading ``/``, ``.`` or ``~`` (those are paths)."""
    return text.count("/") == 1 and not text.startswith(("/", ".", "~")) and all(text.split("/"))


def backbone_config(export: Path) -> tuple[str, dict[str, Any]]:
    """``(weight prefix, backbone config dict)`` of the one image-text-to-text sub-config of a VLA config.

    Raises:
        CheckpointError: no such sub-config, or more than one (the message lists the candidates).
    """
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    config = json.loads((export / "config.json").read_text())
    found = {key: value for key, value in config.items()
             if key.endswith(SUB_CONFIG_SUFFIX) and isinstance(value, dict)
             and value.get("model_type") in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES}
    if len(found) != 1:
        what = "no" if not found else f"{len(found)} ({sorted(found)})"
        raise CheckpointError(f"{KIND}: {str(export / 'config.json')!r} (model_type {config.get('model_type')!r}) has "
                              f"{what} image-text-to-text sub-config '<name>{SUB_CONFIG_SUFFIX}'; a VLA checkpoint "
                              "names exactly one backbone VLM")
    key, value = next(iter(found.items()))
    return key.removesuffix(SUB_CONFIG_SUFFIX) + ".", value


@dataclass
class VLABackboneBackend(TransformersBackend):
    """:class:`TransformersBackend` over the backbone of a VLA checkpoint (same options, plus ``base``).

    Args:
        checkpoint: the ``vla-backbone:`` argument as given (an export, checkpoint or run folder).
        base: hub id or folder of the backbone VLM, for the LM head of an untied backbone.
    """

    checkpoint: str = ""
    base: str | None = None

    def __post_init__(self) -> None:
        if self.revision:
            raise CheckpointError(f"{KIND}: revision {self.revision!r} applies to hub ids; {KIND} takes a local folder")
        export = resolve_vla_export(self.checkpoint or self.model)
        self.checkpoint = self.checkpoint or self.model
        self.model = str(export)  # what the parent resolves, loads and stamps
        self._prefix, self._backbone = backbone_config(export)
        self.spec = self.spec or f"{KIND}:{self.checkpoint}"
        super().__post_init__()

    def identity(self) -> dict[str, Any]:
        """The parent's identity (export path + file stamps, class, dtype, chat template) as a backbone extraction."""
        identity = super().identity()
        identity.update(kind=KIND, extraction="backbone", checkpoint=self.checkpoint, weight_prefix=self._prefix,
                        backbone_model_type=self._backbone.get("model_type"))
        if self.base:
            identity["lm_head_from"] = self._base_identity
        return identity

    # ------------------------------------------------------------------ loading

    def _config(self):
        from transformers import AutoConfig

        fields = {k: v for k, v in self._backbone.items() if k != "model_type"}
        return AutoConfig.for_model(self._backbone["model_type"], **fields)

    def _load_processor(self):
        from transformers import AutoImageProcessor, AutoTokenizer

        # config= keeps transformers from reading the VLA's config.json (its auto_map would ask to run
        # the checkpoint's remote code); the tokenizer and image processor are plain transformers classes.
        config = self._config()
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.model, config=config)
            image_processor = AutoImageProcessor.from_pretrained(self.model, config=config)
        except (OSError, ValueError) as error:
            raise CheckpointError(f"{KIND}: cannot load the tokenizer / image processor of {self.model!r}: {error}") from error
        if not tokenizer.chat_template:
            raise CheckpointError(f"{KIND}: the tokenizer in {self.model!r} has no chat template; the harness sends chat "
                                  "messages (images, then the prompt)")
        processor = _wrap_processor(self._backbone["model_type"], tokenizer, image_processor, self.model)
        return self._ready_for_batching(processor, KIND)

    def _load_model(self):
        from transformers import AutoModelForImageTextToText
        from transformers.utils import logging as hf_logging

        kwargs = self._load_kwargs()
        config = self._config()
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # the action expert's weights are expected leftovers, checked below
        try:
            model, info = AutoModelForImageTextToText.from_pretrained(
                self.model, config=config, key_mapping={"^" + self._prefix.replace(".", r"\."): TARGET_PREFIX},
                output_loading_info=True, **kwargs)
        except (OSError, ValueError) as error:
            raise CheckpointError(f"{KIND}: cannot load the backbone of {self.model!r}: {error}") from error
        finally:
            hf_logging.set_verbosity(verbosity)
        self._check_loading(info, tied=bool(getattr(config, "tie_word_embeddings", False)))
        if LM_HEAD in info.get("missing_keys", ()):
            self._load_lm_head(model)
        if self.device_map is None:
            from bspatial.evaluation.vlm.backend_transformers import default_device

            model.to(default_device())
        return model.eval()

    def _check_loading(self, info: dict, tied: bool) -> None:
        missing = sorted(set(info.get("missing_keys", ())) - ({LM_HEAD} if (tied or self.base) else set()))
        if missing == [LM_HEAD]:
            named = self._backbone.get("_name_or_path") or "<the backbone VLM>"
            raise CheckpointError(
                f"{KIND}: {self.model!r} holds no LM head (the policy keeps its {self._backbone.get('model_type')} "
                f"backbone without one, and it does not tie the head to the embeddings); pass the backbone VLM it "
                f"was trained from: --model-args base={named}")
        if missing:
            raise CheckpointError(f"{KIND}: {self.model!r} lacks {len(missing)} backbone weights (e.g. {missing[:3]}); "
                                  "refusing to evaluate a partly random model")
        if tied and self.base:
            raise CheckpointError(f"{KIND}: the backbone of {self.model!r} ties its LM head to the embeddings; "
                                  f"base={self.base!r} would replace nothing, drop it")
        # A backbone weight left over means the VLA's backbone and the loaded class disagree.
        unused = sorted(k for k in info.get("unexpected_keys", ()) if k.startswith((self._prefix, TARGET_PREFIX)))
        if unused:
            raise CheckpointError(f"{KIND}: {len(unused)} backbone weights of {self.model!r} fit no parameter of "
                                  f"{self._backbone.get('model_type')} (e.g. {unused[:3]})")

    def _load_lm_head(self, model) -> None:
        import torch

        source, folder, commit = resolve_checkpoint(self.base)
        tensor = read_tensor(source, folder, commit, LM_HEAD)
        if tuple(tensor.shape) != tuple(model.lm_head.weight.shape):
            raise CheckpointError(f"{KIND}: {LM_HEAD} of base {self.base!r} has shape {tuple(tensor.shape)}, the "
                                  f"backbone of {self.model!r} needs {tuple(model.lm_head.weight.shape)}")
        with torch.no_grad():
            model.lm_head.weight.copy_(tensor.to(model.lm_head.weight.dtype))
        self._base_identity = {"model": self.base, "revision": commit} if commit else {"path": str(folder), "files": _stamp(folder)}
        logger.info("%s: LM head of %s from %s", KIND, self.model, self.base)


def _wrap_processor(model_type: str, tokenizer, image_processor, where: str):
    """The backbone model type's transformers processor over the policy's tokenizer and image processor."""
    import transformers
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES
    from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES

    name = PROCESSOR_MAPPING_NAMES.get(model_type)
    if name is None:
        raise CheckpointError(f"{KIND}: transformers has no processor class for backbone model_type {model_type!r} ({where!r})")
    cls = getattr(transformers, name)
    parts: dict[str, Any] = {"tokenizer": tokenizer, "image_processor": image_processor}
    for attribute in cls.get_attributes():
        if attribute in parts:
            continue
        if attribute != "video_processor":
            raise CheckpointError(f"{KIND}: {name} needs a {attribute}, which the checkpoint {where!r} does not carry")
        video = VIDEO_PROCESSOR_MAPPING_NAMES.get(model_type)
        video_name = next(iter(video.values())) if isinstance(video, dict) else video
        sizes = {k: getattr(image_processor, k) for k in ("patch_size", "merge_size", "temporal_patch_size")
                 if getattr(image_processor, k, None) is not None}
        parts["video_processor"] = getattr(transformers, video_name)(**sizes)
    return cls(**parts, chat_template=tokenizer.chat_template)


def read_tensor(source: str, folder: Path, commit: str | None, name: str):
    """One tensor of a checkpoint (local folder, or hub id at ``commit``), single-file or sharded safetensors.

    Raises:
        CheckpointError: the checkpoint has no safetensors weights or no tensor ``name``.
    """
    from safetensors import safe_open

    def fetch(filename: str) -> Path | None:
        if commit is None:
            return folder / filename if (folder / filename).is_file() else None
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

        from bspatial.evaluation.vlm.backend_transformers import hub_offline

        try:
            return Path(hf_hub_download(source, filename, revision=commit, local_files_only=hub_offline()))
        except (EntryNotFoundError, LocalEntryNotFoundError):
            return None

    index = fetch("model.safetensors.index.json")
    filename = json.loads(index.read_text())["weight_map"].get(name) if index else "model.safetensors"
    path = fetch(filename) if filename else None
    if path is None:
        raise CheckpointError(f"{KIND}: the base {source!r} has no safetensors file holding {name!r}")
    with safe_open(str(path), framework="pt") as handle:
        if name not in handle.keys():
            raise CheckpointError(f"{KIND}: the base {source!r} has no tensor {name!r} in {path.name}")
        return handle.get_tensor(name)


def build(argument: str, **options: Any) -> VLABackboneBackend:
    """Registry factory for ``vla-backbone:<export, checkpoint or training output folder>``."""
    if not argument:
        raise ValueError(f"{KIND}: the spec needs a VLA checkpoint folder, e.g. '{KIND}:runs/train/pretrained_model'")
    return VLABackboneBackend(argument, checkpoint=argument, spec=f"{KIND}:{argument}", **options)


__all__ = ["KIND", "VLABackboneBackend", "backbone_config", "read_tensor", "resolve_vla_export"]
