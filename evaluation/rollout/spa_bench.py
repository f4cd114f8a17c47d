"""Spa-Bench layouts of rollout records: conditions with matched-scene contrasts, and failure modes.

Spa-Bench (Sec. III.D-E) reports, per policy, the success of each condition with a two-sided Wilson
95% interval, compares conditions on **matched scenes** with descriptive paired contrasts, and breaks
failures down by their primary mode. Our records carry a ``condition``
(:data:`bspatial.tasks.conditions.CONDITIONS`; absent = ``"spatial"``) and a ``failure_mode``
(:mod:`bspatial.scoring.failure_modes`), so:

* :func:`condition_rows`: one row per (policy, split, condition): applicable episodes, strict success
  [Wilson 95%], and, for every condition but ``spatial``, the paired contrast with the same policy's
  ``spatial`` episodes on the same scenes (matched by task and episode index of the split manifest):
  both rates on the matched pairs, their difference with its Newcombe interval and the exact McNemar p
  (:func:`bspatial.scoring.stats.matched_pair_contrast`);
* :func:`failure_mode_rows`: one row per (policy, split, condition): the count and share of each label
  (``success`` and the nine primary modes of :mod:`bspatial.scoring.failure_modes`);
* :func:`secondary_annotation_rows`: one row per (policy, split, condition): how many of its failed
  episodes carry each secondary annotation (several per episode; they never change a score).

Records with status ``"not_applicable"`` (a condition undefined for the scene) are left out and
counted; a crashed episode (``"error"``) is a failure, as everywhere.

Example:
    >>> rec = lambda cond, i, ok: {"policy": "p", "split": "held_out", "condition": cond, "task": "reach_toys",
    ...                            "index": i, "outcome": "correct" if ok else "none", "status": "decided"}
    >>> rows = condition_rows([rec("spatial", 0, False), rec("spatial", 1, True), rec("direct", 0, True),
    ...                        rec("direct", 1, True)])
    >>> [(r["condition"], r["n"], r["success"].split()[0], r["paired_difference"][:5]) for r in rows]
    [('spatial', 2, '50.0', '-'), ('direct', 2, '100.0', '+50.0')]
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from bspatial.scoring.failure_modes import FAILURE_MODES, SECONDARY_ANNOTATIONS
from bspatial.scoring.stats import matched_pair_contrast, wilson_interval

NOT_APPLICABLE = "not_applicable"
REFERENCE_CONDITION = "spatial"


def condition_of(record: Mapping[str, Any]) -> str:
    return record.get("condition") or REFERENCE_CONDITION


def _success(record: Mapping[str, Any]) -> bool:
    return record.get("status") != "error" and record["outcome"] == "correct"


def _groups(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str], list[Mapping[str, Any]]]:
    from bspatial.tasks.conditions import CONDITIONS

    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["policy"], r["split"], condition_of(r)), []).append(r)
    order = {c: i for i, c in enumerate(CONDITIONS)}
    return {k: groups[k] for k in sorted(groups, key=lambda k: (k[0], k[1], order.get(k[2], len(order))))}


def _cell(successes: int, n: int) -> str:
    if n == 0:
        return "-"
    low, high = wilson_interval(successes, n)
    return f"{100.0 * successes / n:.1f} [{100.0 * low:.1f}, {100.0 * high:.1f}]"


def condition_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (policy, split, condition): n, success [Wilson 95%], and the paired contrast with ``spatial``."""
    groups = _groups(records)
    rows = []
    for (policy, split, condition), group in groups.items():
        applicable = [r for r in group if r.get("status") != NOT_APPLICABLE]
        row: dict[str, Any] = {"policy": policy, "split": split, "condition": condition, "n": len(applicable),
                               "not_applicable": len(group) - len(applicable),
                               "success": _cell(sum(map(_success, applicable)), len(applicable)),
                               "paired_difference": "-"}
        reference = groups.get((policy, split, REFERENCE_CONDITION))
        if condition != REFERENCE_CONDITION and reference:
            by_scene = {(r["task"], r["index"]): r for r in reference if r.get("status") != NOT_APPLICABLE}
            pairs = [(r, by_scene[(r["task"], r["index"])]) for r in applicable if (r["task"], r["index"]) in by_scene]
            if pairs:
                c = matched_pair_contrast([_success(a) for a, _ in pairs], [_success(b) for _, b in pairs])
                row["paired_difference"] = (f"{c.difference:+.1f} [{c.ci_low:.1f}, {c.ci_high:.1f}] "
                                            f"p={c.p_value:.3f} (n={c.n_pairs})")
        rows.append(row)
    return rows


def failure_mode_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (policy, split, condition): how many applicable episodes carry each failure mode, and its share."""
    rows = []
    for (policy, split, condition), group in _groups(records).items():
        labelled = [r for r in group if r.get("status") != NOT_APPLICABLE and r.get("failure_mode")]
        if not labelled:
            continue
        row: dict[str, Any] = {"policy": policy, "split": split, "condition": condition, "n": len(labelled)}
        for mode in FAILURE_MODES:
            count = sum(r["failure_mode"] == mode for r in labelled)
            row[mode] = f"{count} ({100.0 * count / len(labelled):.1f}%)"
        rows.append(row)
    return rows


def secondary_annotation_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (policy, split, condition): of its labelled failures, how many carry each secondary annotation."""
    rows = []
    for (policy, split, condition), group in _groups(records).items():
        failed = [r for r in group if r.get("status") != NOT_APPLICABLE and r.get("failure_mode")
                  and r["failure_mode"] != "success"]
        if not failed:
            continue
        row: dict[str, Any] = {"policy": policy, "split": split, "condition": condition, "failures": len(failed)}
        for annotation in SECONDARY_ANNOTATIONS:
            count = sum(annotation in (r.get("secondary_modes") or ()) for r in failed)
            row[annotation] = f"{count} ({100.0 * count / len(failed):.1f}%)"
        rows.append(row)
    return rows
