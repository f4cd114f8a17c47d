"""Wilson intervals, Spearman with ties, matched-pair contrasts and the CMH test against hand-computed references."""

from __future__ import annotations

import math

import pytest

from bspatial.scoring.stats import (
    PairedContrast,
    average_ranks,
    cochran_mantel_haenszel,
    exact_mcnemar_p,
    matched_pair_contrast,
    spearman,
    wilson_interval,
)

Z95 = 1.959963984540054  # Phi^-1(0.975), as printed in statistical tables to 15 digits


def _wilson_by_quadratic(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Reference: the Wilson bounds are the roots p of (k/n - p)^2 = z^2 p (1 - p) / n."""
    p_hat = k / n
    a = 1 + z * z / n
    b = -(2 * p_hat + z * z / n)
    c = p_hat * p_hat
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


@pytest.mark.parametrize("k,n,expected", [
    (0, 10, (0.0, 0.2775)),      # textbook values (Brown, Cai & DasGupta 2001 style tables)
    (10, 10, (0.7225, 1.0)),
    (5, 10, (0.2366, 0.7634)),
    (131, 469, (0.2406, 0.3216)),  # 27.9% of the held-out set
    (49, 700, (0.0534, 0.0913)),   # 7.0% of the prompt probe (hand: centre 0.07235, half 0.01900)
])
def test_wilson_known_values(k, n, expected):
    low, high = wilson_interval(k, n)
    assert (round(low, 4), round(high, 4)) == expected


@pytest.mark.parametrize("k,n", [(1, 10), (3, 7), (131, 469), (195, 469), (70, 700), (399, 401)])
def test_wilson_matches_the_quadratic_form(k, n):
    low, high = wilson_interval(k, n)
    ref_low, ref_high = _wilson_by_quadratic(k, n)
    assert low == pytest.approx(ref_low, abs=1e-12)
    assert high == pytest.approx(ref_high, abs=1e-12)


def test_wilson_other_confidence_and_empty():
    low, high = wilson_interval(5, 10, confidence=0.90)
    ref = _wilson_by_quadratic(5, 10, z=1.6448536269514722)
    assert (low, high) == pytest.approx(ref, abs=1e-12)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("kwargs,message", [
    ({"successes": 11, "n": 10}, "successes must be <= n"),
    ({"successes": 0, "n": -1}, "n must be >= 0"),
    ({"successes": -1, "n": 10}, "successes must be >= 0"),
    ({"successes": 1, "n": 10, "confidence": 1.0}, "confidence must be in"),
    ({"successes": 1, "n": 10, "confidence": 0.0}, "confidence must be in"),
    ({"successes": 1.5, "n": 10}, "successes must be an integer"),
])
def test_wilson_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        wilson_interval(**kwargs)


def test_average_ranks_share_ties():
    assert average_ranks([3, 1, 3, 3, 2]) == [4.0, 1.0, 4.0, 4.0, 2.0]


def test_spearman_with_ties_by_hand():
    # x ranks [1, 2.5, 2.5, 4], y ranks [1, 3, 2, 4]; deviations from 2.5:
    # dx = [-1.5, 0, 0, 1.5], dy = [-1.5, .5, -.5, 1.5]; sum dx*dy = 4.5, sum dx^2 = 4.5, sum dy^2 = 5
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / math.sqrt(4.5 * 5))
    # Ties on both sides: x ranks [1.5, 1.5, 3, 4, 5], y ranks [2, 2, 2, 4.5, 4.5] (mean 3).
    # dx = [-1.5, -1.5, 0, 1, 2], dy = [-1, -1, -1, 1.5, 1.5]: sum dx*dy = 1.5+1.5+0+1.5+3 = 7.5,
    # sum dx^2 = 2.25+2.25+0+1+4 = 9.5, sum dy^2 = 1+1+1+2.25+2.25 = 7.5.
    assert spearman([10, 10, 20, 30, 40], [5, 5, 5, 9, 9]) == pytest.approx(7.5 / math.sqrt(9.5 * 7.5))


def test_spearman_without_ties_matches_the_shortcut():
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    d2 = sum((a - b) ** 2 for a, b in zip(x, y))
    assert spearman(x, y) == pytest.approx(1 - 6 * d2 / (5 * (25 - 1)))
    assert spearman(x, [-v for v in x]) == pytest.approx(-1.0)


@pytest.mark.parametrize("x,y,message", [
    ([1, 2], [1, 2, 3], "same length"),
    ([1], [1], "at least 2"),
    ([1, 1, 1], [1, 2, 3], "x is constant"),
    ([1, 2, float("nan")], [1, 2, 3], r"x\[2\] must be finite"),
])
def test_spearman_rejects_bad_input(x, y, message):
    with pytest.raises(ValueError, match=message):
        spearman(x, y)


def test_exact_mcnemar_by_hand():
    # 6 vs 16 discordant: 2 * sum_{i<=6} C(22, i) / 2^22 = 2 * 110056 / 4194304
    assert exact_mcnemar_p(6, 16) == pytest.approx(2 * 110056 / 4194304)
    assert exact_mcnemar_p(0, 0) == 1.0
    assert exact_mcnemar_p(3, 3) == 1.0
    assert exact_mcnemar_p(0, 5) == pytest.approx(2 / 32)


def _pairs(both: int, a_only: int, b_only: int, neither: int) -> tuple[list[bool], list[bool]]:
    a = [True] * both + [True] * a_only + [False] * b_only + [False] * neither
    b = [True] * both + [False] * a_only + [True] * b_only + [False] * neither
    return a, b


def test_newcombe_interval_matches_published_example():
    # Cavo et al. (2012) complete response before/after consolidation, table [[59, 6], [16, 80]];
    # Fagerland, Lydersen & Laake (2014, ch. 8) Newcombe square-and-add: -0.0621 (-0.1186 to -0.0046).
    contrast = matched_pair_contrast(*_pairs(59, 6, 16, 80))
    assert isinstance(contrast, PairedContrast)
    assert contrast.n_pairs == 161
    assert (contrast.a_only, contrast.b_only) == (6, 16)
    assert round(contrast.difference, 2) == -6.21
    assert round(contrast.ci_low, 2) == -11.86
    assert round(contrast.ci_high, 2) == -0.46
    assert contrast.p_value == pytest.approx(2 * 110056 / 4194304)


def test_contrast_rates_and_degenerate_tables():
    contrast = matched_pair_contrast(*_pairs(10, 0, 0, 10))
    assert contrast.difference == 0.0 and contrast.p_value == 1.0
    # No discordant pairs still gives a real interval. By hand: both rates are Wilson(10, 20) = 0.5 -+ d with
    # d = z·sqrt(1/80 + z²/1600) / (1 + z²/20) = 0.2007020; Newcombe's corrected phi = (10·10 - 0·0 - 20/2) /
    # sqrt(10·10·10·10) = 0.9, so delta = epsilon = d·sqrt(2 - 2·0.9) = 0.0897567: -+8.976 points.
    assert (contrast.ci_low, contrast.ci_high) == (pytest.approx(-8.975666, abs=1e-5), pytest.approx(8.975666, abs=1e-5))
    all_a = matched_pair_contrast([True] * 20, [False] * 20)
    assert (all_a.rate_a, all_a.rate_b, all_a.difference) == (100.0, 0.0, 100.0)
    # Margins of zero: phi = 0. Wilson(20, 20) = [20 / (20 + z²), 1] = [0.8388748, 1] and Wilson(0, 20) =
    # [0, z² / (20 + z²)] = [0, 0.1611252]: delta = sqrt(2)·0.1611252 = 0.2278654, epsilon = 0.
    assert all_a.ci_low == pytest.approx(77.213462, abs=1e-5) and all_a.ci_high == 100.0
    assert all_a.p_value == pytest.approx(2 / 2**20)
    # numpy-free 0/1 input is accepted like booleans
    assert matched_pair_contrast([1, 0], [0, 0]).a_only == 1


@pytest.mark.parametrize("a,b,message", [
    ([True], [True, False], "same length"),
    ([], [], "at least one"),
    ([True, 2], [True, False], r"a\[1\] must be a bool"),
    ([True, False], [True, 0.5], r"b\[1\] must be a bool"),
])
def test_contrast_rejects_bad_input(a, b, message):
    with pytest.raises(ValueError, match=message):
        matched_pair_contrast(a, b)


def test_cmh_by_the_textbook_formula_and_scipys_chi_square_tail():
    from fractions import Fraction

    from scipy.stats import chi2

    tables = [(3, 1, 1, 3), (2, 0, 1, 2), (4, 2, 1, 3), (1, 0, 0, 0)]   # the last: n = 1, no information
    # By hand, exactly: per stratum E = (a+b)(a+c)/n, V = (a+b)(c+d)(a+c)(b+d) / (n^2 (n-1)).
    # (3,1,1,3): E = 4·4/8 = 2, V = 256/448. (2,0,1,2): E = 2·3/5 = 6/5, V = 36/100.
    # (4,2,1,3): E = 6·5/10 = 3, V = 6·4·5·5/(100·9) = 600/900. Σa = 9, ΣE = 31/5, |Σa - ΣE| = 14/5 >= 1/2.
    observed, expected = 3 + 2 + 4, Fraction(2) + Fraction(6, 5) + Fraction(3)
    variance = Fraction(256, 448) + Fraction(36, 100) + Fraction(600, 900)
    statistic = (abs(observed - expected) - Fraction(1, 2)) ** 2 / variance   # (23/10)² / 1.59810 = 3.31019
    result = cochran_mantel_haenszel(tables)
    assert result.statistic == pytest.approx(float(statistic), rel=1e-12) == pytest.approx(3.31019, abs=1e-5)
    assert result.p_value == pytest.approx(chi2.sf(float(statistic), 1), rel=1e-12)
    assert (result.strata, result.observed, result.expected) == (3, 9, pytest.approx(6.2))


def test_cmh_corrects_only_a_deviation_of_a_half_or_more_and_skips_uninformative_strata():
    # (1,1,1,1): E = 1, V = 2·2·2·2/(16·3) = 1/3; (1,0,0,1): E = 1/2, V = 1·1·1·1/(4·1) = 1/4.
    # Σa - ΣE = 2 - 3/2 = 1/2: corrected to 0, chi² = 0, p = 1.
    assert cochran_mantel_haenszel([(1, 1, 1, 1), (1, 0, 0, 1)]).statistic == 0.0
    # (1,1,1,1) alone: Σa - ΣE = 0 < 1/2, so no correction (R's mantelhaen.test rule): chi² = 0, not 0.25 / V.
    alone = cochran_mantel_haenszel([(1, 1, 1, 1)])
    assert (alone.statistic, alone.p_value) == (0.0, 1.0)
    # (2,1,0,0): outcome constant outside the group is fine, but here the "outside" row is empty: V = 0.
    assert cochran_mantel_haenszel([(2, 1, 0, 0), (0, 0, 0, 1), (1, 0, 0, 0)]) is None
    assert cochran_mantel_haenszel([]) is None


@pytest.mark.parametrize("tables,message", [
    ([(1, 2, 3)], r"tables\[0\] must be four counts"),
    ([(1, 2, 3, 4), (1, -1, 0, 0)], r"tables\[1\] counts must be >= 0"),
    ([(1, 2, 3, 0.5)], r"tables\[0\]\[3\] must be an integer, got 0.5"),
])
def test_cmh_rejects_bad_tables(tables, message):
    with pytest.raises(ValueError, match=message):
        cochran_mantel_haenszel(tables)


def test_mantel_haenszel_difference_by_sato_s_formula():
    from bspatial.scoring.stats import mantel_haenszel_difference

    # Two strata, by hand. (a, b, c, d) = (4, 1, 2, 3): n1 = 5, n2 = 5, n = 10, w = 2.5, d = 4/5 - 2/5 = 0.4;
    # P = (25·2 - 25·4 + 25·0) / 100 = -0.5, Q = (4·3 + 2·1) / 20 = 0.7.
    # (1, 2, 0, 1): n1 = 3, n2 = 1, n = 4, w = 0.75, d = 1/3; P = (9·0 - 1·1 + 3·(-2)/2) / 16 = -0.25,
    # Q = (1·1 + 0) / 8 = 0.125. A stratum with one group only adds nothing.
    d = mantel_haenszel_difference([(4, 1, 2, 3), (1, 2, 0, 1), (3, 0, 0, 0)])
    estimate = (2.5 * 0.4 + 0.75 / 3) / 3.25
    se = math.sqrt(estimate * (-0.75) + 0.825) / 3.25
    assert d.estimate == pytest.approx(estimate) and d.se == pytest.approx(se) and d.strata == 2
    assert (d.low, d.high) == pytest.approx((estimate - 1.959963984540054 * se, estimate + 1.959963984540054 * se))
    assert mantel_haenszel_difference([(3, 0, 0, 0), (0, 0, 1, 1)]) is None   # no stratum holds both groups
    # One stratum: the estimate is that stratum's difference.
    assert mantel_haenszel_difference([(3, 1, 1, 3)]).estimate == pytest.approx(0.5)


def test_mantel_haenszel_difference_clips_and_checks_its_input():
    from bspatial.scoring.stats import mantel_haenszel_difference

    full = mantel_haenszel_difference([(5, 0, 0, 5)])
    assert full.estimate == 1.0 and full.high == 1.0 and full.low <= 1.0
    with pytest.raises(ValueError, match=r"tables\[0\] must be four counts"):
        mantel_haenszel_difference([(1, 2, 3)])
    with pytest.raises(ValueError, match="confidence must be in"):
        mantel_haenszel_difference([(1, 1, 1, 1)], confidence=1.5)
