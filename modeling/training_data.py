"""Training data for BEHAVIOR-Spatial-VLA: the LeRobot dataset with 32-step chunks, uniform sampling
over tasks, nested per-task subsets, seeded per-step batch sampling, the processor collate, and the
first-frame-anchor wrapper (Appendix 13.3), the navigation context-frames wrapper (Appendix 12) and the
language-blanked wrapper (bare task names for instructions, :func:`bare_task_name`). Used by :mod:`bspatial.modeling.train`.

Not remote code (imports lerobot).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from pathlib import Path

import numpy as np
import torch

from bspatial.catalog.tasks import bare_task_name   # one rule with the rollouts' task_name condition
from bspatial.common.seeds import derive_seed
from bspatial.construction.demonstrations.demos import ORACLE_IR_TARGET_KEY, ORACLE_IR_VALID_KEY, PROVENANCE_FILE
from .training_config import TrainingConfig


def episode_tasks(episodes, column: str) -> dict[int, str]:
    """Episode index -> task label from LeRobot episode metadata (``meta.episodes``)."""
    if column not in episodes.column_names:
        raise ValueError(f"episode metadata has no column {column!r}; it has {episodes.column_names}")
    labels = {}
    for index, value in zip(episodes["episode_index"], episodes[column], strict=True):
        labels[int(index)] = str(value[0]) if isinstance(value, (list, tuple)) and len(value) == 1 else str(value)
    return labels



def nested_task_subset(tasks: Mapping[int, str], fraction: float, seed: int = 0) -> list[int]:
    """Per task, the first ``ceil(fraction * n)`` episodes of a fixed seeded permutation (at least 1).

    The permutation depends only on the seed and the task's episodes, so subsets are deterministic
    and nested: every 30% subset lies inside the 50% subset of the same seed.

    Example:
        >>> tasks = {i: "a" if i < 10 else "b" for i in range(20)}
        >>> small, large = nested_task_subset(tasks, 0.3), nested_task_subset(tasks, 0.5)
        >>> len(small), len(large), set(small) <= set(large)
        (6, 10, True)
    """
    chosen = []
    for task in sorted(set(tasks.values())):
        episodes = sorted(e for e, t in tasks.items() if t == task)
        order = np.random.default_rng([seed, derive_seed(task)]).permutation(len(episodes))
        keep = max(1, math.ceil(fraction * len(episodes) - 1e-9))
        chosen += [episodes[i] for i in order[:keep]]
    return sorted(chosen)


def task_balanced_weights(sample_episodes: np.ndarray, tasks: Mapping[int, str]) -> torch.Tensor:
    """Per-sample weights that make every task equally likely (frames uniform within a task)."""
    labels = np.array([tasks[int(e)] for e in sample_episodes])
    names, counts = np.unique(labels, return_counts=True)
    per_task = dict(zip(names, counts, strict=True))
    return torch.tensor([1.0 / (len(names) * per_task[label]) for label in labels], dtype=torch.double)


class StepBatchSampler(torch.utils.data.Sampler):
    """Yields this process's share of the global batch of every step in ``[start_step, max_steps)``.

    The global batch of step ``s`` is drawn by a ``WeightedRandomSampler`` seeded with ``(seed, s)``,
    so any step's batch is reproducible on its own (exact resume) and independent of the process count.
    """

    def __init__(self, weights: torch.Tensor, batch_size: int, seed: int, start_step: int, max_steps: int,
                 process_index: int = 0, num_processes: int = 1):
        self.weights, self.batch_size, self.seed = weights, batch_size, seed
        self.start_step, self.max_steps = start_step, max_steps
        self.share = process_share(batch_size, process_index, num_processes)

    def __len__(self) -> int:
        return max(0, self.max_steps - self.start_step)

    def __iter__(self) -> Iterator[list[int]]:
        for step in range(self.start_step, self.max_steps):
            generator = torch.Generator().manual_seed(step_seed(self.seed, step, "batch"))
            sampler = torch.utils.data.WeightedRandomSampler(self.weights, self.batch_size, replacement=True,
                                                             generator=generator)
            yield list(sampler)[self.share]


def process_share(batch_size: int, process_index: int, num_processes: int) -> slice:
    """The positions of the global batch that process ``process_index`` of ``num_processes`` handles.

    The one rule that splits a step's global batch: the batch sampler takes these samples and the
    flow-matching draws of ``train`` take these rows, so a sample's draws follow its global position.

    Raises:
        ValueError: ``batch_size`` is not divisible by ``num_processes`` (both are named).

    Example:
        >>> process_share(8, 1, 2)
        slice(4, 8, None)
    """
    if batch_size % num_processes:
        raise ValueError(f"batch_size {batch_size} (the global batch) is not divisible by the {num_processes} "
                         f"processes: every process takes batch_size / processes samples a step; pass a "
                         f"batch_size that is a multiple of {num_processes}")
    per_process = batch_size // num_processes
    return slice(process_index * per_process, (process_index + 1) * per_process)


def step_seed(seed: int, step: int, purpose: str, process: int = 0) -> int:
    return derive_seed(seed, step, purpose, process)


def has_ir_target(features: Mapping) -> bool:
    """Whether a dataset's features carry the per-frame oracle IR target in a layout :func:`with_ir_target` reads."""
    from .processing_bspatial_vla import IR_TARGET_KEY

    return IR_TARGET_KEY in features or (ORACLE_IR_TARGET_KEY in features and ORACLE_IR_VALID_KEY in features)


def with_ir_target(item: Mapping) -> Mapping:
    """``item`` (one frame or a collated batch) with the processor's ``observation.ir_target``: NaN where invalid.

    The demonstration sets store the oracle IR target as ``oracle.ir_target`` (an in-range fill where the box has no
    valid projection) beside ``oracle.ir_target_valid`` (1 / 0), outside ``observation.*`` so that no policy takes
    the label as an input and the statistics stay finite (``bspatial.construction.demonstrations.demos``). The processor and the
    first-frame anchor read ``observation.ir_target`` with NaN meaning "no dot"; this is the one place the pair
    becomes that. An item that already has ``observation.ir_target`` (older sets, which stored NaN there) or has
    no oracle target is returned unchanged.

    Example:
        >>> out = with_ir_target({"oracle.ir_target": torch.tensor([[10.0, 20.0], [112.0, 112.0]]),
        ...                       "oracle.ir_target_valid": torch.tensor([[1.0], [0.0]])})
        >>> out["observation.ir_target"].tolist()
        [[10.0, 20.0], [nan, nan]]
    """
    from .processing_bspatial_vla import IR_TARGET_KEY

    if IR_TARGET_KEY in item or ORACLE_IR_TARGET_KEY not in item:
        return item
    if ORACLE_IR_VALID_KEY not in item:
        raise ValueError(f"{ORACLE_IR_TARGET_KEY!r} needs its mask {ORACLE_IR_VALID_KEY!r}; "
                         f"the item has {sorted(item)}")
    target = torch.as_tensor(item[ORACLE_IR_TARGET_KEY], dtype=torch.float32)
    valid = torch.as_tensor(item[ORACLE_IR_VALID_KEY]).reshape(*target.shape[:-1], 1) > 0.5
    return {**item, IR_TARGET_KEY: torch.where(valid, target, torch.full_like(target, float("nan")))}


class ProcessorCollate:
    """Collate LeRobot items, then run the policy processor (in the DataLoader workers)."""

    def __init__(self, processor):
        self.processor = processor

    def __call__(self, items: Sequence[Mapping]) -> dict:
        from torch.utils.data import default_collate

        return dict(self.processor(with_ir_target(default_collate(list(items)))))


# What training reads of a local LeRobot v3 folder before any frame: lerobot answers a missing one by
# pulling the folder from the Hub under the repo id "local/<name>", which ends, offline or not, in a Hub
# error that does not name the folder (measured: OfflineModeIsEnabled for a mistyped path). The stats
# are needed too: the processor normalises with their q01 / q99.
REQUIRED_META_FILES = ("meta/info.json", "meta/stats.json", "meta/tasks.parquet")
REQUIRED_PARQUET_DIRS = ("meta/episodes", "data")


def check_dataset_root(dataset_root: str | os.PathLike) -> Path:
    """The local LeRobot dataset folder, checked before lerobot can fall back to the Hub; returns it.

    Raises:
        FileNotFoundError: the folder, or a file training needs in it, does not exist (named).
        ValueError: ``meta/info.json`` is not a JSON object or counts no episode.
    """
    root = Path(dataset_root)
    if not root.is_dir():
        raise FileNotFoundError(f"dataset folder {str(root)!r} does not exist (or is not a folder)")
    missing = [name for name in REQUIRED_META_FILES if not (root / name).is_file()]
    missing += [f"{name}/**/*.parquet" for name in REQUIRED_PARQUET_DIRS if not any((root / name).rglob("*.parquet"))]
    if missing:
        raise FileNotFoundError(f"dataset folder {str(root)!r} is not a local LeRobot v3 dataset: it lacks {missing}")
    try:
        info = json.loads((root / "meta/info.json").read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{str(root / 'meta/info.json')!r} is not valid JSON: {error}") from None
    episodes = info.get("total_episodes") if isinstance(info, dict) else None
    if not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"{str(root / 'meta/info.json')!r} must count at least one episode, "
                         f"got total_episodes={episodes!r}")
    return root


def dataset_fingerprint(dataset_root: str | os.PathLike) -> str:
    """``"sha256:<hex>"`` of the dataset's ``meta/info.json`` and ``meta/stats.json`` bytes.

    Cheap (two small files) and stable (written once, by ``finalize``), and it follows the content, not
    the location: info.json carries the features, fps and the episode / frame / task counts, and stats.json
    the per-feature statistics of every frame, so a dataset rebuilt from other episodes changes it while a
    copied or moved one keeps it. Frames are not hashed: that would read the whole dataset.
    """
    root = check_dataset_root(dataset_root)
    digest = hashlib.sha256()
    for name in ("meta/info.json", "meta/stats.json"):
        data = (root / name).read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())  # framed, so bytes cannot move between files
        digest.update(data)
    return f"sha256:{digest.hexdigest()}"


def dataset_episode_count(dataset_root: str | os.PathLike) -> int:
    """``total_episodes`` of the dataset's ``meta/info.json``."""
    return int(json.loads((check_dataset_root(dataset_root) / "meta/info.json").read_text())["total_episodes"])


def dataset_repo_id(dataset_root: str | os.PathLike) -> str | None:
    """The Hub repo id a ``bspatial demos`` set names in its provenance file, else None (another LeRobot set:
    its info.json has no repo id, and the folder name is not one)."""
    path = check_dataset_root(dataset_root) / PROVENANCE_FILE
    if not path.is_file():
        return None
    try:
        repo_id = json.loads(path.read_text()).get("repo_id")
    except (ValueError, AttributeError) as error:
        raise ValueError(f"{str(path)!r} is not a JSON object: {error}") from None
    return repo_id if isinstance(repo_id, str) and repo_id else None


def dataset_metadata(dataset_root: str | os.PathLike):
    """The LeRobot metadata of the local dataset at ``dataset_root`` (no frame is decoded, no Hub access)."""
    from lerobot.datasets.lerobot_dataset import LeRobotDatasetMetadata

    root = check_dataset_root(dataset_root)
    return LeRobotDatasetMetadata(f"local/{root.name}", root=root)


def relative_action_quantiles(dataset_root: str | os.PathLike, action_dims: Sequence[int], state_dims: Sequence[int],
                              chunk_size: int, low: float = 0.01, high: float = 0.99) -> tuple[list[float], list[float]]:
    """q01 / q99 of ``action[t + k, action_dims] - state[t, state_dims]`` over every frame ``t`` and chunk offset
    ``k < chunk_size`` that stays inside its episode (the padded steps past the end are masked in the loss).

    The differences the model learns for ``config.relative_action_dims`` (openpi computes its delta-action
    stats after its ``DeltaActions`` transform, the same way). Reads the dataset's parquet frames directly:
    no frame is decoded. Every episode of the folder counts, as in lerobot's ``meta/stats.json``.
    """
    import pyarrow.parquet as pq

    root = check_dataset_root(dataset_root)
    action_dims, state_dims = list(action_dims), list(state_dims)
    diffs = []
    for path in sorted((root / "data").rglob("*.parquet")):
        table = pq.read_table(path, columns=["episode_index", "action", "observation.state"])
        episode = table.column("episode_index").to_numpy()
        action = np.stack(table.column("action").to_numpy(zero_copy_only=False))[:, action_dims]
        state = np.stack(table.column("observation.state").to_numpy(zero_copy_only=False))[:, state_dims]
        for e in np.unique(episode):
            rows = np.flatnonzero(episode == e)
            a, s = action[rows], state[rows]
            for k in range(min(chunk_size, len(rows))):
                diffs.append(a[k:] - s[:len(rows) - k])
    values = np.concatenate(diffs).astype(np.float64)
    return np.quantile(values, low, axis=0).tolist(), np.quantile(values, high, axis=0).tolist()


def build_dataset(dataset_root: str | os.PathLike, config: TrainingConfig, chunk_size: int):
    """The LeRobot dataset (selected episodes, ``chunk_size``-step action chunks, uint8 frames) and its task labels.

    With ``config.instruction_source="task_name"`` every item's instruction is its episode's bare task name
    (:class:`TaskNameInstructions`; the set needs the per-episode ``task_name`` column of ``bspatial demos``);
    with ``config.instruction_dropout`` a seeded share of the frames' is. With ``config.cue_decoys`` a seeded share of
    the frames carry a decoy IR target (:class:`CueDecoys`).

    ``chunk_size`` is the policy's (``model.config.chunk_size``): the data follows the model, never a
    second copy of the number.
    """
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    meta = dataset_metadata(dataset_root)
    repo_id = meta.repo_id
    tasks = episode_tasks(meta.episodes, config.task_column)
    episodes = nested_task_subset(tasks, config.data_fraction, config.seed) if config.data_fraction < 1 else None
    # Chunks start at the current frame; lerobot pads past the episode end and flags it in action_is_pad.
    delta_timestamps = {"action": [i / meta.fps for i in range(chunk_size)]}
    dataset = LeRobotDataset(repo_id, root=dataset_root, episodes=episodes, delta_timestamps=delta_timestamps,
                             return_uint8=True)
    if config.instruction_source == "task_name":
        dataset = TaskNameInstructions(dataset, episode_tasks(meta.episodes, "task_name"))
    elif config.instruction_dropout:
        dataset = TaskNameInstructions(dataset, episode_tasks(meta.episodes, "task_name"),
                                       share=config.instruction_dropout, seed=config.seed)
    if config.cue_decoys:
        dataset = CueDecoys(dataset, config.cue_decoys, config.seed)
    return dataset, tasks


class _DatasetWrapper(torch.utils.data.Dataset):
    """A LeRobot dataset wrapper: passes through the attributes that training and the other wrappers read.
    Subclasses implement ``__getitem__``."""

    def __init__(self, dataset):
        self.dataset = dataset

    @property
    def meta(self):
        return self.dataset.meta

    @property
    def hf_dataset(self):
        return self.dataset.hf_dataset

    @property
    def root(self):
        return self.dataset.root

    @property
    def episodes(self):
        return self.dataset.episodes

    @property
    def absolute_to_relative_idx(self):
        return self.dataset.absolute_to_relative_idx

    @property
    def num_episodes(self):
        return self.dataset.num_episodes

    def __len__(self) -> int:
        return len(self.dataset)


class TaskNameInstructions(_DatasetWrapper):
    """A LeRobot dataset whose every item's ``task`` (the instruction) is its episode's bare task name.

    The language-blanked policy (``instruction_source="task_name"``: our policy with the
    instruction blanked) sees "reach plate" where the demonstration says "Reach the largest plate from the
    countertop.", so it can only tell the candidates apart from the images.

    Args:
        dataset: a ``LeRobotDataset`` (episode-filtered or not).
        task_names: episode index -> task name (``episode_tasks(meta.episodes, "task_name")``).
        share: the share of frames that get the bare name (``TrainingConfig.instruction_dropout``); 1 = every
            frame. Which frames is fixed by ``seed`` and each frame's dataset ``index`` (the same set in every
            epoch, every DataLoader worker and every process).
    """

    def __init__(self, dataset, task_names: Mapping[int, str], share: float = 1.0, seed: int = 0):
        super().__init__(dataset)
        if not 0 < share <= 1:
            raise ValueError(f"share must lie in (0, 1], got {share!r}")
        self.instructions = {int(e): bare_task_name(name) for e, name in task_names.items()}
        self.share, self.seed = float(share), int(seed)

    def blanked(self, frame_index: int) -> bool:
        """Whether the frame with dataset ``index`` ``frame_index`` gets the bare task name."""
        return self.share >= 1 or np.random.default_rng([self.seed, int(frame_index)]).random() < self.share

    def __getitem__(self, index: int) -> dict:
        from .processing_bspatial_vla import TASK_KEY

        item = self.dataset[index]
        if not self.blanked(int(item["index"])):
            return item
        return {**item, TASK_KEY: self.instructions[int(item["episode_index"])]}


class CueDecoys(_DatasetWrapper):
    """A LeRobot dataset in which a fixed, seeded share of the frames carry a decoy IR target.

    On those frames the oracle IR point (``oracle.ir_target``, valid; or an older set's ``observation.ir_target``)
    is a uniformly random pixel of the 224 grid, so the IR image shows the cue there and the pointing label is that
    pixel, and ``action_is_pad`` is all True, so the demonstrated chunk (which reaches the real target) leaves the
    flow-matching loss. The pointing then learns that the cue, not the layout, says where to point
    (``TrainingConfig.cue_decoys``).

    Args:
        dataset: a ``LeRobotDataset`` whose frames carry the oracle IR target.
        share: the share of frames with a decoy, in (0, 1).
        seed: picks the frames and their pixels (with each frame's dataset ``index``).
    """

    def __init__(self, dataset, share: float, seed: int = 0):
        super().__init__(dataset)
        if not 0 < share < 1:
            raise ValueError(f"share must lie in (0, 1), got {share!r}")
        if not has_ir_target(dataset.meta.features):
            raise ValueError(f"cue decoys replace the oracle IR target, and the dataset has none: "
                             f"{sorted(dataset.meta.features)}")
        self.share, self.seed = float(share), int(seed)

    def decoy(self, frame_index: int) -> tuple[float, float] | None:
        """The decoy pixel of the frame with dataset ``index`` ``frame_index``, or None for a real frame."""
        from .ir_rendering import IR_IMAGE_SIZE

        rng = np.random.default_rng([self.seed, int(frame_index), 1])
        if rng.random() >= self.share:
            return None
        x, y = rng.integers(0, IR_IMAGE_SIZE, size=2)
        return float(x), float(y)

    def __getitem__(self, index: int) -> dict:
        from .processing_bspatial_vla import ACTION_IS_PAD_KEY, IR_TARGET_KEY

        item = self.dataset[index]
        pixel = self.decoy(int(item["index"]))
        if pixel is None:
            return item
        target = torch.tensor(pixel, dtype=torch.float32)
        decoyed = {**item, ACTION_IS_PAD_KEY: torch.ones_like(torch.as_tensor(item[ACTION_IS_PAD_KEY]), dtype=torch.bool)}
        if ORACLE_IR_TARGET_KEY in item:
            valid = torch.as_tensor(item[ORACLE_IR_VALID_KEY])
            decoyed.update({ORACLE_IR_TARGET_KEY: target.to(torch.as_tensor(item[ORACLE_IR_TARGET_KEY]).dtype),
                            ORACLE_IR_VALID_KEY: torch.ones_like(valid)})
        else:
            decoyed[IR_TARGET_KEY] = target
        return decoyed


class _PerEpisodeImages(_DatasetWrapper):
    """A LeRobot dataset wrapper that adds per-episode images to its items, computed once per episode and kept
    in a small LRU cache (per DataLoader worker). The one place for what both wrappers below share: the
    cache, and an empty cache in spawned workers. Subclasses implement ``_compute(episode)`` and ``__getitem__``."""

    def __init__(self, dataset, cache_size: int):
        if not isinstance(cache_size, int) or isinstance(cache_size, bool) or cache_size < 1:
            raise ValueError(f"cache_size must be a positive integer, got {cache_size!r}")
        super().__init__(dataset)
        self.cache_size = cache_size
        self._cache: dict[int, Any] = {}

    def __getstate__(self) -> dict:
        # Spawned DataLoader workers start with an empty cache instead of a pickled copy of ours.
        return {**self.__dict__, "_cache": {}}

    def _cached(self, episode: int):
        if episode in self._cache:
            self._cache[episode] = self._cache.pop(episode)  # most recently used goes last
            return self._cache[episode]
        value = self._compute(episode)
        if len(self._cache) >= self.cache_size:
            self._cache.pop(next(iter(self._cache)))  # least recently used
        self._cache[episode] = value
        return value

    def _compute(self, episode: int):
        raise NotImplementedError


# Episodes whose rendered anchor a FirstFrameAnchorDataset keeps (per DataLoader worker): 224 x 224 x 3
# uint8 is 150 KB, so 256 episodes cost ~38 MB per worker; a miss costs one extra frame read.
ANCHOR_CACHE_EPISODES = 256


class FirstFrameAnchorDataset(_PerEpisodeImages):
    """A LeRobot dataset whose items also carry ``observation.images.anchor`` (first-frame anchor variant).

    Appendix 13.3: the anchor is the episode's FIRST head frame with the dot drawn at that frame's
    oracle target, the same image for every frame of the episode. Each item gets the anchor of its own
    episode: the first frame (``meta.episodes["dataset_from_index"]``) is read through the wrapped
    dataset once, rendered with ``ir_rendering.render_first_frame_anchor`` and kept in a small LRU
    cache, so an episode's first frame is decoded once per worker, not once per sample.

    Args:
        dataset: a ``LeRobotDataset`` opened with ``return_uint8=True`` (episode-filtered or not) whose
            frames carry the oracle IR target (``oracle.ir_target`` + mask, or an older set's
            ``observation.ir_target``; :func:`with_ir_target`).
        head_key: the image feature the dot is drawn on (the processor's ``ir_source_camera``).
        cache_size: episodes whose anchor is kept.
    """

    def __init__(self, dataset, head_key: str, cache_size: int = ANCHOR_CACHE_EPISODES):
        from .processing_bspatial_vla import IR_TARGET_KEY

        missing = [k for k in (IR_TARGET_KEY, head_key) if k not in dataset.meta.features
                   and not (k == IR_TARGET_KEY and has_ir_target(dataset.meta.features))]
        if missing:
            raise ValueError(f"the first-frame anchor needs the features {missing}; the dataset at "
                             f"{str(dataset.root)!r} has {sorted(dataset.meta.features)}")
        super().__init__(dataset, cache_size)
        self.head_key = head_key
        # Absolute index of each selected episode's first frame -> row of the (possibly filtered) dataset.
        episodes = dataset.meta.episodes
        selected = None if dataset.episodes is None else set(dataset.episodes)
        to_row = dataset.absolute_to_relative_idx  # None when no episode filter: row == absolute index
        self.first_row = {}
        for episode, start in zip(episodes["episode_index"], episodes["dataset_from_index"], strict=True):
            if selected is None or int(episode) in selected:
                self.first_row[int(episode)] = int(start) if to_row is None else to_row[int(start)]

    def anchor(self, episode: int) -> torch.Tensor:
        """The ``(3, 224, 224)`` uint8 anchor image of an episode."""
        return self._cached(episode)

    def _compute(self, episode: int) -> torch.Tensor:
        from .ir_rendering import render_first_frame_anchor
        from .processing_bspatial_vla import IR_TARGET_KEY

        if episode not in self.first_row:
            raise KeyError(f"episode {episode} is not among the dataset's selected episodes")
        first = self.dataset[self.first_row[episode]]
        head = torch.as_tensor(first[self.head_key])
        if head.dtype != torch.uint8:
            raise ValueError(f"{self.head_key!r} has dtype {head.dtype}; open the dataset with return_uint8=True")
        image = render_first_frame_anchor(head.permute(1, 2, 0).numpy(), with_ir_target(first)[IR_TARGET_KEY].numpy())
        return torch.from_numpy(image).permute(2, 0, 1).contiguous()

    def __getitem__(self, index: int) -> dict:
        from .processing_bspatial_vla import ANCHOR_IMAGE_KEY

        item = self.dataset[index]
        return {**item, ANCHOR_IMAGE_KEY: self.anchor(int(item["episode_index"]))}


# Episodes whose context frames a ContextFramesDataset keeps decoded (per DataLoader worker): 12 frames of
# 224 x 224 x 3 uint8 are 1.8 MB, so 32 episodes cost ~58 MB per worker; a miss costs one PNG decode.
CONTEXT_CACHE_EPISODES = 32


class ContextFramesDataset(_PerEpisodeImages):
    """A LeRobot dataset whose items also carry the episode's scene-context frames (navigation policies).

    Section 4.1 / Appendix 12: every frame of an episode gets the same ordered context, the episode's strip
    stored by the recorder (``meta/context_frames/``, :mod:`bspatial.construction.demonstrations.context_frames`: the frames
    :func:`~bspatial.construction.demonstrations.context_frames.policy_context_frames` renders, which the rollout renders again).
    Each item gets ``observation.images.context`` ``(max_frames, 3, H, W)`` uint8 in tour order, zero-padded at
    the end, and ``observation.images.context_is_pad`` ``(max_frames,)`` bool, True on the padding, so items of
    episodes with fewer frames collate into one batch (the processor feeds only the real frames).

    Args:
        dataset: a ``LeRobotDataset`` (episode-filtered or not) of a recording with context frames.
        max_frames: ``config.max_context_frames``; an episode with more frames is an error, never cut.
        cache_size: episodes whose decoded frames are kept.

    Raises:
        FileNotFoundError: a selected episode has no stored context frames (the dataset path and the episodes
            are named).
    """

    def __init__(self, dataset, max_frames: int, cache_size: int = CONTEXT_CACHE_EPISODES):
        from bspatial.construction.demonstrations.context_frames import CONTEXT_FRAMES_DIR, context_frames_path

        if not isinstance(max_frames, int) or isinstance(max_frames, bool) or max_frames < 1:
            raise ValueError(f"max_frames must be a positive integer, got {max_frames!r}")
        super().__init__(dataset, cache_size)
        self.max_frames = max_frames
        episodes = dataset.meta.episodes["episode_index"] if dataset.episodes is None else dataset.episodes
        selected = sorted(int(e) for e in episodes)
        missing = [e for e in selected if not context_frames_path(dataset.root, e).is_file()]
        if missing:
            raise FileNotFoundError(
                f"the dataset at {str(dataset.root)!r} has no context frames ({CONTEXT_FRAMES_DIR}/episode_*.png) "
                f"for {len(missing)} of its {len(selected)} episodes (first: {missing[:5]}); a policy with "
                f"max_context_frames={max_frames} trains on navigation demonstrations recorded with them "
                f"(bspatial demos --suite navigation)")

    def context(self, episode: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``(frames (max_frames, 3, H, W) uint8, is_pad (max_frames,) bool)`` of an episode."""
        return self._cached(episode)

    def _compute(self, episode: int) -> tuple[torch.Tensor, torch.Tensor]:
        from bspatial.construction.demonstrations.context_frames import context_frames_path, read_context_frames

        frames = read_context_frames(self.dataset.root, episode)
        if len(frames) > self.max_frames:
            raise ValueError(f"{str(context_frames_path(self.dataset.root, episode))!r} holds {len(frames)} context "
                             f"frames, more than the policy's max_context_frames={self.max_frames}")
        padded = torch.zeros((self.max_frames, 3, *frames.shape[1:3]), dtype=torch.uint8)
        padded[:len(frames)] = torch.from_numpy(frames).permute(0, 3, 1, 2)
        is_pad = torch.arange(self.max_frames) >= len(frames)
        return padded, is_pad

    def __getitem__(self, index: int) -> dict:
        from .processing_bspatial_vla import CONTEXT_IMAGE_KEY, CONTEXT_IS_PAD_KEY

        item = self.dataset[index]
        frames, is_pad = self.context(int(item["episode_index"]))
        return {**item, CONTEXT_IMAGE_KEY: frames, CONTEXT_IS_PAD_KEY: is_pad}


def policy_dataset(dataset, processor) -> torch.utils.data.Dataset:
    """The dataset the policy trains on: the LeRobot dataset, plus the anchor image where the config has one and
    the episode's context frames where it takes them (``max_context_frames > 0``: :class:`ContextFramesDataset`).

    The per-frame ``ir`` slot is rendered by the processor from ``observation.ir_target`` (which
    :class:`ProcessorCollate` derives from the oracle pair, :func:`with_ir_target`); the anchor needs another
    frame of the episode and the context frames are stored per episode, so both are added here, on the dataset side.
    """
    from .configuration_bspatial_vla import ANCHOR_IMAGE_NAME
    from .processing_bspatial_vla import IR_TARGET_KEY, image_key

    if processor.ir_mode != "none" and not has_ir_target(dataset.meta.features):
        raise ValueError(f"ir_mode={processor.ir_mode!r} renders the IR image from the per-frame feature "
                         f"{IR_TARGET_KEY!r} (or {ORACLE_IR_TARGET_KEY!r} + {ORACLE_IR_VALID_KEY!r}); the dataset at "
                         f"{str(dataset.root)!r} has {sorted(dataset.meta.features)}")
    if processor.max_context_frames:   # inside the anchor wrapper, which reads the LeRobot dataset's attributes
        dataset = ContextFramesDataset(dataset, processor.max_context_frames)
    if ANCHOR_IMAGE_NAME in processor.image_names:
        dataset = FirstFrameAnchorDataset(dataset, image_key(processor.ir_source_camera, processor.camera_names))
    return dataset
