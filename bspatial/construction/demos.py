"""Scripted-expert demonstrations as one LeRobot v3 dataset (construction issue, item 6).

``record_demos(out)`` runs :func:`bspatial.tasks.experts.make_expert` on sampled training instances of
the manipulation tasks (instruction variants cycled), renders the three 224 x 224 policy cameras at
every control step, keeps the episodes the Table S4 rules score ``correct`` and writes them with
lerobot's own ``LeRobotDataset.create / add_frame / save_episode / finalize``.

What one frame holds (DESIGN §4 keys):

* ``observation.images.rgb.{head,left_wrist,right_wrist}``: the camera frames the expert's step saw
  (video features);
* ``observation.state``: the 84-dim ``RobotState.proprio`` at that step;
* ``action``: the 23-dim action the expert commanded at that step;
* ``observation.ir_target``: float32 ``(x, y)`` on the 224 grid, the oracle IR point of Appendix 13.3
  (:func:`bspatial.modeling.ir_rendering.target_pixel`), NaN when the box has no valid projection. Reach: the
  instructed object's 3D box at that step. Placement: the manipulated object's 3D box in the final
  demonstration frame (where it came to rest), reprojected through that step's head camera;
* ``task``: the instruction text (lerobot's task string).

Per-episode extras (task name, variant, split, scene seed) are columns of lerobot's episode metadata
(``meta/episodes/*.parquet``), next to ``tasks`` and ``length``: lerobot 0.6.1 has no API for extra
episode fields, but ``load_episodes`` keeps every non-``stats/`` column, so ``meta.episodes["task_name"]``
works and ``modeling.train`` samples uniformly over task names with ``task_column="task_name"``. The
columns are appended after ``finalize()`` (:func:`_add_episode_columns`).

Statistics: lerobot's dataset-level quantiles are averages of per-episode histogram quantiles, not
exact (DESIGN §3). :func:`_write_exact_quantiles` replaces every quantile key (q01 ... q99) of
``observation.state`` and ``action`` in ``meta/stats.json`` with ``numpy.quantile`` over all frames
(numpy's default linear interpolation); mean / std / min / max stay lerobot's.

Everything is written into a temporary sibling of ``out`` and renamed into place at the end; a build
that fails leaves nothing behind. A provenance file ``meta/bspatial_demos.json`` lists the build
arguments, the kept episodes and every rejected attempt with its reason.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

logger = logging.getLogger(__name__)

_SVT_LOG_WARNINGS = "2"  # SVT-AV1 log levels: 0 fatal, 1 error, 2 warning, 3 info (default)
FPS = 30
"""Control rate of :class:`~bspatial.sim.mujoco_backend.MujocoBackend` (8 x 1/240 s per action)."""
CAMERAS: tuple[str, ...] = ("head", "left_wrist", "right_wrist")
IMAGE_SIZE = 224  # Appendix 13.3: the 224 x 224 policy images
STATE_DIM = 84    # RobotState.proprio
ACTION_DIM = 23   # DESIGN §4: R1Pro action layout
IMAGE_KEY = "observation.images.rgb.{camera}"
STATE_KEY = "observation.state"
ACTION_KEY = "action"
IR_TARGET_KEY = "observation.ir_target"
EPISODE_COLUMNS: tuple[str, ...] = ("task_name", "variant", "split", "scene_seed")
"""Per-episode extras added to ``meta/episodes`` (see the module docstring)."""
EXACT_STATS_KEYS: tuple[str, ...] = (STATE_KEY, ACTION_KEY)
MAX_ATTEMPTS_PER_EPISODE = 3
"""Attempts (fresh scene seeds) per wanted episode before a task gives up on it; ours, not the paper's."""
REPO_ID = "behavior-spatial/demos"
PROVENANCE_FILE = "meta/bspatial_demos.json"


def scene_seed(seed: int, task: str, attempt: int) -> int:
    """The scene seed of a task's ``attempt``-th instance under build ``seed`` (stable across task lists).

    Example:
        >>> scene_seed(0, "reach_plate", 0) == scene_seed(0, "reach_plate", 0) != scene_seed(0, "reach_plate", 1)
        True
    """
    return int(np.random.SeedSequence([seed, zlib.crc32(task.encode()), attempt]).generate_state(1)[0] >> 1)


def demo_features(cameras: Sequence[str] = CAMERAS, image_size: int = IMAGE_SIZE) -> dict:
    """LeRobot feature spec of the demonstrations (DESIGN §4 keys)."""
    shape = (image_size, image_size, 3)
    features = {IMAGE_KEY.format(camera=c): {"dtype": "video", "shape": shape, "names": ["height", "width", "channels"]}
                for c in cameras}
    features[STATE_KEY] = {"dtype": "float32", "shape": (STATE_DIM,), "names": None}
    features[ACTION_KEY] = {"dtype": "float32", "shape": (ACTION_DIM,), "names": None}
    features[IR_TARGET_KEY] = {"dtype": "float32", "shape": (2,), "names": ["x", "y"]}
    return features


@dataclass
class RecordedEpisode:
    """One expert rollout, frame by frame, before it is written.

    Attributes:
        instance: the task instance.
        images: per step, camera -> (224, 224, 3) uint8.
        states, actions: (T, 84) and (T, 23) float32.
        head_cameras: per step, the head camera's (K, T_world_cam).
        reach_boxes: per step, the instructed object's (8, 3) box corners (reach tasks; empty otherwise).
        final_box: the manipulated object's (8, 3) corners after the last step (placement tasks).
    """

    instance: object
    images: list[dict[str, np.ndarray]] = field(default_factory=list)
    states: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    head_cameras: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    reach_boxes: list[np.ndarray] = field(default_factory=list)
    final_box: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.actions)

    def ir_targets(self) -> np.ndarray:
        """(T, 2) float32 oracle IR points on the 224 grid, NaN where the box has no valid projection."""
        from bspatial.modeling.ir_rendering import target_pixel

        out = np.full((len(self), 2), np.nan, np.float32)
        for t, (K, pose) in enumerate(self.head_cameras):
            box = self.reach_boxes[t] if self.reach_boxes else self.final_box
            pixel = target_pixel(box, K, pose, (IMAGE_SIZE, IMAGE_SIZE), out_size=IMAGE_SIZE)
            if pixel is not None:
                out[t] = pixel
        return out


def _corners(bbox) -> np.ndarray:
    from bspatial.modeling.ir_rendering import box_corners

    return box_corners(bbox.center, bbox.half_extents, bbox.rotation)


class _RecordingPolicy:
    """Wraps an expert: stores what each step observed and what the expert commanded."""

    def __init__(self, backend, expert, episode: RecordedEpisode) -> None:
        self.backend, self.expert, self.episode = backend, expert, episode
        self.reach = episode.instance.manipulated is None

    def __call__(self, observation) -> np.ndarray:
        action = np.asarray(self.expert(observation), np.float32)
        ep, head = self.episode, observation.images[CAMERAS[0]]
        ep.images.append({c: observation.images[c].rgb for c in CAMERAS})
        ep.states.append(np.asarray(observation.state.proprio, np.float32))
        ep.actions.append(action.copy())
        ep.head_cameras.append((head.K, head.T_world_cam))
        if self.reach:
            ep.reach_boxes.append(_corners(self.backend.object_bbox(ep.instance.target)))
        return action


def record_episode(backend, instance, split: str = "train") -> tuple[RecordedEpisode | None, str]:
    """Run the scripted expert on ``instance`` with the policy cameras; (episode, "") if scored correct.

    Returns ``(None, reason)`` for an episode the rules do not score ``correct`` (reason: the outcome
    label, or the status for a sim error).
    """
    from bspatial.tasks.episode import run_episode
    from bspatial.tasks.experts import make_expert

    backend.load(instance.scene)
    episode = RecordedEpisode(instance)
    policy = _RecordingPolicy(backend, make_expert(backend, instance), episode)
    result = run_episode(backend, instance, policy, split=split, cameras=CAMERAS)
    if result.status == "sim_error":
        return None, f"sim_error: {result.message}"
    if result.outcome is None or result.outcome.outcome != "correct":
        return None, f"outcome {result.outcome.outcome if result.outcome else None} ({result.status})"
    if instance.manipulated is not None:
        episode.final_box = _corners(backend.object_bbox(instance.manipulated))
    return episode, ""


def _write_episode(dataset, episode: RecordedEpisode) -> None:
    targets = episode.ir_targets()
    for t in range(len(episode)):
        frame = {IMAGE_KEY.format(camera=c): episode.images[t][c] for c in CAMERAS}
        frame[STATE_KEY] = episode.states[t]
        frame[ACTION_KEY] = episode.actions[t]
        frame[IR_TARGET_KEY] = targets[t]
        frame["task"] = episode.instance.instruction  # no timestamp / frame_index (DESIGN §3)
        dataset.add_frame(frame)
    dataset.save_episode(parallel_encoding=False)  # no process pool forked from a GL-holding process


def _write_exact_quantiles(root: Path, values: dict[str, np.ndarray]) -> dict[str, dict[str, list]]:
    """Replace lerobot's approximate quantiles of ``values``' keys in ``meta/stats.json`` by exact ones."""
    path = root / "meta" / "stats.json"
    stats = json.loads(path.read_text())
    for key, frames in values.items():
        for name in [k for k in stats[key] if k.startswith("q") and k[1:].isdigit()]:
            stats[key][name] = np.quantile(frames.astype(np.float64), int(name[1:]) / 100, axis=0).tolist()
    path.write_text(json.dumps(stats, indent=4))
    return {key: stats[key] for key in values}


def _add_episode_columns(root: Path, rows: dict[int, dict]) -> None:
    """Append :data:`EPISODE_COLUMNS` to lerobot's episode metadata parquet files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path in sorted((root / "meta" / "episodes").rglob("*.parquet")):
        table = pq.read_table(path)
        indices = table.column("episode_index").to_pylist()
        for column in EPISODE_COLUMNS:
            table = table.append_column(column, pa.array([rows[i][column] for i in indices]))
        pq.write_table(table, path, compression="snappy")


def _record_all(dataset, backend, tasks: Sequence[str], episodes_per_task: int, seed: int, split: str):
    """Record and write every task's episodes; returns (episode rows, rejections, state / action frames)."""
    from bspatial.tasks import get_task, sample_instance

    rows: dict[int, dict] = {}
    rejected: list[dict] = []
    states, actions = [], []
    for name in tasks:
        variants = get_task(name).variants
        kept = 0
        for attempt in range(episodes_per_task * MAX_ATTEMPTS_PER_EPISODE):
            if kept == episodes_per_task:
                break
            variant, instance_seed = variants[kept % len(variants)], scene_seed(seed, name, attempt)
            try:
                instance = sample_instance(name, variant, instance_seed)
                episode, reason = record_episode(backend, instance, split)
            except ValueError as error:  # a layout that cannot meet its margins
                episode, reason = None, f"sampling failed: {error}"
            if episode is None:
                logger.warning("demo %s/%s seed %d rejected: %s", name, variant, instance_seed, reason)
                rejected.append({"task_name": name, "variant": variant, "scene_seed": instance_seed, "reason": reason})
                continue
            _write_episode(dataset, episode)
            rows[len(rows)] = {"task_name": name, "variant": variant, "split": split, "scene_seed": instance_seed,
                               "length": len(episode)}
            states.append(np.stack(episode.states))
            actions.append(np.stack(episode.actions))
            kept += 1
            logger.info("demo %s/%s seed %d: %d frames", name, variant, instance_seed, len(episode))
        if kept < episodes_per_task:
            logger.warning("task %s: %d of %d demonstrations recorded", name, kept, episodes_per_task)
    if not rows:
        raise ValueError(f"no demonstration of {list(tasks)} was scored correct (seed {seed}); rejected: {rejected}")
    return rows, rejected, {STATE_KEY: np.concatenate(states), ACTION_KEY: np.concatenate(actions)}


def record_demos(out: str | os.PathLike, tasks: Sequence[str] | None = None, episodes_per_task: int = 2,
                 seed: int = 0, split: str = "train", *, overwrite: bool = False) -> Path:
    """Record scripted-expert demonstrations of ``tasks`` into one LeRobot v3 dataset at ``out``.

    Args:
        out: the dataset folder to create (``meta/``, ``data/``, ``videos/``).
        tasks: task names (any spelling :func:`bspatial.tasks.get_task` accepts); default: the 15
            manipulation tasks.
        episodes_per_task: correct episodes wanted per task; each task tries at most
            :data:`MAX_ATTEMPTS_PER_EPISODE` times as many scene seeds.
        seed: build seed; scene seeds derive from it, the task name and the attempt index.
        split: the split recorded in the traces and the episode metadata
            (:data:`bspatial.scoring.trace.SPLITS`).
        overwrite: replace an existing ``out``.

    Returns:
        ``out`` as a Path.

    Raises:
        FileExistsError: ``out`` exists and ``overwrite`` is False.
        ValueError: bad arguments, or no episode at all was scored correct.
    """
    from bspatial.scoring.trace import SPLITS
    from bspatial.tasks import get_task, task_names

    # lerobot encodes the cameras with SVT-AV1, which prints ~20 info lines per video to stderr;
    # its own SVT_LOG variable (read when an encoder starts) keeps warnings and errors only.
    os.environ.setdefault("SVT_LOG", _SVT_LOG_WARNINGS)
    out = Path(out)
    if episodes_per_task < 1:
        raise ValueError(f"episodes_per_task must be >= 1, got {episodes_per_task!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    names = [get_task(t).name for t in (task_names() if tasks is None else tasks)]
    if out.exists() and not overwrite:
        raise FileExistsError(f"{str(out)!r} exists; pass overwrite=True to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        root = tmp / "dataset"
        counts = _build(root, names, episodes_per_task, seed, split)
        if out.exists():
            shutil.rmtree(out)
        os.replace(root, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    logger.info("demos: %d episodes, %d frames, %d rejected -> %s", counts["episodes"], counts["frames"],
                counts["rejected"], out)
    return out


def _build(root: Path, names: list[str], episodes_per_task: int, seed: int, split: str) -> dict[str, int]:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from bspatial.sim.mujoco_backend import CONTROL_DT, MujocoBackend

    if round(1.0 / CONTROL_DT) != FPS:
        raise ValueError(f"FPS={FPS} must equal the simulator's control rate {1.0 / CONTROL_DT:g} Hz")
    dataset = LeRobotDataset.create(REPO_ID, fps=FPS, features=demo_features(), root=root, use_videos=True,
                                    robot_type="r1pro")
    backend = MujocoBackend(camera_size=IMAGE_SIZE)
    try:
        rows, rejected, frames = _record_all(dataset, backend, names, episodes_per_task, seed, split)
    finally:
        backend.close()
        dataset.finalize()  # after the last save_episode (DESIGN §3)
    _add_episode_columns(root, rows)
    _write_exact_quantiles(root, frames)
    images = root / "images"  # lerobot's staging folder for frames before encoding; empty once encoded
    if images.is_dir() and not any(p.is_file() for p in images.rglob("*")):
        shutil.rmtree(images)
    provenance = {"tasks": names, "episodes_per_task": episodes_per_task, "seed": seed, "split": split, "fps": FPS,
                  "episodes": [{"episode_index": i, **row} for i, row in rows.items()], "rejected": rejected}
    (root / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=2))
    return {"episodes": len(rows), "frames": int(len(frames[ACTION_KEY])), "rejected": len(rejected)}


__all__ = ["CAMERAS", "EPISODE_COLUMNS", "FPS", "IR_TARGET_KEY", "RecordedEpisode", "demo_features", "record_demos",
           "record_episode", "scene_seed"]
