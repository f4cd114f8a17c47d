"""Inference latency in milliseconds: what each model call of an episode took, summarised in its record.

Wall time on the machine that ran the episode (a measurement, never part of an episode's identity: two paths that
play the same episode compare everything but this). Policies without a model (scripted experts, random, replays)
record none.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np


def timed_call(fn: Callable[..., Any], log: list[float]) -> Callable[..., Any]:
    """``fn`` that appends each call's wall time in ms to ``log``."""

    def call(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            log.append(1000.0 * (time.perf_counter() - start))

    return call


def latency_summary(milliseconds: Sequence[float] | None) -> dict[str, float | int] | None:
    """``{"calls", "mean_ms", "p50_ms", "p95_ms", "max_ms"}`` of per-call latencies; None when there were none.

    Example:
        >>> latency_summary([10.0, 20.0, 30.0, 40.0])
        {'calls': 4, 'mean_ms': 25.0, 'p50_ms': 25.0, 'p95_ms': 38.5, 'max_ms': 40.0}
        >>> latency_summary([]) is None
        True
    """
    if not milliseconds:
        return None
    values = np.asarray(milliseconds, dtype=float)
    return {"calls": int(values.size), "mean_ms": round(float(values.mean()), 3),
            "p50_ms": round(float(np.percentile(values, 50)), 3), "p95_ms": round(float(np.percentile(values, 95)), 3),
            "max_ms": round(float(values.max()), 3)}


def pooled_latency(records: Sequence[dict[str, Any]]) -> dict[str, float | int] | None:
    """A run's latency line from its records' summaries: total calls, call-weighted mean, the median of the episodes'
    medians, the largest p95 and max (the per-call values are not kept in the records)."""
    rows = [r["inference_ms"] for r in records if r.get("inference_ms")]
    if not rows:
        return None
    calls = sum(r["calls"] for r in rows)
    return {"calls": calls, "mean_ms": round(sum(r["mean_ms"] * r["calls"] for r in rows) / calls, 3),
            "p50_ms": round(float(np.median([r["p50_ms"] for r in rows])), 3),
            "p95_ms": max(r["p95_ms"] for r in rows), "max_ms": max(r["max_ms"] for r in rows)}


__all__ = ["latency_summary", "pooled_latency", "timed_call"]
