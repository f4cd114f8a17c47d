"""The rho the analysis uses (bspatial.scoring.stats.spearman) handles ties with average ranks, as the
paper's Table 3 says ("Spearman's rank correlation with average ranks for ties", Sec. 5.3.3).

Per-task accuracies over a few questions tie often (3 questions give only 0 / 33.3 / 66.7 / 100), so
the tie rule changes the answer. Reference values are worked by hand below, and checked against scipy
when it is installed (it is not a dependency of the package).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bspatial.evaluation.analysis.bootstrap import rho_or_none
from bspatial.scoring.stats import spearman

# Worked example, ties on both sides:
#   x = [1, 2, 2, 4, 5]  -> average ranks [1, 2.5, 2.5, 4, 5]
#   y = [3, 3, 1, 4, 2]  -> average ranks [3.5, 3.5, 1, 5, 2]
#   deviations from the mean rank 3: dx = [-2, -0.5, -0.5, 1, 2], dy = [0.5, 0.5, -2, 2, -1]
#   sum dx*dy = -1 - 0.25 + 1 + 2 - 2 = -0.25; sum dx^2 = sum dy^2 = 9.5
#   rho = -0.25 / 9.5 = -1/38
TIED_X, TIED_Y, TIED_RHO = [1, 2, 2, 4, 5], [3, 3, 1, 4, 2], -1 / 38
# The no-ties shortcut 1 - 6 sum d^2 / (n (n^2 - 1)) on the same ranks: d = [-2.5, -1, 1.5, -1, 3],
# sum d^2 = 19.5, 1 - 117/120 = 0.025; ranking ties in order of appearance ([1, 2, 3, 4, 5] and
# [3, 4, 1, 5, 2]) gives 1 - 6*12/120 = 0.4. Either would be a wrong tie rule.
SHORTCUT_RHO, ORDINAL_RHO = 0.025, 0.4


def test_average_ranks_on_a_worked_example():
    assert spearman(TIED_X, TIED_Y) == pytest.approx(TIED_RHO, abs=1e-15)
    assert not math.isclose(TIED_RHO, SHORTCUT_RHO) and not math.isclose(TIED_RHO, ORDINAL_RHO)


def test_rank_based_so_any_monotone_rescaling_leaves_rho():
    # Accuracies in percent or as fractions, or squared: the same ranks, the same rho.
    assert spearman([100 * v for v in TIED_X], [v**2 for v in TIED_Y]) == pytest.approx(TIED_RHO, abs=1e-15)


def test_constant_side_has_no_rho():
    assert rho_or_none([50.0, 50.0, 50.0], [1.0, 2.0, 3.0]) is None
    assert rho_or_none([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]) is None
    assert rho_or_none(TIED_X, TIED_Y) == pytest.approx(TIED_RHO)


def test_against_scipy_with_ties():
    from scipy import stats   # a hard dependency (setup.cfg): a missing scipy is a failure, not a skip
    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(50):
        x = rng.integers(0, 4, size=14).tolist()  # 3-question accuracies: many ties
        y = rng.integers(0, 6, size=14).tolist()
        if len(set(x)) > 1 and len(set(y)) > 1:
            assert spearman(x, y) == pytest.approx(float(stats.spearmanr(x, y).statistic), abs=1e-12)
            compared += 1
    # A constant side of 14 draws has probability 4 · 4^-14 (x) or 6 · 6^-14 (y), about 1.5e-8: every draw
    # is compared, and the guard only keeps spearman's documented ValueError for a constant side out of the way.
    assert compared == 50
