"""Why a learner does or does not learn: a trained checkpoint against demonstrations it never saw.

Three measurements on the same frames (a few per episode, evenly spaced from its first frame), each with fixed
noise and flow times, so a number changes only when the checkpoint or the data does:

* **validation loss** (the training objective) with three prompts: the episode's recorded ``instruction``, its
  ``bare`` task name (:func:`bspatial.catalog.tasks.bare_task_name`) and a ``swapped`` instruction (another
  recorded instruction of the same task, where the data holds one). A policy that reads the instruction has a
  lower loss with the true one than with a swapped one; equal losses say the instruction is ignored.
* **open-loop action error**: mean ``|a - recorded|`` over the predicted chunk (robot units: rad for joints,
  m/s and rad/s for the base) of the sampled chunk, beside three references that read no image and no
  instruction: ``hold`` (the robot holds still: its joints at the state's joint positions, the base at rest, the
  grippers at their recorded command), ``frozen`` (the chunk's first recorded action held for the whole chunk: a
  privileged hold that knows the current command exactly) and ``mean`` (the dataset's mean action). ``*_end`` is
  the same at the chunk's last step, where a reach has moved furthest. A learner whose error is not below
  ``hold`` has not learnt the motion.
* **motion direction**: the mean cosine between the joints' predicted and recorded displacement from the state's
  joint positions to the chunk's last step (torso and arms; 0 for a direction unrelated to the recorded one, 1 for
  the same direction).
* **instruction effect**: mean ``|chunk(instruction) - chunk(swapped)|`` from the same noise: how far the
  instruction moves the sampled actions; for an IR checkpoint (``ir_mode`` not ``"none"``) the **cue effect**
  is the same with the IR point moved to another episode's (the dot drawn elsewhere).
* **point error** (checkpoints with pointing co-training, ``config.predicts_point``): the mean distance in pixels of
  the 224 grid between the predicted target point and the oracle IR point, over the frames that have one, beside
  ``point_error_centroid``, the same for a constant guess at the mean oracle point of those frames (reads nothing).
  For an IR checkpoint, ``point_to_moved_cue`` / ``point_to_true_target`` are the distances of the point predicted
  with the dot moved to another episode's point: to that moved point (the pointing reads the dot) and to the
  frame's own target (it points from the words and the layout, whatever the dot says).
* **image effect** and **state effect**: the same with the camera images, or the proprioceptive state, taken
  from another episode's frame (everything else kept). They put the two effects above on a scale: a policy
  whose state effect is large and whose image effect is near zero acts from its proprioception alone, and can
  read neither an instruction nor a cue, which only reach it through the image-and-text prefix.

Run it from ``benchmarks/learned.py`` (its ``diagnose`` step) or directly::

    from bspatial.modeling.diagnostics import diagnose
    diagnose("runs/learned/train/cpu_reach/pretrained_model", "runs/learned/demos_val", "cpu_reach")
"""

from __future__ import annotations

import logging
import os
from dataclasses import asdict, dataclass, field
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from bspatial.catalog.schema import ACTION_SLICES, PROPRIO_SLICES, STATE_DIM
from bspatial.catalog.tasks import bare_task_name
from bspatial.construction.demonstrations.demos import ORACLE_IR_TARGET_KEY, ORACLE_IR_VALID_KEY
from .training_config import get_preset
from .training_data import ProcessorCollate, build_dataset, dataset_metadata, episode_tasks

logger = logging.getLogger(__name__)

PROMPTS = ("instruction", "bare", "swapped")
"""The prompt variants of the validation loss (module docstring)."""
REFERENCES = ("hold", "frozen", "mean")
"""The open-loop references (module docstring)."""
JOINT_GROUPS = (("torso", "torso_qpos"), ("left_arm", "left_arm_qpos"), ("right_arm", "right_arm_qpos"))
"""Action groups that are absolute joint positions, and the state group holding those joints' positions."""


@dataclass(frozen=True)
class Diagnosis:
    """One checkpoint's measurements (module docstring); losses on normalised actions, errors in robot units."""

    frames: int
    episodes: int
    loss: dict[str, float]
    open_loop: dict[str, float]
    instruction_effect: float | None
    direction_cosine: float
    cue_effect: float | None = None
    trained_prompt: str = field(default="instruction")
    image_effect: float | None = None
    state_effect: float | None = None
    point_error: float | None = None
    point_error_centroid: float | None = None
    point_to_moved_cue: float | None = None
    point_to_true_target: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def swapped_instructions(episodes) -> dict[int, str]:
    """Episode -> another recorded instruction of its task (the first in sorted order that differs), for the
    episodes whose task has more than one instruction in ``episodes`` (lerobot ``meta.episodes``)."""
    names, instructions = episode_tasks(episodes, "task_name"), episode_tasks(episodes, "tasks")
    by_task: dict[str, set[str]] = {}
    for episode, name in names.items():
        by_task.setdefault(name, set()).add(instructions[episode])
    swapped = {}
    for episode, name in names.items():
        others = sorted(by_task[name] - {instructions[episode]})
        if others:
            swapped[episode] = others[0]
    return swapped


def frame_indices(lengths: Mapping[int, int], starts: Mapping[int, int], per_episode: int) -> list[int]:
    """Absolute frame indices: ``per_episode`` evenly spaced frames of each episode, its first frame included."""
    picked = []
    for episode, length in sorted(lengths.items()):
        offsets = np.unique(np.linspace(0, length, per_episode, endpoint=False).astype(int))
        picked.extend(int(starts[episode] + o) for o in offsets)
    return picked


def hold_chunk(state: np.ndarray, recorded: np.ndarray) -> np.ndarray:
    """The ``hold`` reference's chunks: joints at the state's positions, base at rest, grippers as recorded."""
    hold = np.repeat(recorded[:, :1], recorded.shape[1], axis=1).copy()
    hold[..., ACTION_SLICES["base"]] = 0.0
    for action_group, state_group in JOINT_GROUPS:
        hold[..., ACTION_SLICES[action_group]] = state[:, None, PROPRIO_SLICES[state_group]]
    return hold


def direction_cosines(predicted: np.ndarray, recorded: np.ndarray, state: np.ndarray, pad: np.ndarray) -> list[float]:
    """Per frame whose chunk is not cut by the episode's end: cos(predicted, recorded) of the joints' displacement
    from the state's positions to the chunk's last step."""
    joints = np.concatenate([np.arange(ACTION_SLICES[a].start, ACTION_SLICES[a].stop) for a, _ in JOINT_GROUPS])
    origin = np.concatenate([state[:, PROPRIO_SLICES[s]] for _, s in JOINT_GROUPS], axis=1)
    whole = ~pad[:, -1]
    moved_p, moved_r = predicted[whole, -1][:, joints] - origin[whole], recorded[whole, -1][:, joints] - origin[whole]
    norms = np.linalg.norm(moved_p, axis=1) * np.linalg.norm(moved_r, axis=1)
    return [float(c) for c in (moved_p * moved_r).sum(1) / np.maximum(norms, 1e-12)]


def _chunk_error(predicted: np.ndarray, recorded: np.ndarray, pad: np.ndarray) -> tuple[float, float]:
    """Mean |predicted - recorded| over the unpadded steps, and at the last step where it is not padded."""
    valid = ~pad
    whole = float(np.abs(predicted - recorded)[valid].mean())
    last = valid[:, -1]
    end = float(np.abs(predicted[last, -1] - recorded[last, -1]).mean()) if last.any() else float("nan")
    return whole, end


def validation_config(preset: str):
    """``preset`` as validation reads the data: every frame with its recorded instruction and its real IR target,
    all episodes (the training-only ``instruction_dropout``, ``cue_decoys``, ``instruction_source`` and
    ``data_fraction`` switched off), tasks by ``task_name``."""
    return get_preset(preset, task_column="task_name", instruction_source="instruction", instruction_dropout=0.0,
                      cue_decoys=0.0, data_fraction=1.0)


def diagnose(checkpoint: str | os.PathLike, dataset_root: str | os.PathLike, preset: str, *,
             frames_per_episode: int = 4, batch_size: int = 16, seed: int = 0) -> Diagnosis:
    """Measure ``checkpoint`` (a ``pretrained_model`` folder trained with ``preset``) on the demonstrations at
    ``dataset_root`` (recorded by ``bspatial demos``: its episodes carry ``task_name``).

    The ``instruction`` prompt of a preset trained on bare task names (``instruction_source="task_name"``) is
    still the recorded instruction; ``trained_prompt`` says which prompt the checkpoint was trained with.
    """
    from transformers import AutoModel, AutoProcessor

    import bspatial.modeling  # noqa: F401  (registers the auto classes)
    from .modeling_bspatial_vla import PREFIX_KEYS
    from .processing_bspatial_vla import CAMERA_KEY_PREFIX, IR_TARGET_KEY, STATE_KEY, TASK_KEY

    if frames_per_episode < 1:
        raise ValueError(f"frames_per_episode must be >= 1, got {frames_per_episode!r}")
    config = validation_config(preset)
    trained_prompt = "bare" if get_preset(preset).instruction_source == "task_name" else "instruction"
    model = AutoModel.from_pretrained(checkpoint).eval()
    processor = AutoProcessor.from_pretrained(checkpoint)
    dataset, _ = build_dataset(dataset_root, config, chunk_size=model.config.chunk_size)
    meta = dataset_metadata(dataset_root)
    episodes = meta.episodes
    lengths = dict(zip(map(int, episodes["episode_index"]), map(int, episodes["length"]), strict=True))
    starts = dict(zip(map(int, episodes["episode_index"]), map(int, episodes["dataset_from_index"]), strict=True))
    names = episode_tasks(episodes, "task_name")
    swapped = swapped_instructions(episodes)
    if any(episode not in swapped for episode in lengths):
        swapped = {}   # a task with one instruction only: no swapped prompt for any frame (one set of frames)
    indices = frame_indices(lengths, starts, frames_per_episode)
    mean_action = np.asarray(meta.stats["action"]["mean"], dtype=np.float32)
    state_width = int(meta.features["observation.state"]["shape"][0])
    if state_width != STATE_DIM:
        raise ValueError(f"{dataset_root}: observation.state has {state_width} dims; the hold reference reads the "
                         f"simulator's {STATE_DIM}-dim proprioceptive layout (bspatial demos)")
    logger.info("diagnose %s: %d frames of %d episodes", checkpoint, len(indices), len(lengths))

    generator = torch.Generator().manual_seed(seed)
    losses: dict[str, list[float]] = {p: [] for p in PROMPTS}
    errors: dict[str, list[tuple[float, float, int]]] = {k: [] for k in ("policy", *REFERENCES)}
    effects: list[float] = []
    cosines: list[float] = []
    moved_effects: dict[str, list[tuple[float, int]]] = {"cue": [], "image": [], "state": []}
    has_cue = model.config.ir_mode != "none"
    points: list[tuple[np.ndarray, np.ndarray]] = []   # (predicted, oracle) pixels of the frames with an oracle point
    moved_points: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []   # (predicted, moved cue, own target)
    to_pixels = processor.point_pixels
    for start in range(0, len(indices), batch_size):
        items = [dataset[i] for i in indices[start:start + batch_size]]
        shape = (len(items), model.config.chunk_size, model.config.action_dim)
        noise = torch.randn(shape, generator=generator)
        time = torch.rand(len(items), generator=generator) * 0.98 + 0.01
        prompts = {"instruction": [str(it[TASK_KEY]) for it in items],
                   "bare": [bare_task_name(names[int(it["episode_index"])]) for it in items]}
        if swapped:
            prompts["swapped"] = [swapped[int(it["episode_index"])] for it in items]
        chunks = {}
        with torch.no_grad():
            for prompt, texts in prompts.items():
                batch = ProcessorCollate(processor)([{**it, TASK_KEY: t} for it, t in zip(items, texts, strict=True)])
                losses[prompt].append(float(model.compute_loss(batch, noise=noise, time=time)) * len(items))
                if prompt == "instruction" and model.config.predicts_point:
                    predicted = model.encode_prefix(*(batch.get(k) for k in PREFIX_KEYS)).point.numpy()
                    oracle = own = batch["point_target"].numpy()   # own: the frames' real targets, for the cue below
                    ok = np.isfinite(oracle).all(-1)
                    points.append((to_pixels(predicted[ok]), to_pixels(oracle[ok])))
                if prompt in ("instruction", "swapped"):
                    chunks[prompt] = processor.unnormalize_actions(model.sample_actions(batch, noise=noise),
                                                                   batch["state"]).numpy()
        recorded = np.stack([np.asarray(it["action"], dtype=np.float32) for it in items])
        pad = np.stack([np.asarray(it["action_is_pad"], dtype=bool) for it in items])
        state = np.stack([np.asarray(it["observation.state"], dtype=np.float32) for it in items])
        cosines += direction_cosines(chunks["instruction"], recorded, state, pad)
        references = {"policy": chunks["instruction"], "hold": hold_chunk(state, recorded),
                      "frozen": np.repeat(recorded[:, :1], recorded.shape[1], axis=1),
                      "mean": np.broadcast_to(mean_action, recorded.shape)}
        for name, predicted in references.items():
            errors[name].append((*_chunk_error(predicted, recorded, pad), len(items)))
        shift = frames_per_episode % len(items)   # frames of one episode are consecutive: shift to another's
        moved_keys = {"image": [k for k in items[0] if k.startswith(CAMERA_KEY_PREFIX)], "state": [STATE_KEY],
                      "cue": [k for k in (IR_TARGET_KEY, ORACLE_IR_TARGET_KEY, ORACLE_IR_VALID_KEY) if k in items[0]]
                      if has_cue else []}
        for name, keys in moved_keys.items():
            if not (keys and shift):
                continue
            moved = [{**it, **{k: items[(i + shift) % len(items)][k] for k in keys}} for i, it in enumerate(items)]
            with torch.no_grad():
                moved_batch = ProcessorCollate(processor)(moved)
                moved_chunk = processor.unnormalize_actions(model.sample_actions(moved_batch, noise=noise),
                                                            moved_batch["state"]).numpy()
                if name == "cue" and model.config.predicts_point:
                    predicted = model.encode_prefix(*(moved_batch.get(k) for k in PREFIX_KEYS)).point.numpy()
                    cue = moved_batch["point_target"].numpy()
                    ok = np.isfinite(cue).all(-1) & np.isfinite(own).all(-1)
                    moved_points.append((to_pixels(predicted[ok]), to_pixels(cue[ok]), to_pixels(own[ok])))
            moved_effects[name].append((float(np.abs(chunks["instruction"] - moved_chunk).mean()) * len(items),
                                        len(items)))
        if "swapped" in chunks:
            effects.append(float(np.abs(chunks["instruction"] - chunks["swapped"]).mean()) * len(items))
    n = len(indices)
    open_loop = {}
    for name, parts in errors.items():
        weights = np.array([w for *_, w in parts], dtype=float)
        open_loop[name] = float(np.dot([w for w, _, _ in parts], weights) / weights.sum())
        ends = np.array([e for _, e, _ in parts], dtype=float)
        ok = ~np.isnan(ends)
        open_loop[f"{name}_end"] = (float(np.dot(ends[ok], weights[ok]) / weights[ok].sum()) if ok.any()
                                    else float("nan"))
    predicted, cue, own = (np.concatenate(p) for p in zip(*moved_points)) if moved_points else (np.zeros((0, 2)),) * 3
    point_to_moved_cue, point_to_true_target = _mean_distance(predicted, cue), _mean_distance(predicted, own)
    predicted, oracle = (np.concatenate(p) for p in zip(*points)) if points else (np.zeros((0, 2)),) * 2
    point_error = _mean_distance(predicted, oracle)
    point_error_centroid = _mean_distance(oracle, oracle.mean(0)) if len(oracle) else None
    return Diagnosis(frames=n, episodes=len(lengths), point_error=point_error, point_error_centroid=point_error_centroid,
                     point_to_moved_cue=point_to_moved_cue, point_to_true_target=point_to_true_target,
                     loss={p: sum(v) / n for p, v in losses.items() if v},
                     open_loop=open_loop, instruction_effect=sum(effects) / n if effects else None,
                     direction_cosine=float(np.mean(cosines)) if cosines else float("nan"),
                     cue_effect=_mean_effect(moved_effects["cue"]), trained_prompt=trained_prompt,
                     image_effect=_mean_effect(moved_effects["image"]), state_effect=_mean_effect(moved_effects["state"]))


def _mean_distance(a: np.ndarray, b: np.ndarray) -> float | None:
    """Mean Euclidean distance between matching rows of ``(N, 2)`` pixel arrays; None for no rows."""
    return float(np.linalg.norm(a - b, axis=-1).mean()) if len(a) else None


def _mean_effect(parts: Sequence[tuple[float, int]]) -> float | None:
    """The frame-weighted mean of per-batch ``(effect * frames, frames)``; None where nothing was moved."""
    return sum(e for e, _ in parts) / sum(k for _, k in parts) if parts else None


def diagnosis_markdown(rows: Mapping[str, Diagnosis]) -> str:
    """One Markdown table row per learner: its losses, open-loop errors and instruction effect."""
    def num(value: float | None) -> str:
        return "-" if value is None or value != value else f"{value:.3f}"

    lines = ["| learner | frames | val loss: instruction / bare / swapped | open-loop error: policy / hold / frozen / "
             "mean (chunk end) | motion direction (cos) | effect of: instruction / cue / image / state | "
             "point error px: policy / centroid; with the dot moved: to it / to the target |",
             "|---|---|---|---|---|---|---|"]
    for name, d in rows.items():
        loss = " / ".join(num(d.loss.get(p)) for p in PROMPTS)
        ol = " / ".join(f"{num(d.open_loop[k])} ({num(d.open_loop[k + '_end'])})" for k in ("policy", *REFERENCES))
        lines.append(f"| {name} (trained on: {d.trained_prompt}) | {d.frames} | {loss} | {ol} | "
                     f"{num(d.direction_cosine)} | {num(d.instruction_effect)} / {num(d.cue_effect)} / "
                     f"{num(d.image_effect)} / {num(d.state_effect)} | "
                     f"{num(d.point_error)} / {num(d.point_error_centroid)}; "
                     f"{num(d.point_to_moved_cue)} / {num(d.point_to_true_target)} |")
    return "\n".join(lines)


__all__ = ["Diagnosis", "PROMPTS", "REFERENCES", "diagnose", "validation_config", "diagnosis_markdown", "direction_cosines", "frame_indices",
           "hold_chunk", "swapped_instructions"]
