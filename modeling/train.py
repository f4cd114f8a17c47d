"""Training BEHAVIOR-Spatial-VLA with Accelerate on LeRobot demonstrations (paper Appendix C, Table S3).

``train(preset, dataset_root, output_dir)`` runs one preset end to end: the LeRobot dataset with
32-step action chunks (``delta_timestamps``, ``action_is_pad``), uniform sampling over tasks, optional
nested per-task data subsets, AdamW + warmup + cosine, gradient clipping, checkpoints every
``save_every`` steps (``Accelerator.save_state`` plus a ``pretrained_model/`` export in each, lerobot's
``checkpoints/<step>/pretrained_model`` layout) and exact resume, metrics through Accelerate trackers
(always a JSONL file; add e.g. ``"wandb"`` through ``trackers``), and a final ``save_pretrained``
checkpoint (model + processor) that ``AutoModel`` / ``AutoProcessor`` load.

The first-frame-anchor variant (Appendix 13.3) trains on a ``FirstFrameAnchorDataset``: every sample
also carries its episode's first head frame, dot-marked at that frame's oracle target. Navigation presets
(``max_context_frames > 0``, Section 4.1) train on a ``ContextFramesDataset``: every sample also carries its
episode's scene-context frames, stored with the demonstrations (a set without them is refused).

Exact resume: every random draw is a function of (seed, step, position in the global batch): the batch
indices come from a per-step seeded ``WeightedRandomSampler`` and the flow-matching noise and times from a
per-step generator, so a run interrupted at step k and resumed from its step-k checkpoint sees the same
batches, noise, learning rates and optimizer state as an uninterrupted run. ``save_state`` also stores the
global RNG states, which ``load_state`` restores, for anything else that draws from them.

Several processes (``accelerate launch`` / ``torchrun``; DDP over NCCL, or gloo on CPU): the preset's
``batch_size`` is the global batch, and each of N processes takes its slice of B / N samples
(:func:`~.training_data.process_share`; B not divisible by N is refused). The draws above do not depend on
the process, and the loss each process back-propagates is weighted so that DDP's gradient average is the
gradient of the global batch's masked mean (see :func:`_global_loss_weight`). So N processes follow the
one-process loss curve on the same global batch (up to float summation order), and a checkpoint written
with N processes resumes with any other count.

Not remote code (imports lerobot, accelerate, peft).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import torch

from bspatial.common.distributed import Launch
from bspatial.common.jsonl import append_jsonl, read_jsonl
from bspatial.common.files import atomic_write_text, publish_folder
from bspatial.common.locks import LOCK_FILE, process_lock_name, run_folder_lock

from .cue_pretraining import pretrain_cue
from .model_card import training_record, write_card_files
from .training_config import TrainingConfig, get_preset
from .training_data import (ProcessorCollate, StepBatchSampler, build_dataset, check_dataset_root,
                            dataset_episode_count, dataset_fingerprint, dataset_metadata, dataset_repo_id,
                            policy_dataset, process_share, relative_action_quantiles, step_seed,
                            task_balanced_weights)

logger = logging.getLogger(__name__)

# What the processor produces and forward() takes.
MODEL_INPUTS = ("input_ids", "attention_mask", "mm_token_type_ids", "pixel_values", "image_grid_thw", "state",
                "actions", "action_is_pad", "point_target")
CHECKPOINTS_DIR = "checkpoints"
PRETRAINED_DIR = "pretrained_model"
METRICS_FILE = "metrics.jsonl"
TRAINING_CONFIG_FILE = "training_config.json"
CUE_PRETRAINING_FILE = "cue_pretraining.json"  # what the cue pretraining measured (IR presets with it)
RUN_CONFIG_FILE = "run_config.json"
RUN_CONFIG_FORMAT = 1
CHECKPOINT_MARKER = "step.json"  # written last into a checkpoint's staging folder, before it is published
CHECKPOINT_NAME = re.compile(r"step_(\d{9})")
# TrainingConfig fields a resumed run may change. None of them changes what a step computes from the
# state before it, except max_steps: extending a run (a larger max_steps) re-stretches the cosine
# schedule from the resumed step on, which is what extending means, and it is logged. save_every,
# log_every and num_workers change only when files are written and how batches are loaded. Every other
# field (preset name, seed, batch size, optimiser, adapter, data fraction, ...) and the dataset's
# fingerprint must match the run's record, else the folder would mix two runs.
RESUMABLE_FIELDS = frozenset({"max_steps", "save_every", "log_every", "num_workers"})


# ---- model ----------------------------------------------------------------------------------------

def dataset_shapes(meta) -> dict:
    """Camera names and state / action widths from LeRobot metadata (BEHAVIOR's feature names)."""
    from .processing_bspatial_vla import ACTION_KEY, CAMERA_KEY_PREFIX, STATE_KEY

    missing = [k for k in (STATE_KEY, ACTION_KEY) if k not in meta.features]
    cameras = [k[len(CAMERA_KEY_PREFIX):] for k in meta.camera_keys if k.startswith(CAMERA_KEY_PREFIX)]
    if missing or not cameras:
        raise ValueError(f"dataset lacks {missing or 'observation.images.rgb.* cameras'}; it has {sorted(meta.features)}")
    return {"camera_names": cameras, "state_dim": int(meta.features[STATE_KEY]["shape"][0]),
            "action_dim": int(meta.features[ACTION_KEY]["shape"][0])}


def _with_relative_action_stats(stats: Mapping, model_config, dataset_root) -> dict:
    """``stats`` with the ``action`` quantiles of ``relative_action_dims`` replaced by those of the differences."""
    low, high = relative_action_quantiles(dataset_root, model_config.relative_action_dims,
                                          model_config.relative_state_dims, model_config.chunk_size)
    action = {q: list(v) for q, v in stats["action"].items()}
    for i, dim in enumerate(model_config.relative_action_dims):
        action["q01"][dim], action["q99"][dim] = low[i], high[i]
    logger.info("actions %s relative to the state: q01 %s, q99 %s", model_config.relative_action_dims,
                np.round(low, 3).tolist(), np.round(high, 3).tolist())
    return {**stats, "action": action}


def build_policy(config: TrainingConfig, meta, init_expert_from: str | None = None):
    """Model, processor and the trainable-parameter report for a preset and a dataset."""
    from . import tiny_backbone
    from .modeling_bspatial_vla import BSpatialVLAForActionPrediction
    from .processing_bspatial_vla import BSpatialVLAProcessor
    from .variants import apply_lora, count_parameters, load_action_expert

    shapes = {**dataset_shapes(meta), **dict(config.model_overrides)}
    if config.vlm_adapter == "full":
        shapes["freeze_vlm"] = False
    torch.manual_seed(config.seed)
    if config.backbone in tiny_backbone.OFFLINE_BACKBONES:  # "tiny", "small": random, built offline
        model = BSpatialVLAForActionPrediction(tiny_backbone.offline_policy_config(config.backbone, **shapes))
        qwen = tiny_backbone.build_tiny_processor()
    else:
        from transformers import AutoProcessor

        model = BSpatialVLAForActionPrediction.from_vlm_pretrained(config.backbone, **shapes)
        qwen = AutoProcessor.from_pretrained(config.backbone)
    qwen.image_processor.size = {"shortest_edge": min(qwen.image_processor.size["shortest_edge"], config.image_pixels),
                                 "longest_edge": config.image_pixels}
    # lerobot's dataset-level q01 / q99 are averages of per-episode quantiles, not exact.
    stats = {k: {q: np.asarray(v[q]).tolist() for q in v if q in ("q01", "q99")} for k, v in meta.stats.items()
             if k in ("observation.state", "action")}
    if model.config.relative_action_dims:
        stats = _with_relative_action_stats(stats, model.config, meta.root)
    processor = BSpatialVLAProcessor.from_model_config(model.config, qwen.image_processor, qwen.tokenizer, stats)
    if config.expert_init == "checkpoint":
        if init_expert_from is None:
            raise ValueError(f"preset {config.name!r} initialises the expert from a checkpoint: pass init_expert_from")
        logger.info("expert init from %s: %s", init_expert_from, load_action_expert(model, init_expert_from))
    if config.vlm_adapter == "lora":
        model, report = apply_lora(model)
    else:
        report = count_parameters(model)
    return model, processor, report


# ---- logging and checkpoints ----------------------------------------------------------------------

def _jsonl_tracker_class():
    from accelerate.tracking import GeneralTracker

    class JSONLTracker(GeneralTracker):
        """Appends one JSON line per ``log`` call to ``<output_dir>/metrics.jsonl``."""

        name = "jsonl"
        requires_logging_directory = False

        def __init__(self, path: Path):
            super().__init__()
            self.path = path

        @property
        def tracker(self):
            return self.path

        def store_init_configuration(self, values: dict):
            pass  # the training config is written to training_config.json

        def log(self, values: dict, step: int | None = None, **kwargs):
            append_jsonl(self.path, [{"step": step, **{k: float(v) for k, v in values.items()}}])

    return JSONLTracker


def read_metrics(output_dir: str | os.PathLike) -> list[dict]:
    """The JSONL metrics of a run, one dict per logged step."""
    path = Path(output_dir) / METRICS_FILE
    return read_jsonl(path)   # a line cut off by a kill is ignored; the resumed run logs that step again


def _truncate_metrics(output_dir: Path, step: int) -> None:
    """On resume, drop records logged after the checkpoint (the resumed run logs them again)."""
    kept = [r for r in read_metrics(output_dir) if r["step"] <= step]
    atomic_write_text(output_dir / METRICS_FILE, "".join(json.dumps(r) + "\n" for r in kept))


def checkpoint_dir(output_dir: str | os.PathLike, step: int) -> Path:
    """``<output_dir>/checkpoints/step_<step, 9 digits>`` (zero-padded so names sort by step)."""
    return Path(output_dir) / CHECKPOINTS_DIR / f"step_{step:09d}"


def checkpoint_step(path: str | os.PathLike) -> int | None:
    """The step of a complete checkpoint folder, else None.

    Complete means published under its final name (``step_<9 digits>``, never a ``.tmp`` staging name,
    however complete that looks) with the marker ``step.json`` naming the same step. Checkpoints are
    staged and renamed into place (``_save_checkpoint``), so a final name with its marker is a whole one.
    """
    path = Path(path)
    match = CHECKPOINT_NAME.fullmatch(path.name)
    if match is None or not path.is_dir():
        return None
    try:
        step = json.loads((path / CHECKPOINT_MARKER).read_text())["step"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return step if step == int(match.group(1)) else None


def latest_checkpoint(output_dir: str | os.PathLike) -> Path | None:
    """The newest complete ``checkpoints/step_*`` folder (see :func:`checkpoint_step`), or None."""
    folder = Path(output_dir) / CHECKPOINTS_DIR
    done = {} if not folder.is_dir() else {s: p for p in folder.iterdir() if (s := checkpoint_step(p)) is not None}
    return done[max(done)] if done else None


def _save_checkpoint(accelerator, output_dir: Path, step: int, model, processor, record: Mapping) -> None:
    """``checkpoints/step_<step>/``: Accelerate state (exact resume) + ``pretrained_model/`` (lerobot's
    ``checkpoints/<step>/pretrained_model`` convention, with its model card), so every checkpoint is also a
    usable policy."""
    final = checkpoint_dir(output_dir, step)
    tmp = final.with_name(final.name + ".tmp")   # one name every process agrees on (save_state writes per rank)
    if accelerator.is_main_process:
        shutil.rmtree(tmp, ignore_errors=True)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(tmp))
    if accelerator.is_main_process:
        export_pretrained(accelerator.unwrap_model(model), processor, tmp / PRETRAINED_DIR,
                          training_record(record, step, accelerator.num_processes, "checkpoint"))
        # The process count is informational (a checkpoint resumes with any count).
        (tmp / CHECKPOINT_MARKER).write_text(json.dumps({"step": step, "processes": accelerator.num_processes}))
        publish_folder(tmp, final)  # a checkpoint folder exists only once complete
    accelerator.wait_for_everyone()


def export_pretrained(model, processor, path: Path, training: Mapping | None = None) -> None:
    """``save_pretrained`` of the plain policy (LoRA merged into a copy) and its processor, atomically.

    With ``training`` (:func:`~.model_card.training_record`), the export also holds ``training_run.json`` and
    its model card ``README.md``. Written to a sibling temp folder and renamed, so ``path`` is either absent
    or complete, card included.
    """
    import copy

    from peft import PeftModel

    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    # merge_and_unload on a copy: the training model keeps its adapters.
    plain = copy.deepcopy(model).merge_and_unload() if isinstance(model, PeftModel) else model
    plain.save_pretrained(tmp)
    processor.save_pretrained(tmp)
    if training is not None:
        write_card_files(tmp, training)
    publish_folder(tmp, path)


def _export_final(model, processor, output_dir: Path, step: int, training: Mapping) -> None:
    """``<output_dir>/pretrained_model``: a copy of the step's checkpoint export (it holds the same
    weights; copying spares a second deep copy + LoRA merge of a 4B model), else a fresh export; its card
    is rendered again as the final export's."""
    source = checkpoint_dir(output_dir, step)
    target = output_dir / PRETRAINED_DIR
    if not (source / PRETRAINED_DIR).is_dir():  # e.g. a checkpoint written by an older version
        export_pretrained(model, processor, target, training)
        return
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source / PRETRAINED_DIR, tmp)
    write_card_files(tmp, training)
    publish_folder(tmp, target)


# ---- the run folder: one training run per folder ------------------------------------------------

def run_record(config: TrainingConfig, dataset_root: str | os.PathLike) -> dict:
    """What ``run_config.json`` holds: the training config and the dataset's fingerprint (the root is
    informational: a moved dataset with the same content resumes)."""
    root = check_dataset_root(dataset_root)
    return {"format": RUN_CONFIG_FORMAT,
            "training_config": json.loads(json.dumps(asdict(config), default=list)),  # tuples as JSON lists
            "data": {"root": str(root.resolve()), "episodes": dataset_episode_count(root),
                     "fingerprint": dataset_fingerprint(root), "repo_id": dataset_repo_id(root)}}


def _record_differences(recorded: dict, given: dict) -> list[str]:
    """``"field: recorded X vs given Y"`` for every field that must not change on resume."""
    missing = "<not recorded>"
    # A field added to TrainingConfig after a run was recorded holds its default in that run.
    defaults = {f.name: f.default for f in fields(TrainingConfig) if f.default is not MISSING}
    old = {**json.loads(json.dumps(defaults, default=list)), **recorded.get("training_config", {})}
    new = given["training_config"]
    differences = [f"{name}: recorded {old.get(name, missing)!r} vs given {new.get(name, missing)!r}"
                   for name in dict.fromkeys([*new, *old])
                   if name not in RESUMABLE_FIELDS and old.get(name, missing) != new.get(name, missing)]
    old_data, new_data = recorded.get("data", {}), given["data"]
    for name in ("episodes", "fingerprint"):
        if old_data.get(name) != new_data[name]:
            differences.append(f"data {name}: recorded {old_data.get(name, missing)} vs given {new_data[name]} "
                               f"(recorded dataset {old_data.get('root')!r}, given {new_data['root']!r})")
    return differences


def finished_run_differences(out: str | os.PathLike, config: TrainingConfig, dataset_root: str | os.PathLike) -> list[str]:
    """How the finished run in ``out`` differs from training ``config`` on ``dataset_root`` (empty: the same run).

    For callers that reuse a finished run by its folder name (``benchmarks/learned.py``): a folder trained with
    another preset, other overrides or other data must not stand in for this one. ``max_steps`` counts here (a
    finished run's length is part of what it is); a folder without ``run_config.json`` cannot be checked.
    """
    path = Path(out) / RUN_CONFIG_FILE
    if not path.is_file():
        return [f"{str(path)!r} is missing: the run's config cannot be checked"]
    recorded = json.loads(path.read_text())
    given = run_record(config, dataset_root)
    differences = _record_differences(recorded, given)
    old_steps = recorded.get("training_config", {}).get("max_steps")
    if old_steps != config.max_steps:
        differences.append(f"max_steps: recorded {old_steps!r} vs given {config.max_steps!r}")
    return differences


def _run_entries(out: Path) -> list[str]:
    """What the folder holds besides the run-folder locks (ours, and other ranks')."""
    return sorted(p.name for p in out.iterdir() if not p.name.startswith(LOCK_FILE))


def _check_run_folder(out: Path, record: dict, config: TrainingConfig, resume: bool) -> Path | None:
    """Refuse a folder that holds another run (or, without ``resume``, any run); the checkpoint to resume.

    Reads only: nothing in ``out`` changes before every check has passed. Returns None for a fresh run,
    and for a resumed run that stopped before its first checkpoint (it restarts at step 0, the same run).
    """
    entries = _run_entries(out)
    if not resume:
        if entries:
            raise ValueError(f"{out} already holds a training run ({', '.join(entries[:6])}); pass --resume to "
                             "continue it, or choose another output folder")
        return None
    path = out / RUN_CONFIG_FILE
    if not path.is_file():
        if not entries:
            raise FileNotFoundError(f"resume=True but {str(out / CHECKPOINTS_DIR)!r} holds no complete checkpoint")
        raise ValueError(f"{out} holds {', '.join(entries[:6])} but no {RUN_CONFIG_FILE} (an older version's run, "
                         "or not a training run): its config cannot be checked, so it is not resumed; choose "
                         "another output folder")
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"{str(path)!r} is unreadable ({error}); cannot check the run to resume") from None
    differences = _record_differences(recorded, record)
    if differences:
        raise ValueError(f"{out} holds a run with another config; resuming it with this one would mix two runs: "
                         f"{'; '.join(differences)}. Pass the recorded values (see {RUN_CONFIG_FILE}) or choose "
                         f"another output folder; {', '.join(sorted(RESUMABLE_FIELDS))} may change on resume")
    checkpoint = latest_checkpoint(out)
    step = None if checkpoint is None else checkpoint_step(checkpoint)
    if step is not None and step >= config.max_steps:
        raise ValueError(f"the run in {out} has reached step {step} ({checkpoint.name}) and max_steps is "
                         f"{config.max_steps}: nothing to train; pass a larger --max-steps to extend it")
    if step is None:
        logger.warning("%s holds no complete checkpoint of its run: restarting it at step 0", out)
    elif recorded["training_config"].get("max_steps") != config.max_steps:
        logger.warning("max_steps %s -> %d: the cosine schedule after step %d follows the new length",
                       recorded["training_config"].get("max_steps"), config.max_steps, step)
    return checkpoint


def _is_staging_name(name: str) -> bool:
    # "<name>.tmp": a checkpoint or export being written (this module); ".<name>.<random>.tmp": an atomic
    # file write; ".<name>.old-<pid>": publish_folder's replaced folder (bspatial.common.files).
    return name.endswith(".tmp") or (name.startswith(".") and ".old-" in name)


def _remove_incomplete(out: Path) -> None:
    """Remove what an interrupted run left half-written: staging folders and files in the run folder and
    ``checkpoints/``, and ``step_*`` folders that are not complete checkpoints. Nothing else is touched."""
    folder = out / CHECKPOINTS_DIR
    leftovers = [p for p in out.iterdir() if _is_staging_name(p.name)]
    if folder.is_dir():
        leftovers += [p for p in folder.iterdir() if _is_staging_name(p.name)
                      or (p.name.startswith("step_") and checkpoint_step(p) is None)]
    for path in leftovers:
        logger.warning("removing %s, left incomplete by an interrupted run", path)
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


# ---- the loop -------------------------------------------------------------------------------------

@dataclass
class TrainResult:
    """What ``train`` leaves behind."""

    output_dir: Path
    pretrained_dir: Path | None
    last_step: int
    trainable_parameters: int
    total_parameters: int
    losses: list[float] = field(default_factory=list)
    # The in-memory policy at ``last_step`` (unwrapped; a peft model for LoRA presets) and its processor.
    model: torch.nn.Module | None = field(default=None, repr=False)
    processor: object | None = field(default=None, repr=False)


def _flow_draws(actions: torch.Tensor, model_config, seed: int, step: int, batch_size: int,
                share: slice) -> tuple[torch.Tensor, torch.Tensor]:
    """Noise ``(b, chunk, action_dim)`` and times ``(b,)`` of this process's ``share`` of step ``step``.

    Drawn for the whole global batch (``batch_size`` rows) from one generator seeded by (seed, step), then
    sliced, so a sample's draws depend on its position in the global batch, not on the process that
    handles it: N processes draw what one process draws for the same batch. Drawing B rows where a
    process needs B / N costs B * chunk * action_dim normal draws a step (188k for batch 256), nothing
    beside a forward pass. (The seed keeps its former process slot at 0: one-process runs draw as before.)
    """
    from .flow_matching import sample_time

    generator = torch.Generator().manual_seed(step_seed(seed, step, "flow", 0))
    noise = torch.randn((batch_size, *actions.shape[1:]), generator=generator)
    time = sample_time(batch_size, alpha=model_config.time_beta_alpha, beta=model_config.time_beta_beta,
                       scale=model_config.time_scale, offset=model_config.time_offset, generator=generator)
    noise, time = noise[share], time[share]
    if noise.shape != actions.shape:
        raise ValueError(f"this process's batch has actions of shape {tuple(actions.shape)}, but its share "
                         f"{share.start}:{share.stop} of the global batch {batch_size} gives {tuple(noise.shape)}")
    return noise.to(actions.device), time.to(actions.device)


def _drop_state(state: torch.Tensor, rate: float, seed: int, step: int, batch_size: int, share: slice) -> torch.Tensor:
    """``state`` with the rows of this step's dropped samples zeroed (``TrainingConfig.state_dropout``).

    Drawn for the whole global batch from (seed, step), then sliced, like :func:`_flow_draws`: which samples lose
    their state does not depend on the number of processes.
    """
    if not rate:
        return state
    generator = torch.Generator().manual_seed(step_seed(seed, step, "state_dropout", 0))
    keep = (torch.rand(batch_size, generator=generator) >= rate)[share]
    return state * keep[:, None].to(device=state.device, dtype=state.dtype)


def _global_loss_weight(accelerator, batch: Mapping) -> torch.Tensor:
    """The factor that turns this process's loss into its part of the global batch's loss under DDP.

    The loss is a masked mean: squared errors summed over the real (not padded) chunk steps, divided by
    their count. One process computes it over the global batch, S / R. Each of N processes computes
    S_i / R_i over its share, and DDP averages the gradients, which would weigh every process equally
    whatever its count of real steps (shares near episode ends have more padding). Scaling process i's
    loss by R_i * N / R makes the average of the gradients (1/N) sum_i grad(S_i / R_i * R_i * N / R) =
    grad(S / R), the one-process gradient, and the mean of the scaled losses S / R, the one-process loss.
    With one process the factor is R / R = 1 exactly.
    """
    is_pad = batch.get("action_is_pad")
    actions = batch["actions"]
    real = (torch.tensor(float(actions.shape[0] * actions.shape[1])) if is_pad is None
            else (~is_pad.bool()).sum().to(torch.float32)).to(actions.device)
    total = accelerator.reduce(real.clone(), reduction="sum")
    return real * accelerator.num_processes / total.clamp_min(1.0)


def _lr_scheduler(optimizer, config: TrainingConfig):
    from transformers import get_cosine_schedule_with_warmup

    # Linear warmup to peak_lr, then cosine to 0 at max_steps (Table S3: "4k warmup, cosine").
    return get_cosine_schedule_with_warmup(optimizer, min(config.warmup_steps, config.max_steps), config.max_steps)


def train(preset: str, dataset_root: str, output_dir: str, max_steps: int | None = None, *,
          resume: bool = False, stop_at_step: int | None = None, init_expert_from: str | None = None,
          trackers: Sequence[str] = (), export: bool = True, **overrides) -> TrainResult:
    """Train a preset on a LeRobot dataset folder; checkpoints and metrics go to ``output_dir``.

    Args:
        preset: a name from ``PRESETS``.
        dataset_root: a local LeRobot v3 dataset folder (``meta/``, ``data/``, ``videos/``).
        output_dir: run folder of this one run: ``run_config.json`` (its config and data fingerprint),
            ``checkpoints/step_*`` (Accelerate state + ``pretrained_model/``), ``metrics.jsonl``,
            ``training_config.json`` and, at the end, ``pretrained_model/`` (model + processor, the same
            as the last checkpoint's). Without ``resume`` it must be empty or new.
        max_steps: override the preset's total steps (the cosine schedule ends there); at least 1.
        resume: continue the run in ``output_dir`` from its newest complete checkpoint (from step 0 if
            it stopped before the first). Refused when ``output_dir`` holds no run, a run without a
            record, or one whose config or data differ (except :data:`RESUMABLE_FIELDS`); half-written
            checkpoints are removed, never resumed.
        stop_at_step: stop early at this step (as an interruption would), keeping the schedule of
            ``max_steps``; checkpoints are written as usual.
        init_expert_from: checkpoint for presets with ``expert_init="checkpoint"`` (DROID-style init).
        trackers: extra Accelerate trackers (e.g. ``"wandb"``); the JSONL tracker is always on.
        export: write ``pretrained_model/`` when the run reaches ``max_steps``.
        overrides: other ``TrainingConfig`` fields (e.g. ``batch_size``, ``data_fraction``, ``seed``).

    Raises:
        FileNotFoundError: the data folder (or a file of it) is missing, or ``resume`` finds no run.
        ValueError: a bad config value, a data folder that is not a LeRobot dataset, or a run folder that
            holds another run (see ``resume``); the message names the folder and the fields.
    """
    from accelerate import Accelerator

    # `is not None`: max_steps=0 must reach the config's check (it was taken as "no override").
    config = get_preset(preset, **({"max_steps": max_steps} if max_steps is not None else {}), **overrides)
    record = run_record(config, dataset_root)  # checks the data folder before any run folder is made
    out = Path(output_dir)
    with run_folder_lock(out, f"train --preset {config.name}", name=process_lock_name()):
        checkpoint = _check_run_folder(out, record, config, resume)
        bf16 = config.mixed_precision == "bf16" and torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        # The sampler yields the global batch already split across processes, so the scheduler steps
        # once per optimiser step (not once per process, Accelerate's default for unsplit batches).
        accelerator = Accelerator(mixed_precision="bf16" if bf16 else "no", step_scheduler_with_optimizer=False,
                                  log_with=[_jsonl_tracker_class()(out / METRICS_FILE), *trackers])
        _check_processes(accelerator, config)
        model, processor, report = build_policy(config, dataset_metadata(dataset_root), init_expert_from)
        dataset, tasks = build_dataset(dataset_root, config, chunk_size=model.config.chunk_size)
        logger.info("preset %s on %d frames of %d episodes: %s", config.name, len(dataset), dataset.num_episodes, report)
        cue = None
        if config.cue_pretrain_steps and checkpoint is None:
            # Before the first policy step only: a resumed run's checkpoint already holds the pretrained tower.
            cue = pretrain_cue(model, processor, dataset, config.cue_pretrain_steps, batch_size=config.batch_size,
                               lr=config.peak_lr, seed=config.seed, log_every=config.log_every)
        dataset = policy_dataset(dataset, processor)
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.peak_lr,
                                      betas=config.adam_betas, weight_decay=config.weight_decay)
        scheduler = _lr_scheduler(optimizer, config)
        model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
        start = 0
        if checkpoint is not None:
            accelerator.load_state(str(checkpoint))
            start = checkpoint_step(checkpoint)
            logger.info("resumed from %s at step %d", checkpoint, start)
        # Every rank has checked the folder before the main one writes to it (else a slower rank would
        # find this run's own record and refuse).
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            if resume:
                _remove_incomplete(out)
                _truncate_metrics(out, start)
            # Written only once the policy and the data are built, so a run refused by build_policy or the
            # dataset leaves an empty folder that a corrected rerun may use.
            atomic_write_text(out / RUN_CONFIG_FILE, json.dumps(record, indent=2) + "\n")
            atomic_write_text(out / TRAINING_CONFIG_FILE, json.dumps(asdict(config), indent=2, default=list))
            if cue is not None:
                atomic_write_text(out / CUE_PRETRAINING_FILE, json.dumps(cue.as_dict(), indent=2) + "\n")
        accelerator.wait_for_everyone()
        accelerator.init_trackers(config.name)
        loader = _loader(dataset, tasks, processor, config, start, accelerator)
        losses = _loop(accelerator, model, optimizer, scheduler, loader, config, start, stop_at_step, out, processor,
                       record)
        last = start + len(losses)
        pretrained = None
        if export and last == config.max_steps and accelerator.is_main_process:
            pretrained = out / PRETRAINED_DIR
            _export_final(accelerator.unwrap_model(model), processor, out, last,
                          training_record(record, last, accelerator.num_processes, "final"))
        accelerator.end_training()
        return TrainResult(out, pretrained, last, report.trainable, report.total, losses,
                           model=accelerator.unwrap_model(model), processor=processor)


def _check_processes(accelerator, config: TrainingConfig) -> None:
    """Refuse a launch whose processes do not form one Accelerate job, and a global batch they cannot split.

    Without a GPU, ``torchrun`` / ``accelerate launch --multi_gpu`` start N processes that Accelerate takes
    for N independent single-process runs unless it is told to use the CPU (measured: both then trained the
    whole batch into the same folder); ``ACCELERATE_USE_CPU=1`` makes them one gloo job.
    """
    launch = Launch.of_environment()  # RANK / WORLD_SIZE (an MPI launch sets neither: Accelerate reads its own)
    if launch.world > 1 and launch.world != accelerator.num_processes:
        raise ValueError(f"the launcher started {launch.world} processes ({launch.source}={launch.rank}/"
                         f"{launch.world}) but Accelerate runs {accelerator.num_processes} "
                         f"({accelerator.distributed_type}); on CPU set ACCELERATE_USE_CPU=1 (gloo)")
    process_share(config.batch_size, accelerator.process_index, accelerator.num_processes)  # raises if uneven


def _loader(dataset, tasks, processor, config: TrainingConfig, start: int, accelerator):
    sample_episodes = dataset.hf_dataset.with_format("numpy")["episode_index"]
    sampler = StepBatchSampler(task_balanced_weights(sample_episodes, tasks), config.batch_size, config.seed, start,
                               config.max_steps, accelerator.process_index, accelerator.num_processes)
    # spawn, not fork: torchcodec workers forked after any decode in this process fail.
    context = "spawn" if config.num_workers > 0 else None
    return torch.utils.data.DataLoader(dataset, batch_sampler=sampler, collate_fn=ProcessorCollate(processor),
                                       num_workers=config.num_workers, multiprocessing_context=context)


def _loop(accelerator, model, optimizer, scheduler, loader, config, start, stop_at_step, out,
          processor, record) -> list[float]:
    from bspatial.common.progress import progress_bar

    model.train()
    model_config = accelerator.unwrap_model(model).config
    params = [p for p in model.parameters() if p.requires_grad]
    losses, step = [], start
    share = process_share(config.batch_size, accelerator.process_index, accelerator.num_processes)
    bar = progress_bar(config.max_steps, config.name, "step", enabled=accelerator.is_main_process, initial=start)
    for batch in loader:
        if stop_at_step is not None and step >= stop_at_step:
            break
        batch = {k: v.to(accelerator.device) if torch.is_tensor(v) else v for k, v in batch.items()}
        noise, time = _flow_draws(batch["actions"], model_config, config.seed, step, config.batch_size, share)
        batch["state"] = _drop_state(batch["state"], config.state_dropout, config.seed, step, config.batch_size, share)
        with accelerator.autocast():  # forward (not compute_loss) so DDP syncs the gradients
            output = model(**{k: batch[k] for k in MODEL_INPUTS if k in batch}, noise=noise, time=time)
        loss = output.loss * _global_loss_weight(accelerator, batch)
        optimizer.zero_grad(set_to_none=True)
        accelerator.backward(loss)
        grad_norm = accelerator.clip_grad_norm_(params, config.grad_clip_norm)
        lr = scheduler.get_last_lr()[0]
        optimizer.step()
        scheduler.step()
        step += 1
        loss_value = accelerator.reduce(loss.detach(), reduction="mean").item()
        losses.append(loss_value)
        bar.update(1)
        if step % config.log_every == 0 or step == config.max_steps:
            logged = {"loss": loss_value, "lr": lr, "grad_norm": float(grad_norm)}
            if output.point_loss is not None:  # pointing co-training: its own term, unweighted
                logged["point_loss"] = accelerator.reduce(output.point_loss.detach(), reduction="mean").item()
            accelerator.log(logged, step=step)
        if step % config.save_every == 0 or step == config.max_steps:
            _save_checkpoint(accelerator, out, step, model, processor, record)
    bar.close()
    return losses
