"""The task contract: a :class:`Task` samples a :class:`TaskInstance` for an instruction variant.

A task is a Table S2 row (:class:`~bspatial.catalog.tasks.TaskSpec`) plus a seeded scene
generator. ``Task.sample(variant, rng)`` draws a layout, computes the variant's target from the
layout's geometry (:mod:`bspatial.world.relations`) and rejects layouts whose decisive relation misses
the paper's margins; after :data:`MAX_LAYOUT_ATTEMPTS` rejections it raises a ValueError naming the
task and seed. Randomness comes only from the generator passed in.

The instance carries what later stages need: the scene, the instruction, the candidates, the
instructed target (an object for reach tasks; a countertop side region or a container compartment
band for placement tasks), the robot spawn, and the scoring geometry as the trace schema's own
:class:`~bspatial.scoring.trace.CountertopGeometry` / :class:`~bspatial.scoring.trace.ContainerGeometry`.

Example:
    >>> import numpy as np
    >>> from bspatial.tasks import get_task
    >>> inst = get_task("reach_plate").sample("largest", np.random.default_rng(0), seed=0)
    >>> inst.instruction
    'Reach the largest plate from the countertop.'
    >>> inst.target in inst.candidates
    True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

import numpy as np

from bspatial.catalog.tasks import TaskSpec
from bspatial.scoring.trace import ContainerGeometry, CountertopGeometry
from bspatial.world.spec import RobotSpawn, SceneSpec

MAX_LAYOUT_ATTEMPTS = 200
"""Retry budget of a scene generator: layouts drawn before giving up with a ValueError."""

MIN_CANDIDATE_PIXELS = 40
"""Visibility: every candidate (and the manipulated object) covers at least this many pixels of the
224x224 head frame's segmentation. Implementation choice in the spirit of the paper's visibility
filters (Appendix 11: pixel thresholds); a 6 cm die 1.2 m away covers about 100."""

PlacementKind = Literal["countertop_side", "container_compartment"]


class NotApplicable(ValueError):
    """A Spa-Bench condition is not defined for this instance (the message says why)."""


class LayoutRejected(Exception):
    """Raised by a scene generator when one drawn layout misses a margin; ``Task.sample`` retries."""


@dataclass(frozen=True, eq=False)
class PlacementGoal:
    """The instructed goal region of a placement task.

    Attributes:
        kind: "countertop_side" (directional placement) or "container_compartment".
        surface: the scene surface the object should end on (``countertop_0/top``, ``fridge_0/layer_5``).
        side: "left" / "right" of the reference (countertop_side), else None.
        layer: the instructed layer number as the instruction says it (container), else None.
        band: (low, high) world heights of the object's position when resting in the layer, else None.
        goal_point: (3,) a free point inside the goal region, checked clear of other objects: where a
            scripted expert can put the object (not part of the scoring).
    """

    kind: PlacementKind
    surface: str
    goal_point: np.ndarray
    side: str | None = None
    layer: int | None = None
    band: tuple[float, float] | None = None


@dataclass(frozen=True, eq=False)
class Layout:
    """What a scene generator returns for one draw (``Task.sample`` adds the bookkeeping)."""

    instruction: str
    scene: SceneSpec
    candidates: tuple[str, ...]
    target: str
    manipulated: str | None = None
    reference: str | None = None
    placement: PlacementGoal | None = None
    countertop: CountertopGeometry | None = None
    container: ContainerGeometry | None = None
    measurements: Mapping[str, Any] = field(default_factory=dict)
    margin: float | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class TaskInstance(Layout):
    """One sampled episode set-up: the generator's :class:`Layout` (scene, instruction and the geometry that decides
    success) with what ``Task.sample`` adds (what was sampled, the outcome rule, the step budget).

    Attributes:
        task, variant, seed: what was sampled (seed None when the caller passed only a generator).
        family, category: Table S4 outcome-rule family and Table S2 category.
        instruction: Table S2 wording with the variant filled in.
        scene: the backend-neutral scene (robot spawn in ``scene.robot``).
        candidates: names of the objects the instruction chooses among (reach tasks), or the
            manipulated object alone (placement tasks).
        target: the instructed candidate's name (reach tasks); the manipulated object's name for placement.
        manipulated: the object to move (placement tasks), else None.
        reference: the reference object of a distance or direction relation, else None.
        placement: the instructed goal region (placement tasks), else None.
        countertop / container: scoring geometry for the trace (placement tasks), else None.
        step_budget: control steps (30 Hz) allowed (:func:`bspatial.tasks.budgets.step_budget`).
        measurements: the per-candidate quantity that decided the target (longest dimension, distance
            to the reference, projection on the robot-right axis, grid cell...), for logs and checks.
        margin: the decisive relative gap (size / distance) or absolute gap in metres (ordinal).
    """

    task: str
    variant: str
    seed: int | None
    family: str
    category: str
    step_budget: int

    @property
    def robot(self) -> RobotSpawn:
        return self.scene.robot

    @property
    def instructed_candidate(self) -> int:
        """Index of :attr:`target` in :attr:`candidates` (EpisodeTrace.instructed_candidate)."""
        return self.candidates.index(self.target)


Generator = Callable[[TaskSpec, str, np.random.Generator], Layout]


@dataclass(frozen=True)
class Task:
    """A Table S2 task: its spec, its scene generator and its step budget.

    Attributes:
        spec: the Table S2 row (variants, family, example instruction).
        generator: ``(spec, variant, rng) -> Layout``; raises :class:`LayoutRejected` for a bad draw.
        step_budget: control steps per episode (calibrated from demonstrations: :mod:`bspatial.tasks.budgets`).
    """

    spec: TaskSpec
    generator: Generator
    step_budget: int

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def variants(self) -> tuple[str, ...]:
        return self.spec.variants

    def check_variant(self, variant: str) -> str:
        if variant not in self.spec.variants:
            raise ValueError(f"variant of task {self.name!r} must be one of {list(self.spec.variants)}, got {variant!r}")
        return variant

    def sample(self, variant: str, rng: np.random.Generator, *, seed: int | None = None,
               clutter: bool = True) -> TaskInstance:
        """Draw layouts until one meets every margin; raise ValueError naming task and seed otherwise.

        ``clutter=False`` leaves the scene's clutter out (:mod:`bspatial.tasks.clutter`): for callers that read
        only the candidates and the target (split planning), which clutter never changes; placing it is most of
        a sample's time (measured: 0.26 s per reach_plate scene with it, 0.056 s without)."""
        self.check_variant(variant)
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        reasons: dict[str, int] = {}
        for _ in range(MAX_LAYOUT_ATTEMPTS):
            try:
                layout = self.generator(self.spec, variant, rng)
            except LayoutRejected as why:
                reasons[str(why)] = reasons.get(str(why), 0) + 1
                continue
            if clutter:
                layout = _cluttered(self.name, layout)
            return TaskInstance(task=self.name, variant=variant, seed=seed, family=self.spec.family,
                                category=self.spec.category, step_budget=self.step_budget, **layout.__dict__)
        common = sorted(reasons.items(), key=lambda kv: -kv[1])[:3]
        raise ValueError(f"task {self.name!r} (variant {variant!r}, seed {seed}) could not place objects with the "
                         f"required margins in {MAX_LAYOUT_ATTEMPTS} attempts; most common rejections: {common}")


def _cluttered(task: str, layout: Layout) -> Layout:
    """``layout`` with household clutter on its furniture tops (:mod:`bspatial.tasks.clutter`), keeping the
    candidates, the manipulated object, the reference and the placement goal clear."""
    from bspatial.tasks.clutter import GOAL_KEEP_OUT_M, add_clutter

    # Nothing here may depend on the variant (a prompt probe asks the training scene for another target, and
    # clutter that kept clear of the instructed reference or side only would give it away): the corridors go to
    # the candidates, the manipulated object and everything standing on the tops (add_clutter), and to both
    # sides' goal points.
    protected = tuple(n for n in (*layout.candidates, layout.manipulated) if n)
    goal = layout.placement.goal_point if layout.placement is not None else None
    goals = [] if goal is None else [np.asarray(goal, float)[:2]]
    keep_out = None
    if layout.countertop is not None and goal is not None:
        # Both sides' goal regions: a disc around the reference reaching past the goal point.
        centre = layout.countertop.reference_center
        reach = float(np.linalg.norm(goals[0] - centre))
        keep_out = (centre, reach + GOAL_KEEP_OUT_M)
        goals.append(2 * centre - goals[0])
    scene = add_clutter(task, layout.scene, protected, goals, keep_out)
    return layout if scene is layout.scene else dataclasses.replace(layout, scene=scene)


def candidate_pixels(frame, names) -> dict[str, int]:
    """Segmentation pixels of each named object in a :class:`~bspatial.sim.backend.CameraFrame`."""
    ids: dict[str, list[int]] = {}
    for i, n in frame.id_to_name.items():
        ids.setdefault(n, []).append(i)
    return {n: int(np.isin(frame.segmentation, ids.get(n, [])).sum()) for n in names}


def check_visible(instance: TaskInstance, frame, *, min_pixels: int = MIN_CANDIDATE_PIXELS) -> dict[str, int]:
    """Raise ValueError unless every candidate covers ``min_pixels`` of the head frame; returns the counts."""
    names = tuple(dict.fromkeys(instance.candidates + ((instance.manipulated,) if instance.manipulated else ())))
    counts = candidate_pixels(frame, names)
    hidden = {n: c for n, c in counts.items() if c < min_pixels}
    if hidden:
        raise ValueError(f"task {instance.task!r} seed {instance.seed}: candidates below {min_pixels} head pixels: {hidden}")
    return counts
