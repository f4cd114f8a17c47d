"""Policy variants of paper Section 4.2 / Appendix C.1 that change what trains or how it starts.

* frozen-VLM baseline: the model as built (``config.freeze_vlm=True``); nothing to do here.
* +LoRA-VLM: :func:`apply_lora` (peft; rank 16, alpha 16, no dropout, every ``nn.Linear`` of the
  language model and the vision encoder; the action expert trains in full via ``modules_to_save``).
* +DROID-style initialisation: :func:`load_action_expert` copies ``action_expert.*`` (the expert and its
  action / state / time projections) from another checkpoint and reports matched / missing / unexpected
  / shape-mismatched keys.
* IR variants (dot, dot + anchor, attention map) are config fields (``ir_mode``, ``first_frame_anchor``).

Not remote code: this file imports peft and reads checkpoint files, so checkpoints never carry it
(LoRA is merged into the base weights before a checkpoint is saved for ``AutoModel``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

logger = logging.getLogger(__name__)

# Appendix C.1: "LoRA (rank 16, alpha 16, no dropout) on every linear layer of the language model and
# the vision encoder".
LORA_RANK = 16
LORA_ALPHA = 16
LORA_DROPOUT = 0.0
# The one submodule trained from scratch in every variant (see BSpatialActionExpert).
EXPERT_MODULE = "action_expert"
# Where the two VLM towers live inside BSpatialVLAForActionPrediction (Qwen3_5Model's children).
LORA_TOWERS = ("vlm.language_model.", "vlm.visual.")


@dataclass
class TrainableParameters:
    """What trains after a variant is applied."""

    trainable: int
    total: int
    targeted_modules: list[str] = field(default_factory=list)

    @property
    def fraction(self) -> float:
        return self.trainable / self.total if self.total else 0.0

    def __str__(self) -> str:
        return f"trainable {self.trainable:,} of {self.total:,} parameters ({100 * self.fraction:.2f}%)"


def count_parameters(model: nn.Module) -> TrainableParameters:
    """Trainable and total parameter counts (shared tensors counted once)."""
    seen, trainable, total = set(), 0, 0
    for p in model.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        total += p.numel()
        trainable += p.numel() if p.requires_grad else 0
    return TrainableParameters(trainable=trainable, total=total)


def lora_target_modules(model: nn.Module) -> list[str]:
    """Exact names of every ``nn.Linear`` in the language model and the vision encoder.

    Exact names, not a regex over suffixes: a loose pattern such as ``.*proj`` also matches the
    vision patch embedding (a Conv3d named ``patch_embed.proj``) and the expert's projections.
    """
    return [name for name, module in model.named_modules()
            if isinstance(module, nn.Linear) and name.startswith(LORA_TOWERS)]


def apply_lora(model: nn.Module, rank: int = LORA_RANK, alpha: int = LORA_ALPHA, dropout: float = LORA_DROPOUT):
    """Wrap the policy in a peft LoRA model (+LoRA-VLM variant).

    Returns:
        ``(peft_model, TrainableParameters)``. ``peft_model.compute_loss`` / ``sample_actions`` work as
        on the base model; ``peft_model.merge_and_unload()`` gives a plain policy to ``save_pretrained``.
    """
    from peft import LoraConfig, get_peft_model

    targets = lora_target_modules(model)
    if not targets:
        raise ValueError(f"no nn.Linear found under {LORA_TOWERS}; is this a BSpatialVLAForActionPrediction?")
    config = LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout, target_modules=targets,
                        modules_to_save=[EXPERT_MODULE], bias="none")
    peft_model = get_peft_model(model, config)
    report = count_parameters(peft_model)
    report.targeted_modules = targets
    logger.info("LoRA r=%d alpha=%d on %d linear layers: %s", rank, alpha, len(targets), report)
    return peft_model, report


@dataclass
class ExpertInitReport:
    """Outcome of :func:`load_action_expert`: key lists relative to the model's state dict."""

    matched: list[str]
    missing: list[str]
    unexpected: list[str]
    shape_mismatched: list[str]

    def __str__(self) -> str:
        return (f"{len(self.matched)} matched, {len(self.missing)} missing, {len(self.unexpected)} unexpected, "
                f"{len(self.shape_mismatched)} shape-mismatched keys")


def _read_checkpoint(path: Path, prefix: str) -> dict[str, torch.Tensor]:
    from safetensors import safe_open

    index = path / "model.safetensors.index.json"
    files = sorted(set(json.loads(index.read_text())["weight_map"].values())) if index.exists() else ["model.safetensors"]
    missing = [name for name in files if not (path / name).exists()]
    if missing:
        raise FileNotFoundError(f"checkpoint {str(path)!r} lacks {missing}")
    tensors = {}
    for name in files:
        with safe_open(path / name, framework="pt") as f:
            tensors.update({k: f.get_tensor(k) for k in f.keys() if k.startswith(prefix)})
    return tensors


def load_action_expert(model: nn.Module, source, strict: bool = False,
                       prefix: str = EXPERT_MODULE + ".") -> ExpertInitReport:
    """DROID-style initialisation: copy ``action_expert.*`` from another checkpoint into ``model``.

    Args:
        model: the policy to initialise (its VLM is left as is).
        source: a checkpoint folder (``model.safetensors`` or a sharded index), a model, or a state dict.
        strict: raise ``ValueError`` unless every expert key is matched with the same shape. Otherwise
            shape-mismatched tensors (e.g. action projections of a robot with another action width) keep
            their fresh initialisation and are listed in the report.

    Returns:
        An :class:`ExpertInitReport`; it is also logged.
    """
    if isinstance(source, nn.Module):
        incoming = {k: v for k, v in source.state_dict().items() if k.startswith(prefix)}
    elif isinstance(source, dict):
        incoming = {k: v for k, v in source.items() if k.startswith(prefix)}
    else:
        incoming = _read_checkpoint(Path(source), prefix)
    own = {k: v for k, v in model.state_dict().items() if k.startswith(prefix)}
    matched = sorted(k for k in own if k in incoming and incoming[k].shape == own[k].shape)
    report = ExpertInitReport(
        matched=matched,
        missing=sorted(k for k in own if k not in incoming),
        unexpected=sorted(k for k in incoming if k not in own),
        shape_mismatched=sorted(k for k in own if k in incoming and incoming[k].shape != own[k].shape),
    )
    if strict and (report.missing or report.unexpected or report.shape_mismatched):
        raise ValueError(f"expert initialisation from {source if isinstance(source, (str, Path)) else type(source).__name__}"
                         f" is not exact: {report}; missing {report.missing[:10]}, unexpected {report.unexpected[:10]}, "
                         f"shape-mismatched {report.shape_mismatched[:10]}")
    with torch.no_grad():
        for key in matched:
            own[key].copy_(incoming[key].to(own[key].dtype))
    logger.info("action expert initialised: %s", report)
    return report


__all__ = ["ExpertInitReport", "LORA_ALPHA", "LORA_DROPOUT", "LORA_RANK", "TrainableParameters", "apply_lora",
           "count_parameters", "load_action_expert", "lora_target_modules"]
