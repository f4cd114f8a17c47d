"""Failure modes of an episode: one primary label out of nine, plus secondary annotations (Spa-Bench style).

Spa-Bench (Appendix E, Table X) organises failures into **nine mutually exclusive primary modes**, the one
judged most directly responsible for the unsuccessful outcome, and keeps every other problem as a
**secondary annotation** that never changes the binary score. Its text (Sec. V.E, VI) separates failing
to act, selecting the wrong object, selecting the wrong instance of the right kind, realising the wrong
relation after approaching the intended object, and execution problems. Its Table X itself is not in our
copy of the paper, so the nine labels below are ours: Spa-Bench's distinctions, split where our four
Table S4 families fail in different ways, each decided from the trace by a rule (Spa-Bench labels by hand).

Primary labels, tested in this order (the first that holds wins):

* ``no_action``: not decided (Table S4 ``none``) and neither end-effector, nor the base, nor the
  manipulated object moved beyond the :data:`NO_ACTION_*` thresholds (a frozen policy);
* ``acted_unnecessarily``: the no-intervention condition only (the goal already held): the policy
  acted (:func:`no_intervention_mode`);
* ``wrong_object``: reach families: the committed candidate (first contact, or the soda base-proximity
  commitment), or without a commitment the closest approach, is a distractor of **another category**
  than the instructed target (``reach_item``'s cereal box instead of its lime);
* ``wrong_instance``: ... a distractor of the **same category** (the second plate instead of the
  largest one): Spa-Bench's wrong-instance selection;
* ``wrong_relation``: placement families: the object was carried and released into a wrong relation:
  the opposite side, on the reference, on the axis through it, or the wrong compartment;
* ``missed_target``: reach families: the instructed target was the closest approach but was never
  touched (nor met by the soda base rule);
* ``grasp_failure``: placement families: the object was never held;
* ``transport_failure``: placement families: held, then dropped to the floor or off the counter,
  overshot or short of the compartment band, released outside the container, or still held at the end;
* ``navigation_failure``: navigation: the base moved but never met the goal criterion.

Strict successes are labelled ``success``. Where a candidate's category is needed it is read from its
scene name, ``<category>_<index>`` (every task generator names candidates so); a name without an
index counts as its own category.

Secondary annotations (:func:`secondary_annotations`, every one that holds, none restating the primary):
``touched_distractor`` (any step), ``pushed_candidate`` (a candidate moved more than
:data:`PUSHED_M`), ``regrasped`` (more than one grasp), ``released_early`` (a release before the last
step that was followed by no regrasp and did not end in the goal relation), ``held_at_end``,
``base_moved`` (a manipulation episode whose base moved beyond :data:`NO_ACTION_BASE_M`) and
``mostly_idle`` (at least :data:`IDLE_SHARE` of the steps without motion beyond :data:`IDLE_STEP_M`).

Thresholds are ours; each is a named constant.

Example:
    >>> from bspatial.scoring.trace import EpisodeTrace
    >>> import numpy as np
    >>> still = np.zeros((5, 3))
    >>> trace = EpisodeTrace(task="move_to_oven", split="held_out", variant="", instruction="Move to the oven.",
    ...                      seed=0, step_budget=5, base_poses=still, nav_success=False)
    >>> primary_failure_mode(trace)
    'no_action'
    >>> len(PRIMARY_FAILURE_MODES)
    9
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal, Sequence

import numpy as np

from bspatial.scoring.action import EpisodeOutcome, outcome_from_trace
from bspatial.catalog.tasks import TASKS
from bspatial.scoring.trace import EpisodeTrace

FailureMode = Literal["success", "no_action", "acted_unnecessarily", "wrong_object", "wrong_instance",
                      "wrong_relation", "missed_target", "grasp_failure", "transport_failure", "navigation_failure"]
FAILURE_MODES: tuple[FailureMode, ...] = ("success", "no_action", "acted_unnecessarily", "wrong_object",
                                          "wrong_instance", "wrong_relation", "missed_target", "grasp_failure",
                                          "transport_failure", "navigation_failure")
"""``success`` and the nine primary failure modes, in the order the module docstring tests them."""
PRIMARY_FAILURE_MODES: tuple[FailureMode, ...] = FAILURE_MODES[1:]

SecondaryAnnotation = Literal["touched_distractor", "pushed_candidate", "regrasped", "released_early",
                              "held_at_end", "base_moved", "mostly_idle"]
SECONDARY_ANNOTATIONS: tuple[SecondaryAnnotation, ...] = ("touched_distractor", "pushed_candidate", "regrasped",
                                                          "released_early", "held_at_end", "base_moved",
                                                          "mostly_idle")

NO_ACTION_EEF_M = 0.05
"""An end-effector that never gets farther than this from its start position did not act."""
NO_ACTION_BASE_M = 0.05
"""... nor a base that never moves farther than this (xy) from its start."""
NO_ACTION_OBJECT_M = 0.03
"""... nor a manipulated object that never moves farther than this (placement families)."""
WRONG_RELATION_DETAILS = frozenset({"on_opposite_side", "on_ref", "no_side", "wrong_compartment"})
"""Placement outcome details (:class:`bspatial.scoring.action.EpisodeOutcome`) that are a released
object in a wrong relation; every other placement failure after a grasp is a transport failure."""
PUSHED_M = 0.03
"""A candidate displaced farther than this from its start was pushed (secondary annotation)."""
IDLE_STEP_M = 0.002
"""A step in which no end-effector, base or object moved farther than this is idle (about 6 cm/s at 30 Hz)."""
IDLE_SHARE = 0.5
"""An episode with at least this share of idle steps is ``mostly_idle``."""
_INDEXED_NAME = re.compile(r"^(?P<category>.+)_(?P<index>\d+)$")


def _max_displacement(path: np.ndarray | None, dims: slice = slice(None)) -> float:
    if path is None or len(path) == 0:
        return 0.0
    path = np.asarray(path, float)[..., dims]
    return float(np.linalg.norm(path - path[:1], axis=-1).max())


def acted(trace: EpisodeTrace) -> bool:
    """Whether anything the policy controls moved beyond the no-action thresholds."""
    return (_max_displacement(trace.eef_positions) > NO_ACTION_EEF_M
            or _max_displacement(trace.base_poses, slice(0, 2)) > NO_ACTION_BASE_M
            or _max_displacement(trace.object_positions) > NO_ACTION_OBJECT_M
            or bool(trace.object_held is not None and np.any(trace.object_held)))


def candidate_category(name: str) -> str:
    """The category in a scene name ``<category>_<index>`` (``plate_2`` -> ``plate``); else the name itself."""
    match = _INDEXED_NAME.match(name)
    return match.group("category") if match else name


def _closest_candidate(trace: EpisodeTrace) -> int:
    eef = trace.eef_positions[:, :, None, :]
    candidates = trace.candidate_positions[:, None, :, :]
    return int(np.argmin(np.linalg.norm(eef - candidates, axis=-1).min(axis=(0, 1))))


def _committed_candidate(trace: EpisodeTrace, outcome: EpisodeOutcome) -> int:
    """The candidate a reach episode went for: its first contact, the soda base commitment, else its closest approach."""
    touched = np.argwhere(trace.eef_contacts)
    if len(touched):
        return int(touched[0][1])
    if outcome.detail.startswith("base_proximity") and trace.base_poses is not None:
        base = np.asarray(trace.base_poses[-1, :2], float)
        return int(np.argmin(np.linalg.norm(trace.candidate_positions[-1, :, :2] - base, axis=-1)))
    return _closest_candidate(trace)


def _selection_mode(trace: EpisodeTrace, chosen: int) -> FailureMode:
    names = trace.candidate_names or tuple(str(i) for i in range(trace.candidate_positions.shape[1]))
    same = candidate_category(names[chosen]) == candidate_category(names[trace.instructed_candidate])
    return "wrong_instance" if same else "wrong_object"


def primary_failure_mode(trace: EpisodeTrace, outcome: EpisodeOutcome | None = None) -> FailureMode:
    """The one label of ``trace`` (see the module docstring); ``outcome`` defaults to Table S4's."""
    outcome = outcome or outcome_from_trace(trace)
    if outcome.outcome == "correct":
        return "success"
    family = TASKS[trace.task].family
    reach = family in ("reach", "reach_base_proximity")
    # A decided episode is not a frozen one: a distractor touched at the first step, or a soda base that
    # starts within the proximity radius of a distractor, commits (Table S4 "wrong") however little
    # moved, so "wrong" is labelled before the no-action test. (A placement is only "wrong" after a
    # release, which needs a grasp, so for placements the order never mattered.)
    if outcome.outcome == "wrong" and family != "navigation":  # navigation is never "wrong" (Sec. 5.1)
        return _selection_mode(trace, _committed_candidate(trace, outcome)) if reach else "wrong_relation"
    if not acted(trace):
        return "no_action"
    if family == "navigation":
        return "navigation_failure"
    if reach:
        chosen = _committed_candidate(trace, outcome)
        return "missed_target" if chosen == trace.instructed_candidate else _selection_mode(trace, chosen)
    if outcome.detail in WRONG_RELATION_DETAILS:
        return "wrong_relation"
    if trace.object_held is None or not np.any(trace.object_held):
        return "grasp_failure"
    return "transport_failure"


def no_intervention_mode(trace: EpisodeTrace) -> FailureMode:
    """The label of a no-intervention episode (the goal already held): ``success`` or ``acted_unnecessarily``."""
    return "success" if no_intervention_success(trace) else "acted_unnecessarily"


def _idle_share(trace: EpisodeTrace) -> float:
    steps = []
    for path, dims in ((trace.eef_positions, slice(None)), (trace.base_poses, slice(0, 2)),
                       (trace.object_positions, slice(None))):
        if path is not None and len(path) > 1:
            moves = np.linalg.norm(np.diff(np.asarray(path, float)[..., dims], axis=0), axis=-1)
            steps.append(moves.reshape(len(moves), -1).max(axis=1))
    if not steps:
        return 0.0
    return float(np.mean(np.max(np.stack(steps), axis=0) <= IDLE_STEP_M))


def secondary_annotations(trace: EpisodeTrace, primary: FailureMode | None = None) -> tuple[SecondaryAnnotation, ...]:
    """Every other problem of the episode (module docstring), in :data:`SECONDARY_ANNOTATIONS` order.

    ``primary`` (default: :func:`primary_failure_mode`) leaves out what it already says: a wrong selection
    implies a touched distractor, a frozen policy is idle.
    """
    primary = primary or primary_failure_mode(trace)
    family = TASKS[trace.task].family
    found: set[SecondaryAnnotation] = set()
    if trace.eef_contacts is not None and trace.instructed_candidate is not None:
        touched = np.asarray(trace.eef_contacts).any(axis=0)
        touched[trace.instructed_candidate] = False
        if touched.any():
            found.add("touched_distractor")
    if trace.candidate_positions is not None and len(trace.candidate_positions):
        moved = np.linalg.norm(trace.candidate_positions - trace.candidate_positions[:1], axis=-1).max(axis=0)
        if (moved > PUSHED_M).any():
            found.add("pushed_candidate")
    if trace.object_held is not None and len(trace.object_held):
        held = np.asarray(trace.object_held, bool)
        grasps = int(held[0]) + int(np.sum(~held[:-1] & held[1:]))
        if grasps > 1:
            found.add("regrasped")
        if held[-1]:
            found.add("held_at_end")
        releases = np.flatnonzero(held[:-1] & ~held[1:])
        if len(releases) and not held[releases[-1] + 1:].any() and primary not in ("success", "wrong_relation"):
            found.add("released_early")
    if family != "navigation" and _max_displacement(trace.base_poses, slice(0, 2)) > NO_ACTION_BASE_M:
        found.add("base_moved")
    if _idle_share(trace) >= IDLE_SHARE:
        found.add("mostly_idle")
    implied = {"wrong_object": {"touched_distractor"}, "wrong_instance": {"touched_distractor"},
               "no_action": {"mostly_idle"}}.get(primary, set())
    return tuple(a for a in SECONDARY_ANNOTATIONS if a in found and a not in implied)


def failure_mode_counts(traces: Sequence[EpisodeTrace]) -> dict[FailureMode, int]:
    """How many episodes carry each label (every label present, zeros included)."""
    counts = Counter(primary_failure_mode(t) for t in traces)
    return {mode: counts.get(mode, 0) for mode in FAILURE_MODES}


def no_intervention_success(trace: EpisodeTrace) -> bool:
    """Spa-Bench's no-intervention rule: the goal already held, so success is not acting at all."""
    return not acted(trace)
