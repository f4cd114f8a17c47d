"""lmms-eval hooks of the ``bspatial_ir_*`` tasks: bspatial's own prompt, point parser, IR scoring and aggregation.

Nothing here re-implements a rule, so lmms-eval, ``bspatial eval-vlm`` and ``evaluate.load("bspatial_ir")``
agree by construction on the same replies:

* the prompt is :func:`bspatial.evaluation.vlm.prompts.build_ir_prompt` (paper Appendix 15.2), its target
  kind (object / placement) the harness's (:func:`bspatial.evaluation.vlm.records.ir_target_kind`), the head
  frame before it in the user turn;
* each reply is read by :func:`bspatial.scoring.ir_accuracy.prediction_points` (the ``bspatial.scoring.point``
  parser on the 0-1000 scale, scaled to the region's image; nothing guessed: an unreadable reply is ``none``)
  and labelled by :func:`bspatial.scoring.ir.score_ir`, the path of the ``bspatial_ir`` metric;
* every reported number is computed over the task's rows by
  :func:`bspatial.evaluation.vlm.summary.summarize_ir`, the function behind ``bspatial eval-vlm``'s
  ``summary.json``. The keys are the ``bspatial_ir`` metric's: ``strict_accuracy`` / ``tolerant_accuracy``
  (percent, pooled over queries), ``task_mean_strict_accuracy`` / ``task_mean_tolerant_accuracy`` (the
  unweighted mean over tasks: Table 2's IR column, ``bspatial_ir_all`` only) and the counts ``correct`` /
  ``wrong`` / ``none`` (strict labels) and ``unparseable``.

lmms-eval loads this file by path (``!function utils.<name>`` in ``_default_template_yaml`` and the task files)
in its own environment, where bspatial is installed with ``--no-deps``: the modules imported here need only
numpy and pandas, which lmms-eval's environment has.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from bspatial.evaluation.lmms_eval_tasks import LMMS_EVAL_FAILURE_MARKERS
from bspatial.evaluation.vlm.prompts import build_ir_prompt
from bspatial.evaluation.vlm.records import ir_target_kind
from bspatial.evaluation.vlm.summary import summarize_ir
from bspatial.scoring.ir import score_ir
from bspatial.scoring.ir_accuracy import prediction_points
from bspatial.scoring.ir_regions import Region, region_from_dict
from bspatial.scoring.point import parse_point

logger = logging.getLogger(__name__)

# The metrics of the task files (metric_list; tests pin them equal). process_results returns exactly these:
# lmms-eval lists a returned metric that the task file does not aggregate as an empty value.
TASK_METRICS = ("strict_accuracy", "tolerant_accuracy", "correct", "wrong", "none", "unparseable")
ALL_METRICS = ("task_mean_strict_accuracy", "task_mean_tolerant_accuracy", *TASK_METRICS)


def bspatial_ir_doc_to_visual(doc: Mapping[str, Any]) -> list:
    """The query's head-camera frame (a PIL image), the one image the harness sends."""
    return [doc["image"]]


def bspatial_ir_doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, str] | None = None) -> str:
    """The Appendix 15.2 prompt of the query (object target for reach, placement target otherwise).

    Our task files set no ``lmms_eval_specific_kwargs``, so the prompt is exactly the paper's; a derived
    task file that sets ``pre_prompt`` / ``post_prompt`` gets them around it, as in any lmms-eval task.
    """
    kwargs = lmms_eval_specific_kwargs or {}
    prompt = build_ir_prompt(doc["instruction"], ir_target_kind(_region(doc)))
    return f"{kwargs.get('pre_prompt', '')}{prompt}{kwargs.get('post_prompt', '')}"


def bspatial_ir_process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Score one reply for a per-task ``bspatial_ir_<task>`` task (the metrics of :data:`TASK_METRICS`)."""
    return _score(doc, results, TASK_METRICS)


def bspatial_ir_all_process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Score one reply for ``bspatial_ir_all`` (the metrics of :data:`ALL_METRICS`, task means included)."""
    return _score(doc, results, ALL_METRICS)


def bspatial_ir_strict_accuracy(rows: Sequence[Mapping[str, Any]]) -> float:
    """Percent of queries correct, pooled over queries."""
    return _metric(rows, "strict_accuracy")


def bspatial_ir_tolerant_accuracy(rows: Sequence[Mapping[str, Any]]) -> float:
    """Percent of queries correct with the reach tolerance (2% of the image diagonal), pooled."""
    return _metric(rows, "tolerant_accuracy")


def bspatial_ir_task_mean_strict_accuracy(rows: Sequence[Mapping[str, Any]]) -> float:
    """Unweighted mean over tasks of strict accuracy (Table 2 IR, Appendix 14)."""
    return _metric(rows, "task_mean_strict_accuracy")


def bspatial_ir_task_mean_tolerant_accuracy(rows: Sequence[Mapping[str, Any]]) -> float:
    """Unweighted mean over tasks of tolerant accuracy."""
    return _metric(rows, "task_mean_tolerant_accuracy")


def bspatial_ir_correct(rows: Sequence[Mapping[str, Any]]) -> float:
    """Queries labelled ``correct`` (strict)."""
    return _metric(rows, "correct")


def bspatial_ir_wrong(rows: Sequence[Mapping[str, Any]]) -> float:
    """Queries labelled ``wrong``: the point is on another object or on the wrong side / compartment."""
    return _metric(rows, "wrong")


def bspatial_ir_none(rows: Sequence[Mapping[str, Any]]) -> float:
    """Queries labelled ``none``: background, off the surface, outside the image, or no point read."""
    return _metric(rows, "none")


def bspatial_ir_unparseable(rows: Sequence[Mapping[str, Any]]) -> float:
    """Replies from which no point in the 0-1000 frame could be read (labelled ``none``)."""
    return _metric(rows, "unparseable")


def _region(doc: Mapping[str, Any]) -> Region:
    try:
        return region_from_dict(doc["region"])
    except ValueError as error:
        raise ValueError(f"item {doc['id']}: region is not a valid region spec: {error}") from None


def _score(doc: Mapping[str, Any], results: Sequence[str], metrics: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Parse and label one reply; each metric receives the same row (the fields of ``bspatial eval-vlm``'s
    samples.jsonl that summarize_ir reads, and what lmms-eval's ``--log_samples`` keeps).

    Raises:
        ValueError: the reply is lmms-eval's placeholder for a failed request, not a model answer; the
            region spec is malformed or its image size is not the image's.
    """
    reply = results[0]
    if not isinstance(reply, str):
        raise ValueError(f"item {doc['id']}: the model's reply must be a string, got {type(reply).__name__}")
    if reply.startswith(LMMS_EVAL_FAILURE_MARKERS):
        raise ValueError(f"item {doc['id']}: lmms-eval got no reply from the model ({reply[:200]!r}); "
                         "refusing to score a failed request as an answer")
    region = _region(doc)
    image = doc.get("image")
    if image is not None and tuple(image.size) != tuple(region.image_size):
        # The harness refuses such a row too (records.ir_item): the point would be scaled to the wrong image.
        raise ValueError(f"item {doc['id']}: region.image_size {list(region.image_size)} must equal the image "
                         f"size {list(image.size)}")
    points, _ = prediction_points([reply], [region])
    scores = score_ir(points, [region])
    parse = parse_point(reply)  # for the log only; prediction_points read the same parse
    point = [float(points[0, 0]), float(points[0, 1])] if math.isfinite(points[0, 0]) else None
    row = {
        "id": doc["id"],
        "task": doc["task"],
        "variant": doc.get("variant"),
        "target": ir_target_kind(region),
        "raw_output": reply,
        "parsed": list(parse.xy) if parse.xy is not None else None,
        "point_px": point,
        "parse_status": parse.status.value,
        "parse_reason": parse.reason,
        "strict": bool(scores.strict[0]),
        "tolerant": bool(scores.tolerant[0]),
        "label": str(scores.label[0]),
        "detail": str(scores.detail[0]),
    }
    return {metric: row for metric in metrics}


def _metric(rows: Sequence[Mapping[str, Any]], key: str) -> float:
    value = summarize_ir(list(rows))["metrics"].get(key)
    if value is None:
        # No scored queries: absent from bspatial's results, never 0.0; lmms-eval needs a number.
        logger.warning("bspatial_ir: no %s in %d scored items; reporting NaN", key, len(rows))
        return math.nan
    return float(value)
