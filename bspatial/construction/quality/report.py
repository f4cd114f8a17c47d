"""The data-quality report every build prints.

Two checks per (dataset config, VQA category), both about whether a model could score without looking at the image:

1. **Answer distribution**: the share of the most frequent answer value (the correct option's text,
   case- and space-normalised). No value may exceed :data:`MAX_ANSWER_SHARE_PCT` of a category.
2. **Blind baseline**: a text-only predictor that sees the question and the four options, never the
   image, must stay within :data:`BLIND_MARGIN_POINTS` of chance, on either side. Above, the
   templates leak answers (an option text that is usually right, a letter position, a question word that
   predicts the option); below, they leak them the other way: what text predicts is reliably wrong, and a
   model that inverts it beats chance.

The blind predictor is a naive-Bayes-style scorer over five feature kinds per option, all within its
category: the option text, the option's letter, (question token, option text) pairs, (option text,
rival option text) pairs, and world-knowledge priors (:mod:`~bspatial.construction.quality.priors`): the
option's rank by typical size or room area among the options for the relation asked, and for above / below
the sign of the typical height difference of the two things named. The last two kinds are what a language
model knows: "bucket" beats "apple" for the longest object, a box of cereal is the largest food item, a
garage the largest room, whatever else is offered.
Each feature's rate of being the correct option is estimated with add-one smoothing on the fitting
items; an option's score is the sum of log-odds of its features; the prediction is the best-scoring
option. The textbook baseline is one fitted on a disjoint build; we cross-fit instead, on
:data:`BLIND_FOLDS` disjoint folds of the same build split by source frame (questions about one frame
never sit on both sides), which measures the same leakage without a second build. It is fitted per
dataset config (a user loads and scores one config at a time), so general and task-grounded
questions cannot average each other's leaks away. Builds pick their questions to keep these features
balanced (:mod:`bspatial.construction.quality.debias`).

Small categories cannot show a 40% share or a 10-point excess reliably (two questions always have a
50% top share), so a check **fails only when the 95% Wilson interval lies wholly beyond its
threshold** (for the blind baseline: wholly above chance + 10 or wholly below chance - 10) (:func:`bspatial.scoring.stats.wilson_interval`); the report prints the point estimates
and intervals either way.

Example:
    >>> rows = [{"id": f"q{i}", "category": "direction", "question": "Where is the cup?", "frames": [f"f{i}"],
    ...          "options": ["left", "right", "above", "below"], "answer": "A"} for i in range(60)]
    >>> report = quality_report(rows)
    >>> report.ok, report.rows[0].top_answer, round(report.rows[0].top_share_pct)
    (False, 'left', 100)
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterable, Mapping, Sequence

from bspatial.common.seeds import derive_seed
from bspatial.scoring.stats import wilson_interval

logger = logging.getLogger(__name__)

MAX_ANSWER_SHARE_PCT = 40.0
"""No answer value may exceed 40% of a category."""
BLIND_MARGIN_POINTS = 10.0
"""The blind baseline stays within 10 points of chance per config and
category, above or below."""
BLIND_FOLDS = 2
"""Cross-fitting folds of the blind baseline (split by source frame)."""
GATE_MIN_ITEMS = 50
"""A failing (config, category) fails the build only from this many items (leaks fail the build).
Below it the report still says FAIL, but a few items can clear the Wilson test by letter noise alone
(measured: the mini preset's 8 task-grounded size items, answers A in 4 of 8, blind 6 of 8), and `make demo`
builds mini."""
LETTERS = "ABCD"
_TOKEN = re.compile(r"[a-z0-9]+")


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split())


def answer_text(row: Mapping[str, Any]) -> str:
    """The correct option's text (case- and space-normalised); a bad answer letter names the record."""
    answer = row["answer"]
    if answer not in LETTERS[:len(row["options"])]:
        raise ValueError(f"record {row.get('id')!r}: answer must be one of {list(LETTERS[:len(row['options'])])}, "
                         f"got {answer!r}")
    return _norm(row["options"][LETTERS.index(answer)])


def option_features(row: Mapping[str, Any], index: int) -> list[tuple]:
    """The blind baseline's features of option ``index`` of ``row`` (also balanced by :mod:`.debias`)."""
    category, option = row["category"], _norm(row["options"][index])
    tokens = set(_TOKEN.findall(str(row["question"]).lower()))
    rivals = sorted({_norm(o) for o in row["options"]} - {option})
    return [("option", category, option), ("letter", category, LETTERS[index]),
            *(("pair", category, token, option) for token in sorted(tokens)),
            *(("versus", category, option, rival) for rival in rivals), *prior_features(row, index)]


_SIZE_RELATION = re.compile(r"\b((?:second |third )?(?:largest|smallest|longest))\b")
_SUBJECTS = re.compile(r"where is the (.+?) (?:located )?relative to the (.+?)\?")
HEIGHT_DEADBAND_M = 0.1
"""Typical heights closer than this say nothing about above / below."""


def prior_features(row: Mapping[str, Any], index: int) -> list[tuple]:
    """World-knowledge features of option ``index`` (:mod:`.priors`): its rank by typical
    size among the options (with the relation the question asks), its rank by typical room area, and for
    above / below the sign of the typical height difference of the two things the question names."""
    from bspatial.construction.quality import priors

    category, question = row["category"], str(row["question"]).lower()
    options = [str(o) for o in row["options"]]
    out: list[tuple] = []
    if category == "size":
        relations = _SIZE_RELATION.findall(question)
        relation = relations[-1] if relations else ""   # the last: "the longest dimension" comes first
        area = "area" in question
        rank = priors.ranks(options, priors.TYPICAL_ROOM_AREA_M2 if area else priors.TYPICAL_LENGTH_M, True)
        if rank is not None:
            out.append(("prior_area" if area else "prior_size", category, relation, rank[index]))
    elif category == "direction" and _norm(options[index]) in ("above", "below"):
        match = _SUBJECTS.search(question)
        heights = priors.TYPICAL_HEIGHT_M
        if match and priors.noun(match.group(1)) in heights and priors.noun(match.group(2)) in heights:
            diff = heights[priors.noun(match.group(1))].value - heights[priors.noun(match.group(2))].value
            sign = 0 if abs(diff) < HEIGHT_DEADBAND_M else (1 if diff > 0 else -1)
            out.append(("prior_height", category, _norm(options[index]), sign))
    return out


class BlindBaseline:
    """Text-only answer predictor (see the module docstring); ``fit`` then ``predict``."""

    def __init__(self) -> None:
        self.correct: Counter = Counter()
        self.seen: Counter = Counter()

    def fit(self, rows: Iterable[Mapping[str, Any]]) -> "BlindBaseline":
        for row in rows:
            right = LETTERS.index(row["answer"])
            for i in range(len(row["options"])):
                for feature in option_features(row, i):
                    self.seen[feature] += 1
                    self.correct[feature] += i == right
        return self

    def _score(self, row: Mapping[str, Any], index: int) -> float:
        score = 0.0
        for feature in option_features(row, index):
            # Add-one smoothing towards 1/4 (the prior of a four-option item): unseen features score 0.
            p = (self.correct[feature] + 0.25 * 4) / (self.seen[feature] + 4)
            score += math.log(p / (1 - p)) - math.log(0.25 / 0.75)
        return score

    def predict(self, row: Mapping[str, Any]) -> str:
        scores = [self._score(row, i) for i in range(len(row["options"]))]
        return LETTERS[max(range(len(scores)), key=lambda i: (scores[i], -i))]


def scene_of(row: Mapping[str, Any]) -> str:
    """The scene a row's question is about: its ``scene`` (a field of the candidate rows, or of the record's
    metadata), else its first frame, else its id (a frame is its own scene: each task episode has one)."""
    if row.get("scene"):
        return str(row["scene"])
    metadata = row.get("metadata")
    if isinstance(metadata, str) and '"scene"' in metadata:
        metadata = json.loads(metadata)
    if isinstance(metadata, Mapping) and metadata.get("scene"):
        return str(metadata["scene"])
    frames = row.get("frames") or [row.get("id", "")]
    return str(frames[0])


def blind_fold(row: Mapping[str, Any]) -> int:
    """The blind baseline's cross-fitting fold of ``row``: from its scene (:func:`scene_of`), so questions about
    one scene never sit on both sides. General VQA sees each activity layout from 6 views, 4 size views and 3
    tours: cross-fitted by frame, the baseline learned a layout's answers from its other views, which no reader
    of one item can (measured on the paper preset: general single-frame "closest to the camera" 69.2% blind by
    frame, 21.5% for all single-frame distance by scene). :mod:`.debias` balances each fold on its own."""
    return derive_seed(scene_of(row)) % BLIND_FOLDS


def blind_predictions(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Cross-fitted blind predictions: each row is predicted by a baseline fitted on the other folds."""
    folds = [blind_fold(r) for r in rows]
    models = {k: BlindBaseline().fit(r for r, f in zip(rows, folds) if f != k) for k in set(folds)}
    return [models[f].predict(r) for r, f in zip(rows, folds)]


class QualityFailure(RuntimeError):
    """The data-quality gate failed: a template leaks answers (answer share or blind baseline), or an item
    validity rule is broken (:class:`bspatial.construction.quality.audit.AuditFailure`); the build writes nothing."""


@dataclass(frozen=True)
class CategoryQuality:
    """One (config, category) line of the report (percentages)."""

    config: str
    category: str
    n: int
    top_answer: str
    top_share_pct: float
    top_share_low_pct: float
    chance_pct: float
    blind_pct: float
    blind_low_pct: float
    blind_high_pct: float

    @property
    def answer_ok(self) -> bool:
        return self.top_share_low_pct <= MAX_ANSWER_SHARE_PCT

    @property
    def blind_ok(self) -> bool:
        """Two-sided: a score reliably far below chance is a leak too (text picks the wrong option)."""
        return (self.blind_low_pct <= self.chance_pct + BLIND_MARGIN_POINTS
                and self.blind_high_pct >= self.chance_pct - BLIND_MARGIN_POINTS)


@dataclass(frozen=True)
class QualityReport:
    rows: tuple[CategoryQuality, ...]
    parts: tuple[tuple[str, str, str, int, float], ...] = ()
    """(config, category, task or subtype, n, blind %): where within a category the baseline scores
    (informational: the checks are per category, and parts are too small to judge on their own)."""

    @property
    def ok(self) -> bool:
        return all(r.answer_ok and r.blind_ok for r in self.rows)

    def to_markdown(self) -> str:
        lines = ["| config | category | n | top answer | top share % (95% low) | blind % (95% interval) | chance % "
                 "| checks |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in self.rows:
            checks = "pass" if r.answer_ok and r.blind_ok else ", ".join(
                what for what, ok in (("answer share", r.answer_ok), ("blind baseline", r.blind_ok)) if not ok) + " FAIL"
            lines.append(f"| {r.config} | {r.category} | {r.n} | {r.top_answer} | {r.top_share_pct:.1f} "
                         f"({r.top_share_low_pct:.1f}) | {r.blind_pct:.1f} ({r.blind_low_pct:.1f}-{r.blind_high_pct:.1f}) "
                         f"| {r.chance_pct:.1f} "
                         f"| {checks} |")
        return "\n".join(lines)

    @property
    def gate_ok(self) -> bool:
        """Whether the build may publish: no failing line of at least :data:`GATE_MIN_ITEMS` items."""
        return not self.failures()

    def failures(self, exempt: Collection[str] = ()) -> str:
        """The failing lines the gate counts (at least :data:`GATE_MIN_ITEMS` items, config not in ``exempt``), ""
        when none."""
        return "; ".join(f"{r.config} / {r.category} ({r.n} items): " + ", ".join(
            what for what, ok in ((f"top answer {r.top_answer!r} {r.top_share_pct:.1f}%", r.answer_ok),
                                  (f"blind baseline {r.blind_pct:.1f}% "
                                   f"({'below' if r.blind_pct < r.chance_pct else 'above'} chance {r.chance_pct:.1f}% "
                                   f"by more than {BLIND_MARGIN_POINTS:g} points)", r.blind_ok))
            if not ok) for r in self.rows
            if not (r.answer_ok and r.blind_ok) and r.n >= GATE_MIN_ITEMS and r.config not in exempt)

    def parts_markdown(self) -> str:
        lines = ["| config | category | task or subtype | n | blind % |", "|---|---|---|---|---|"]
        lines += [f"| {c} | {cat} | {part} | {n} | {pct:.1f} |" for c, cat, part, n, pct in self.parts]
        return "\n".join(lines)


def quality_report(rows: Sequence[Mapping[str, Any]], config_of: Callable[[Mapping[str, Any]], str] | None = None
                   ) -> QualityReport:
    """The report over VQA records (``category``, ``question``, ``options``, ``answer`` letter, ``frames``).

    ``config_of`` names each record's dataset config: the blind baseline is fitted per config and the
    checks run per (config, category), so a leak in one config cannot hide behind another's balance.
    Without it all records form one config, ``all``.
    """
    rows = list(rows)
    configs = [config_of(r) if config_of else "all" for r in rows]
    predictions: list[str] = [""] * len(rows)
    for config in set(configs):
        idx = [i for i, c in enumerate(configs) if c == config]
        for i, p in zip(idx, blind_predictions([rows[i] for i in idx])):
            predictions[i] = p
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        groups[configs[i], row["category"]].append(i)
    lines = []
    for (config, category) in sorted(groups):
        idx = groups[config, category]
        answers = Counter(answer_text(rows[i]) for i in idx)
        top, top_n = max(answers.items(), key=lambda kv: (kv[1], kv[0]))
        right = sum(predictions[i] == rows[i]["answer"] for i in idx)
        share_low, _ = wilson_interval(top_n, len(idx))
        blind_low, blind_high = wilson_interval(right, len(idx))
        chance = 100.0 * sum(1 / len(rows[i]["options"]) for i in idx) / len(idx)
        lines.append(CategoryQuality(config, category, len(idx), top, 100.0 * top_n / len(idx), 100.0 * share_low,
                                     chance, 100.0 * right / len(idx), 100.0 * blind_low, 100.0 * blind_high))
    parts: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
    for i, row in enumerate(rows):
        part = row.get("task") or row.get("subtype") or ""
        parts[configs[i], row["category"], part].append(predictions[i] == row["answer"])
    return QualityReport(tuple(lines), tuple((*key, len(v), 100.0 * sum(v) / len(v)) for key, v in sorted(parts.items())))
