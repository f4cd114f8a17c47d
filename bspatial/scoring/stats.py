"""Statistics the reports use: Wilson intervals, Spearman's rho, matched-pair contrasts.

* :func:`wilson_interval`: two-sided Wilson score interval for a binomial proportion. BEHAVIOR-Spatial
  reports pooled rates over episodes (Sec. 5.1); Spa-Bench reports every success rate with a Wilson
  95% interval (Spa-Bench Sec. E, Appendix D).
* :func:`spearman`: Spearman's rank correlation with average ranks for ties (Sec. 6, Table 3).
* :func:`matched_pair_contrast`: Spa-Bench's descriptive paired contrast of two conditions run on the
  same scenes (e.g. direct vs OOD-spatial instruction): rates, difference, discordant counts, an exact
  McNemar p-value and Newcombe's hybrid-score interval for the paired difference.

Pure stdlib (``statistics.NormalDist`` for the normal quantile, ``math.comb`` for the exact binomial
tail): scipy is not a dependency of the package. Intervals for items that share a scene or frame (not
independent draws) are :mod:`bspatial.scoring.clustered`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

DEFAULT_CONFIDENCE = 0.95
"""Two-sided 95% intervals (Spa-Bench: "two-sided Wilson 95% confidence intervals")."""


def _z(confidence: float) -> float:
    """Two-sided normal quantile for a confidence level, e.g. 1.95996... for 0.95."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value.__index__())  # type: ignore[attr-defined]


def wilson_interval(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Two-sided Wilson score interval for ``successes / n``, as proportions in [0, 1].

    With p = k/n and z the two-sided normal quantile, the interval is
    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``. With ``n == 0`` nothing is known and
    the interval is the whole range (0, 1).

    Raises:
        ValueError: If successes or n is negative or not an integer, successes > n, or confidence is
            outside (0, 1).

    Example:
        >>> low, high = wilson_interval(0, 10)
        >>> (low, round(high, 4))
        (0.0, 0.2775)
        >>> [round(v, 4) for v in wilson_interval(5, 10)]
        [0.2366, 0.7634]
    """
    k = _count("successes", successes)
    total = _count("n", n)
    z = _z(confidence)
    if total < 0:
        raise ValueError(f"n must be >= 0, got {total}")
    if k < 0:
        raise ValueError(f"successes must be >= 0, got {k}")
    if k > total:
        raise ValueError(f"successes must be <= n, got successes={k}, n={total}")
    if total == 0:
        return 0.0, 1.0
    p = k / total
    z2 = z * z
    denominator = 1.0 + z2 / total
    center = (p + z2 / (2 * total)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / total + z2 / (4 * total * total)) / denominator
    # At k = 0 or k = n the bound equals the end of the range exactly; pin it against rounding.
    low = 0.0 if k == 0 else max(0.0, center - half)
    high = 1.0 if k == total else min(1.0, center + half)
    return low, high


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, tied values sharing the mean of the ranks they span.

    Example:
        >>> average_ranks([10, 20, 20, 5])
        [2.0, 3.5, 3.5, 1.0]
    """
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        mean_rank = (start + end) / 2.0 + 1.0
        for position in range(start, end + 1):
            ranks[order[position]] = mean_rank
        start = end + 1
    return ranks


def _finite_floats(name: str, values: Sequence[float]) -> list[float]:
    out = []
    for i, value in enumerate(values):
        try:
            number = float(value)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name}[{i}] must be a number, got {value!r}") from error
        if not math.isfinite(number):
            raise ValueError(f"{name}[{i}] must be finite, got {value!r}")
        out.append(number)
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation: Pearson's r of the average ranks (ties share their mean rank).

    This is the tie-correct form (as in the paper's Table 3 and ``scipy.stats.spearmanr``); the
    shortcut ``1 - 6·Σd²/(n(n²-1))`` is only exact without ties.

    Raises:
        ValueError: If the lengths differ, fewer than 2 pairs are given, a value is not finite, or
            either side is constant (rho undefined).

    Example:
        >>> round(spearman([1, 2, 2, 3], [1, 3, 2, 4]), 6)
        0.948683
    """
    xs, ys = _finite_floats("x", x), _finite_floats("y", y)
    if len(xs) != len(ys):
        raise ValueError(f"x and y must have the same length, got {len(xs)} and {len(ys)}")
    if len(xs) < 2:
        raise ValueError(f"spearman needs at least 2 pairs, got {len(xs)}")
    rx, ry = average_ranks(xs), average_ranks(ys)
    mean = (len(xs) + 1) / 2.0  # mean of ranks 1..n, unchanged by averaging ties
    dx = [r - mean for r in rx]
    dy = [r - mean for r in ry]
    sxx = sum(d * d for d in dx)
    syy = sum(d * d for d in dy)
    for name, spread in (("x", sxx), ("y", syy)):
        if spread == 0.0:
            raise ValueError(f"{name} is constant; Spearman's rho is undefined")
    return sum(a * b for a, b in zip(dx, dy)) / math.sqrt(sxx * syy)


@dataclass(frozen=True)
class PairedContrast:
    """Contrast of two binary outcomes observed on the same matched scenes (condition a vs b).

    Rates and the difference are in percent (percentage points), like the action tables.

    Attributes:
        n_pairs: Number of matched scenes.
        successes_a: Scenes where condition a succeeded.
        successes_b: Scenes where condition b succeeded.
        rate_a: 100 * successes_a / n_pairs.
        rate_b: 100 * successes_b / n_pairs.
        difference: rate_a - rate_b, in percentage points.
        a_only: Discordant scenes where a succeeded and b failed.
        b_only: Discordant scenes where b succeeded and a failed.
        p_value: Exact two-sided McNemar test (sign test on the discordant scenes):
            ``min(1, 2·P[X <= min(a_only, b_only)])`` with X ~ Binomial(a_only + b_only, 1/2);
            1.0 when there are no discordant scenes.
        ci_low: Lower bound of the difference's interval, in percentage points.
        ci_high: Upper bound, in percentage points.
        confidence: Confidence level of the interval.

    The interval is Newcombe's (1998) hybrid score interval for paired proportions ("method 10",
    the square-and-add form of Fagerland, Lydersen & Laake, 2014, ch. 8): Wilson intervals of the two
    marginal rates combined with the estimated correlation between them. It stays inside [-100, 100],
    behaves with zero discordant scenes (where the Wald interval collapses to a point), and needs no
    iteration.
    """

    n_pairs: int
    successes_a: int
    successes_b: int
    rate_a: float
    rate_b: float
    difference: float
    a_only: int
    b_only: int
    p_value: float
    ci_low: float
    ci_high: float
    confidence: float = DEFAULT_CONFIDENCE


def _binary(name: str, values: Sequence[bool]) -> list[bool]:
    out = []
    for i, value in enumerate(values):
        # Accept bools and 0/1 (numpy bools and ints included); anything else is a caller bug.
        if value in (True, False) and not isinstance(value, float):
            out.append(bool(value))
        else:
            raise ValueError(f"{name}[{i}] must be a bool (or 0/1), got {value!r}")
    return out


def exact_mcnemar_p(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar p-value from the two discordant counts.

    Example:
        >>> round(exact_mcnemar_p(6, 16), 4)
        0.0525
    """
    b, c = _count("a_only", a_only), _count("b_only", b_only)
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got a_only={b}, b_only={c}")
    m = b + c
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, i) for i in range(min(b, c) + 1))
    # Integer arithmetic until the last division keeps the tail exact for any m.
    return min(1.0, 2 * tail / 2**m)


def _newcombe_paired_interval(
    both: int, a_only: int, b_only: int, neither: int, confidence: float
) -> tuple[float, float]:
    """Newcombe's hybrid score interval for p_a - p_b on paired data, as proportions."""
    n = both + a_only + b_only + neither
    row_a, col_b = both + a_only, both + b_only  # successes of a and of b
    p_a, p_b = row_a / n, col_b / n
    low_a, high_a = wilson_interval(row_a, n, confidence)
    low_b, high_b = wilson_interval(col_b, n, confidence)
    margins = row_a * (n - row_a) * col_b * (n - col_b)
    if margins == 0:
        phi = 0.0
    else:
        # Newcombe's continuity-corrected correlation estimate: a positive cross-product difference
        # is reduced by n/2 (and floored at 0); a negative one is used as is.
        cross = both * neither - a_only * b_only
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross >= 0:
            phi = 0.0
        else:
            phi = cross / math.sqrt(margins)
    d_low_a, d_high_b = p_a - low_a, high_b - p_b
    d_high_a, d_low_b = high_a - p_a, p_b - low_b
    delta = math.sqrt(max(0.0, d_low_a**2 + d_high_b**2 - 2 * phi * d_low_a * d_high_b))
    epsilon = math.sqrt(max(0.0, d_low_b**2 + d_high_a**2 - 2 * phi * d_low_b * d_high_a))
    difference = p_a - p_b
    return max(-1.0, difference - delta), min(1.0, difference + epsilon)


def matched_pair_contrast(
    a: Sequence[bool], b: Sequence[bool], confidence: float = DEFAULT_CONFIDENCE
) -> PairedContrast:
    """Compare two conditions run on the same matched scenes (``a[i]`` and ``b[i]`` share scene i).

    Raises:
        ValueError: If the lengths differ, no pairs are given, a value is not a bool / 0 / 1, or
            confidence is outside (0, 1).

    Example:
        >>> c = matched_pair_contrast([True, True, True, False], [True, False, False, False])
        >>> (c.rate_a, c.rate_b, c.difference, c.a_only, c.b_only, c.p_value)
        (75.0, 25.0, 50.0, 2, 0, 0.5)
    """
    xs, ys = _binary("a", a), _binary("b", b)
    if len(xs) != len(ys):
        raise ValueError(f"a and b must have the same length (one entry per matched scene), got {len(xs)} and {len(ys)}")
    if not xs:
        raise ValueError("a and b must hold at least one matched scene, got none")
    _z(confidence)
    both = sum(x and y for x, y in zip(xs, ys))
    a_only = sum(x and not y for x, y in zip(xs, ys))
    b_only = sum(y and not x for x, y in zip(xs, ys))
    neither = len(xs) - both - a_only - b_only
    low, high = _newcombe_paired_interval(both, a_only, b_only, neither, confidence)
    n = len(xs)
    return PairedContrast(
        n_pairs=n,
        successes_a=both + a_only,
        successes_b=both + b_only,
        rate_a=100.0 * (both + a_only) / n,
        rate_b=100.0 * (both + b_only) / n,
        difference=100.0 * (a_only - b_only) / n,
        a_only=a_only,
        b_only=b_only,
        p_value=exact_mcnemar_p(a_only, b_only),
        ci_low=100.0 * low,
        ci_high=100.0 * high,
        confidence=confidence,
    )
