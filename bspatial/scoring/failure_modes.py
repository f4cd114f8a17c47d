"""Primary failure-mode labels of an episode, in the spirit of Spa-Bench's failure analysis.

Spa-Bench (Sec. V.E, VI) separates failing to **act**, selecting the **wrong object**, and realising the
**wrong relation after approaching the intended object**; what remains is **execution failure**
(the right target was pursued but the interaction was not completed). Our traces carry enough to
tell these apart on every Table S4 family, so each non-successful episode gets exactly one label:

* ``no_action``: the episode was not decided (Table S4 ``none``) and neither end-effector, nor the
  base, nor the manipulated object moved more than the :data:`NO_ACTION_*` thresholds during the whole
  episode (a frozen policy);
* ``wrong_object``: reach families only: the first contact (or the soda base-proximity commitment)
  was a distractor (Table S4 ``wrong``), even when that happened at the first step with almost no
  motion, or without a commitment the closest approach was to a distractor rather than the
  instructed candidate;
* ``wrong_relation``: placement families only: the object was carried and released into a wrong
  relation: the opposite side (``wrong``), on the reference (``on_ref``), on the axis through the
  reference (``no_side``), or the wrong compartment (``wrong``);
* ``execution_failure``: everything else that is not strict success: the instructed target was the
  closest approach but never touched, a placement object never grasped, dropped, overshot, or still
  held at timeout, a navigation that moved but never met the goal criterion.

Strict successes are labelled ``success``. Thresholds are ours (Spa-Bench labels by hand); each is a
named constant.

Example:
    >>> from bspatial.scoring.trace import EpisodeTrace
    >>> import numpy as np
    >>> still = np.zeros((5, 3))
    >>> trace = EpisodeTrace(task="move_to_oven", split="held_out", variant="", instruction="Move to the oven.",
    ...                      seed=0, step_budget=5, base_poses=still, nav_success=False)
    >>> primary_failure_mode(trace)
    'no_action'
"""

from __future__ import annotations

from collections import Counter
from typing import Literal, Sequence

import numpy as np

from bspatial.scoring.action import EpisodeOutcome, outcome_from_trace
from bspatial.catalog.tasks import TASKS
from bspatial.scoring.trace import EpisodeTrace

FailureMode = Literal["success", "no_action", "wrong_object", "wrong_relation", "execution_failure"]
FAILURE_MODES: tuple[FailureMode, ...] = ("success", "no_action", "wrong_object", "wrong_relation",
                                          "execution_failure")

NO_ACTION_EEF_M = 0.05
"""An end-effector that never gets farther than this from its start position did not act."""
NO_ACTION_BASE_M = 0.05
"""... nor a base that never moves farther than this (xy) from its start."""
NO_ACTION_OBJECT_M = 0.03
"""... nor a manipulated object that never moves farther than this (placement families)."""
WRONG_RELATION_DETAILS = frozenset({"on_opposite_side", "on_ref", "no_side", "wrong_compartment"})
"""Placement outcome details (:class:`bspatial.scoring.action.EpisodeOutcome`) that are a released
object in a wrong relation; every other placement failure is an execution failure."""


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


def _closest_is_target(trace: EpisodeTrace) -> bool:
    eef = trace.eef_positions[:, :, None, :]
    candidates = trace.candidate_positions[:, None, :, :]
    closest = np.linalg.norm(eef - candidates, axis=-1).min(axis=(0, 1))
    return int(np.argmin(closest)) == trace.instructed_candidate


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
        return "wrong_object" if reach else "wrong_relation"
    if not acted(trace):
        return "no_action"
    if reach:
        return "wrong_object" if not _closest_is_target(trace) else "execution_failure"
    if family in ("directional_placement", "container_placement") and outcome.detail in WRONG_RELATION_DETAILS:
        return "wrong_relation"
    return "execution_failure"


def failure_mode_counts(traces: Sequence[EpisodeTrace]) -> dict[FailureMode, int]:
    """How many episodes carry each label (every label present, zeros included)."""
    counts = Counter(primary_failure_mode(t) for t in traces)
    return {mode: counts.get(mode, 0) for mode in FAILURE_MODES}


def no_intervention_success(trace: EpisodeTrace) -> bool:
    """Spa-Bench's no-intervention rule: the goal already held, so success is not acting at all."""
    return not acted(trace)
