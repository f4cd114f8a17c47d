"""VQA scoring: parse four-option answers, mark them, and aggregate as the paper does (Appendix 14).

Aggregation conventions (paper, "VQA Aggregation"):

- general VQA (single-frame, multi-frame rotation / navigation) is pooled over questions;
- task-grounded manipulation VQA is the unweighted mean of per-task accuracies
  (``task_mean_accuracy``);
- task-grounded navigation VQA is reported per task and pooled over questions.

An unparseable answer is incorrect and is counted in ``unparseable``: never a guessed letter.
Accuracies are percentages, as in the paper's tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bspatial.scoring.aggregate import group_accuracy, task_mean
from bspatial.scoring.choice import LETTERS, ChoiceParse, ParseStatus, parse_choices
from bspatial.scoring.validation import check_not_empty, check_same_length, check_vocabulary

# The item-level vocabularies of the VQA records (paper Table S1 / Appendix 11).
SETTINGS = ("single_frame", "multi_frame_rotation", "multi_frame_navigation", "task_manipulation", "task_navigation")
CATEGORIES = ("direction", "distance", "size")
MULTI_FRAME_SETTINGS = ("multi_frame_rotation", "multi_frame_navigation")
"""Table 1's multi-frame columns pool these two settings over questions."""
# Direction: object-relative / robot-arm-relative, locate, ordinal, and robot_relative (task-grounded
# navigation: where the destination lies in the robot's frame); distance: object-object
# (object_relative), to the camera (camera_relative), to the arm (robot_arm_relative).
SUBTYPES = ("object_relative", "robot_arm_relative", "camera_relative", "locate", "ordinal", "robot_relative")


@dataclass(frozen=True)
class VQAScores:
    """Per-item results of :func:`score_vqa`."""

    correct: np.ndarray  # bool [N]
    parsed: np.ndarray  # bool [N]; False = unparseable (scored incorrect)
    parses: list[ChoiceParse]


def score_vqa(
    predictions: Sequence[str | None],
    references: Sequence[str],
    options: Sequence[Sequence[str] | None] | None = None,
) -> VQAScores:
    """Parse raw model outputs and mark them against the answer letters.

    Args:
        predictions: raw model text, one per question.
        references: the answer letter of each question, one of A-D.
        options: the four option texts of each question (lets answers given as option text parse).

    Example:
        >>> s = score_vqa(["C. front", "I cannot tell", "b"], ["C", "A", "B"])
        >>> s.correct.tolist(), s.parsed.tolist()
        ([True, False, True], [True, False, True])
    """
    check_same_length(predictions=predictions, references=references)
    if options is not None:
        check_same_length(predictions=predictions, options=options)
    refs = np.asarray([_check_letter(i, r) for i, r in enumerate(references)], dtype=object)
    parses = parse_choices(list(predictions), None if options is None else list(options))
    letters = np.asarray([p.letter for p in parses], dtype=object)
    parsed = np.fromiter((p.status is ParseStatus.PARSED for p in parses), dtype=bool, count=len(parses))
    return VQAScores(correct=parsed & (letters == refs), parsed=parsed, parses=parses)


def _check_letter(index: int, letter: str) -> str:
    if letter not in LETTERS:
        raise ValueError(f"references[{index}] must be one of {list(LETTERS)}, got {letter!r}")
    return letter


def vqa_accuracy(
    predictions: Sequence[str | None],
    references: Sequence[str],
    options: Sequence[Sequence[str] | None] | None = None,
    settings: Sequence[str] | None = None,
    categories: Sequence[str] | None = None,
    subtypes: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
) -> dict[str, float | int]:
    """Score and aggregate VQA answers into a flat dict (the ``bspatial_vqa`` metric's result).

    Keys: ``accuracy`` (pooled, percent), ``n``, ``unparseable`` (count), ``unparseable_rate``;
    ``setting/<s>``, ``category/<c>``, ``subtype/<t>``, ``task/<name>`` accuracies with
    ``n/<same key>`` counts; ``<setting>/<category>`` cells (Table 1's Dir/Dist/Size columns per
    setting) when both are given; ``task_mean_accuracy`` (unweighted mean over tasks, Appendix 14)
    when tasks are given. Groups without questions are absent, never 0.0.

    Raises:
        ValueError: ``predictions`` is empty (there is nothing to score), lengths differ, or a
            reference or label is outside its vocabulary.

    Example:
        >>> r = vqa_accuracy(["A", "B", "B", "x"], ["A", "A", "B", "C"], tasks=["t1", "t1", "t2", "t2"])
        >>> r["accuracy"], r["task_mean_accuracy"], r["unparseable"]
        (50.0, 50.0, 1)
    """
    check_same_length(predictions=predictions, references=references)
    check_not_empty("predictions", predictions)
    scores = score_vqa(predictions, references, options)
    n = len(scores.correct)
    result: dict[str, float | int] = {
        "accuracy": 100.0 * float(scores.correct.mean()),
        "n": n,
        "unparseable": int(n - scores.parsed.sum()),
        "unparseable_rate": 100.0 * float(1 - scores.parsed.mean()),
    }
    groups = {
        "setting": _checked(settings, "settings", SETTINGS, n),
        "category": _checked(categories, "categories", CATEGORIES, n),
        "subtype": _checked(subtypes, "subtypes", SUBTYPES, n),
        "task": _checked(tasks, "tasks", None, n),
    }
    for field, labels in groups.items():
        if labels is not None:
            _add_groups(result, scores.correct, labels, lambda name, f=field: f"{f}/{name}")
    if groups["setting"] is not None and groups["category"] is not None:
        cells = [f"{s}/{c}" for s, c in zip(groups["setting"], groups["category"])]
        _add_groups(result, scores.correct, cells, lambda name: name)
    if groups["task"] is not None:
        result["task_mean_accuracy"] = task_mean(scores.correct, groups["task"])[0]
    return result


def _checked(values: Sequence[str] | None, field: str, vocabulary: Sequence[str] | None, n: int) -> list[str] | None:
    if values is None:
        return None
    values = list(values)
    if len(values) != n:
        raise ValueError(f"{field} has {len(values)} entries but predictions has {n}")
    if vocabulary is not None:
        check_vocabulary(field, values, vocabulary)
    else:
        for i, v in enumerate(values):
            if not isinstance(v, str) or not v:
                raise ValueError(f"{field}[{i}] must be a non-empty string, got {v!r}")
    return values


def _add_groups(result: dict, correct: np.ndarray, labels: Sequence[str], key) -> None:
    for name, (acc, count) in group_accuracy(correct, labels).items():
        result[key(name)] = acc
        result[f"n/{key(name)}"] = count


def table1_family(setting: str) -> str:
    """The Table 1 / 2 column family of an item's ``setting``: the two multi-frame settings pool into
    ``multi_frame``; every other setting is its own.

    Example:
        >>> table1_family("multi_frame_navigation"), table1_family("single_frame")
        ('multi_frame', 'single_frame')
    """
    return "multi_frame" if setting in MULTI_FRAME_SETTINGS else setting


def pooled_accuracy(parts: Sequence[tuple[float, int]]) -> float:
    """The accuracy pooled over questions of parts given as ``(accuracy, n)``: each weighs by its questions.

    Example:
        >>> pooled_accuracy([(50.0, 2), (100.0, 6)])
        87.5
    """
    total = sum(n for _, n in parts)
    if total == 0:
        raise ValueError("pooled_accuracy: the parts hold no questions")
    return sum(accuracy * n for accuracy, n in parts) / total
