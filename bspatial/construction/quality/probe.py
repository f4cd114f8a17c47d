"""The trained text-only probe of the data-quality gate: a classifier fitted on the test items' own text.

The prior baseline (:class:`~bspatial.construction.quality.report.BlindBaseline`) counts how often fixed
features were right. The probe is what a peer now runs against a benchmark (a text-only model *fitted on the
test items*, k-fold; VSI-Bench-Debiased's stress test): it learns weights and interactions. For each
(question, option) pair it builds binary hashed features:

- word 1- and 2-grams of the question (``q:``) and of the option text (``o:``),
- every (question word, option word) cross (``x:``),
- the option's letter, alone and within its category (``letter:``),
- the prior baseline's world-knowledge features (:func:`~bspatial.construction.quality.report.prior_features`,
  one-hot: typical-size / room-area rank, sign of the typical height difference),

and fits a binary "is this option the answer" classifier; an item's prediction is its best-scoring option
(the first on a tie). Two models compete: a logistic regression on all hashed features, and gradient-boosted
trees (:class:`~sklearn.ensemble.HistGradientBoostingClassifier`) on the :data:`TREE_FEATURES` most frequent of
them (dense), which can find conjunctions the linear model cannot (a question word that flips which option
word wins).

Cross-fitting: the prior baseline's two folds by scene (:func:`~bspatial.construction.quality.report.blind_fold`), so
no scene sits on both sides. They are the folds the build balances its picks in
(:mod:`~bspatial.construction.quality.debias`): on any finer split the balanced halves leave each training part with
the mirror image of its test part's leftover imbalance, and the probe lands below chance for that reason alone
(measured on the paper preset with 5 scene folds: general single-frame object-relative direction 9.3% [5.6, 15.1],
0.1 point from failing low; 22.7% on these two folds; the verdicts of 77-item task lines changed with the split's
salt). For test fold ``k`` both models are fitted on one half of the training fold (scenes split by a second hash,
:data:`INNER_SALT`) and scored on the other half; the better (the linear one on a tie) is refitted on the whole
training fold and predicts fold ``k``. The choice never sees the test fold: choosing on it would report the better
of two test scores, biased upward.

The probe runs per dataset config, like the prior baseline; the build passes :func:`probe_predictions` to
:func:`~bspatial.construction.quality.report.quality_report`, where its per-line scores and the gate's check live.
Everything is deterministic (fixed folds, ``random_state``, one thread). On the paper preset's 3,256 VQA items
it took 10.9 s (2026-12-07, 2 cores with another job on them; about 20 s while other jobs kept both busy).

Example: the answer is always the option "red", at shuffled positions, so the option text gives it away.

    >>> rows = [{"id": f"q{i}", "category": "colour", "question": "Which one?", "frames": [f"f{i}"],
    ...          "options": (o := ["red", "blue", "green", "grey"][i % 4:] + ["red", "blue", "green", "grey"][:i % 4]),
    ...          "answer": "ABCD"[o.index("red")]} for i in range(40)]
    >>> fit = probe_predictions(rows)
    >>> sum(p == r["answer"] for p, r in zip(fit.predictions, rows)), len(fit.models)
    (40, 2)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from bspatial.common.seeds import derive_seed
from bspatial.construction.quality.report import LETTERS, WORD, blind_fold, prior_features, scene_of

INNER_SALT = "probe-inner"
"""Salt of the scene hash that halves a training fold for the model choice."""
HASH_FEATURES = 2 ** 18
"""Hashed feature space of the linear model (collisions are rare at a few thousand items)."""
TREE_FEATURES = 256
"""The trees see this many of the fitting part's most frequent hashed features, as a dense matrix: histogram
trees on 2^18 sparse columns would cost minutes; the rare columns are what the linear model is for."""
TREE_ITERATIONS = 50
TREE_LEAVES = 15
"""Boosting rounds and leaves per tree: small, since the features are binary and a config has a few thousand
(question, option) samples; about 0.4 s per fit of the navigation config on one core."""
RANDOM_STATE = 0
MODELS = ("logistic", "trees")
"""In preference order: a tie on the inner split keeps the simpler model."""


def option_terms(row: Mapping[str, Any], index: int) -> list[str]:
    """The probe's features of option ``index`` of ``row``, as strings for the hasher.

    Example:
        >>> row = {"category": "size", "question": "Which is larger?", "options": ["red cup", "bowl"]}
        >>> option_terms(row, 0)[:6]
        ['q:which', 'q:is', 'q:larger', 'q:which is', 'q:is larger', 'o:red']
    """
    question = WORD.findall(str(row["question"]).lower())
    option = WORD.findall(str(row["options"][index]).lower())

    def grams(prefix: str, words: list[str]) -> list[str]:
        return [f"{prefix}:{w}" for w in words] + [f"{prefix}:{a} {b}" for a, b in zip(words, words[1:])]

    crosses = [f"x:{q}|{o}" for q in dict.fromkeys(question) for o in dict.fromkeys(option)]
    letter = LETTERS[index]
    priors = ["prior:" + "|".join(map(str, feature)) for feature in prior_features(row, index)]
    return [*grams("q", question), *grams("o", option), *crosses, f"letter:{letter}",
            f"letter:{row['category']}:{letter}", *priors]


def design(rows: Sequence[Mapping[str, Any]]):
    """(X, y, owner): one binary hashed sample per (row, option), whether it is the answer, and its row."""
    from sklearn.feature_extraction import FeatureHasher

    terms, y, owner = [], [], []
    for r, row in enumerate(rows):
        right = LETTERS.index(row["answer"])
        for i in range(len(row["options"])):
            terms.append(option_terms(row, i))
            y.append(i == right)
            owner.append(r)
    X = FeatureHasher(n_features=HASH_FEATURES, input_type="string", alternate_sign=False).transform(terms).tocsr()
    X.data = np.minimum(X.data, 1.0)   # presence, not counts ("the" twice in a question is one feature)
    return X, np.asarray(y, dtype=int), np.asarray(owner)


class _Model:
    """One of :data:`MODELS` on the hashed columns the fitting samples use (all of them for the linear model, the
    :data:`TREE_FEATURES` most frequent for the trees). Dropping unused columns is what keeps it fast: liblinear
    over all 2^18 columns took 2.1 s per fit on the navigation config, over its 168 used columns 0.02 s."""

    def __init__(self, name: str) -> None:
        self.name = name

    def fit(self, X, y) -> "_Model":
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression

        frequency = np.asarray(X.sum(axis=0)).ravel()
        used = np.flatnonzero(frequency)
        if self.name == "trees":
            used = np.sort(used[np.argsort(-frequency[used], kind="stable")[:TREE_FEATURES]])
            model = HistGradientBoostingClassifier(max_iter=TREE_ITERATIONS, max_leaf_nodes=TREE_LEAVES,
                                                   early_stopping=False, random_state=RANDOM_STATE)
        else:
            model = LogisticRegression(C=1.0, solver="liblinear", max_iter=1000, random_state=RANDOM_STATE)
        self.columns = used
        with _one_thread():
            self.model = model.fit(self._input(X), y)
        return self

    def _input(self, X):
        X = X[:, self.columns]
        return X.toarray() if self.name == "trees" else X

    def decision_function(self, X) -> np.ndarray:
        with _one_thread():
            return self.model.decision_function(self._input(X))


def _one_thread():
    """The trees' OpenMP threads spin while they wait: on the build's shared 2 cores one fit of the navigation
    config took 12.8 s with the default threads and 1.5 s with one (measured while a build ran)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="openmp")


def _fit(name: str, X, y) -> _Model:
    return _Model(name).fit(X, y)


def _choices(model, X, owner: np.ndarray, items: np.ndarray) -> np.ndarray:
    """The best-scoring option (the first on a tie) of each row in ``items`` (sorted row indices)."""
    samples = np.flatnonzero(np.isin(owner, items))
    scores = model.decision_function(X[samples])
    starts = np.flatnonzero(np.r_[True, np.diff(owner[samples]) != 0])
    return np.asarray([int(np.argmax(s)) for s in np.split(scores, starts[1:])])


@dataclass(frozen=True)
class ProbeFit:
    """Cross-fitted probe predictions (answer letters, in row order) and the model chosen per test fold (one of
    :data:`MODELS`; the build logs them)."""

    predictions: tuple[str, ...]
    models: tuple[str, ...]


def probe_predictions(rows: Sequence[Mapping[str, Any]]) -> ProbeFit | None:
    """Cross-fitted probe predictions of ``rows`` (one config; see the module docstring), or None when the rows
    fill only one of the two scene folds (nothing can be held out)."""
    fold = np.asarray([blind_fold(r) for r in rows])
    if len(set(fold.tolist())) < 2:
        return None
    inner = np.asarray([derive_seed(scene_of(r), INNER_SALT) % 2 for r in rows])
    X, y, owner = design(rows)
    answers = np.asarray([LETTERS.index(r["answer"]) for r in rows])
    predictions, chosen = [""] * len(rows), []
    for f in sorted(set(fold.tolist())):
        name = _choose(X, y, owner, answers, (fold != f) & (inner == 0), (fold != f) & (inner == 1))
        train = np.flatnonzero(fold[owner] != f)
        test = np.flatnonzero(fold == f)
        for r, c in zip(test, _choices(_fit(name, X[train], y[train]), X, owner, test)):
            predictions[r] = LETTERS[c]
        chosen.append(name)
    return ProbeFit(tuple(predictions), tuple(chosen))


def _choose(X, y, owner: np.ndarray, answers: np.ndarray, fitting_rows: np.ndarray, held_rows: np.ndarray) -> str:
    """The model that scores higher on the ``held_rows`` half of a training fold when fitted on its
    ``fitting_rows`` half (boolean masks over rows); the linear model when either half is empty."""
    held = np.flatnonzero(held_rows)
    if not held.size or not fitting_rows.any():
        return MODELS[0]
    fitting = np.flatnonzero(fitting_rows[owner])
    scores = [np.mean(_choices(_fit(name, X[fitting], y[fitting]), X, owner, held) == answers[held])
              for name in MODELS]
    return MODELS[int(np.argmax(scores))]
