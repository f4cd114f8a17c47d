"""Cue pretraining: teach a backbone trained from scratch where an IR cue is, before it learns to act.

pi0.5 starts from a VLM that already localises objects and marks; the CPU presets' backbone starts from random
weights, and a red dot on a real head image is a needle its vision tower does not find while it also learns to
act (``training_config.CPU_REACH_NOTES``, "Where the cue is lost"). This stage trains the vision tower and the
``image_tokens`` pointing readout alone (no language model, no expert: ~5x cheaper per step than a policy step)
on training frames whose cue is redrawn at a random pixel every step, with that pixel as the label. The policy
training then starts from a vision tower that sees the cue.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.data import default_collate

logger = logging.getLogger(__name__)

# How many training frames the stage draws once and reuses (the cue is redrawn on them every step, so the
# backgrounds need not be many; decoding video is the slow part of a step).
CUE_PRETRAIN_FRAMES = 512
# Cue pixels are drawn this far inside the 224 grid (a dot half outside the image is not what the cue looks like).
CUE_MARGIN_PX = 16


@dataclass(frozen=True)
class CuePretraining:
    """What the stage measured: the point loss per step and the mean pixel error of the last logged window."""

    steps: int
    losses: list[float]
    final_error_px: float

    def as_dict(self) -> dict:
        return {"steps": self.steps, "first_loss": self.losses[0] if self.losses else None,
                "last_loss": self.losses[-1] if self.losses else None, "final_error_px": self.final_error_px}


def _frame_subset(dataset, count: int, seed: int, keys: Sequence[str]) -> list[dict]:
    """``count`` seeded frames of ``dataset`` (fewer when it is smaller), keeping only ``keys``."""
    rng = np.random.default_rng([seed, 7])
    indices = rng.choice(len(dataset), size=min(count, len(dataset)), replace=False)
    frames = []
    for number, index in enumerate(indices.tolist()):
        item = dataset[int(index)]
        frames.append({k: item[k] for k in keys})
        if (number + 1) % 128 == 0:
            logger.info("cue pretraining: decoded %d / %d frames", number + 1, len(indices))
    return frames


def pretrain_cue(model, processor, dataset, steps: int, *, batch_size: int, lr: float, seed: int = 0,
                 log_every: int = 50, frames: int = CUE_PRETRAIN_FRAMES) -> CuePretraining:
    """Train ``model``'s vision tower and pointing readout to point at the IR cue for ``steps`` steps.

    ``dataset`` yields LeRobot frames (uint8 images, state, task); each step draws ``batch_size`` of
    ``frames`` seeded frames and a uniformly random cue pixel per frame, renders the IR image there with the
    processor, and regresses the readout's point (learned query only) onto that pixel. Only the vision tower and
    the readout change; the optimiser is the stage's own.

    Raises:
        ValueError: the model has no IR image or no ``image_tokens`` readout, or ``steps`` / ``batch_size`` < 1.
    """
    from .ir_rendering import IR_IMAGE_SIZE
    from .processing_bspatial_vla import IR_TARGET_KEY, STATE_KEY, TASK_KEY, image_key

    config = model.config
    if config.ir_mode == "none" or not config.predicts_point or config.point_readout != "image_tokens":
        raise ValueError(f"cue pretraining needs an IR policy with the image_tokens pointing readout; got ir_mode="
                         f"{config.ir_mode!r}, point_loss_weight={config.point_loss_weight!r}, point_readout="
                         f"{config.point_readout!r}")
    if steps < 1 or batch_size < 1:
        raise ValueError(f"steps and batch_size must be >= 1, got {steps!r} and {batch_size!r}")
    from .modeling_bspatial_vla import image_token_centres

    camera_keys = [image_key(name, processor.camera_names) for name in processor.camera_names]
    pool = _frame_subset(dataset, frames, seed, [*camera_keys, STATE_KEY, TASK_KEY])
    readout = model.action_expert.point_readout
    params = [*model.vlm.visual.parameters(), *readout.parameters()]
    trainable = [p.requires_grad for p in params]
    for p in params:
        p.requires_grad_(True)
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    rng = np.random.default_rng([seed, 8])
    losses: list[float] = []
    errors: list[float] = []
    model.train()
    try:
        for step in range(steps):
            chosen = rng.choice(len(pool), size=batch_size, replace=len(pool) < batch_size)
            batch = default_collate([pool[i] for i in chosen])   # what a DataLoader would hand over
            pixels = rng.uniform(CUE_MARGIN_PX, IR_IMAGE_SIZE - CUE_MARGIN_PX, size=(batch_size, 2))
            batch[IR_TARGET_KEY] = torch.as_tensor(pixels, dtype=torch.float32)
            inputs = processor(batch)
            tokens = model.image_features(inputs["pixel_values"], inputs["image_grid_thw"])
            tokens = tokens.reshape(batch_size, -1, tokens.shape[-1])
            centres, in_frame = image_token_centres(torch.ones(tokens.shape[:2], dtype=torch.long),
                                                    inputs["image_grid_thw"], model.merge_size,
                                                    config.point_frame_slots)
            point = readout(tokens, centres, in_frame)
            loss = (point - inputs["point_target"]).pow(2).sum(-1).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
            errors.append(float((processor.point_pixels(point.detach()) - torch.as_tensor(pixels)).norm(dim=-1).mean()))
            if (step + 1) % log_every == 0 or step + 1 == steps:
                logger.info("cue pretraining step %d / %d: point loss %.4f, error %.1f px (224 grid)", step + 1, steps,
                            float(np.mean(losses[-log_every:])), float(np.mean(errors[-log_every:])))
    finally:
        for p, flag in zip(params, trainable, strict=True):
            p.requires_grad_(flag)
        optimizer.zero_grad(set_to_none=True)
    return CuePretraining(steps, losses, float(np.mean(errors[-log_every:])))

