"""Action-suite scoring: Table S4's outcome rules on an :class:`EpisodeTrace`, and pooled rates.

Each episode gets one strict label (Sec. 5.1 "Robot Task Success"; Appendix 14 "Manipulation Outcome
Rules"):

* ``correct``: strict success, the instructed interaction was completed;
* ``wrong``: the policy committed to a non-instructed candidate or location;
* ``none``: no commitment (timeout, on-ref release, floor drop, outside the container, ...).

A ``none`` episode may earn the additional *soft credit* of Table S4 ("observable target-consistent
progress"). Rates are percentages over all evaluated episodes, pooled over episodes:
strict = correct / n, soft = (correct + credited none) / n (the paper's "+Soft" includes strict),
wrong = wrong / n. Navigation is binary: ``correct`` or ``none``, never soft credit, so soft == strict.

Decisions this module makes where the paper is silent (each one is a named constant or a comment):

* Reach: the first contact decides. Contacts at the first contact step with both the instructed
  candidate and a distractor count as correct (the instructed candidate was touched).
* Soft credit needs target-directed progress (Sec. 5.1: "correct intention for target approaching"; our
  reading of Table S4). Reach: the end-effectors' closest approach to the target must beat every
  distractor's *and* be a real approach: at most :data:`APPROACH_FRACTION` of the start distance and at
  least :data:`APPROACH_MIN_M` closer (``no_approach`` otherwise), so a robot that holds still earns none
  even when it spawns nearest the target. Soda: the base's approach counts too, measured against the
  0.70 m radius where its rule commits (half the way from the start to the radius;
  ``base_approached_target``). Placement: the object must have been carried at least
  :data:`CARRY_MIN_M` from its start (``held_not_carried``; container: only in-footprint heights after it
  was carried count).
* Soda: contact is checked first; otherwise the *final* base pose is tested. The candidate nearest to
  the base (planar distance) decides: within 0.70 m and instructed -> correct, within 0.70 m and not
  instructed -> wrong. An exact tie for nearest satisfies no nearest-candidate rule -> not committed.
* Directional placement: "on the countertop" = the final xy inside the countertop polygon and the final
  height within :data:`COUNTERTOP_REST_BAND_M` of the plane; a floor drop = final height within
  :data:`FLOOR_REST_HEIGHT_M` of the floor. Only a held object can earn soft credit, so every released
  failure (on-ref, off-countertop, floor drop) gets none, as the paper requires.
* Container placement: strict uses the compartment bands as given; the soft band widens the instructed
  band by :data:`COMPARTMENT_BAND_MARGIN_M` on both sides; the *peak* height over the steps inside
  the footprint must fall in it, so an overshoot fails even if it passed through the band. A floor drop
  gets no soft credit (Appendix 14: "Floor-drop failures ... receive no additional soft credit").

Example:
    >>> rates = action_rates(["correct", "none", "wrong", "none"], ["reach_tool"] * 4,
    ...                      soft_credit=[False, True, False, False])
    >>> (rates.strict.rate, rates.soft.rate, rates.wrong.rate)
    (25.0, 50.0, 25.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Mapping, Sequence

import numpy as np

from bspatial.catalog.tasks import TASKS, Family, canonical_task_name
from bspatial.catalog.thresholds import (APPROACH_FRACTION, APPROACH_MIN_M, CARRY_MIN_M, COMPARTMENT_BAND_MARGIN_M,
                                         COUNTERTOP_REST_BAND_M, FLOOR_REST_HEIGHT_M, ON_REF_RADIUS_M,
                                         SODA_BASE_PROXIMITY_M)
from bspatial.scoring.geometry import points_in_polygon
from bspatial.scoring.stats import DEFAULT_CONFIDENCE, wilson_interval
from bspatial.scoring.trace import EpisodeTrace
from bspatial.scoring.validation import check_not_empty

Outcome = Literal["correct", "wrong", "none"]
OUTCOMES: tuple[Outcome, ...] = ("correct", "wrong", "none")

# --- outcome labels -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EpisodeOutcome:
    """The scored result of one episode.

    Attributes:
        outcome: Strict label: "correct" (strict success), "wrong" (committed to a non-instructed
            candidate or location) or "none".
        soft_credit: Table S4's additional soft credit; only ever True when outcome == "none".
        detail: Why, for logs and failure breakdowns. Reach: "contact_target",
            "contact_distractor", "base_proximity", "base_proximity_distractor",
            "min_distance_closer_to_target", "base_approached_target" (soda), "no_approach", "timeout". Directional
            placement: "on_instructed_side",
            "on_opposite_side", "on_ref", "no_side", "floor_drop", "off_countertop", "held_on_side",
            "held_not_on_side", "held_not_carried", "timeout". Container placement: "in_instructed_compartment",
            "wrong_compartment", "floor_drop", "peak_in_band", "overshoot", "below_band",
            "outside_container", "timeout". Navigation: "nav_success", "nav_failure".
    """

    outcome: Outcome
    soft_credit: bool
    detail: str

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, got {self.outcome!r}")
        if not isinstance(self.soft_credit, bool):
            raise ValueError(f"soft_credit must be a bool, got {self.soft_credit!r}")
        if self.soft_credit and self.outcome != "none":
            raise ValueError(f"soft_credit=True is only defined for outcome 'none', got outcome={self.outcome!r}")


def _strict(outcome: Outcome, detail: str) -> EpisodeOutcome:
    return EpisodeOutcome(outcome, False, detail)


def _none(detail: str, soft: bool = False) -> EpisodeOutcome:
    return EpisodeOutcome("none", bool(soft), detail)


# --- geometry helpers (containment uses geometry.points_in_polygon, as the placement IR rule does) ---


def _eef_distances(trace: EpisodeTrace) -> np.ndarray:
    """(T, K) distance from the nearer end-effector to each candidate, per step."""
    eef = trace.eef_positions[:, :, None, :]  # (T, E, 1, 3)
    candidates = trace.candidate_positions[:, None, :, :]  # (T, 1, K, 3)
    return np.linalg.norm(eef - candidates, axis=-1).min(axis=1)


def _base_distances(trace: EpisodeTrace) -> np.ndarray:
    """(T, K) planar distance from the base to each candidate, per step (soda)."""
    return np.linalg.norm(trace.candidate_positions[:, :, :2] - trace.base_poses[:, None, :2], axis=-1)


# --- family rules -------------------------------------------------------------------------------------


def _contact_outcome(trace: EpisodeTrace) -> EpisodeOutcome | None:
    """First contact decides; None when no candidate was touched."""
    touched_steps = np.flatnonzero(trace.eef_contacts.any(axis=1))
    if len(touched_steps) == 0:
        return None
    first = trace.eef_contacts[touched_steps[0]]
    if first[trace.instructed_candidate]:
        return _strict("correct", "contact_target")
    return _strict("wrong", "contact_distractor")


def _approached(start: float, closest: float, commit_at: float = 0.0) -> bool:
    """A real approach: the closest distance covers at least :data:`APPROACH_FRACTION` of the way from the start
    to where the family's rule commits (contact: 0; soda base: its proximity radius), and >= APPROACH_MIN_M."""
    gap = start - commit_at
    return gap > 0 and start - closest >= max(APPROACH_MIN_M, APPROACH_FRACTION * gap)


def _min_distance_soft(trace: EpisodeTrace) -> EpisodeOutcome:
    """Table S4 reach soft credit: the closest approach to the target beats every distractor's, and it is a
    real approach from the start (:func:`_approached`)."""
    per_step = _eef_distances(trace)
    distances = per_step.min(axis=0)
    k = trace.instructed_candidate
    if not bool(np.all(distances[k] < np.delete(distances, k))):
        return _none("timeout")
    if not _approached(float(per_step[0, k]), float(distances[k])):
        return _none("no_approach")
    return _none("min_distance_closer_to_target", soft=True)


def _base_approach_soft(trace: EpisodeTrace) -> bool:
    """Soda: the base's closest (planar) approach is to the instructed can and covers half the way from the
    start to the proximity radius where its rule would commit."""
    distances = _base_distances(trace)
    closest = distances.min(axis=0)
    k = trace.instructed_candidate
    return bool(np.all(closest[k] < np.delete(closest, k))) and _approached(
        float(distances[0, k]), float(closest[k]), SODA_BASE_PROXIMITY_M)


def _reach(trace: EpisodeTrace) -> EpisodeOutcome:
    return _contact_outcome(trace) or _min_distance_soft(trace)


def _base_proximity_outcome(trace: EpisodeTrace) -> EpisodeOutcome | None:
    """Soda: the nearest can to the final base position, if within the proximity radius."""
    distances = _base_distances(trace)[-1]
    nearest = int(np.argmin(distances))
    if np.count_nonzero(distances == distances[nearest]) > 1 or distances[nearest] > SODA_BASE_PROXIMITY_M:
        return None
    if nearest == trace.instructed_candidate:
        return _strict("correct", "base_proximity")
    return _strict("wrong", "base_proximity_distractor")


def _reach_base_proximity(trace: EpisodeTrace) -> EpisodeOutcome:
    committed = _contact_outcome(trace) or _base_proximity_outcome(trace)
    if committed is not None:
        return committed
    by_hand = _min_distance_soft(trace)
    if by_hand.soft_credit or not _base_approach_soft(trace):
        return by_hand
    return _none("base_approached_target", soft=True)


def _side_sign(trace: EpisodeTrace, xy: np.ndarray) -> float:
    """Signed position along the robot-right axis relative to the reference, as +1 / -1 / 0 for the
    instructed side / the opposite side / exactly on the axis through the reference."""
    countertop = trace.countertop
    projection = float(np.dot(xy - countertop.reference_center, countertop.right_axis))
    instructed = 1.0 if countertop.instructed_side == "right" else -1.0
    return float(np.sign(projection)) * instructed


def _carried(trace: EpisodeTrace) -> np.ndarray:
    """(T,) bool: the object is at least :data:`CARRY_MIN_M` (horizontally) from where it started."""
    moved = np.linalg.norm(trace.object_positions[:, :2] - trace.object_positions[0, :2], axis=-1)
    return moved >= CARRY_MIN_M


def _rests_on_floor(trace: EpisodeTrace, position: np.ndarray) -> bool:
    return float(position[2]) - trace.floor_height <= FLOOR_REST_HEIGHT_M


def _directional_placement(trace: EpisodeTrace) -> EpisodeOutcome:
    final = trace.object_positions[-1]
    if trace.object_held[-1]:
        # Table S4 soft credit: the still-held object lies on the instructed side at episode end, and was
        # carried there (CARRY_MIN_M), not picked up where it started.
        if _side_sign(trace, final[:2]) <= 0:
            return _none("held_not_on_side")
        if _carried(trace)[-1]:
            return _none("held_on_side", soft=True)
        return _none("held_not_carried")
    if not trace.release_steps:
        return _none("timeout")  # never grasped: the object still lies where it started
    if _rests_on_floor(trace, final):
        return _none("floor_drop")
    countertop = trace.countertop
    low, high = COUNTERTOP_REST_BAND_M
    on_counter = bool(points_in_polygon(final[:2], countertop.polygon)[0]) and (
        low <= float(final[2]) - countertop.plane_height <= high)
    if not on_counter:
        return _none("off_countertop")
    if float(np.linalg.norm(final[:2] - countertop.reference_center)) < ON_REF_RADIUS_M:
        return _none("on_ref")
    side = _side_sign(trace, final[:2])
    if side > 0:
        return _strict("correct", "on_instructed_side")
    if side < 0:
        return _strict("wrong", "on_opposite_side")
    return _none("no_side")


def _resting_compartment(trace: EpisodeTrace, position: np.ndarray) -> int | None:
    container = trace.container
    if not points_in_polygon(position[:2], container.footprint)[0]:
        return None
    z = float(position[2])
    for index, (low, high) in enumerate(container.compartment_bands):
        if low <= z <= high:
            return index
    return None


def _peak_soft(trace: EpisodeTrace, fallback: str) -> EpisodeOutcome:
    """Table S4 container soft credit: the peak height inside the footprint lies in the widened band."""
    container = trace.container
    # Only heights reached after the object was carried (CARRY_MIN_M) count: one that starts in the
    # footprint at a band's height earns nothing by being held still.
    inside = points_in_polygon(trace.object_positions[:, :2], container.footprint) & _carried(trace)
    if not inside.any():
        return _none(fallback)
    peak = float(trace.object_positions[inside, 2].max())
    low, high = container.compartment_bands[container.instructed_compartment]
    if peak > high + COMPARTMENT_BAND_MARGIN_M:
        # Passing through the band before overshooting does not qualify (Table S4).
        return _none("overshoot")
    if peak < low - COMPARTMENT_BAND_MARGIN_M:
        return _none("below_band")
    return _none("peak_in_band", soft=True)


def _container_placement(trace: EpisodeTrace) -> EpisodeOutcome:
    final = trace.object_positions[-1]
    if trace.object_held[-1] or not trace.release_steps:
        return _peak_soft(trace, fallback="timeout")
    compartment = _resting_compartment(trace, final)
    if compartment is not None:
        if compartment == trace.container.instructed_compartment:
            return _strict("correct", "in_instructed_compartment")
        return _strict("wrong", "wrong_compartment")
    if _rests_on_floor(trace, final):
        return _none("floor_drop")
    return _peak_soft(trace, fallback="outside_container")


def _navigation(trace: EpisodeTrace) -> EpisodeOutcome:
    return _strict("correct", "nav_success") if trace.nav_success else _none("nav_failure")


_RULES: Mapping[Family, Callable[[EpisodeTrace], EpisodeOutcome]] = {
    "reach": _reach,
    "reach_base_proximity": _reach_base_proximity,
    "directional_placement": _directional_placement,
    "container_placement": _container_placement,
    "navigation": _navigation,
}


def outcome_from_trace(trace: EpisodeTrace) -> EpisodeOutcome:
    """Score one episode with its task family's Table S4 rule.

    Example:
        >>> trace = EpisodeTrace(task="move_to_oven", split="held_out", variant="",
        ...                      instruction="Move to the oven.", seed=3, step_budget=500, nav_success=False)
        >>> outcome_from_trace(trace)
        EpisodeOutcome(outcome='none', soft_credit=False, detail='nav_failure')
    """
    if not isinstance(trace, EpisodeTrace):
        raise ValueError(f"trace must be an EpisodeTrace, got {type(trace).__name__}")
    return _RULES[trace.family](trace)


# --- aggregation --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RateWithCI:
    """A rate over episodes with its Wilson interval, all in percent."""

    rate: float
    low: float
    high: float
    successes: int
    n: int

    @classmethod
    def from_counts(cls, successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> RateWithCI:
        """Build from counts (n > 0).

        Example:
            >>> r = RateWithCI.from_counts(131, 469)
            >>> (round(r.rate, 1), round(r.low, 1), round(r.high, 1))
            (27.9, 24.1, 32.2)
        """
        if n <= 0:
            raise ValueError(f"n must be > 0 to form a rate, got {n!r}")
        low, high = wilson_interval(successes, n, confidence)
        return cls(100.0 * successes / n, 100.0 * low, 100.0 * high, successes, n)


_RATE_KEYS = ("strict", "soft", "wrong")


@dataclass(frozen=True)
class ActionRates:
    """Strict / soft / wrong rates of a set of episodes, pooled and per task.

    Attributes:
        n: Number of episodes.
        strict: correct / n.
        soft: (correct + none with soft credit) / n; includes strict (the paper's "+Soft").
        wrong: wrong / n.
        per_task: Canonical task name -> {"strict", "soft", "wrong"} over that task's episodes, in
            Table S2 order.
    """

    n: int
    strict: RateWithCI
    soft: RateWithCI
    wrong: RateWithCI
    per_task: dict[str, dict[str, RateWithCI]]

    def to_flat_dict(self) -> dict[str, float | int]:
        """Flat keys for an ``evaluate`` metric result.

        Keys: "n", then for each of strict / soft / wrong: "<rate>", "<rate>_ci_low",
        "<rate>_ci_high", "<rate>_count"; then the same per task prefixed "<task>/" (with "<task>/n").

        Example:
            >>> flat = action_rates(["correct", "none"], ["reach_dice", "reach_dice"]).to_flat_dict()
            >>> flat["n"], flat["strict"], flat["reach_dice/soft"], flat["reach_dice/n"]
            (2, 50.0, 50.0, 2)
        """
        flat: dict[str, float | int] = {"n": self.n}
        flat.update(_flatten("", {"strict": self.strict, "soft": self.soft, "wrong": self.wrong}))
        for task, rates in self.per_task.items():
            flat[f"{task}/n"] = rates["strict"].n
            flat.update(_flatten(f"{task}/", rates))
        return flat


def _flatten(prefix: str, rates: Mapping[str, RateWithCI]) -> dict[str, float | int]:
    flat: dict[str, float | int] = {}
    for key in _RATE_KEYS:
        rate = rates[key]
        flat[f"{prefix}{key}"] = rate.rate
        flat[f"{prefix}{key}_ci_low"] = rate.low
        flat[f"{prefix}{key}_ci_high"] = rate.high
        flat[f"{prefix}{key}_count"] = rate.successes
    return flat


def _validate_episodes(
    outcomes: Sequence[str], tasks: Sequence[str], soft_credit: Sequence[bool] | None
) -> tuple[list[str], list[bool]]:
    """Check labels, lengths and the navigation / soft-credit constraints; return canonical tasks."""
    if len(tasks) != len(outcomes):
        raise ValueError(f"tasks has length {len(tasks)} but outcomes has length {len(outcomes)}")
    credits = [False] * len(outcomes) if soft_credit is None else list(soft_credit)
    if len(credits) != len(outcomes):
        raise ValueError(f"soft_credit has length {len(credits)} but outcomes has length {len(outcomes)}")
    check_not_empty("outcomes", outcomes)
    names = [canonical_task_name(task) for task in tasks]
    for i, (outcome, task, credit) in enumerate(zip(outcomes, names, credits)):
        if outcome not in OUTCOMES:
            raise ValueError(f"outcomes[{i}] must be one of {OUTCOMES}, got {outcome!r}")
        if not isinstance(credit, (bool, np.bool_)):
            raise ValueError(f"soft_credit[{i}] must be a bool, got {credit!r}")
        if credit and outcome != "none":
            raise ValueError(f"soft_credit[{i}] is True but outcomes[{i}] is {outcome!r}; soft credit is only for 'none'")
        if TASKS[task].is_navigation:
            # Navigation is binary (Sec. 5.1): success or not, no wrong target, no soft credit.
            if outcome == "wrong":
                raise ValueError(f"outcomes[{i}] is 'wrong' for navigation task {task!r}; navigation is correct/none")
            if credit:
                raise ValueError(f"soft_credit[{i}] is True for navigation task {task!r}; navigation has no soft credit")
    return names, [bool(c) for c in credits]


def _rates(outcomes: Sequence[str], credits: Sequence[bool], confidence: float) -> dict[str, RateWithCI]:
    n = len(outcomes)
    correct = sum(o == "correct" for o in outcomes)
    credited = sum(o == "none" and c for o, c in zip(outcomes, credits))
    wrong = sum(o == "wrong" for o in outcomes)
    return {
        "strict": RateWithCI.from_counts(correct, n, confidence),
        "soft": RateWithCI.from_counts(correct + credited, n, confidence),
        "wrong": RateWithCI.from_counts(wrong, n, confidence),
    }


def action_rates(
    outcomes: Sequence[str],
    tasks: Sequence[str],
    soft_credit: Sequence[bool] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> ActionRates:
    """Pool episode labels into strict / soft / wrong rates (percent) with Wilson intervals.

    Pooled rates are over episodes, not a mean of task rates (Sec. 5.1; Tables 4, S9, S10 "POOLED").

    Args:
        outcomes: One "correct" / "wrong" / "none" per episode.
        tasks: The episode's task (canonical name, dotted spelling or alias).
        soft_credit: Per episode, whether a "none" episode earned soft credit; None means none did.
        confidence: Level of the Wilson intervals.

    Raises:
        ValueError: On length mismatches, an empty input, an unknown label or task, soft credit on a
            non-"none" episode, or a "wrong" / soft-credited navigation episode.
    """
    names, credits = _validate_episodes(outcomes, tasks, soft_credit)
    pooled = _rates(outcomes, credits, confidence)
    per_task: dict[str, dict[str, RateWithCI]] = {}
    for task in TASKS:  # Table S2 order
        rows = [i for i, name in enumerate(names) if name == task]
        if rows:
            per_task[task] = _rates([outcomes[i] for i in rows], [credits[i] for i in rows], confidence)
    return ActionRates(len(outcomes), pooled["strict"], pooled["soft"], pooled["wrong"], per_task)


def action_rates_from_traces(traces: Sequence[EpisodeTrace], confidence: float = DEFAULT_CONFIDENCE) -> ActionRates:
    """Score every trace with :func:`outcome_from_trace` and pool the labels."""
    scored = [outcome_from_trace(trace) for trace in traces]
    return action_rates(
        [s.outcome for s in scored], [t.task for t in traces], [s.soft_credit for s in scored], confidence)


__all__ = [
    "COMPARTMENT_BAND_MARGIN_M",
    "COUNTERTOP_REST_BAND_M",
    "FLOOR_REST_HEIGHT_M",
    "ON_REF_RADIUS_M",
    "OUTCOMES",
    "SODA_BASE_PROXIMITY_M",
    "ActionRates",
    "EpisodeOutcome",
    "Outcome",
    "RateWithCI",
    "action_rates",
    "action_rates_from_traces",
    "outcome_from_trace",
]
