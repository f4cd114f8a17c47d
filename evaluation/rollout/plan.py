"""Planning a rollout run: which episodes (task, variant, seed) a split holds, and how each one runs.

No simulator: everything here is decided from the split manifests of :mod:`bspatial.construction.splits`
(build seed :data:`SPLIT_BUILD_SEED`) and the task catalogue, so bad splits and tasks are refused before
any simulator starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from bspatial.common.registry import unknown_name

if TYPE_CHECKING:
    from bspatial.construction.splits import SplitEntry


ROLLOUT_SPLITS: tuple[str, ...] = ("held_out", "prompt_probe", "navigation", "spa_id", "spa_ood", "training")
"""Closed-loop protocols of Section 4.3 / 5.1: manipulation held-out and prompt probe, navigation (Table S11);
Spa-Bench's in-distribution / withheld-cell episodes (:mod:`bspatial.construction.splits`); and ``training``, the
training manifest the demonstrations are recorded on (every task; place_saucer is evaluated nowhere else): the
replay check (``--policy replay:<demos>``) and in-distribution rollouts run there. Not a benchmark split."""
TRAINING_SPLIT = "training"
SPLIT_BUILD_SEED = 0
"""Build seed of the split manifests (:data:`bspatial.construction.splits.DEFAULT_BUILD_SEED`, what
``bspatial build`` writes); recorded in the run manifest so a resumed run plans the same episodes."""


@dataclass(frozen=True)
class RunSettings:
    """How every episode of a run is executed: the options of :func:`~bspatial.evaluation.rollout.runner.run_rollouts`
    (and of ``bspatial rollout``) that change an episode, recorded in the run's manifest; one picklable value for
    the worker processes.

    Attributes:
        seed: seed of the policy's randomness (random policy, flow-matching noise).
        max_steps: cap on each episode's step budget (smoke runs); None = the task's budget.
        latency_steps: checkpoints: 0 = synchronous controller, k = asynchronous with a k-step latency.
        threaded: checkpoints: asynchronous inference in a worker thread while the simulator steps (latency
            measured per chunk and recorded as ``latencies``; not deterministic).
        ir: the IR source of IR checkpoints (:class:`~bspatial.evaluation.rollout.ir.IRSettings`); None = the
            default, oracle for an IR checkpoint on a manipulation split and none otherwise (``run_rollouts``
            resolves it and refuses a source the policy or split cannot take).
        condition: the Spa-Bench condition (:data:`bspatial.tasks.conditions.CONDITIONS`) on the split's scenes:
            "spatial" (the instruction as planned), "direct", "paraphrase", "direct_paraphrase" or
            "no_intervention" (manipulation splits only).

    Raises:
        ValueError: a field out of range, naming it and the value.
    """

    seed: int = 0
    max_steps: int | None = None
    latency_steps: int = 0
    threaded: bool = False
    ir: Any = None
    condition: str = "spatial"

    def __post_init__(self) -> None:
        if self.max_steps is not None and (isinstance(self.max_steps, bool) or self.max_steps < 1):
            raise ValueError(f"max_steps must be >= 1, got {self.max_steps!r}")
        if self.latency_steps < 0:
            raise ValueError(f"latency_steps must be >= 0, got {self.latency_steps!r}")
        if self.threaded and self.latency_steps:
            raise ValueError(f"threaded inference measures its latency; latency_steps must be 0, got "
                             f"{self.latency_steps!r}")


def episode_noise_seed(run_seed: int, scene_seed: int | None) -> int:
    """The flow-matching noise seed of one episode: drawn from the run's ``--seed`` and the episode's scene seed.

    One rule for every path that samples a learned policy's noise (an in-process checkpoint, a LeRobot policy, the
    seed our openpi client sends its server), so an episode draws the same noise whichever path runs it.

    Example:
        >>> episode_noise_seed(0, 7) == episode_noise_seed(0, 7) != episode_noise_seed(1, 7)
        True
    """
    return int(episode_rng(run_seed, scene_seed).integers(2**31))


def episode_rng(run_seed: int, scene_seed: int | None):
    """The episode's random generator: seeded by the run's ``--seed`` and the episode's scene seed. The random
    policy, the scripted references' wrong targets, the wrong IR cue (the same draw as scripted-wrong's) and the
    noise seed all start from it."""
    import numpy as np

    return np.random.default_rng([int(run_seed), int(scene_seed or 0)])


def _check_split(split: str) -> str:
    if split not in ROLLOUT_SPLITS:
        raise unknown_name("split", split, ROLLOUT_SPLITS)
    return split


def _split_count(spec, split: str) -> int:
    if split in ("spa_id", "spa_ood"):
        from bspatial.construction.splits import SPA_ID_PER_TASK, SPA_OOD_PER_TASK, spa_tasks

        return (SPA_ID_PER_TASK if split == "spa_id" else SPA_OOD_PER_TASK) if spec.name in spa_tasks() else 0
    if split == TRAINING_SPLIT:
        from bspatial.construction.splits import DEFAULT_TRAINING_PER_TASK

        return DEFAULT_TRAINING_PER_TASK
    return {"held_out": spec.n_heldout, "prompt_probe": spec.n_prompt_probe, "navigation": spec.n_navigation}[split]


def _split_registry(split: str):
    from bspatial.tasks.registry import NAVIGATION_REGISTRY, REGISTRY

    if split == TRAINING_SPLIT:
        return {**REGISTRY, **NAVIGATION_REGISTRY}
    return NAVIGATION_REGISTRY if split == "navigation" else REGISTRY


def resolve_tasks(split: str, tasks: Sequence[str] | None) -> list[str]:
    """Canonical task names to run (default: every task with episodes in ``split``), Table S2 order.

    Raises:
        ValueError: unknown split or task (listing the known ones), or a task with no episodes in the split.
    """
    from bspatial.catalog.tasks import TASKS, canonical_task_name

    _check_split(split)
    registry = _split_registry(split)
    known = [n for n in registry if _split_count(TASKS[n], split) > 0]
    if not tasks:
        return known
    names = []
    for name in tasks:
        try:
            canonical = canonical_task_name(name)
        except ValueError:
            canonical = None
        if canonical not in registry:
            raise unknown_name("task", name, known, scope=f" for split {split!r}")
        if canonical not in known:
            raise ValueError(f"task {name!r} has no {split} episodes (Table S2); known tasks: {', '.join(known)}")
        if canonical not in names:
            names.append(canonical)
    return [n for n in known if n in names]


def plan_episodes(split: str, tasks: Sequence[str] | None = None, n_episodes: int | None = None,
                  build_seed: int = SPLIT_BUILD_SEED) -> list[SplitEntry]:
    """The episodes of ``split`` for ``tasks``: the split manifest's entries, the first ``n_episodes`` per task.

    An episode is its manifest entry (:class:`~bspatial.construction.splits.SplitEntry`): one type from the
    manifest to the result file, so nothing can be dropped or renamed on the way.

    Example:
        >>> [(e.task, e.variant, e.index) for e in plan_episodes("held_out", ["reach_plate"], 2)]
        [('reach_plate', '2nd largest', 0), ('reach_plate', 'smallest', 1)]
    """
    from bspatial.construction.splits import split_episodes

    if n_episodes is not None and (isinstance(n_episodes, bool) or not isinstance(n_episodes, int) or n_episodes < 1):
        raise ValueError(f"n_episodes must be an int >= 1, got {n_episodes!r}")
    names = resolve_tasks(split, tasks)
    entries = split_episodes(split, names, seed=build_seed, limit=n_episodes) if names else []
    return entries
