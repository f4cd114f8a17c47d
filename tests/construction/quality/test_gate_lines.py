"""The gate's lines: every (config, category) and every task or subtype within one is checked, a failing line of 50
items or more fails the build, a smaller one is reported only, and the episode-aligned config is exempt."""

import numpy as np

from bspatial.construction.quality.probe import probe_predictions
from bspatial.construction.quality.report import GATE_MIN_ITEMS, LETTERS, quality_report

SPACE = ["left", "right", "front", "behind", "above", "below"]


def _category_with_a_leaky_task(leaky: int, clean: int = 550, seed: int = 0) -> list[dict]:
    """``clean`` items of task "clean" (options from SPACE, answer letter uniform, text independent of it) and
    ``leaky`` of task "cabinet", whose options are "layer 1".."layer 4" shuffled and whose answer is always
    "layer 4": one category, "direction"."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(clean):
        rows.append({"id": f"c{i}", "category": "direction", "task": "clean", "frames": [f"c{i}"],
                     "question": "Where is the cup relative to the box?",
                     "options": list(rng.choice(SPACE, 4, replace=False)), "answer": LETTERS[int(rng.integers(4))]})
    for i in range(leaky):
        options = [f"layer {k}" for k in rng.permutation(4) + 1]
        rows.append({"id": f"l{i}", "category": "direction", "task": "cabinet", "frames": [f"l{i}"],
                     "question": "Which layer of the cabinet should the bowl go on?", "options": options,
                     "answer": LETTERS[options.index("layer 4")]})
    return rows


def test_a_leaky_task_of_fifty_items_fails_the_gate_inside_a_passing_category():
    # "layer 4" is the answer whenever offered, so both predictors get the 50 cabinet items right (Wilson low of
    # 50/50 is 92.9%, wholly above 35%). The category line, 600 items, is about (50 + 550 / 4) / 600 = 31% (its
    # Wilson low near 28%, not wholly above 35%), and its top answer "layer 4" has 50 / 600 = 8%: it passes.
    report = quality_report(_category_with_a_leaky_task(GATE_MIN_ITEMS), probe=probe_predictions)
    (category,) = report.rows
    parts = {line.part: line for line in report.parts}
    assert category.n == 600 and category.ok, report.to_markdown()
    assert parts["cabinet"].n == 50 and parts["cabinet"].blind_pct == 100.0 and parts["cabinet"].probe_pct == 100.0
    assert parts["clean"].ok and not parts["cabinet"].ok and not report.gate_ok
    assert report.failures() == ("all / direction / cabinet (50 items): prior baseline 100.0% (above chance 25.0% by "
                                 "more than 10 points), text probe 100.0% (above chance 25.0% by more than 10 points)")
    assert ("| all | direction | cabinet | 50 | 25.0 | layer 4 | 100.0 (92.9) | 100.0 (92.9-100.0) "
            "| 100.0 (92.9-100.0) | prior baseline, text probe FAIL |") in report.to_markdown()


def test_a_leaky_task_under_fifty_items_is_reported_not_gated():
    report = quality_report(_category_with_a_leaky_task(30))
    cabinet = next(line for line in report.parts if line.part == "cabinet")
    assert cabinet.n == 30 and not cabinet.blind_ok   # 30 of 30: Wilson low 88.6%
    assert not report.ok and report.gate_ok and report.failures() == ""
    assert "| prior baseline FAIL (under 50 items: not gated) |" in report.to_markdown()


def test_a_part_share_is_shown_but_not_checked():
    # Within the cabinet task "layer 4" is the answer of every item (100% share, Wilson low 92.9%): a part's answer
    # space can be one task's two sides, so its share is not a check; its predictors are (and they fail it).
    report = quality_report(_category_with_a_leaky_task(GATE_MIN_ITEMS))
    cabinet = next(line for line in report.parts if line.part == "cabinet")
    assert cabinet.top_share_pct == 100.0 and cabinet.answer_ok
    assert "answer share" not in cabinet.problems() and "prior baseline" in cabinet.problems()


def test_the_exempt_config_is_reported_not_gated():
    rows = _category_with_a_leaky_task(GATE_MIN_ITEMS)
    aligned = [dict(r, id=f"a-{r['id']}") for r in _category_with_a_leaky_task(GATE_MIN_ITEMS, seed=1)]
    config_of = lambda row: "episode_aligned" if row["id"].startswith("a-") else "task_manipulation"  # noqa: E731
    report = quality_report(rows + aligned, config_of=config_of)
    failing = [line.name for line in report.lines if not line.ok]
    assert failing == ["episode_aligned / direction / cabinet", "task_manipulation / direction / cabinet"]
    assert report.failures(exempt=("episode_aligned",)).startswith("task_manipulation / direction / cabinet (50 items)")
    assert "episode_aligned" not in report.failures(exempt=("episode_aligned",))
    assert report.failures(exempt=("episode_aligned", "task_manipulation")) == ""
    markdown = report.to_markdown(exempt=("episode_aligned",))
    assert "| episode_aligned | direction | cabinet | 50 |" in markdown
    assert "| prior baseline FAIL (config exempt: not gated) |" in markdown


def test_a_part_that_is_its_whole_category_is_not_a_second_line_and_rows_without_one_make_none():
    rows = _category_with_a_leaky_task(0, clean=60)
    assert [(line.category, line.part) for line in quality_report(rows).lines] == [("direction", "")]
    for row in rows:
        del row["task"]
    assert quality_report(rows).parts == ()
    for i, row in enumerate(rows):
        row["subtype"] = ("object_relative", "robot_arm_relative")[i % 2]   # no task: the subtype is the part
    assert [(line.part, line.n) for line in quality_report(rows).parts] == [("object_relative", 30),
                                                                           ("robot_arm_relative", 30)]


def test_the_vqa_card_carries_every_line_and_says_what_the_probe_is():
    from bspatial.construction.publishing.cards import render_dataset_card

    report = quality_report(_category_with_a_leaky_task(30))
    card = render_dataset_card("vqa", configs=["all"], counts={"all": 580}, preset="p", seed=0, fingerprint="f",
                               version="v", quality_markdown=report.to_markdown())
    assert "| config | category | task or subtype | n | chance % | top answer | top share % (95% low) " \
           "| prior baseline % (95% interval) | probe % (95% interval) | check |" in card
    assert "| all | direction | (all) | 580 |" in card and "| all | direction | cabinet | 30 |" in card
    assert "cross-fitted on the prior baseline's two halves of the scenes" in card and "never chosen on the test half" in card
