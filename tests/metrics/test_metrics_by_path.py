"""The three evaluate modules loaded by path: their documented contracts and bad-input errors."""

import json
from pathlib import Path

import evaluate
import numpy as np
import pytest

from bspatial.scoring.masks import rle_encode

METRICS = Path(__file__).resolve().parents[2] / "metrics"


@pytest.fixture(scope="module")
def vqa():
    return evaluate.load(str(METRICS / "bspatial_vqa"))


@pytest.fixture(scope="module")
def ir():
    return evaluate.load(str(METRICS / "bspatial_ir"))


@pytest.fixture(scope="module")
def action():
    return evaluate.load(str(METRICS / "bspatial_action"))


def _reach_region(task: str) -> str:
    target = np.zeros((720, 720), bool)
    target[300:400, 100:200] = True
    distractor = np.zeros((720, 720), bool)
    distractor[300:400, 500:600] = True
    return json.dumps(
        {"kind": "reach", "task": task, "image_size": [720, 720], "targets": [rle_encode(target)], "distractors": [rle_encode(distractor)]}
    )


def test_vqa_contract(vqa):
    r = vqa.compute(
        predictions=["A", "**B**", "<think>maybe A</think> Final answer: C", "no"],
        references=["A", "B", "D", "D"],
        tasks=["t1", "t1", "t2", "t2"],
    )
    assert r["accuracy"] == 50.0 and r["unparseable"] == 1
    assert r["task_mean_accuracy"] == 50.0 and r["task/t1"] == 100.0 and r["task/t2"] == 0.0


def test_vqa_add_batch_then_compute(vqa):
    vqa.add_batch(predictions=["A", "B"], references=["A", "A"])
    vqa.add_batch(predictions=["C"], references=["C"])
    assert vqa.compute()["accuracy"] == pytest.approx(200 / 3)


def test_ir_text_and_pixel_predictions(ir):
    region = _reach_region("reach_dice")
    # 0-1000 JSON (200, 500) -> (144, 360) px on the target; (550, 350) px inside the distractor;
    # (215, 350) px: 15 px right of the target's last column, inside the 20.4 px tolerance.
    text = ir.compute(predictions=['{"results": {"target": {"x": 200, "y": 500}}}', "refuse"], references=[region] * 2)
    assert (text["strict_accuracy"], text["correct"], text["none"], text["unparseable"]) == (50.0, 1, 1, 1)
    pixels = ir.compute(predictions=[[550.0, 350.0], [215.0, 350.0]], references=[region] * 2)
    assert pixels["strict_accuracy"] == 0.0 and pixels["tolerant_accuracy"] == 50.0
    assert pixels["wrong"] == 1 and pixels["task_mean_tolerant_accuracy"] == 50.0


def test_ir_task_mean_weights_tasks_equally(ir):
    a, b = _reach_region("task_a"), _reach_region("task_b")
    hit, miss = [150.0, 350.0], [50.0, 50.0]
    r = ir.compute(predictions=[hit, hit, hit, miss], references=[a, a, a, b])
    assert r["strict_accuracy"] == 75.0 and r["task_mean_strict_accuracy"] == 50.0


def test_action_contract(action):
    r = action.compute(
        predictions=["correct", "none", "wrong", "none", "correct"],
        references=["reach_dice"] * 4 + ["move_to_bar"],
        soft_credit=[False, True, False, False, False],
    )
    assert (r["strict"], r["soft"], r["wrong"], r["n"]) == (40.0, 60.0, 20.0, 5)
    assert r["reach_dice/strict"] == 25.0 and r["move_to_bar/strict"] == 100.0
    # Wilson 95% of 2 of 5 by hand (z = 1.959964): centre (2/5 + z²/10) / (1 + z²/5) = 0.4434482,
    # half-width z·sqrt(6/125 + z²/100) / (1 + z²/5) = 0.3258275: [11.762, 76.928].
    assert (r["strict_ci_low"], r["strict_ci_high"]) == (pytest.approx(11.762077, abs=1e-5),
                                                         pytest.approx(76.927572, abs=1e-5))
    # 1 of 1 navigation success: [1 / (1 + z²), 1] = [20.655, 100].
    assert r["move_to_bar/strict_ci_low"] == pytest.approx(20.654931, abs=1e-5) and r["move_to_bar/strict_ci_high"] == 100.0


@pytest.mark.parametrize(
    ("metric", "kwargs", "message"),
    [
        ("vqa", {"predictions": ["A", "B"], "references": ["A", "Z"]}, "references[1] must be one of"),
        ("vqa", {"predictions": ["A"], "references": ["A"], "categories": ["colour"]}, "'colour'"),
        ("ir", {"predictions": ["(1, 2)"], "references": ["{not json"]}, "references[0]"),
        ("ir", {"predictions": ["(1, 2)"], "references": [json.dumps({"kind": "reach", "image_size": [4, 4],
            "targets": [{"size": [3, 3], "counts": [9]}]})]}, "references[0]"),
        ("action", {"predictions": ["maybe"], "references": ["reach_dice"]}, "'maybe'"),
        ("action", {"predictions": ["correct"], "references": ["reach_moon"]}, "'reach_moon'"),
        ("action", {"predictions": ["correct"], "references": ["reach_dice"], "soft_credit": [True]}, "soft_credit"),
    ],
)
def test_bad_input_raises_value_error_naming_field_and_value(request, metric, kwargs, message):
    module = request.getfixturevalue(metric)
    with pytest.raises(ValueError) as err:
        module.compute(**kwargs)
    assert message in str(err.value)


def test_mismatched_lengths_are_a_value_error(vqa, action):
    for module, refs in ((vqa, ["A"]), (action, ["reach_dice"])):
        with pytest.raises(ValueError):
            module.compute(predictions=["A", "B"] if module is vqa else ["none", "none"], references=refs)


@pytest.mark.parametrize("metric", ["vqa", "ir", "action"])
def test_scoring_nothing_is_an_error_naming_predictions(request, metric):
    # An accuracy over no predictions is undefined, not 0.0: a run that lost its outputs must not report a score.
    module = request.getfixturevalue(metric)
    with pytest.raises(ValueError, match="predictions is empty: there is nothing to score"):
        module.compute(predictions=[], references=[])


def test_an_empty_batch_after_real_ones_is_still_scored(ir):
    # Only scoring nothing at all is an error; a loader's empty last batch adds nothing.
    region = _reach_region("reach_dice")
    ir.add_batch(predictions=[[150.0, 350.0]], references=[region])
    ir.add_batch(predictions=[], references=[])
    assert ir.compute()["strict_accuracy"] == 100.0
