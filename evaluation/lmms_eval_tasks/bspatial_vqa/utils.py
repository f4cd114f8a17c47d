"""lmms-eval hooks of the ``bspatial_vqa_*`` tasks: bspatial's own prompt, answer parser and aggregation.

Nothing here re-implements a rule, so lmms-eval, ``bspatial eval-vlm`` and ``evaluate.load("bspatial_vqa")``
agree by construction on the same replies:

* the prompt is :func:`bspatial.evaluation.vlm.prompts.build_vqa_prompt` (paper Appendix 15.1), the frames
  go before it in the user turn, as stored, oldest first (what the harness sends);
* each reply is marked by :func:`bspatial.scoring.vqa.score_vqa` (the ``bspatial.scoring.choice`` parser:
  never a guessed letter; an unparseable reply is incorrect);
* every reported number is computed over the task's rows by
  :func:`bspatial.evaluation.vlm.summary.summarize_vqa`, the function behind ``bspatial eval-vlm``'s
  ``summary.json``: ``accuracy`` and ``task_mean_accuracy`` are the ``bspatial_vqa`` metric's keys, and
  ``direction`` / ``distance`` / ``size`` are the Table 1 / Table 2 cells of the config (pooled over
  questions, except task-grounded manipulation: the unweighted mean of per-task accuracies, Appendix 14).
  Percentages, as in the paper.

lmms-eval loads this file by path (``!function utils.<name>`` in ``_default_template_yaml`` and the task
files) in its own environment, where bspatial is installed with ``--no-deps`` (README, "Any policy, any
harness"): the modules imported here need only numpy and pandas, which lmms-eval's environment has.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from bspatial.evaluation.lmms_eval_tasks import LMMS_EVAL_FAILURE_MARKERS  # lmms-eval's failed-request replies
from bspatial.evaluation.vlm.prompts import build_vqa_prompt
from bspatial.evaluation.vlm.summary import summarize_vqa
from bspatial.scoring.vqa import score_vqa

logger = logging.getLogger(__name__)

# The metrics of each setting's task file (metric_list; tests pin the two equal). process_results returns
# exactly these: lmms-eval lists a returned metric that the task file does not aggregate as an empty value.
_GENERAL_METRICS = ("accuracy", "direction", "distance", "size", "unparseable_rate")
METRICS_BY_SETTING: dict[str, tuple[str, ...]] = {
    "single_frame": _GENERAL_METRICS,
    "multi_frame_rotation": _GENERAL_METRICS,
    "multi_frame_navigation": _GENERAL_METRICS,
    "task_manipulation": ("task_mean_accuracy", "direction", "distance", "size", "accuracy", "unparseable_rate"),
    "task_navigation": ("accuracy", "task_mean_accuracy", "unparseable_rate"),
}


def bspatial_vqa_doc_to_visual(doc: Mapping[str, Any]) -> list:
    """The item's frames (PIL images) in dataset order, as stored: the harness sends the stored bytes too."""
    return list(doc["frames"])


def bspatial_vqa_doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, str] | None = None) -> str:
    """The Appendix 15.1 prompt of the item.

    Our task files set no ``lmms_eval_specific_kwargs``, so the prompt is exactly the paper's; a derived
    task file that sets ``pre_prompt`` / ``post_prompt`` gets them around it, as in any lmms-eval task.
    """
    kwargs = lmms_eval_specific_kwargs or {}
    prompt = build_vqa_prompt(doc["setting"], doc["category"], doc["subtype"], doc["question"], list(doc["options"]))
    return f"{kwargs.get('pre_prompt', '')}{prompt}{kwargs.get('post_prompt', '')}"


def bspatial_vqa_process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Parse and mark one reply; each metric of the item's setting receives the same row (the fields of
    ``bspatial eval-vlm``'s samples.jsonl that re-score it), which lmms-eval's ``--log_samples`` keeps.

    Raises:
        ValueError: the reply is lmms-eval's placeholder for a failed request, not a model answer, or the
            item's setting is not a VQA setting.
    """
    if doc["setting"] not in METRICS_BY_SETTING:
        raise ValueError(f"item {doc['id']}: setting must be one of {list(METRICS_BY_SETTING)}, got {doc['setting']!r}")
    reply = results[0]
    if not isinstance(reply, str):
        raise ValueError(f"item {doc['id']}: the model's reply must be a string, got {type(reply).__name__}")
    if reply.startswith(LMMS_EVAL_FAILURE_MARKERS):
        raise ValueError(f"item {doc['id']}: lmms-eval got no reply from the model ({reply[:200]!r}); "
                         "refusing to score a failed request as an answer")
    scores = score_vqa([reply], [doc["answer"]], [list(doc["options"])])
    parse = scores.parses[0]
    row = {
        "id": doc["id"],
        "setting": doc["setting"],
        "category": doc["category"],
        "subtype": doc["subtype"],
        "task": doc["task"],
        "answer": doc["answer"],
        "options": list(doc["options"]),
        "raw_output": reply,
        "parsed": parse.letter,
        "parse_status": parse.status.value,
        "parse_reason": parse.reason,
        "correct": bool(scores.correct[0]),
    }
    return {metric: row for metric in METRICS_BY_SETTING[doc["setting"]]}


def bspatial_vqa_accuracy(rows: Sequence[Mapping[str, Any]]) -> float:
    """Accuracy pooled over questions (Table 1 "All"; task-grounded navigation's reported number)."""
    return _metric(rows, "accuracy")


def bspatial_vqa_task_mean_accuracy(rows: Sequence[Mapping[str, Any]]) -> float:
    """Unweighted mean of per-task accuracies (Table 2 "Task VQA All", Appendix 14)."""
    return _metric(rows, "task_mean_accuracy")


def bspatial_vqa_unparseable_rate(rows: Sequence[Mapping[str, Any]]) -> float:
    """Percent of replies from which no offered letter could be read (scored incorrect)."""
    return _metric(rows, "unparseable_rate")


def bspatial_vqa_direction(rows: Sequence[Mapping[str, Any]]) -> float:
    """The config's Direction cell (Table 1 single-frame Direction includes locate)."""
    return _cell(rows, "direction")


def bspatial_vqa_distance(rows: Sequence[Mapping[str, Any]]) -> float:
    """The config's Distance cell."""
    return _cell(rows, "distance")


def bspatial_vqa_size(rows: Sequence[Mapping[str, Any]]) -> float:
    """The config's Size cell."""
    return _cell(rows, "size")


def _metric(rows: Sequence[Mapping[str, Any]], key: str) -> float:
    value = summarize_vqa(rows)["metrics"].get(key)
    return _present(value, key, rows)


def _cell(rows: Sequence[Mapping[str, Any]], category: str) -> float:
    families = sorted({"multi_frame" if r["setting"].startswith("multi_frame") else r["setting"] for r in rows})
    if len(families) > 1:
        # summary.json has one cell per family; a config mixing them has no single paper cell to report.
        raise ValueError(f"a bspatial_vqa task must hold one setting family, got {families}")
    cell = summarize_vqa(rows)["cells"].get(f"{families[0]}/{category}") if families else None
    return _present(None if cell is None else cell["accuracy"], category, rows)


def _present(value: float | int | None, key: str, rows: Sequence[Mapping[str, Any]]) -> float:
    # A group without questions is absent from bspatial's results, never 0.0; lmms-eval needs a number.
    if value is None:
        logger.warning("bspatial_vqa: no %s in %d scored items; reporting NaN", key, len(rows))
        return math.nan
    return float(value)
