"""Scripted-expert demonstrations as one LeRobot v3 dataset.

``record_demos(out)`` runs :func:`bspatial.tasks.experts.make_expert` on sampled training instances of
the manipulation tasks (instruction variants cycled), renders the three 224 x 224 policy cameras at
every control step, keeps the episodes the Table S4 rules score ``correct`` and writes them with
lerobot's own ``LeRobotDataset.create / add_frame / save_episode / finalize``.

What one frame holds (BEHAVIOR's keys):

* ``observation.images.rgb.{head,left_wrist,right_wrist}``: the camera frames the expert's step saw
  (video features);
* ``observation.state``: the 84-dim ``RobotState.proprio`` at that step (per-dimension names in ``info.json``:
  :data:`bspatial.catalog.schema.STATE_NAMES`);
* ``action``: the 23-dim action the expert commanded at that step (names:
  :data:`~bspatial.catalog.schema.ACTION_NAMES`);
* ``oracle.ir_target``: float32 ``(x, y)`` on the 224 grid, the oracle IR point of Appendix 13.3
  (:func:`bspatial.scoring.ir_target.ir_target_pixel`). Reach: the instructed object's 3D box at that step.
  Placement: the manipulated object's 3D box in the final demonstration frame (where it came to rest),
  reprojected through that step's head camera. Where the box has no valid projection it holds
  :data:`IR_TARGET_FILL` (the grid centre) and ``oracle.ir_target_valid`` is 0;
* ``oracle.ir_target_valid``: float32 ``(1,)``, 1.0 where ``oracle.ir_target`` is the oracle point, else 0.0;
* ``task``: the instruction text (lerobot's task string).

The oracle IR target (a design decision): it is a privileged label, so it lives outside ``observation.*``
*and* carries a validity mask. Outside ``observation.*`` because lerobot turns every ``observation.*`` key into a
policy input (``dataset_to_policy_features``: STATE type) that is normalised and, for ACT / diffusion, expected
from the environment at evaluation time: an ACT trained on a set with ``observation.ir_target`` would take the
answer as an input and could not be run by ``lerobot-eval`` on an env that does not emit it. With a mask because
a NaN in the data makes lerobot's statistics of the feature NaN (``stats.json`` is then not strict JSON) and
``lerobot-doctor`` fails a dataset with NaN values; the fill is an in-range pixel, so min / max / quantiles stay on
the grid. Our IR-conditioned training reads the pair back as the processor's ``observation.ir_target`` (NaN where
invalid -> no dot), in ``bspatial.modeling.training_data`` (:func:`~bspatial.modeling.training_data.with_ir_target`).

Recording conventions:

* The start state (:mod:`bspatial.tasks.start`, shared with every rollout): the grippers are settled to the task
  family's start command (closed for manipulation, open for navigation) in unrecorded plain physics steps before
  the first frame (:class:`~bspatial.tasks.episode.EpisodeRun` does it after every reset), so the first frame shows
  the grippers the expert's first action commands and a rollout's step 0 shows the same; the provenance records
  the warm-up's steps per episode (``settle`` in the episode rows).
* Base velocity ramp: every recorded base command changes by at most
  :data:`bspatial.tasks.experts.motion.BASE_MAX_ACCEL_M_S2` / 30 Hz (planar) and
  :data:`~bspatial.tasks.experts.motion.BASE_MAX_YAW_ACCEL_RAD_S2` / 30 Hz (yaw) per step
  (:class:`~bspatial.tasks.experts.motion.BaseVelocityRamp`: the manipulation experts ramp themselves, the
  navigation expert is ramped by :func:`bspatial.tasks.experts.make_expert` in demos and rollouts alike, and the
  paperback prefix is ramped here).
* A dataset card ``README.md`` (template ``hub_cards/dataset_demos.md``,
  :func:`bspatial.construction.publishing.cards.render_demos_card`).

Per-episode extras (task name, variant, split, scene seed, training index) are columns of lerobot's episode metadata
(``meta/episodes/*.parquet``), next to ``tasks`` and ``length``: lerobot 0.6.1 has no API for extra
episode fields, but ``load_episodes`` keeps every non-``stats/`` column, so ``meta.episodes["task_name"]``
works and ``modeling.train`` samples uniformly over task names with ``task_column="task_name"``. The
columns are appended after ``finalize()`` (:func:`_add_episode_columns`).

Statistics: lerobot's dataset-level quantiles are averages of per-episode histogram quantiles, not
exact. :func:`_write_exact_quantiles` replaces every quantile key (q01 ... q99) of
``observation.state`` and ``action`` in ``meta/stats.json`` with ``numpy.quantile`` over all frames
(numpy's default linear interpolation); mean / std / min / max stay lerobot's. ``stats.json`` is strict JSON:
a non-finite statistic is an error naming the feature, never a ``NaN`` token.

Configurations: a task's demonstrations are recorded on its ``training`` split entries
(:func:`bspatial.construction.splits.training_entry`) in order, so the prompt probe's
``training_index`` / ``training_variant`` name the recorded demonstration; an entry the expert fails
on is logged as rejected and the next entry is tried.

Workers (``workers`` processes or ``ray`` actors, :mod:`bspatial.common.executors`): each attempt is a job that
records one entry on its worker's simulator and returns the episode; this process writes the dataset. Only the
attempts one process would try run, and their outcomes are used in its order (:class:`_AttemptPlan`), so the
dataset is the same bytes for any number of workers, local or on Ray (an attempt whose Ray actor died is rerun).

Navigation (``suite="navigation"`` or navigation task names): the spawn of each training seed is
validated in the simulator (:func:`bspatial.tasks.navigation.sample_validated_instance`) and the
A* expert (:class:`bspatial.tasks.experts.navigation.NavigationExpert`) drives to the destination; the features
are the same. ``oracle.ir_target_valid`` is 0 on every navigation frame: the oracle IR of Appendix
13.3 is defined for reach and placement targets only, and the paper's navigation policy is the
frozen-VLM baseline without IR, so a made-up destination point would be a cue no evaluation uses.

Paperback prefix augmentation (Appendix 16.8, ``paperback_prefix=True``): see :func:`paperback_prefix_spawn`.

Everything is written into a temporary sibling of ``out`` and renamed into place at the end
(:func:`bspatial.common.files.publish_folder`): a build that fails leaves nothing behind; with
``overwrite`` the old dataset stays at ``out`` until the new one is complete and the two are then swapped,
so a kill at any moment leaves one complete dataset there; the next run removes what a killed one left.
A provenance file ``meta/bspatial_demos.json`` lists the build arguments, the kept episodes and every
rejected attempt with its reason.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from bspatial.sim.backend import SimBackend
from bspatial.catalog.schema import (ACTION_DIM, ACTION_KEY, ACTION_NAMES, CAMERAS, CONTROL_HZ, GRIPPER_DIMS, HEAD_CAMERA,
                                     POLICY_IMAGE_SIZE, STATE_DIM, STATE_KEY, STATE_NAMES, image_key)
from bspatial.common.executors import check_ray_address, import_ray
from bspatial.common.files import publish_folder, remove_stale_staging, require_folder_path, staging_folder
from bspatial.common.locks import run_folder_lock
from bspatial.scoring.ir_target import ir_target_pixel
from bspatial.tasks.experts.motion import Ramped
from bspatial.tasks.start import GRIPPER_SETTLE_MAX_STEPS, GRIPPER_SETTLE_TOL, GripperSettleError, settle_grippers, start_gripper_command

logger = logging.getLogger(__name__)

_SVT_LOG_WARNINGS = "2"  # SVT-AV1 log levels: 0 fatal, 1 error, 2 warning, 3 info (default)
RGB_ONLY = True
"""Render the policy cameras without depth and segmentation (one pass instead of two): a demonstration stores RGB
only, and the RGB pixels are the same either way (``benchmarks/demos.py`` measures the saving side by side)."""
STREAMING_ENCODING = True
"""lerobot's streaming encoder: each frame goes straight to a per-camera encoder thread, and the image statistics come
from the encoder, instead of a PNG per frame, a statistics pass that reads the PNGs back and an encoding pass per
camera at the episode's end (``benchmarks/demos.py`` measures both ways side by side)."""
ENCODER_QUEUE_FRAMES = 2048
"""Frames a camera's streaming encoder may hold queued: more than any episode has (the longest step budget plus the
paperback prefix is under 1,000), so no frame is ever dropped. lerobot's default (30) drops frames with a warning
when frames arrive faster than the encoder takes them, as they do here: an episode's frames are added at once, after
it is scored (measured: 2 of 164 left-wrist frames dropped)."""
EPISODE_COLUMNS: tuple[str, ...] = ("task_name", "variant", "split", "scene_seed", "training_index")
"""Per-episode extras added to ``meta/episodes`` (see the module docstring)."""
EXACT_STATS_KEYS: tuple[str, ...] = (STATE_KEY, ACTION_KEY)
MAX_ATTEMPTS_PER_EPISODE = 3
"""Attempts (fresh scene seeds) per wanted episode before a task gives up on it; ours, not the paper's."""
SUITES: tuple[str, ...] = ("manipulation", "navigation")
"""Demonstration datasets: the paper trains one manipulation and one navigation policy (Appendix 13.2)."""
PAPERBACK_TASK = "reach_paperback_book"
PREFIX_MAX_OFFSET_M = 1.2
"""Paperback prefix: the largest lateral distance (m) from the original start to the bisector point on the
start line (ours: keeps the base well inside the 5 m wide room, clear of the desk's sides); a layout
whose bisector meets the start line farther out is recorded without a prefix (provenance says so)."""
PREFIX_SPEED_M_S = 0.4      # base cruise speed of the prefix (the reach expert's BASE_SPEED_M_S)
PREFIX_GAIN = 2.0           # 1/s proportional gain on position and yaw error
PREFIX_POS_TOL_M = 0.01     # the prefix ends within this distance ...
PREFIX_YAW_TOL_RAD = 0.02   # ... and this yaw error of the original start
PREFIX_MAX_STEPS = 240      # 8 s at 30 Hz: 1.2 m at 0.4 m/s plus the turn and the slow final approach
REPO_ID = "behavior-spatial/demos"
PROVENANCE_FILE = "meta/bspatial_demos.json"
CARD_FILE = "README.md"
ORACLE_IR_TARGET_KEY = "oracle.ir_target"
"""The oracle IR point (privileged label, outside ``observation.*``: see the module docstring)."""
ORACLE_IR_VALID_KEY = "oracle.ir_target_valid"
"""1.0 where :data:`ORACLE_IR_TARGET_KEY` holds the oracle point, 0.0 where the box had no valid projection."""
IR_TARGET_FILL: tuple[float, float] = (POLICY_IMAGE_SIZE / 2, POLICY_IMAGE_SIZE / 2)
"""``oracle.ir_target`` where invalid: the centre of the 224 grid, an in-range pixel (finite statistics)."""
def scene_seed(seed: int, task: str, attempt: int) -> int:
    """The scene seed of a task's ``attempt``-th training configuration under build ``seed``
    (:func:`bspatial.construction.splits.split_seed`; stable across task lists, below 2**61).

    Example:
        >>> scene_seed(0, "reach_plate", 0) == scene_seed(0, "reach_plate", 0) != scene_seed(0, "reach_plate", 1)
        True
    """
    from bspatial.construction.splits import split_seed
    from bspatial.catalog.tasks import canonical_task_name

    return split_seed(seed, canonical_task_name(task), "training", attempt)


def demo_features(cameras: Sequence[str] = CAMERAS, image_size: int = POLICY_IMAGE_SIZE) -> dict:
    """LeRobot feature spec of the demonstrations (BEHAVIOR's keys)."""
    shape = (image_size, image_size, 3)
    features = {image_key(c): {"dtype": "video", "shape": shape, "names": ["height", "width", "channels"]}
                for c in cameras}
    features[STATE_KEY] = {"dtype": "float32", "shape": (STATE_DIM,), "names": list(STATE_NAMES)}
    features[ACTION_KEY] = {"dtype": "float32", "shape": (ACTION_DIM,), "names": list(ACTION_NAMES)}
    features[ORACLE_IR_TARGET_KEY] = {"dtype": "float32", "shape": (2,), "names": ["x", "y"]}
    features[ORACLE_IR_VALID_KEY] = {"dtype": "float32", "shape": (1,), "names": ["valid"]}
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
        base_poses: per step, the measured (x, y, yaw) base pose the step started from.
        prefix_steps: steps of the paperback prefix (Appendix 16.8) before the expert took over; 0 without.
        settle_steps: unrecorded warm-up steps before the first frame (:func:`bspatial.tasks.start.warm_up`).
        settle_command: the (left, right) gripper command held during them (the family's start command).
        context_frames: navigation: the (K, 224, 224, 3) uint8 scene-context frames a navigation policy sees
            (:func:`bspatial.construction.demonstrations.context_frames.policy_context_frames`); None for manipulation.
    """

    instance: object
    images: list[dict[str, np.ndarray]] = field(default_factory=list)
    states: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    head_cameras: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    reach_boxes: list[np.ndarray] = field(default_factory=list)
    final_box: np.ndarray | None = None
    base_poses: list[np.ndarray] = field(default_factory=list)
    prefix_steps: int = 0
    settle_steps: int = 0
    settle_command: tuple[float, float] | None = None
    context_frames: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.actions)

    def ir_targets(self) -> np.ndarray:
        """(T, 2) float32 oracle IR points on the 224 grid, NaN where the box has no valid projection."""

        out = np.full((len(self), 2), np.nan, np.float32)
        if not self.reach_boxes and self.final_box is None:   # navigation: no oracle IR target
            return out
        for t, (K, pose) in enumerate(self.head_cameras):
            box = self.reach_boxes[t] if self.reach_boxes else self.final_box
            pixel = ir_target_pixel(box, K, pose, (POLICY_IMAGE_SIZE, POLICY_IMAGE_SIZE), out_size=POLICY_IMAGE_SIZE)
            if pixel is not None:
                out[t] = pixel
        return out

    def oracle_ir(self) -> tuple[np.ndarray, np.ndarray]:
        """``(targets, valid)``: (T, 2) float32 with :data:`IR_TARGET_FILL` where invalid, and (T, 1) float32 0 / 1."""
        targets = self.ir_targets()
        valid = np.isfinite(targets).all(axis=1)
        targets[~valid] = IR_TARGET_FILL
        return targets, valid.astype(np.float32)[:, None]


class _RecordingPolicy:
    """Wraps an expert: stores what each step observed and what the expert commanded.

    The episode starts from the start state (:mod:`bspatial.tasks.start`: grippers settled to the family's start
    command before step 0, by :class:`~bspatial.tasks.episode.EpisodeRun`), so the first recorded frame is what a
    rollout's policy sees at step 0. An expert whose first gripper command is not that start command would make the
    first frames show grippers moving that no rollout starts with: refused (:class:`GripperSettleError`).
    """

    def __init__(self, backend: SimBackend, expert, episode: RecordedEpisode) -> None:
        self.backend, self.expert, self.episode = backend, expert, episode
        self.reach = episode.instance.family in ("reach", "reach_base_proximity")

    def __call__(self, observation) -> np.ndarray:
        action = np.asarray(self.expert(observation), np.float32)
        ep, head = self.episode, observation.images[HEAD_CAMERA]
        if observation.step == 0:
            start = np.asarray(start_gripper_command(ep.instance))
            first = action[list(GRIPPER_DIMS)].astype(np.float64)
            if np.any(np.abs(first - start) > GRIPPER_SETTLE_TOL):
                raise GripperSettleError(f"the expert's first gripper command {first.tolist()} is not the start "
                                         f"state's {start.tolist()} (bspatial.tasks.start)")
        ep.images.append({c: frame.rgb for c, frame in observation.images.items()})
        ep.states.append(np.asarray(observation.state.proprio, np.float32))
        ep.actions.append(action.copy())
        ep.head_cameras.append((head.K, head.T_world_cam))
        ep.base_poses.append(np.asarray(observation.state.base_pose, np.float64).copy())
        if self.reach:
            ep.reach_boxes.append(self.backend.object_bbox(ep.instance.target).corners())
        return action


class _PrefixPolicy:
    """Appendix 16.8 prefix: drive the base (holonomic, arms held) from the augmented spawn to the
    original start pose, then hand every further step to the expert, whose script starts there."""

    def __init__(self, backend: SimBackend, expert, start) -> None:
        self.backend, self.expert = backend, expert
        self.goal = np.array([start.x, start.y, start.yaw], float)
        self.steps, self.done = 0, False
        self._hold: np.ndarray | None = None

    def __call__(self, observation) -> np.ndarray:
        import math

        from bspatial.catalog.schema import ACTION_SLICES

        if observation.step == 0:   # a fresh episode (the recorder may ask twice at step 0)
            self.steps, self.done, self._hold = 0, False, None
        if not self.done:
            x, y, yaw = (float(v) for v in observation.state.base_pose)
            err = self.goal[:2] - (x, y)
            yaw_err = math.remainder(self.goal[2] - yaw, math.tau)
            arrived = np.linalg.norm(err) < PREFIX_POS_TOL_M and abs(yaw_err) < PREFIX_YAW_TOL_RAD
            if arrived or self.steps >= PREFIX_MAX_STEPS:
                if not arrived:
                    logger.warning("paperback prefix stopped %.3f m / %.3f rad short of the start after %d steps",
                                   np.linalg.norm(err), yaw_err, self.steps)
                self.done = True
            else:
                if self._hold is None:
                    self._hold = self.backend.hold_action()
                v = PREFIX_GAIN * err
                speed = float(np.linalg.norm(v))
                if speed > PREFIX_SPEED_M_S:
                    v *= PREFIX_SPEED_M_S / speed
                c, s = math.cos(yaw), math.sin(yaw)   # world velocity -> robot frame (action 0:3)
                action = self._hold.copy()
                action[ACTION_SLICES["base"]] = (c * v[0] + s * v[1], -s * v[0] + c * v[1], PREFIX_GAIN * yaw_err)
                self.steps += 1
                return action
        return self.expert(observation)


def paperback_prefix_spawn(instance):
    """Appendix 16.8: the augmented start of a reach_paperback_book demonstration, or None.

    The paper's layout has two candidate books; ours has three, so the two candidates are the books the
    instruction's relation can select for its reference object: the closest and the farthest
    (``instance.measurements["distance_to_reference"]``), one of which is the instructed target. The
    augmented spawn is the point of their perpendicular bisector (xy, box centres) on the robot's start
    line (through the original start, along the robot's lateral axis), so the prefix is a sideways
    base motion that never nears the desk, facing the books' midpoint so that neither book is favoured
    by the first view; the prefix then drives to the original start pose. Returns None when the
    bisector meets the start line more than :data:`PREFIX_MAX_OFFSET_M` away (books nearly one behind
    the other) or not at all.

    Returns:
        ``(spawn, (book_a, book_b))`` with ``spawn`` a :class:`~bspatial.world.spec.RobotSpawn`, or None.
    """
    import dataclasses
    import math

    from bspatial.world.relations import object_box

    if instance.task != PAPERBACK_TASK:
        raise ValueError(f"the paperback prefix applies to task {PAPERBACK_TASK!r} only, got {instance.task!r}")
    distances = instance.measurements["distance_to_reference"]
    books = (min(distances, key=distances.get), max(distances, key=distances.get))
    objects = {o.name: o for o in instance.scene.objects}
    a, b = (object_box(objects[n]).center[:2] for n in books)
    start = instance.scene.robot
    s = np.array([start.x, start.y])
    lateral = np.array([-math.sin(start.yaw), math.cos(start.yaw)])
    mid, chord = (a + b) / 2, b - a
    denominator = float(lateral @ chord)
    if abs(denominator) < 1e-9:
        return None
    t = float((mid - s) @ chord) / denominator     # (s + t * lateral - mid) . chord = 0
    if abs(t) > PREFIX_MAX_OFFSET_M:
        return None
    p = s + t * lateral
    yaw = math.atan2(mid[1] - p[1], mid[0] - p[0])
    return dataclasses.replace(start, x=float(p[0]), y=float(p[1]), yaw=yaw), books


def _run_recording(backend: SimBackend, instance, policy: _RecordingPolicy, split: str, episode: RecordedEpisode,
                   cameras: Sequence[str] = CAMERAS):
    """The episode loop with ``cameras`` rendered; the warm-up's steps and command go to ``episode``."""
    from bspatial.tasks.episode import EpisodeRun

    run = EpisodeRun(backend, instance, split=split)
    episode.settle_steps, episode.settle_command = run.warm_up_steps, start_gripper_command(instance)
    while not run.done:
        run.step(policy(run.observation(tuple(cameras), rgb_only=RGB_ONLY)))
    return run.result()


def record_episode(backend: SimBackend, instance, split: str = "train", *, prefix_to=None,
                   cameras: Sequence[str] = CAMERAS) -> tuple[RecordedEpisode | None, str]:
    """Run the scripted expert on ``instance`` with the policy cameras; (episode, "") if scored correct.

    Args:
        prefix_to: a :class:`~bspatial.world.spec.RobotSpawn` to drive the base to before the expert starts
            (the paperback prefix; ``instance.scene.robot`` is then the augmented spawn).

    Returns ``(None, reason)`` for an episode the rules do not score ``correct`` (reason: the outcome
    label, or the status for a sim error).
    """
    from bspatial.tasks.experts import make_expert

    backend.load(instance.scene)
    episode = RecordedEpisode(instance)
    expert = make_expert(backend, instance)   # a ScriptedExpert: ramps its own base commands
    prefix = None if prefix_to is None else _PrefixPolicy(backend, expert, prefix_to)
    policy = _RecordingPolicy(backend, expert if prefix is None else Ramped(prefix), episode)
    try:
        result = _run_recording(backend, instance, policy, split, episode, cameras)
    except GripperSettleError as error:
        return None, f"settle failed: {error}"
    episode.prefix_steps = 0 if prefix is None else prefix.steps
    if result.status == "sim_error":
        return None, f"sim_error: {result.message}"
    if result.outcome is None or result.outcome.outcome != "correct":
        return None, f"outcome {result.outcome.outcome if result.outcome else None} ({result.status})"
    if instance.manipulated is not None:
        episode.final_box = backend.object_bbox(instance.manipulated).corners()
    return episode, ""


def record_navigation_episode(backend: SimBackend, task: str, seed: int, split: str = "train",
                              cameras: Sequence[str] = CAMERAS) -> tuple[RecordedEpisode | None, str]:
    """Validate ``seed``'s spawn in the simulator, run the navigation expert; (episode, "") on success.

    A kept episode also carries its scene-context frames (``episode.context_frames``), rendered after the run.
    """
    from bspatial.construction.demonstrations.context_frames import policy_context_frames
    from bspatial.tasks.experts import make_expert
    from bspatial.tasks.navigation import sample_validated_instance

    instance, _ = sample_validated_instance(backend, task, seed)   # loads the scene; ValueError: no valid spawn
    episode = RecordedEpisode(instance)
    policy = _RecordingPolicy(backend, make_expert(backend, instance), episode)   # the ramped navigation expert
    try:
        result = _run_recording(backend, instance, policy, split, episode, cameras)
    except GripperSettleError as error:
        return None, f"settle failed: {error}"
    if result.status == "sim_error":
        return None, f"sim_error: {result.message}"
    if result.outcome is None or result.outcome.outcome != "correct":
        return None, f"outcome {result.outcome.outcome if result.outcome else None} ({result.status})"
    episode.context_frames = policy_context_frames(backend, instance)   # after the run: it loads the tour's plan
    return episode, ""


def _write_episode(dataset, episode: RecordedEpisode, index: int) -> None:
    """Add the episode's frames to the dataset as episode ``index``; a navigation episode's context strip goes
    beside them (in the staging folder, so it is published with the dataset or not at all)."""
    from bspatial.construction.demonstrations.context_frames import write_context_frames

    if index != dataset.meta.total_episodes:   # the strip's name must be the episode lerobot is about to save
        raise RuntimeError(f"episode {index} written after {dataset.meta.total_episodes} saved episodes")
    if episode.context_frames is not None:
        write_context_frames(dataset.root, index, episode.context_frames)
    targets, valid = episode.oracle_ir()
    for t in range(len(episode)):
        frame = {image_key(c): rgb for c, rgb in episode.images[t].items()}
        frame[STATE_KEY] = episode.states[t]
        frame[ACTION_KEY] = episode.actions[t]
        frame[ORACLE_IR_TARGET_KEY] = targets[t]
        frame[ORACLE_IR_VALID_KEY] = valid[t]
        frame["task"] = episode.instance.instruction  # no timestamp / frame_index: lerobot computes them
        dataset.add_frame(frame)
    dataset.save_episode(parallel_encoding=False)  # no process pool forked from a GL-holding process


def _write_exact_quantiles(root: Path, values: dict[str, np.ndarray]) -> dict[str, dict[str, list]]:
    """Replace lerobot's approximate quantiles of ``values``' keys in ``meta/stats.json`` by exact ones; the file
    is rewritten as strict JSON (:func:`non_finite_stats` must find nothing)."""
    path = root / "meta" / "stats.json"
    stats = json.loads(path.read_text())
    for key, frames in values.items():
        for name in [k for k in stats[key] if k.startswith("q") and k[1:].isdigit()]:
            stats[key][name] = np.quantile(frames.astype(np.float64), int(name[1:]) / 100, axis=0).tolist()
    bad = non_finite_stats(stats)
    if bad:
        raise ValueError(f"non-finite dataset statistics (stats.json must be strict JSON): {bad}")
    # lerobot gathers the features of stats.json in a set, so their order follows the process's string-hash seed;
    # sorted, the file is the same bytes from any process (a Ray or worker-pool recording, a rerun).
    path.write_text(json.dumps(dict(sorted(stats.items())), indent=4, allow_nan=False))
    return {key: stats[key] for key in values}


def non_finite_stats(stats: dict) -> list[str]:
    """``"feature/statistic"`` of every statistic holding a NaN or an infinity (empty: all finite).

    Example:
        >>> non_finite_stats({"a": {"mean": [0.0, float("nan")], "count": [3]}, "b": {"max": [1.0]}})
        ['a/mean']
    """
    return [f"{key}/{name}" for key, entry in stats.items() for name, value in entry.items()
            if not np.all(np.isfinite(np.asarray(value, np.float64)))]


def base_velocity_changes(actions: np.ndarray) -> tuple[float, float]:
    """Largest per-step change of the commanded base velocity over an episode, from rest: (planar m/s, yaw rad/s).

    Example:
        >>> base_velocity_changes(np.array([[0.03, 0.0, 0.1] + [0.0] * 20, [0.06, 0.0, 0.1] + [0.0] * 20]))
        (0.03, 0.1)
    """
    base = np.vstack([np.zeros((1, 3)), np.asarray(actions, np.float64)[:, :3]])
    step = np.diff(base, axis=0)
    return round(float(np.linalg.norm(step[:, :2], axis=1).max()), 6), round(float(np.abs(step[:, 2]).max()), 6)


def _recording_row(episode: RecordedEpisode, index: int) -> dict:
    """The episode's settle, base ramp and IR validity figures (provenance; the card quotes them)."""
    dv, dw = base_velocity_changes(np.stack(episode.actions))
    row = {"settle": {"steps": episode.settle_steps, "gripper_command": list(episode.settle_command)},
           "base_ramp": {"max_dv": dv, "max_dw": dw},
           "ir_valid_frames": int(episode.oracle_ir()[1].sum())}
    if episode.context_frames is not None:
        from bspatial.construction.demonstrations.context_frames import context_frames_path

        row["context_frames"] = {"frames": len(episode.context_frames),
                                 "file": context_frames_path("", index).as_posix()}
    return row


def recording_conventions() -> dict:
    """The recording constants a reader of the set needs (provenance ``recording``; the card quotes them)."""
    from bspatial.tasks.experts.motion import BASE_MAX_ACCEL_M_S2, BASE_MAX_YAW_ACCEL_RAD_S2

    return {"gripper_settle_tol": GRIPPER_SETTLE_TOL, "gripper_settle_max_steps": GRIPPER_SETTLE_MAX_STEPS,
            "base_max_accel_m_s2": BASE_MAX_ACCEL_M_S2, "base_max_yaw_accel_rad_s2": BASE_MAX_YAW_ACCEL_RAD_S2,
            "ir_target_key": ORACLE_IR_TARGET_KEY, "ir_valid_key": ORACLE_IR_VALID_KEY,
            "ir_target_fill": list(IR_TARGET_FILL)}


def _write_card(root: Path, provenance: dict) -> None:
    """The dataset card ``README.md`` (:func:`bspatial.construction.publishing.cards.render_demos_card`)."""
    from bspatial.construction.publishing.cards import render_demos_card

    info = json.loads((root / "meta" / "info.json").read_text())
    (root / CARD_FILE).write_text(render_demos_card(info, provenance))


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


@dataclass(frozen=True)
class _Recipe:
    """What every recording attempt of one ``record_demos`` run shares, validated once (picklable: it travels to
    the worker processes with each attempt).

    Attributes:
        seed: build seed of the training entries.
        split: the split recorded in the traces and the episode metadata (:data:`bspatial.scoring.trace.SPLITS`).
        cameras: the cameras recorded, the head camera among them.
        paperback_prefix: start reach_paperback_book on its candidates' bisector (:func:`paperback_prefix_spawn`).
        spa_withheld: the Spa-Bench study's training entries (:func:`~bspatial.construction.splits.spa_training_entry`).
    """

    seed: int
    split: str
    cameras: tuple[str, ...]
    paperback_prefix: bool = False
    spa_withheld: bool = False

    def __post_init__(self) -> None:
        from bspatial.scoring.trace import SPLITS

        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {self.split!r}")
        cameras = self.cameras
        if HEAD_CAMERA not in cameras or any(c not in CAMERAS for c in cameras) or len(set(cameras)) != len(cameras):
            raise ValueError(f"cameras must be distinct names from {list(CAMERAS)} including {HEAD_CAMERA!r}, got "
                             f"{list(cameras)!r}")

    def entry(self, task: str, attempt: int):
        """The training entry of ``task``'s attempt ``attempt``."""
        from bspatial.construction.splits import spa_training_entry, training_entry

        return (spa_training_entry if self.spa_withheld else training_entry)(task, attempt, self.seed)

    def prefixed(self, task: str) -> bool:
        return self.paperback_prefix and task == PAPERBACK_TASK


def _record_one(backend: SimBackend, name: str, entry, recipe: _Recipe):
    """(episode or None, reason, provenance extras) for one training entry."""
    from bspatial.tasks import get_task, sample_instance

    if get_task(name).spec.is_navigation:
        episode, reason = record_navigation_episode(backend, name, entry.seed, recipe.split, recipe.cameras)
        return episode, reason, {}
    instance = sample_instance(name, entry.variant, entry.seed)
    if recipe.prefixed(name):
        return _record_prefixed(backend, name, entry, instance, recipe)
    episode, reason = record_episode(backend, instance, recipe.split, cameras=recipe.cameras)
    return episode, reason, {}


def _record_prefixed(backend: SimBackend, name: str, entry, instance, recipe: _Recipe):
    """:func:`_record_one` for a paperback-prefixed entry: start on the bisector, drive to the task's start."""
    import dataclasses

    augmented = paperback_prefix_spawn(instance)
    if augmented is None:
        logger.warning("demo %s seed %d: bisector meets the start line beyond %.1f m; recorded without prefix",
                       name, entry.seed, PREFIX_MAX_OFFSET_M)
        episode, reason = record_episode(backend, instance, recipe.split, cameras=recipe.cameras)
        return episode, reason, {"prefix": None}
    spawn, books = augmented
    start = instance.scene.robot
    moved = dataclasses.replace(instance, scene=dataclasses.replace(instance.scene, robot=spawn),
                                step_budget=instance.step_budget + PREFIX_MAX_STEPS)
    episode, reason = record_episode(backend, moved, recipe.split, prefix_to=start, cameras=recipe.cameras)
    extras = {"prefix": {"books": list(books), "spawn": [spawn.x, spawn.y, spawn.yaw],
                         "original_start": [start.x, start.y, start.yaw]}}
    if episode is not None:
        extras["prefix"]["steps"] = episode.prefix_steps
        extras["prefix"]["measured_start"] = episode.base_poses[0].tolist()
    return episode, reason, extras


def _attempt_job(args: tuple):
    """One recording attempt on this process's simulator: (episode or None, reason, provenance extras)."""
    from bspatial.sim.process import process_backend

    name, entry, recipe = args
    try:
        return _record_one(process_backend(camera_size=POLICY_IMAGE_SIZE), name, entry, recipe)
    except ValueError as error:  # a layout that cannot meet its margins, a spawn that never validates
        return None, f"sampling failed: {error}", {}


class _AttemptPlan:
    """Which recording attempts to run, and in what order to use their outcomes, so that any number of workers
    records exactly what one process trying each task's entries in order would.

    One process tries a task's entries in order until ``wanted`` are kept (at most ``wanted *``
    :data:`MAX_ATTEMPTS_PER_EPISODE` attempts). Attempt ``a`` is surely needed while ``a < wanted + r``, with ``r``
    the task's rejections seen so far: if every outcome still unknown were kept, the task would need exactly that
    many attempts, and it can never need fewer. So only surely-needed attempts run (none is wasted), and the
    outcomes are used in task order, then attempt order (the one-process order of episodes and rejections).
    """

    def __init__(self, tasks: Sequence[str], wanted: int) -> None:
        self.tasks, self.wanted, self.limit = list(tasks), wanted, wanted * MAX_ATTEMPTS_PER_EPISODE
        self.submitted = {t: 0 for t in tasks}
        self.rejections_seen = {t: 0 for t in tasks}
        self.outcomes: dict[str, dict[int, tuple]] = {t: {} for t in tasks}
        self.head = 0                          # index of the first task not finished
        self.used = {t: 0 for t in tasks}      # attempts of the task already used, in order
        self.kept = {t: 0 for t in tasks}

    def buffered(self) -> int:
        return sum(len(o) for o in self.outcomes.values())

    def finished(self) -> bool:
        return self.head == len(self.tasks)

    def next_jobs(self, room: int):
        """Surely-needed attempts not yet submitted, in order: the head task's all, the others' within ``room``."""
        for position in range(self.head, len(self.tasks)):
            task = self.tasks[position]
            while self.submitted[task] < min(self.wanted + self.rejections_seen[task], self.limit):
                if position != self.head and room <= 0:
                    return
                self.submitted[task] += 1
                room -= 1
                yield task, self.submitted[task] - 1

    def receive(self, task: str, attempt: int, outcome: tuple) -> None:
        self.outcomes[task][attempt] = outcome
        if outcome[0] is None:
            self.rejections_seen[task] += 1

    def ready(self):
        """(task, attempt, outcome) to use now, in one-process order; advances past finished tasks."""
        while not self.finished():
            task = self.tasks[self.head]
            if self.kept[task] == self.wanted or self.used[task] == self.limit:
                if self.kept[task] < self.wanted:
                    logger.warning("task %s: %d of %d demonstrations recorded", task, self.kept[task], self.wanted)
                self.head += 1
                continue
            outcome = self.outcomes[task].pop(self.used[task], None)
            if outcome is None:
                return
            self.used[task] += 1
            self.kept[task] += outcome[0] is not None
            yield task, self.used[task] - 1, outcome


def _record_all(dataset, tasks: Sequence[str], episodes_per_task: int, recipe: _Recipe, workers: int | None = None,
                ray: str | None = None):
    """Record and write every task's episodes on its training entries (:class:`_AttemptPlan` decides which, on the
    executor of ``workers`` / ``ray``); returns (episode rows, rejections, state / action frames)."""
    from bspatial.common.executors import open_executor
    from bspatial.sim.process import close_process_backends

    rows: dict[int, dict] = {}
    rejected: list[dict] = []
    states, actions = [], []
    plan = _AttemptPlan(tasks, episodes_per_task)
    try:
        with open_executor(workers, ray) as executor:
            # Results wait here until the tasks before them are done (a recorded episode is ~0.5 MB a frame):
            # beyond the head task, at most two jobs per worker are queued, running or waiting.
            lookahead = 2 * executor.workers

            def top_up() -> None:
                for name, attempt in plan.next_jobs(lookahead - executor.pending() - plan.buffered()):
                    executor.submit((name, attempt), _attempt_job, (name, recipe.entry(name, attempt), recipe))

            top_up()
            for (name, attempt), outcome in executor.completed():
                plan.receive(name, attempt, outcome)
                for task, used, (episode, reason, extras) in plan.ready():
                    entry = recipe.entry(task, used)
                    key = {"task_name": task, "variant": entry.variant, "scene_seed": entry.seed,
                           "training_index": entry.index}
                    if episode is None:
                        logger.warning("demo %s/%s seed %d rejected: %s", task, entry.variant, entry.seed, reason)
                        rejected.append({**key, "reason": reason, **extras})
                        continue
                    index = len(rows)
                    _write_episode(dataset, episode, index)
                    rows[index] = {**key, "split": recipe.split, "length": len(episode), **extras,
                                   **_recording_row(episode, index)}
                    states.append(np.stack(episode.states))
                    actions.append(np.stack(episode.actions))
                    logger.info("demo %s/%s seed %d: %d frames", task, entry.variant, entry.seed, len(episode))
                top_up()
    finally:
        close_process_backends()
    if not plan.finished():   # the plan always submits the head task's next attempt; reaching here is a bug
        raise RuntimeError(f"demos: attempts ran out before task {plan.tasks[plan.head]!r} was finished")
    if not rows:
        raise ValueError(f"no demonstration of {list(tasks)} was scored correct (seed {recipe.seed}); "
                         f"rejected: {rejected}")
    return rows, rejected, {STATE_KEY: np.concatenate(states), ACTION_KEY: np.concatenate(actions)}


def record_demos(out: str | os.PathLike, tasks: Sequence[str] | None = None, episodes_per_task: int = 2,
                 seed: int = 0, split: str = "train", *, overwrite: bool = False, suite: str = "manipulation",
                 paperback_prefix: bool = False, spa_withheld: bool = False, workers: int | None = None,
                 ray: str | None = None, cameras: Sequence[str] = CAMERAS) -> Path:
    """Record scripted-expert demonstrations of ``tasks`` into one LeRobot v3 dataset at ``out``.

    Args:
        out: the dataset folder to create (``meta/``, ``data/``, ``videos/``).
        tasks: task names (any spelling :func:`bspatial.tasks.get_task` accepts, navigation included);
            default: the tasks of ``suite``.
        episodes_per_task: correct episodes wanted per task; each task tries at most
            :data:`MAX_ATTEMPTS_PER_EPISODE` times as many scene seeds.
        seed: build seed; scene seeds derive from it, the task name and the attempt index.
        split: the split recorded in the traces and the episode metadata
            (:data:`bspatial.scoring.trace.SPLITS`).
        overwrite: replace an existing ``out``.
        suite: "manipulation" (the 15 manipulation tasks) or "navigation" (the 10 navigation tasks):
            the default task list.
        paperback_prefix: prefix every reach_paperback_book demonstration with base motion from the
            candidate books' perpendicular bisector (Appendix 16.8, :func:`paperback_prefix_spawn`).
        spa_withheld: record the Spa-Bench ID / OOD study's demonstrations: the training seeds with the
            in-distribution variants only, never a withheld cell
            (:func:`bspatial.construction.splits.spa_training_entry`).
        workers: processes recording attempts (spawned, one simulator each); None or 1 = this process. With
            ``ray``: the number of Ray actors (default: one per CPU of the cluster). This process writes the
            dataset, and it is the same dataset for any ``workers`` / ``ray``.
        ray: record on Ray actors: "auto" (join the cluster Ray finds, else start a local one) or an address.
        cameras: the cameras recorded (default all three); the head camera is required (the oracle IR point is
            projected through it). Fewer cameras record faster, for a learner that reads fewer (an ACT on the head
            camera): each camera is a render and an encoder per frame.

    Returns:
        ``out`` as a Path.

    Raises:
        FileExistsError: ``out`` exists and ``overwrite`` is False.
        NotAFolderError: ``out`` is, or lies under, a file (a ``ValueError``).
        ValueError: bad arguments, or no episode at all was scored correct.
    """
    from bspatial.catalog.tasks import NAVIGATION_TASKS
    from bspatial.tasks import get_task, task_names

    # lerobot encodes the cameras with SVT-AV1, which prints ~20 info lines per video to stderr;
    # its own SVT_LOG variable (read when an encoder starts) keeps warnings and errors only.
    os.environ.setdefault("SVT_LOG", _SVT_LOG_WARNINGS)
    out = Path(out)
    if episodes_per_task < 1:
        raise ValueError(f"episodes_per_task must be >= 1, got {episodes_per_task!r}")
    recipe = _Recipe(seed, split, tuple(cameras), paperback_prefix, spa_withheld)
    if suite not in SUITES:
        raise ValueError(f"suite must be one of {SUITES}, got {suite!r}")
    default = task_names() if suite == "manipulation" else NAVIGATION_TASKS
    names = [get_task(t).name for t in (default if tasks is None else tasks)]
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if check_ray_address(ray) is not None:
        import_ray()   # without Ray, refused before any folder is touched
    require_folder_path(out)
    with run_folder_lock(out.parent, f"demos --suite {suite}", name=f".{out.name}.lock"):
        remove_stale_staging(out)   # we hold out's lock: a staging folder of out is a killed run's
        if out.exists() and not overwrite:
            raise FileExistsError(f"{str(out)!r} exists; pass overwrite=True to replace it")
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = staging_folder(out)
        try:
            root = tmp / "dataset"
            counts = _build(root, names, episodes_per_task, recipe, workers, ray)
            publish_folder(root, out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        logger.info("demos: %d episodes, %d frames, %d rejected -> %s", counts["episodes"], counts["frames"],
                    counts["rejected"], out)
        return out


def _build(root: Path, names: list[str], episodes_per_task: int, recipe: _Recipe, workers: int | None = None,
           ray: str | None = None) -> dict[str, int]:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from bspatial.sim.mujoco_backend import CONTROL_DT

    if round(1.0 / CONTROL_DT) != CONTROL_HZ:
        raise ValueError(f"CONTROL_HZ={CONTROL_HZ} must equal the simulator's control rate {1.0 / CONTROL_DT:g} Hz")
    dataset = LeRobotDataset.create(REPO_ID, fps=CONTROL_HZ, features=demo_features(recipe.cameras), root=root,
                                    use_videos=True, robot_type="r1pro", streaming_encoding=STREAMING_ENCODING,
                                    encoder_queue_maxsize=ENCODER_QUEUE_FRAMES)
    try:
        rows, rejected, frames = _record_all(dataset, names, episodes_per_task, recipe, workers, ray)
    finally:
        dataset.finalize()  # after the last save_episode, as lerobot requires
    _add_episode_columns(root, rows)
    _write_exact_quantiles(root, frames)
    images = root / "images"  # lerobot's staging folder for frames before encoding; empty once encoded
    if images.is_dir() and not any(p.is_file() for p in images.rglob("*")):
        shutil.rmtree(images)
    provenance = {"repo_id": REPO_ID, "tasks": names, "episodes_per_task": episodes_per_task, "seed": recipe.seed,
                  "split": recipe.split, "fps": CONTROL_HZ, "paperback_prefix": recipe.paperback_prefix,
                  "spa_withheld": recipe.spa_withheld, "cameras": list(recipe.cameras),
                  "recording": recording_conventions(),
                  "episodes": [{"episode_index": i, **row} for i, row in rows.items()], "rejected": rejected}
    (root / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=2, allow_nan=False))
    _write_card(root, provenance)
    return {"episodes": len(rows), "frames": int(len(frames[ACTION_KEY])), "rejected": len(rejected)}


__all__ = ["CARD_FILE", "EPISODE_COLUMNS", "GRIPPER_SETTLE_TOL", "GripperSettleError", "IR_TARGET_FILL",
           "ORACLE_IR_TARGET_KEY", "ORACLE_IR_VALID_KEY", "PREFIX_MAX_OFFSET_M", "RecordedEpisode", "SUITES",
           "demo_features", "non_finite_stats", "paperback_prefix_spawn", "record_demos", "record_episode",
           "record_navigation_episode", "recording_conventions", "scene_seed", "settle_grippers"]
