"""The data-quality report: leaky and balanced synthetic suites, and the records of a real build."""

import json

import numpy as np
import pytest

from bspatial.construction.quality.report import LETTERS, BlindBaseline, blind_predictions, quality_report

SPACE = ["left", "right", "front", "behind", "above", "below"]


def _balanced(n: int, seed: int = 0) -> list[dict]:
    """Answers uniform over a 6-value space, options shuffled, question text independent of the answer."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        options = list(rng.choice(SPACE, 4, replace=False))
        rows.append({"id": f"b{i}", "category": "direction", "frames": [f"frame{i}"],
                     "question": f"Where is the {rng.choice(['cup', 'bowl', 'plate'])} relative to the box?",
                     "options": options, "answer": LETTERS[int(rng.integers(4))]})
    return rows


def test_balanced_suite_passes_and_is_near_chance():
    report = quality_report(_balanced(400))
    (row,) = report.rows
    assert report.ok, report.to_markdown()
    assert row.n == 400 and row.chance_pct == 25.0
    assert abs(row.blind_pct - 25.0) < 8.0
    assert row.top_share_pct < 30.0


def test_answer_position_leak_is_caught():
    rows = _balanced(200)
    for r in rows:
        r["answer"] = "B"          # the template always puts the answer second
    row = quality_report(rows).rows[0]
    assert row.blind_pct > 75.0 and not row.blind_ok


def test_question_word_leak_is_caught_by_the_pair_features():
    # "closest" questions always answer 'left', "farthest" ones 'right', at shuffled positions: only the
    # (question word, option text) pairs reveal the answer.
    rng = np.random.default_rng(1)
    rows = []
    for i in range(300):
        word = ["closest", "farthest"][i % 2]
        answer_text = "left" if word == "closest" else "right"
        options = [answer_text] + list(rng.choice([s for s in SPACE if s not in ("left", "right")], 3, replace=False))
        order = rng.permutation(4)
        options = [options[j] for j in order]
        rows.append({"id": f"q{i}", "category": "distance", "frames": [f"f{i}"], "question": f"Which side is {word}?",
                     "options": options, "answer": LETTERS[options.index(answer_text)]})
    preds = blind_predictions(rows)
    accuracy = np.mean([p == r["answer"] for p, r in zip(preds, rows)])
    assert accuracy > 0.9
    row = quality_report(rows).rows[0]
    assert not row.blind_ok and not row.answer_ok  # 50% 'left' is also above the 40% share


def test_small_categories_are_not_failed_on_noise():
    rows = _balanced(2)
    for r in rows:
        r["answer"] = "A"
        r["options"][0] = "top"
    row = quality_report(rows).rows[0]
    assert row.top_share_pct == 100.0 and row.answer_ok   # 2 of 2: the Wilson interval still reaches 40%
    rows = _balanced(20)
    for r in rows:
        r["answer"] = "A"
        r["options"][0] = "top"
    assert not quality_report(rows).rows[0].answer_ok     # 20 of 20: it does not


def test_bad_answer_letter_names_the_record():
    rows = _balanced(4)
    rows[2]["answer"] = "E"
    with pytest.raises(ValueError, match="record 'b2': answer must be one of .*got 'E'"):
        quality_report(rows)


def test_baseline_unseen_features_fall_back_to_the_first_option_only_on_exact_ties():
    model = BlindBaseline().fit([])
    assert model.predict({"category": "size", "question": "q", "options": ["a", "b", "c", "d"]}) == "A"


def test_parts_show_which_task_leaks():
    rows = _balanced(400)
    for i, r in enumerate(rows):
        r["task"] = "leaky" if i % 4 == 0 else "clean"
        if r["task"] == "leaky":
            r["answer"] = "B"          # one task's template always puts the answer second
    report = quality_report(rows)
    parts = {line.part: line for line in report.parts}
    assert parts["leaky"].n == 100 and parts["clean"].n == 300
    assert parts["leaky"].blind_pct > parts["clean"].blind_pct + 10
    assert "| all | direction | leaky | 100 | 25.0 |" in report.to_markdown()


def test_the_gate_counts_failing_categories_of_fifty_items_or_more():
    from bspatial.construction.quality.report import GATE_MIN_ITEMS

    def rows(n):   # the answer is always option A: the blind baseline learns the letter
        return [{"id": f"q{i}", "category": "direction", "question": "Where is it?", "frames": [f"f{i}"],
                 "options": ["left", "right", "above", "below"][i % 4:] + ["left", "right", "above", "below"][:i % 4],
                 "answer": "A"} for i in range(n)]
    small = quality_report(rows(8))
    assert not small.ok and small.gate_ok and small.failures() == ""
    big = quality_report(rows(GATE_MIN_ITEMS))
    assert not big.gate_ok and "all / direction (50 items): prior baseline 100.0%" in big.failures()


def test_the_gate_fails_a_blind_baseline_far_below_chance():
    # Mirror-image folds (what balancing a whole pick exactly produces): the answer is option A in every item
    # of one cross-fitting fold and never in the other. Fitted on either fold, the baseline is wrong on every
    # item of the other: 0% where chance is 25%. Text that is reliably wrong is a leak too.
    from bspatial.construction.quality.report import BLIND_FOLDS, blind_fold

    rng = np.random.default_rng(4)
    rows = []
    for i in range(120):
        frames = [f"frame{i}"]
        options = list(rng.choice(SPACE, 4, replace=False))
        answer = 0 if blind_fold({"frames": frames}) == 0 else int(rng.integers(1, 4))
        rows.append({"id": f"q{i}", "category": "direction", "question": "Where is it?", "frames": frames,
                     "options": options, "answer": LETTERS[answer]})
    assert BLIND_FOLDS == 2 and 40 <= sum(r["answer"] == "A" for r in rows) <= 80   # both folds are well filled
    report = quality_report(rows)
    (row,) = report.rows
    assert row.blind_pct == 0.0 and row.chance_pct == 25.0
    assert row.answer_ok and not row.blind_ok and not report.gate_ok
    assert ("all / direction (120 items): prior baseline 0.0% (below chance 25.0% by more than 10 points)"
            in report.failures())


def test_a_blind_baseline_near_chance_passes_on_both_sides():
    row = quality_report(_balanced(400, seed=3)).rows[0]
    assert row.blind_ok and row.blind_low_pct <= 25.0 <= row.blind_high_pct + 10.0


def test_views_of_one_scene_sit_in_one_fold():
    # Each scene is seen from 6 views, and in every view the same object (a different one per scene) is the
    # answer. A reader of one item cannot know which; a baseline cross-fitted by frame learns it from the
    # scene's other views. Grouped by scene (the record's metadata), it stays at chance.
    from bspatial.construction.quality.report import blind_fold

    rng = np.random.default_rng(7)
    nouns = [f"thing{k}" for k in range(200)]   # few pairs of nouns recur across scenes
    rows = []
    for s in range(80):
        four = list(rng.choice(nouns, 4, replace=False))
        for v in range(6):
            options = list(rng.permutation(four))
            rows.append({"id": f"s{s}-v{v}", "category": "distance", "question": "Which is closest to the camera?",
                         "frames": [f"images/{int(rng.integers(1 << 30)):08x}.png"], "options": options,
                         "answer": LETTERS[options.index(four[0])],
                         "metadata": json.dumps({"scene": f"scene{s}"})})
    assert len({blind_fold(r) for r in rows if r["id"].startswith("s3-")}) == 1
    grouped = np.mean([p == r["answer"] for p, r in zip(blind_predictions(rows), rows)])
    by_frame = [dict(r, metadata="{}") for r in rows]
    ungrouped = np.mean([p == r["answer"] for p, r in zip(blind_predictions(by_frame), by_frame)])
    assert grouped < 0.35 < 0.6 < ungrouped, (grouped, ungrouped)
