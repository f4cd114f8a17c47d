"""Prior-balanced subsampling: pick questions so that text alone cannot tell the answer.

The data-quality report's blind baseline (:mod:`bspatial.construction.quality.report`) scores each option by
how often its text features (option text, letter, question-token/option pairs, option/rival pairs)
were the correct option. In a household, sizes and layouts follow categories: a pillow is longer than a mug, a book stands on
the shelf. Draw questions at random and "pillow" is nearly always the answer when offered, so a
text-only guesser beats chance with world knowledge alone, and the suite would measure priors, not
perception.

:func:`balanced_choice` picks ``n`` of a pool greedily. A feature ``f`` that was offered ``s_f`` times
and correct ``c_f`` times is balanced when ``c_f = s_f / 4`` (a four-option question's chance rate). The
selection keeps the smoothed imbalance ``J = sum_f (c_f - s_f/4)^2 / (s_f + 4)`` low: each step adds the
candidate that raises ``J`` least (the pseudo-count 4 is the blind baseline's add-one smoothing). A
feature that is always right when offered (the pillow against the mug) stops being picked once it leads,
so the picks drift to sets whose answer the image decides: objects of overlapping sizes, distances
that do not follow from where a category usually stands.
Each feature is balanced **within each of the blind baseline's cross-fitting folds**
(:func:`~bspatial.construction.quality.report.blind_fold`), not over the whole pick. Balancing the whole pick
makes the folds mirror images: a feature right more often than 1/4 in one fold is right less often in the
other, so the baseline fitted on one fold and scored on the other lands *below* chance (measured
on the paper preset: multi-frame size 0 of 16, multi-frame distance 16.9%, chance 25%). Keeping a
whole-pick term beside the per-fold one (weights 1, 0.5, 0.25 tried) still did it where the pool is tight:
single-frame size, 46 picked of 134 candidates of a 16-activity plan, scored 15.2 / 13.8 / 15.2% with it and
25.4% without (means of 3 pick seeds). Balanced per fold, the halves' leftover imbalances are independent.
Picks are also spread over the pool's answer values (``balance``): a value is capped at
``ceil(n / min(4, values))`` until no candidate fits, which keeps every value below the report's 40%.

This is the "category-controlled subsampling" of Appendix 11 made explicit about which category
matters: the categories the blind baseline can exploit.

Example: the pillow and the mug each win once, rather than the pillow twice.

    >>> rows = [{"category": "size", "question": "Which is longest?", "answer": "A", "options": [a, b, "pen", "cup"]}
    ...         for a, b in (("pillow", "mug"), ("pillow", "mug"), ("mug", "pillow"), ("mug", "tray"))]
    >>> balanced_choice(rows, 2, [r["options"][0] for r in rows], np.random.default_rng(0))
    [0, 2]
"""

from __future__ import annotations

import math
from typing import Any, Hashable, Mapping, Sequence

import numpy as np

from bspatial.construction.quality.report import LETTERS, blind_fold, option_features

_CHANCE = 0.25
_PSEUDO = 4.0


class PoolFeatures:
    """The blind baseline's feature matrix of one pool of rows, kept for every :func:`balanced_choice` over that
    pool: the navigation build picks from the same pool again after excluding the views that fail (one round per
    batch of failures), and computing the features was 35% of its job."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.rows = rows
        self._order: np.ndarray | None = None
        self._matrix: tuple | None = None

    def matrix(self, order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """:func:`_feature_matrix` of the rows visited in ``order`` (computed again only for another order)."""
        if self._order is None or not np.array_equal(order, self._order):
            self._order, self._matrix = order.copy(), _feature_matrix([self.rows[i] for i in order])
        return self._matrix


def balanced_choice(rows: Sequence[Mapping[str, Any]], n: int, balance: Sequence[Hashable],
                    rng: np.random.Generator, *, same: Sequence[Hashable] | None = None,
                    frames: Sequence[Hashable] | None = None, room: dict | None = None,
                    features: PoolFeatures | None = None) -> list[int]:
    """Indices of up to ``n`` of ``rows`` (quality-record shape) chosen to balance the blind baseline's features.

    Args:
        rows: ``category``, ``question``, ``options``, ``answer`` letter per candidate, and ``frames`` as the
            record will have them (the first frame decides the blind baseline's fold, balanced on its own).
        n: how many to pick.
        balance: each row's answer value, spread as evenly as the pool allows.
        rng: breaks ties (the pool is visited in a seeded order), so the result is reproducible.
        same: rows sharing a value are one question with different distractors: at most one is picked.
        frames, room: each row's source frame and the questions each frame may still give (the per-frame
            cap); ``room`` is updated in place, so several calls can share one cap.
        features: the :class:`PoolFeatures` of ``rows`` when the same pool is picked from again (else computed).

    Returns:
        The chosen indices, sorted; fewer than ``n`` when the pool (or the frames' room) runs out.
    """
    _check_arguments(len(rows), n, balance=balance, same=same, frames=frames, room=room)
    if n == 0 or not rows:
        return []
    order = rng.permutation(len(rows))
    if features is not None and len(features.rows) != len(rows):
        raise ValueError(f"features are of a pool of {len(features.rows)} rows, not of these {len(rows)}")
    ids, is_answer, weight, pad = (features or PoolFeatures(rows)).matrix(order)
    step = np.where(is_answer, 1 - _CHANCE, -_CHANCE)
    d = np.zeros(pad + 1)  # c_f - s_f / 4
    s = np.zeros(pad + 1)  # s_f

    value_id = _codes([balance[i] for i in order])
    same_id = _codes([same[i] for i in order]) if same is not None else np.arange(len(rows))
    frame_keys = [frames[i] for i in order] if frames is not None else [0] * len(rows)
    frame_id = _codes(frame_keys)
    distinct_frames = list(dict.fromkeys(frame_keys))
    left = np.array([room[f] if room is not None else n for f in distinct_frames], dtype=np.int64)
    picked_per_value = np.zeros(value_id.max() + 1, dtype=np.int64)
    cap = math.ceil(n / min(4, len(picked_per_value)))
    free = np.ones(len(rows), dtype=bool)
    chosen: list[int] = []
    while len(chosen) < n:
        free &= left[frame_id] > 0
        if not free.any():
            break
        eligible = free & (picked_per_value[value_id] < cap)
        if not eligible.any():
            cap += 1
            continue
        dg, sg = d[ids], s[ids]
        delta = ((dg + step) ** 2 / (sg + 1 + _PSEUDO) - dg ** 2 / (sg + _PSEUDO)) * weight
        cost = np.where(eligible, delta.sum(axis=1), np.inf)
        r = int(np.argmin(cost))
        free &= same_id != same_id[r]
        picked_per_value[value_id[r]] += 1
        left[frame_id[r]] -= 1
        np.add.at(d, ids[r], step[r] * weight[r])
        np.add.at(s, ids[r], weight[r])
        chosen.append(int(order[r]))
    if room is not None:
        room.update(zip(distinct_frames, left.tolist()))
    return sorted(chosen)


def _check_arguments(n_rows: int, n: int, *, balance, same, frames, room) -> None:
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    for name, values in (("balance", balance), ("same", same), ("frames", frames)):
        if values is not None and len(values) != n_rows:
            raise ValueError(f"{name} must have one value per row ({n_rows}), got {len(values)}")
    if (frames is None) != (room is None):
        raise ValueError("frames and room go together: pass both or neither")


def _feature_matrix(rows: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Each row's blind-baseline features as a padded matrix: feature ids (per fold only, module docstring),
    whether the feature belongs to the answer option, a weight (0 on padding), and the padding id."""
    index: dict[tuple, int] = {}
    feats, answer_role = [], []
    for row in rows:
        right = LETTERS.index(row["answer"])
        ids, roles = [], []
        fold = blind_fold(row)
        for k in range(len(row["options"])):
            for f in option_features(row, k):
                ids.append(index.setdefault((fold, f), len(index)))
                roles.append(k == right)
        feats.append(ids)
        answer_role.append(roles)
    width = max(len(f) for f in feats)
    pad = len(index)  # a dummy feature whose weight is always 0
    ids = np.full((len(rows), width), pad, dtype=np.int64)
    is_answer = np.zeros((len(rows), width), dtype=bool)
    weight = np.zeros((len(rows), width))
    for r, (f, a) in enumerate(zip(feats, answer_role)):
        ids[r, :len(f)], is_answer[r, :len(a)], weight[r, :len(f)] = f, a, 1.0
    return ids, is_answer, weight, pad


def _codes(values: Sequence[Hashable]) -> np.ndarray:
    codes: dict[Hashable, int] = {}
    return np.array([codes.setdefault(v, len(codes)) for v in values], dtype=np.int64)
