"""vqa_accuracy: correctness, breakdowns and the paper's aggregation conventions (Appendix 14)."""

import pytest

from bspatial.scoring.vqa import score_vqa, vqa_accuracy

OPTIONS = ["front", "back", "front-left", "back-right"]


def test_unparseable_counts_as_incorrect_and_is_reported():
    result = vqa_accuracy(["A", "no idea", "A or B", "B"], ["A", "A", "A", "B"])
    assert result["accuracy"] == 50.0
    assert result["unparseable"] == 2
    assert result["unparseable_rate"] == 50.0


def test_option_text_answers_parse_when_options_are_given():
    scores = score_vqa(["front-left", "The answer is back."], ["C", "B"], options=[OPTIONS, OPTIONS])
    assert scores.correct.tolist() == [True, True]


def test_breakdowns_by_setting_category_subtype_and_cells():
    preds = ["A", "B", "A", "A", "B", "B"]
    refs = ["A", "A", "A", "B", "B", "B"]
    settings = ["single_frame"] * 4 + ["multi_frame_rotation"] * 2
    categories = ["direction", "direction", "distance", "size", "direction", "direction"]
    subtypes = ["locate", "object_relative", "camera_relative", "object_relative", "object_relative", "object_relative"]
    r = vqa_accuracy(preds, refs, settings=settings, categories=categories, subtypes=subtypes)
    assert r["setting/single_frame"] == 50.0 and r["n/setting/single_frame"] == 4
    assert r["setting/multi_frame_rotation"] == 100.0
    assert r["category/direction"] == 75.0 and r["n/category/direction"] == 4
    assert r["single_frame/direction"] == 50.0
    assert r["multi_frame_rotation/direction"] == 100.0
    assert r["subtype/locate"] == 100.0 and r["subtype/camera_relative"] == 100.0
    assert r["subtype/object_relative"] == pytest.approx(100 * 2 / 4)


def test_task_mean_is_unweighted_over_tasks_while_accuracy_is_pooled():
    # task a: 9/10 correct, task b: 0/2 correct -> pooled 75.0, task mean (90 + 0) / 2 = 45.0
    preds = ["A"] * 9 + ["B"] + ["B", "B"]
    refs = ["A"] * 10 + ["A", "A"]
    tasks = ["a"] * 10 + ["b"] * 2
    r = vqa_accuracy(preds, refs, tasks=tasks)
    assert r["accuracy"] == 75.0
    assert r["task_mean_accuracy"] == 45.0
    assert r["task/a"] == 90.0 and r["task/b"] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"predictions": ["A", "B"], "references": ["A"]}, "predictions has 2 entries but references has 1"),
        ({"predictions": ["A"], "references": ["E"]}, "references[0] must be one of ['A', 'B', 'C', 'D'], got 'E'"),
        ({"predictions": ["A"], "references": ["A"], "categories": ["colour"]}, "categories[0] must be one of"),
        ({"predictions": ["A"], "references": ["A"], "settings": ["single"]}, "settings[0] must be one of"),
        ({"predictions": ["A"], "references": ["A"], "tasks": []}, "tasks has 0 entries but predictions has 1"),
        ({"predictions": [], "references": []}, "predictions is empty: there is nothing to score"),
        ({"predictions": [], "references": [], "tasks": []}, "predictions is empty: there is nothing to score"),
    ],
)
def test_bad_input_names_the_field_and_value(kwargs, message):
    with pytest.raises(ValueError) as err:
        vqa_accuracy(**kwargs)
    assert message in str(err.value)


def test_groups_without_questions_are_absent_not_zero():
    r = vqa_accuracy(["A", "B"], ["A", "A"], settings=["single_frame"] * 2, categories=["direction", "size"])
    assert r["category/direction"] == 100.0 and r["category/size"] == 0.0
    assert "category/distance" not in r and "n/category/distance" not in r
    assert "setting/multi_frame_rotation" not in r and "single_frame/distance" not in r
