"""Training configuration of BEHAVIOR-Spatial-VLA: Table S3's settings and the named presets.

The model config (:mod:`configuration_bspatial_vla`) describes architecture only; optimizer, schedule,
data and logging live here (STYLE rule 3), in one explicit list of presets (:data:`PRESETS`).

Not remote code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from bspatial.construction.navigation_vqa import CONTEXT_FRAMES

# Table S3 common settings: AdamW betas (0.9, 0.95), no weight decay, clipping at 1.0, bf16 without
# EMA, 4k linear warmup steps, cosine schedule, action horizon 32.
ADAM_BETAS = (0.9, 0.95)
WEIGHT_DECAY = 0.0
GRAD_CLIP_NORM = 1.0
WARMUP_STEPS = 4000
BACKBONE = "Qwen/Qwen3.5-4B"  # paper Section 4
TINY_BACKBONE = "tiny"  # the offline random tiny Qwen3.5 of tiny_backbone (tests, demo)
# Policy images are 224 x 224 (Appendix 13.3); Qwen's resize keeps 224 (7 x 32) unchanged.
POLICY_IMAGE_PIXELS = 224 * 224


@dataclass(frozen=True)
class TrainingConfig:
    """Optimisation, schedule, data and logging for one run (the model config is separate, STYLE rule 3).

    Args:
        name: preset name.
        batch_size: global batch (all processes together) per optimiser step (Table S3).
        peak_lr: learning rate after warmup (Table S3).
        max_steps: total optimiser steps; the cosine schedule ends here (Table S3 "Checkpoint").
        warmup_steps: linear warmup from 0 to ``peak_lr``.
        adam_betas, weight_decay, grad_clip_norm: AdamW and clipping (Table S3).
        mixed_precision: ``"bf16"`` (Table S3) is used where the accelerator supports it, else fp32.
        backbone: Qwen3.5 checkpoint id / path, or ``"tiny"`` for the offline random tiny backbone.
        vlm_adapter: ``"frozen"`` (baseline) or ``"lora"`` (+LoRA-VLM, Appendix C.1).
        expert_init: ``"fresh"`` or ``"checkpoint"`` (+DROID-style init: ``init_expert_from`` needed).
        model_overrides: ``BSpatialVLAConfig`` fields of the variant (e.g. ``ir_mode``).
        data_fraction: per-task fraction of episodes (1.0, or the nested 0.3 / 0.5 subsets).
        task_column: episode metadata column whose value defines a task for uniform sampling.
        save_every, log_every: checkpoint and logging periods in steps.
        num_workers: DataLoader worker processes.
        seed: seeds batches, noise, times, subsets and the model init.
        image_pixels: maximum pixels per image after Qwen's resize.
    """

    name: str
    batch_size: int
    peak_lr: float
    max_steps: int
    warmup_steps: int = WARMUP_STEPS
    adam_betas: tuple[float, float] = ADAM_BETAS
    weight_decay: float = WEIGHT_DECAY
    grad_clip_norm: float = GRAD_CLIP_NORM
    mixed_precision: str = "bf16"
    backbone: str = BACKBONE
    vlm_adapter: str = "frozen"
    expert_init: str = "fresh"
    model_overrides: Mapping = field(default_factory=dict)
    data_fraction: float = 1.0
    task_column: str = "tasks"
    save_every: int = 5000
    log_every: int = 50
    num_workers: int = 4
    seed: int = 0
    image_pixels: int = POLICY_IMAGE_PIXELS

    def __post_init__(self):
        for name in ("batch_size", "max_steps", "save_every", "log_every", "image_pixels"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.warmup_steps < 0 or self.num_workers < 0:
            raise ValueError(f"warmup_steps and num_workers must be >= 0, got {self.warmup_steps!r}, {self.num_workers!r}")
        if not self.peak_lr > 0:
            raise ValueError(f"peak_lr must be positive, got {self.peak_lr!r}")
        if self.vlm_adapter not in ("frozen", "lora"):
            raise ValueError(f"vlm_adapter must be 'frozen' or 'lora', got {self.vlm_adapter!r}")
        if self.expert_init not in ("fresh", "checkpoint"):
            raise ValueError(f"expert_init must be 'fresh' or 'checkpoint', got {self.expert_init!r}")
        if self.mixed_precision not in ("bf16", "no"):
            raise ValueError(f"mixed_precision must be 'bf16' or 'no', got {self.mixed_precision!r}")
        if not 0 < self.data_fraction <= 1:
            raise ValueError(f"data_fraction must lie in (0, 1], got {self.data_fraction!r}")


# Every named preset, in one list (Table S3 rows, plus the nested data subsets and `tiny`); PRESETS
# below adds the tiny variants derived from them.
_DECLARED_PRESETS: tuple[TrainingConfig, ...] = (
    TrainingConfig("pi05_qwen_frozen", batch_size=256, peak_lr=4e-4, max_steps=100_000),
    TrainingConfig("pi05_qwen_lora", batch_size=128, peak_lr=2.8e-4, max_steps=110_000, vlm_adapter="lora"),
    TrainingConfig("pi05_qwen_droid_init", batch_size=256, peak_lr=4e-4, max_steps=90_000, expert_init="checkpoint"),
    TrainingConfig("pi05_qwen_dot_ir", batch_size=256, peak_lr=4e-4, max_steps=100_000,
                   model_overrides={"ir_mode": "dot"}),
    TrainingConfig("pi05_qwen_dot_ir_anchor", batch_size=256, peak_lr=4e-4, max_steps=100_000,
                   model_overrides={"ir_mode": "dot", "first_frame_anchor": True}),
    TrainingConfig("pi05_qwen_attn_map_ir", batch_size=256, peak_lr=4e-4, max_steps=100_000,
                   model_overrides={"ir_mode": "attn_map"}),
    # Section 5 / Appendix 16.9: the data-scaling study retrains the dot-IR policy on nested subsets.
    TrainingConfig("pi05_qwen_dot_ir_data50", batch_size=256, peak_lr=4e-4, max_steps=100_000, data_fraction=0.5,
                   model_overrides={"ir_mode": "dot"}),
    TrainingConfig("pi05_qwen_dot_ir_data30", batch_size=256, peak_lr=4e-4, max_steps=100_000, data_fraction=0.3,
                   model_overrides={"ir_mode": "dot"}),
    # Table S3 navigation: 10 tasks sampled uniformly (task_column: the recorder's task name, not the
    # instruction); Section 4.1: the policy also sees the scene-context frames, as many as the tour gives.
    TrainingConfig("pi05_qwen_navigation", batch_size=512, peak_lr=4.2e-4, max_steps=60_000, task_column="task_name",
                   model_overrides={"max_context_frames": CONTEXT_FRAMES}),
    # Tests and the demo: tiny random backbone, fp32, a few steps, no worker processes.
    TrainingConfig("tiny", batch_size=2, peak_lr=1e-3, max_steps=4, warmup_steps=1, mixed_precision="no",
                   backbone=TINY_BACKBONE, save_every=2, log_every=1, num_workers=0, image_pixels=64 * 64),
)
# The six policy variants of Section 4.2 (Table 4 rows); each gets a tiny counterpart below.
VARIANT_PRESETS = ("pi05_qwen_frozen", "pi05_qwen_lora", "pi05_qwen_droid_init", "pi05_qwen_dot_ir",
                   "pi05_qwen_dot_ir_anchor", "pi05_qwen_attn_map_ir")
# Fields that define a variant (what trains, how it starts, what it sees); everything else of a tiny
# variant (backbone, batch, steps, precision) comes from `tiny`, so the tiny and the paper variant
# cannot drift apart.
VARIANT_FIELDS = ("vlm_adapter", "expert_init", "model_overrides", "data_fraction")
# The navigation policy (Table S3's navigation row) also differs in what a task is (the task name).
NAVIGATION_PRESET = "pi05_qwen_navigation"
NAVIGATION_FIELDS = (*VARIANT_FIELDS, "task_column")
TINY_PREFIX = "tiny_"


def _tiny_variants(presets: Sequence[TrainingConfig]) -> tuple[TrainingConfig, ...]:
    known = {p.name: p for p in presets}
    fields = {**{name: VARIANT_FIELDS for name in VARIANT_PRESETS}, NAVIGATION_PRESET: NAVIGATION_FIELDS}
    return tuple(replace(known["tiny"], name=TINY_PREFIX + name.removeprefix("pi05_qwen_"),
                         **{f: getattr(known[name], f) for f in names}) for name, names in fields.items())


# The declared presets, then tiny_frozen, tiny_lora, tiny_droid_init, tiny_dot_ir, tiny_dot_ir_anchor,
# tiny_attn_map_ir and tiny_navigation (tests and demos of every variant and of the navigation policy).
PRESETS: tuple[TrainingConfig, ...] = _DECLARED_PRESETS + _tiny_variants(_DECLARED_PRESETS)


def get_preset(name: str, **overrides) -> TrainingConfig:
    """The named preset, with fields replaced by ``overrides``; unknown names list the known ones.

    Example:
        >>> get_preset("pi05_qwen_lora").peak_lr, get_preset("tiny", max_steps=2).max_steps
        (0.00028, 2)
    """
    known = {preset.name: preset for preset in PRESETS}
    if name not in known:
        raise ValueError(f"unknown preset {name!r}; known presets: {sorted(known)}")
    return replace(known[name], **overrides)
