"""Statistics the reports use: Wilson intervals, Spearman's rho, matched-pair contrasts.

* :func:`wilson_interval`: two-sided Wilson score interval for a binomial proportion. BEHAVIOR-Spatial
  reports pooled rates over episodes (Sec. 5.1); Spa-Bench reports every success rate with a Wilson
  95% interval (Spa-Bench Sec. E, Appendix D).
* :func:`spearman`: Spearman's rank correlation with average ranks for ties (Sec. 6, Table 3).
* :func:`matched_pair_contrast`: Spa-Bench's descriptive paired contrast of two conditions run on the
  same scenes (e.g. direct vs OOD-spatial instruction): rates, difference, discordant counts, an exact
  McNemar p-value and Newcombe's hybrid-score interval for the paired difference.
* :func:`cochran_mantel_haenszel`: the Cochran-Mantel-Haenszel test of association in 2x2 tables over
  strata (e.g. perception right / wrong vs episode success / failure, stratified by task).

Pure stdlib (``statistics.NormalDist`` for the normal quantile, ``math.comb`` for the exact binomial
tail, ``math.erfc`` for the 1-df chi-square tail): scipy is not a dependency of the package. Intervals for items that share a scene or frame (not
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


@dataclass(frozen=True)
class MantelHaenszelTest:
    """The Cochran-Mantel-Haenszel chi-square (1 df, continuity-corrected) over 2x2 tables.

    Attributes:
        statistic: ``(|Σ a_k - Σ E[a_k]| - 1/2)² / Σ Var[a_k]`` over the contributing strata.
        p_value: Its upper tail under chi-square with 1 df.
        strata: The strata that contributed (n >= 2 and a nonzero variance).
        observed: ``Σ a_k`` over those strata.
        expected: ``Σ E[a_k]``, ``E[a_k] = (a+b)(a+c)/n`` (the hypergeometric mean, margins fixed).
    """

    statistic: float
    p_value: float
    strata: int
    observed: int
    expected: float


def _table(k: int, table: Sequence[int]) -> tuple[int, int, int, int]:
    if len(table) != 4:
        raise ValueError(f"tables[{k}] must be four counts (a, b, c, d), got {table!r}")
    counts = tuple(_count(f"tables[{k}][{i}]", v) for i, v in enumerate(table))
    if min(counts) < 0:
        raise ValueError(f"tables[{k}] counts must be >= 0, got {table!r}")
    return counts  # type: ignore[return-value]


def cochran_mantel_haenszel(tables: Sequence[Sequence[int]]) -> MantelHaenszelTest | None:
    """Cochran-Mantel-Haenszel test that group and outcome are independent within every stratum.

    Each stratum k is a 2x2 table ``(a, b, c, d)``: in the group with / without the outcome (a, b), outside
    the group with / without it (c, d). With the margins fixed, ``a_k`` is hypergeometric with mean
    ``E = (a+b)(a+c)/n`` and variance ``V = (a+b)(c+d)(a+c)(b+d) / (n²(n-1))``; the statistic is
    ``(|Σa - ΣE| - 1/2)² / ΣV``, chi-square with 1 df under independence. As R's ``mantelhaen.test``, the
    continuity correction is applied only when ``|Σa - ΣE| >= 1/2`` (subtracting more would turn a small
    deviation into a larger statistic). A stratum with n < 2 or V = 0 (a margin empty: group or outcome
    constant in it) carries no information about the association and is left out. The p-value is
    ``erfc(sqrt(x/2))``, the exact 1-df chi-square tail (``scipy.stats.chi2.sf(x, 1)``).

    Why stratify: tasks differ in both perception accuracy and policy success, so a pooled 2x2 table would
    show an association created by task difficulty alone (Simpson's paradox); the strata compare like with like.

    Returns:
        None when no stratum contributes (nothing to test).

    Raises:
        ValueError: A table is not four non-negative integer counts.

    Example:
        Two tasks where the group succeeds more often (3/4 vs 1/4; 2/2 vs 1/3), and a one-episode task:
        ``Σa = 5``, ``ΣE = 2 + 1.2``, ``ΣV = 256/448 + 36/100``, so ``x = 1.3² / 0.93143 = 1.8144``:

        >>> t = cochran_mantel_haenszel([(3, 1, 1, 3), (2, 0, 1, 2), (1, 0, 0, 0)])
        >>> round(t.statistic, 4), round(t.p_value, 4), t.strata
        (1.8144, 0.178, 2)
    """
    observed, expected, variance, strata = 0, 0.0, 0.0, 0
    for k, table in enumerate(tables):
        a, b, c, d = _table(k, table)
        n = a + b + c + d
        if n < 2:
            continue
        v = (a + b) * (c + d) * (a + c) * (b + d) / (n * n * (n - 1))
        if v == 0.0:
            continue
        observed += a
        expected += (a + b) * (a + c) / n
        variance += v
        strata += 1
    if strata == 0:
        return None
    deviation = abs(observed - expected)
    correction = 0.5 if deviation >= 0.5 else 0.0
    statistic = (deviation - correction) ** 2 / variance
    return MantelHaenszelTest(statistic, math.erfc(math.sqrt(statistic / 2.0)), strata, observed, expected)


@dataclass(frozen=True)
class MantelHaenszelDifference:
    """The Mantel-Haenszel common risk difference over 2x2 tables, with Sato's variance (proportions).

    Attributes:
        estimate: ``Σ w_k d_k / Σ w_k``, ``d_k = a/(a+b) - c/(c+d)``, ``w_k = (a+b)(c+d)/n``.
        se: Its standard error (Sato 1989); low / high: the normal interval, clipped to [-1, 1].
        strata: The strata that contributed (both groups present, ``w_k > 0``).
        confidence: Two-sided level of the interval.
    """

    estimate: float
    se: float
    low: float
    high: float
    strata: int
    confidence: float


def mantel_haenszel_difference(tables: Sequence[Sequence[int]],
                               confidence: float = DEFAULT_CONFIDENCE) -> MantelHaenszelDifference | None:
    """The group's outcome rate minus the others', compared within strata (Mantel-Haenszel weights), with Sato's
    variance, as SAS PROC FREQ (``COMMONRISKDIFF``) and epiR compute it.

    Tables as :func:`cochran_mantel_haenszel`'s ``(a, b, c, d)``. With ``n1 = a + b``, ``n2 = c + d``:
    ``P_k = (n1² c - n2² a + n1 n2 (n2 - n1) / 2) / n²`` and ``Q_k = (a (n2 - c) + c (n1 - a)) / (2 n)``;
    ``Var = (estimate · ΣP + ΣQ) / (Σw)²``. Sato's estimator stays consistent when strata are many and small
    (sparse data), which is the case here (a task of a few episodes is a stratum), unlike the sum of the strata's
    own variances. Why within strata: the CMH test's estimate, immune to the between-stratum confounding a
    pooled difference carries (a task that is both easy to perceive and easy to do).

    Returns:
        None when no stratum holds both groups.

    Raises:
        ValueError: A table is not four non-negative integer counts, or confidence is outside (0, 1).

    Example:
        The docstring example of :func:`cochran_mantel_haenszel`: ``d = (3/4 - 1/4, 1 - 1/3)``, ``w = (2, 6/5)``:

        >>> d = mantel_haenszel_difference([(3, 1, 1, 3), (2, 0, 1, 2), (1, 0, 0, 0)])
        >>> round(d.estimate, 4), round(d.se, 4), d.strata
        (0.5625, 0.2201, 2)
    """
    z = _z(confidence)
    weights = numerator = p_sum = q_sum = 0.0
    strata = 0
    for k, table in enumerate(tables):
        a, b, c, d = _table(k, table)
        n1, n2 = a + b, c + d
        n = n1 + n2
        if n1 == 0 or n2 == 0:
            continue
        weights += n1 * n2 / n
        numerator += (a * n2 - c * n1) / n
        p_sum += (n1 * n1 * c - n2 * n2 * a + n1 * n2 * (n2 - n1) / 2.0) / (n * n)
        q_sum += (a * (n2 - c) + c * (n1 - a)) / (2.0 * n)
        strata += 1
    if strata == 0:
        return None
    estimate = numerator / weights
    se = math.sqrt(max(estimate * p_sum + q_sum, 0.0)) / weights
    return MantelHaenszelDifference(estimate, se, max(-1.0, estimate - z * se), min(1.0, estimate + z * se), strata,
                                    confidence)
