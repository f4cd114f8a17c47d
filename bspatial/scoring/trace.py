"""EpisodeTrace: the per-step record of one rollout that the action outcome rules (Table S4) read.

The simulator fills a trace while it runs an episode; :func:`bspatial.scoring.action.outcome_from_trace`
turns it into a correct / wrong / none label plus soft credit. The trace holds exactly the state those
rules need and nothing else: no images, no actions.

Conventions (shared by every field below):

* World frame, metres, z up. ``T`` is the number of recorded control steps; row ``t`` is the state
  after step ``t``'s action was applied, so ``T <= step_budget`` and row ``T - 1`` is the episode end.
* An object's *position* is the reference point the simulator reports for it (its bounding-box centre
  in the MuJoCo backend). Heights that the rules compare against (countertop rest band, container
  compartment bands, floor) are in the same convention: a compartment band is the range of that
  reference point's height for an object resting in the compartment.
* ``K`` candidates are the plausible targets of a reach task (Table S5 "candidates"); exactly one is
  instructed, the others are distractors.
* ``E`` end-effectors: both grippers of the R1Pro-like robot (``E = 2``); any of them counts.

Which fields each family needs (others may be None):

==========================  =======================================================================
family                      required fields
==========================  =======================================================================
reach                       eef_positions, candidate_positions, eef_contacts, candidate_names,
                            instructed_candidate
reach_base_proximity        the reach fields + base_poses
directional_placement       object_positions, object_held, countertop
container_placement         object_positions, object_held, container
navigation                  nav_success
==========================  =======================================================================

Example:
    >>> import numpy as np
    >>> trace = EpisodeTrace(
    ...     task="move_to_bar", split="held_out", variant="", instruction="Move to the bar.",
    ...     seed=0, step_budget=100, nav_success=True)
    >>> EpisodeTrace.from_dict(trace.to_dict()).nav_success
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, Mapping

import numpy as np

from bspatial.catalog.tasks import Family, canonical_task_name, get_task

TRACE_SCHEMA_VERSION = 1
"""Bumped whenever a field is added, removed or changes meaning; stored in :meth:`EpisodeTrace.to_dict`."""

SPLITS: tuple[str, ...] = ("train", "development", "held_out", "prompt_probe")
"""Episode splits: training episodes, code-as-policy development episodes (Appendix 16.5), and the two
evaluation splits of Sec. 4.3 (navigation evaluation instances are ``held_out``)."""

Side = Literal["left", "right"]
SIDES: tuple[Side, ...] = ("left", "right")

_REQUIRED_BY_FAMILY: Mapping[Family, tuple[str, ...]] = {
    "reach": ("eef_positions", "candidate_positions", "eef_contacts", "instructed_candidate"),
    "reach_base_proximity": (
        "eef_positions", "candidate_positions", "eef_contacts", "instructed_candidate", "base_poses"),
    "directional_placement": ("object_positions", "object_held", "countertop"),
    "container_placement": ("object_positions", "object_held", "container"),
    "navigation": ("nav_success",),
}


def _float_array(name: str, value: Any, shape: tuple[int | None, ...]) -> np.ndarray:
    """Convert to a finite float64 array and check its shape (None = any size)."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric, got {value!r}") from error
    _check_shape(name, array, shape)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got non-finite values in {array.tolist()!r}")
    return array


def _bool_array(name: str, value: Any, shape: tuple[int | None, ...]) -> np.ndarray:
    """Convert to a bool array, refusing values other than True/False/0/1 (no silent truthiness)."""
    raw = np.array(value)
    if raw.dtype != np.bool_:
        if raw.size and not np.all(np.isin(raw, (0, 1))):
            raise ValueError(f"{name} must hold booleans, got {raw.tolist()!r}")
    array = raw.astype(bool)
    _check_shape(name, array, shape)
    return array


def _check_shape(name: str, array: np.ndarray, shape: tuple[int | None, ...]) -> None:
    expected = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
    if array.ndim != len(shape) or any(s is not None and a != s for a, s in zip(array.shape, shape)):
        raise ValueError(f"{name} must have shape {expected}, got shape {array.shape}")


def _polygon(name: str, value: Any) -> np.ndarray:
    array = _float_array(name, value, (None, 2))
    if len(array) < 3:
        raise ValueError(f"{name} must have at least 3 vertices, got {len(array)}")
    return array


@dataclass(frozen=True, eq=False)
class CountertopGeometry:
    """The placement surface and reference of a directional-placement episode (Table S4).

    Attributes:
        plane_height: World z of the countertop's top surface (m).
        polygon: (M, 2) world-xy vertices of the countertop top face, in boundary order (M >= 3);
            "off the countertop" means the final position's xy lies outside it.
        reference_center: (2,) world xy of the reference object's centre (cutting board, kettle...);
            the 0.17 m on-ref radius is measured from here.
        right_axis: (2,) the robot-right direction in world xy for this episode; normalised on
            construction. A positive projection of (position - reference_center) on it is "right".
        instructed_side: "left" or "right", the side the instruction asks for.
    """

    plane_height: float
    polygon: np.ndarray
    reference_center: np.ndarray
    right_axis: np.ndarray
    instructed_side: Side

    def __post_init__(self) -> None:
        object.__setattr__(self, "plane_height", float(_float_array("countertop.plane_height", self.plane_height, ())))
        object.__setattr__(self, "polygon", _polygon("countertop.polygon", self.polygon))
        object.__setattr__(self, "reference_center",
                           _float_array("countertop.reference_center", self.reference_center, (2,)))
        axis = _float_array("countertop.right_axis", self.right_axis, (2,))
        norm = float(np.linalg.norm(axis))
        if norm == 0.0:
            raise ValueError("countertop.right_axis must be non-zero, got [0.0, 0.0]")
        object.__setattr__(self, "right_axis", axis / norm)
        if self.instructed_side not in SIDES:
            raise ValueError(f"countertop.instructed_side must be one of {SIDES}, got {self.instructed_side!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "plane_height": self.plane_height,
            "polygon": self.polygon.tolist(),
            "reference_center": self.reference_center.tolist(),
            "right_axis": self.right_axis.tolist(),
            "instructed_side": self.instructed_side,
        }


@dataclass(frozen=True, eq=False)
class ContainerGeometry:
    """The container of a container-placement episode (fridge shelves, cabinet layers; Table S4).

    Attributes:
        footprint: (M, 2) world-xy vertices of the container's interior footprint (M >= 3); the
            object is "within the container footprint" when its xy lies inside.
        compartment_bands: (C, 2) rows of (low, high) object heights (m, world z) for an object
            resting in each compartment; bands must not overlap.
        instructed_compartment: Row of ``compartment_bands`` the instruction asks for (0-based; the
            paper's "layer 5" is whatever row the task maps it to).
    """

    footprint: np.ndarray
    compartment_bands: np.ndarray
    instructed_compartment: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "footprint", _polygon("container.footprint", self.footprint))
        bands = _float_array("container.compartment_bands", self.compartment_bands, (None, 2))
        if len(bands) == 0:
            raise ValueError("container.compartment_bands must have at least one band, got none")
        if np.any(bands[:, 0] >= bands[:, 1]):
            raise ValueError(f"container.compartment_bands rows must be (low, high) with low < high, got {bands.tolist()}")
        ordered = bands[np.argsort(bands[:, 0])]
        if np.any(ordered[1:, 0] < ordered[:-1, 1]):
            raise ValueError(f"container.compartment_bands must not overlap, got {bands.tolist()}")
        object.__setattr__(self, "compartment_bands", bands)
        index = self.instructed_compartment
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < len(bands):
            raise ValueError(
                f"container.instructed_compartment must be an index in [0, {len(bands)}), got {index!r}")
        object.__setattr__(self, "instructed_compartment", int(index))

    def to_dict(self) -> dict[str, Any]:
        return {
            "footprint": self.footprint.tolist(),
            "compartment_bands": self.compartment_bands.tolist(),
            "instructed_compartment": self.instructed_compartment,
        }


@dataclass(frozen=True, eq=False)
class EpisodeTrace:
    """Everything the Table S4 outcome rules read from one episode.

    Attributes:
        task: Task name; normalised to the canonical name of :mod:`bspatial.catalog.tasks`.
        split: One of :data:`SPLITS`.
        variant: Instruction variant id, e.g. "closest/sofa" (see ``TaskSpec.variants``; "" for
            navigation). Carried for per-variant reports; the rules do not read it.
        instruction: The instruction text the policy received.
        seed: Seed of the episode's scene and policy randomness.
        step_budget: The task's step budget (Sec. 4.3: calibrated to demonstration horizons); an
            episode that reaches it without committing is a timeout.
        eef_positions: (T, E, 3) end-effector (gripper site) positions per step. Reach families:
            the soft rule takes, over steps and end-effectors, the minimum distance to each candidate.
        candidate_names: (K,) names of the reach candidates, in the order of the K axes below.
        instructed_candidate: Index into ``candidate_names`` of the instructed target.
        candidate_positions: (T, K, 3) candidate positions per step (candidates can be pushed).
        eef_contacts: (T, K) bool; True when any end-effector (gripper links included) touches
            candidate k at step t. The first step with any contact decides a reach episode.
        base_poses: (T, 3) robot base (x, y, yaw) per step; the soda rule reads the last row.
        object_positions: (T, 3) position of the manipulated object (knife, saucer, tupperware, bowl)
            per step: its reference point, the centre of its bottom face (the frame origin of every
            object in bspatial.tasks), so heights compare directly with the countertop plane and the
            compartment bands; the last row is its final resting pose (the simulator settles the
            object before recording the last step).
        object_held: (T,) bool; True while the object is grasped (an assisted-grasp weld counts).
            A release event is a step where it turns from True to False.
        countertop: Countertop geometry (directional placement).
        container: Container geometry (container placement).
        floor_height: World z of the floor (m); an object released to rest near it is a floor drop.
        nav_success: The simulator's binary goal result for a navigation episode (region entry or
            object proximity within the budget; Sec. 5.1).
    """

    task: str
    split: str
    variant: str
    instruction: str
    seed: int
    step_budget: int
    eef_positions: np.ndarray | None = None
    candidate_names: tuple[str, ...] = ()
    instructed_candidate: int | None = None
    candidate_positions: np.ndarray | None = None
    eef_contacts: np.ndarray | None = None
    base_poses: np.ndarray | None = None
    object_positions: np.ndarray | None = None
    object_held: np.ndarray | None = None
    countertop: CountertopGeometry | None = None
    container: ContainerGeometry | None = None
    floor_height: float = 0.0
    nav_success: bool | None = None
    _num_steps: int | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._validate_header()
        self._convert_arrays()
        self._validate_candidates()
        self._validate_family()

    # --- validation -------------------------------------------------------------------------------

    def _validate_header(self) -> None:
        object.__setattr__(self, "task", canonical_task_name(self.task))
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {self.split!r}")
        for name in ("variant", "instruction"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string, got {getattr(self, name)!r}")
        for name in ("seed", "step_budget"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"{name} must be an integer, got {value!r}")
            object.__setattr__(self, name, int(value))
        if self.step_budget < 1:
            raise ValueError(f"step_budget must be >= 1, got {self.step_budget!r}")
        floor = float(_float_array("floor_height", self.floor_height, ()))
        object.__setattr__(self, "floor_height", floor)
        if self.nav_success is not None and not isinstance(self.nav_success, (bool, np.bool_)):
            raise ValueError(f"nav_success must be a bool or None, got {self.nav_success!r}")
        if self.nav_success is not None:
            object.__setattr__(self, "nav_success", bool(self.nav_success))
        if self.countertop is not None and not isinstance(self.countertop, CountertopGeometry):
            raise ValueError(f"countertop must be a CountertopGeometry, got {type(self.countertop).__name__}")
        if self.container is not None and not isinstance(self.container, ContainerGeometry):
            raise ValueError(f"container must be a ContainerGeometry, got {type(self.container).__name__}")

    def _convert_arrays(self) -> None:
        specs: dict[str, tuple[Any, tuple[int | None, ...]]] = {
            "eef_positions": (_float_array, (None, None, 3)),
            "candidate_positions": (_float_array, (None, None, 3)),
            "eef_contacts": (_bool_array, (None, None)),
            "base_poses": (_float_array, (None, 3)),
            "object_positions": (_float_array, (None, 3)),
            "object_held": (_bool_array, (None,)),
        }
        steps: dict[str, int] = {}
        for name, (convert, shape) in specs.items():
            value = getattr(self, name)
            if value is None:
                continue
            array = convert(name, value, shape)
            object.__setattr__(self, name, array)
            steps[name] = array.shape[0]
        if steps:
            # All per-step arrays describe the same steps.
            first_name, num_steps = next(iter(steps.items()))
            for name, length in steps.items():
                if length != num_steps:
                    raise ValueError(f"{name} has {length} steps but {first_name} has {num_steps}")
            if num_steps < 1:
                raise ValueError(f"{first_name} must have at least one step, got 0")
            if num_steps > self.step_budget:
                raise ValueError(f"{first_name} has {num_steps} steps, more than step_budget={self.step_budget}")
            object.__setattr__(self, "_num_steps", num_steps)
        if self.eef_positions is not None and self.eef_positions.shape[1] < 1:
            raise ValueError("eef_positions must have at least one end-effector, got shape "
                             f"{self.eef_positions.shape}")

    def _validate_candidates(self) -> None:
        names = tuple(self.candidate_names)
        object.__setattr__(self, "candidate_names", names)
        arrays = {n: getattr(self, n) for n in ("candidate_positions", "eef_contacts") if getattr(self, n) is not None}
        if not arrays and not names and self.instructed_candidate is None:
            return
        if len(names) < 2:
            # A reach task picks its target among several plausible candidates (Appendix "Task curation").
            raise ValueError(f"candidate_names must name at least 2 candidates, got {names!r}")
        if any(not isinstance(n, str) or not n for n in names) or len(set(names)) != len(names):
            raise ValueError(f"candidate_names must be distinct non-empty strings, got {names!r}")
        for name, array in arrays.items():
            if array.shape[1] != len(names):
                raise ValueError(f"{name} has {array.shape[1]} candidates but candidate_names has {len(names)}")
        index = self.instructed_candidate
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < len(names):
            raise ValueError(f"instructed_candidate must be an index in [0, {len(names)}), got {index!r}")
        object.__setattr__(self, "instructed_candidate", int(index))

    def _validate_family(self) -> None:
        family = self.family
        missing = [name for name in _REQUIRED_BY_FAMILY[family] if getattr(self, name) is None]
        if missing:
            raise ValueError(f"task {self.task!r} (family {family!r}) needs {', '.join(missing)}; got None")

    # --- derived views ----------------------------------------------------------------------------

    @property
    def family(self) -> Family:
        """Outcome-rule family of the task (Table S4)."""
        return get_task(self.task).family

    @property
    def num_steps(self) -> int | None:
        """T, the number of recorded steps; None when the trace holds no per-step array."""
        return self._num_steps

    @property
    def release_steps(self) -> tuple[int, ...]:
        """Steps at which the object was released (held at t-1, not held at t)."""
        if self.object_held is None:
            return ()
        held = self.object_held
        return tuple(int(t) for t in np.flatnonzero(held[:-1] & ~held[1:]) + 1)

    # --- serialisation ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (lists, floats, bools, strings) that :meth:`from_dict` reads back."""
        out: dict[str, Any] = {"schema_version": TRACE_SCHEMA_VERSION}
        for f in fields(self):
            if not f.init:
                continue
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                value = value.tolist()
            elif isinstance(value, (CountertopGeometry, ContainerGeometry)):
                value = value.to_dict()
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeTrace:
        """Rebuild a trace from :meth:`to_dict` output (e.g. a line of an episode result file).

        Raises:
            ValueError: On a schema version other than :data:`TRACE_SCHEMA_VERSION` or unknown keys.
        """
        payload = dict(data)
        version = payload.pop("schema_version", TRACE_SCHEMA_VERSION)
        if version != TRACE_SCHEMA_VERSION:
            raise ValueError(f"schema_version must be {TRACE_SCHEMA_VERSION}, got {version!r}")
        known = {f.name for f in fields(cls) if f.init}
        unknown = sorted(set(payload) - known)
        if unknown:
            raise ValueError(f"unknown EpisodeTrace keys {unknown}; known keys: {sorted(known)}")
        if payload.get("countertop") is not None:
            payload["countertop"] = CountertopGeometry(**payload["countertop"])
        if payload.get("container") is not None:
            payload["container"] = ContainerGeometry(**payload["container"])
        if "candidate_names" in payload:
            payload["candidate_names"] = tuple(payload["candidate_names"])
        return cls(**payload)

