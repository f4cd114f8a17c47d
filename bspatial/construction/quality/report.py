"""The data-quality report every build prints, and the gate it holds.

**Lines.** The report has a line per (dataset config, VQA category) and per (config, category, part), a part
being a row's task (task-grounded VQA) or else its subtype, so one task's leak cannot hide behind its
category's balance. Three checks per line, all about whether a model could score without looking at the image:

1. **Answer distribution** (category lines): the share of the most frequent answer value (the correct option's
   text, case- and space-normalised). No value may exceed :data:`MAX_ANSWER_SHARE_PCT` of a category. Part
   lines print their share unchecked (:attr:`QualityLine.answer_ok` says why).
2. **Prior baseline** (the "blind baseline" of :mod:`.debias` and earlier reports): a fixed-feature
   text-only predictor that sees the question and the four options, never
   the image, must stay within :data:`BLIND_MARGIN_POINTS` of chance, on either side. Above, the
   templates leak answers (an option text that is usually right, a letter position, a question word that
   predicts the option); below, they leak them the other way: what text predicts is reliably wrong, and a
   model that inverts it beats chance.
3. **Text probe**: a classifier trained on the items' text (:mod:`~bspatial.construction.quality.probe`:
   word n-grams, question x option word crosses, letter and the same priors; logistic regression or boosted
   trees, chosen on an inner split of the training fold; the same two folds by scene), held to the same two-sided margin. It finds what the
   prior baseline's fixed features cannot name: a word shared by option texts that otherwise differ, a
   conjunction of words.

The prior baseline is a naive-Bayes-style scorer over five feature kinds per option, all within its
category: the option text, the option's letter, (question token, option text) pairs, (option text,
rival option text) pairs, and world-knowledge priors (:mod:`~bspatial.construction.quality.priors`): the
option's rank by typical size or room area among the options for the relation asked, and for above / below
the sign of the typical height difference of the two things named. The last two kinds are what a language
model knows: "bucket" beats "apple" for the longest object, a box of cereal is the largest food item, a
garage the largest room, whatever else is offered.
Each feature's rate of being the correct option is estimated with add-one smoothing on the fitting
items; an option's score is the sum of log-odds of its features; the prediction is the best-scoring
option. The textbook baseline is one fitted on a disjoint build; we cross-fit instead, on
:data:`BLIND_FOLDS` disjoint folds of the same build split by scene (:func:`blind_fold`: questions about one
scene never sit on both sides), which measures the same leakage without a second build. Both predictors are
fitted per dataset config (a user loads and scores one config at a time), so general and task-grounded
questions cannot average each other's leaks away. Builds pick their questions to keep the prior baseline's
features balanced (:mod:`bspatial.construction.quality.debias`); nothing is tuned against the probe.

Small lines cannot show a 40% share or a 10-point excess reliably (two questions always have a
50% top share), so a check **fails only when the 95% Wilson interval lies wholly beyond its
threshold** (for both predictors: wholly above chance + 10 or wholly below chance - 10)
(:func:`bspatial.scoring.stats.wilson_interval`); the report prints the point estimates and intervals either
way. A failing line of at least :data:`GATE_MIN_ITEMS` items, category or part, fails the build
(:meth:`QualityReport.failures`); smaller ones are reported only.

Example:
    >>> rows = [{"id": f"q{i}", "category": "direction", "question": "Where is the cup?", "frames": [f"f{i}"],
    ...          "options": ["left", "right", "above", "below"], "answer": "A"} for i in range(60)]
    >>> from bspatial.construction.quality.probe import probe_predictions
    >>> report = quality_report(rows, probe=probe_predictions)
    >>> report.ok, report.rows[0].top_answer, round(report.rows[0].top_share_pct)
    (False, 'left', 100)
    >>> report.rows[0].blind_pct, report.rows[0].probe_pct   # the answer is always "left", at letter A
    (100.0, 100.0)
    >>> report.failures()
    "all / direction (60 items): top answer 'left' 100.0%, prior baseline 100.0% (above ...), text probe 100.0% (...)"
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
"""The prior baseline and the text probe stay within 10 points of chance on every line, above or below."""
BLIND_FOLDS = 2
"""Cross-fitting folds of the blind baseline and the text probe (split by scene: :func:`blind_fold`)."""
GATE_MIN_ITEMS = 50
"""A failing line (category or part) fails the build only from this many items (leaks fail the build).
Below it the report still says FAIL, but a few items can clear the Wilson test by letter noise alone
(measured: the mini preset's 8 task-grounded size items, answers A in 4 of 8, blind 6 of 8), and `make demo`
builds mini."""
LETTERS = "ABCD"
WORD = re.compile(r"[a-z0-9]+")
"""A word of a question or option (lower-cased text)."""


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
    tokens = set(WORD.findall(str(row["question"]).lower()))
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
    """The data-quality gate failed: a template leaks answers (answer share, prior baseline or text probe), or an
    item validity rule is broken (:class:`bspatial.construction.quality.audit.AuditFailure`); the build writes
    nothing."""


def _near_chance(low_pct: float, high_pct: float, chance_pct: float) -> bool:
    """Two-sided: an interval wholly above chance + margin is a leak, and so is one wholly below chance - margin
    (text picks the wrong option reliably, and a model that inverts it beats chance)."""
    return low_pct <= chance_pct + BLIND_MARGIN_POINTS and high_pct >= chance_pct - BLIND_MARGIN_POINTS


def _side(pct: float, chance_pct: float) -> str:
    return (f"{'below' if pct < chance_pct else 'above'} chance {chance_pct:.1f}% by more than "
            f"{BLIND_MARGIN_POINTS:g} points")


@dataclass(frozen=True)
class QualityLine:
    """One line of the report (percentages): a (config, category), or one task or subtype of it (``part``, ""
    on the category line). ``probe_*`` are None where the probe was not run or could not be fitted (a config
    of fewer than two scenes)."""

    config: str
    category: str
    part: str
    n: int
    top_answer: str
    top_share_pct: float
    top_share_low_pct: float
    chance_pct: float
    blind_pct: float
    blind_low_pct: float
    blind_high_pct: float
    probe_pct: float | None = None
    probe_low_pct: float | None = None
    probe_high_pct: float | None = None

    @property
    def name(self) -> str:
        return " / ".join(x for x in (self.config, self.category, self.part) if x)

    @property
    def answer_ok(self) -> bool:
        """The answer share is checked on category lines only. A part is one task or subtype, whose answer space
        can be two values by definition (a two-side placement task: left or right; a two-layer cabinet), so a
        top share above 40% there is the task, not a leak. Whether text can use it is what the prior baseline
        and the probe measure on the part line itself: two values always offered beside rivals that never win
        score 50% blind, and fail there."""
        return bool(self.part) or self.top_share_low_pct <= MAX_ANSWER_SHARE_PCT

    @property
    def blind_ok(self) -> bool:
        """The prior baseline stays within :data:`BLIND_MARGIN_POINTS` of chance, either side (Wilson interval)."""
        return _near_chance(self.blind_low_pct, self.blind_high_pct, self.chance_pct)

    @property
    def probe_ok(self) -> bool:
        """The text probe's check, like :attr:`blind_ok` (passes where the probe was not run)."""
        return self.probe_pct is None or _near_chance(self.probe_low_pct, self.probe_high_pct, self.chance_pct)

    @property
    def ok(self) -> bool:
        return self.answer_ok and self.blind_ok and self.probe_ok

    def problems(self) -> dict[str, str]:
        """The failing checks ("answer share", "prior baseline", "text probe") with what each found; {} when the
        line passes."""
        out = {}
        if not self.answer_ok:
            out["answer share"] = f"top answer {self.top_answer!r} {self.top_share_pct:.1f}%"
        if not self.blind_ok:
            out["prior baseline"] = f"prior baseline {self.blind_pct:.1f}% ({_side(self.blind_pct, self.chance_pct)})"
        if not self.probe_ok:
            out["text probe"] = f"text probe {self.probe_pct:.1f}% ({_side(self.probe_pct, self.chance_pct)})"
        return out


@dataclass(frozen=True)
class QualityReport:
    """The report's lines: ``rows`` per (config, category), ``parts`` per (config, category, task or subtype).
    A row's part is its ``task`` if it has one (task-grounded VQA), else its ``subtype``; rows with neither make no
    part line, and a part holding every item of its category is that category's line, not a second one. Both kinds
    are checked alike (but the answer share, :attr:`QualityLine.answer_ok`), and both gate the build."""

    rows: tuple[QualityLine, ...]
    parts: tuple[QualityLine, ...] = ()
    probe_models: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(config, the model the probe chose per test fold), for the configs it was fitted on."""

    @property
    def lines(self) -> tuple[QualityLine, ...]:
        """Every line: each category line followed by its parts."""
        return tuple(sorted((*self.rows, *self.parts), key=lambda r: (r.config, r.category, r.part)))

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.lines)

    def to_markdown(self, exempt: Collection[str] = ()) -> str:
        """One table of every line with its checks; a failing line the gate does not count says why."""
        lines = ["| config | category | task or subtype | n | chance % | top answer | top share % (95% low) "
                 "| prior baseline % (95% interval) | probe % (95% interval) | check |",
                 "|---|---|---|---|---|---|---|---|---|---|"]
        for r in self.lines:
            probe = ("not fitted" if r.probe_pct is None
                     else f"{r.probe_pct:.1f} ({r.probe_low_pct:.1f}-{r.probe_high_pct:.1f})")
            problems = r.problems()
            check = ", ".join(problems) + " FAIL" if problems else "pass"
            if problems and r.config in exempt:
                check += " (config exempt: not gated)"
            elif problems and r.n < GATE_MIN_ITEMS:
                check += f" (under {GATE_MIN_ITEMS} items: not gated)"
            lines.append(f"| {r.config} | {r.category} | {r.part or '(all)'} | {r.n} | {r.chance_pct:.1f} "
                         f"| {r.top_answer} | {r.top_share_pct:.1f} ({r.top_share_low_pct:.1f}) "
                         f"| {r.blind_pct:.1f} ({r.blind_low_pct:.1f}-{r.blind_high_pct:.1f}) | {probe} | {check} |")
        return "\n".join(lines)

    @property
    def gate_ok(self) -> bool:
        """Whether the build may publish: no failing line of at least :data:`GATE_MIN_ITEMS` items."""
        return not self.failures()

    def failures(self, exempt: Collection[str] = ()) -> str:
        """The failing lines the gate counts (category or part lines of at least :data:`GATE_MIN_ITEMS` items,
        config not in ``exempt``), "" when none."""
        return "; ".join(f"{r.name} ({r.n} items): " + ", ".join(r.problems().values()) for r in self.lines
                         if not r.ok and r.n >= GATE_MIN_ITEMS and r.config not in exempt)


ProbeFn = Callable[[Sequence[Mapping[str, Any]]], Any]
"""A cross-fitted text predictor of one config's rows, returning an object with ``predictions`` (answer letters in
row order) and ``models``, or None when it cannot be fitted: the build passes
:func:`bspatial.construction.quality.probe.probe_predictions` (which builds on this module's features, so it is
passed in rather than imported here)."""


def _line(config: str, category: str, part: str, rows: Sequence[Mapping[str, Any]], blind: Sequence[str],
          probe: Sequence[str] | None) -> QualityLine:
    """The checks of one line over ``rows`` with the two predictors' letters for them."""
    answers = Counter(answer_text(r) for r in rows)
    top, top_n = max(answers.items(), key=lambda kv: (kv[1], kv[0]))
    n = len(rows)
    share_low, _ = wilson_interval(top_n, n)
    chance = 100.0 * sum(1 / len(r["options"]) for r in rows) / n

    def rate(predicted: Sequence[str]) -> tuple[float, float, float]:
        right = sum(p == r["answer"] for p, r in zip(predicted, rows))
        low, high = wilson_interval(right, n)
        return 100.0 * right / n, 100.0 * low, 100.0 * high

    return QualityLine(config, category, part, n, top, 100.0 * top_n / n, 100.0 * share_low, chance, *rate(blind),
                       *(rate(probe) if probe is not None else (None, None, None)))


def quality_report(rows: Sequence[Mapping[str, Any]], config_of: Callable[[Mapping[str, Any]], str] | None = None,
                   *, probe: ProbeFn | None = None) -> QualityReport:
    """The report over VQA records (``category``, ``question``, ``options``, ``answer`` letter, ``frames``; ``task``
    or ``subtype`` name a line's part).

    ``config_of`` names each record's dataset config: both predictors are fitted per config and the checks run
    per (config, category) and per (config, category, task or subtype), so a leak in one config cannot hide
    behind another's balance, nor one task's behind its category's. Without it all records form one config,
    ``all``. ``probe`` is the trained text probe the build runs beside the prior baseline
    (:func:`~bspatial.construction.quality.probe.probe_predictions`); without it the probe columns are empty and
    only the answer share and the prior baseline are checked (tests of those).
    """
    rows = list(rows)
    for row in rows:
        answer_text(row)   # a bad answer letter names its record before any fitting
    configs = [config_of(r) if config_of else "all" for r in rows]
    blind: list[str] = [""] * len(rows)
    probed: list[str] | None = [""] * len(rows) if probe is not None else None
    models = []
    for config in sorted(set(configs)):
        idx = [i for i, c in enumerate(configs) if c == config]
        for i, p in zip(idx, blind_predictions([rows[i] for i in idx])):
            blind[i] = p
        fit = probe([rows[i] for i in idx]) if probe is not None else None
        if fit is not None:
            models.append((config, tuple(fit.models)))
            for i, p in zip(idx, fit.predictions):
                probed[i] = p
    fitted = {config for config, _ in models}
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        groups[configs[i], row["category"], ""].append(i)
        if row.get("task") or row.get("subtype"):
            groups[configs[i], row["category"], row.get("task") or row.get("subtype")].append(i)
    lines = {key: _line(*key, [rows[i] for i in idx], [blind[i] for i in idx],
                        [probed[i] for i in idx] if key[0] in fitted else None)
             for key, idx in sorted(groups.items())
             if not key[2] or len(idx) < len(groups[key[0], key[1], ""])}
    return QualityReport(tuple(line for key, line in lines.items() if not key[2]),
                         tuple(line for key, line in lines.items() if key[2]), tuple(models))
