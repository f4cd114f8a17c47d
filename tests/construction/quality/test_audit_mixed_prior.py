"""The audit's mixed_category_prior rule (issue 16): on hand-made task size records, a set whose answers the
typical-size ranking of the categories always picks fails the build, a set where it picks one in four passes.
Expected verdicts follow from the typical sizes quoted in the comments (priors.TYPICAL_LENGTH_M)."""

import json

import pytest

from bspatial.construction.quality.audit import AuditFailure, audit, check, item_checks, prior_picks

# Typical longest dimensions (m): box of cereal 0.30 > bag of chips 0.25 > banana 0.19 > lime 0.055.
CATEGORIES = ("lime", "box_of_cereal", "banana", "bag_of_chips")
RELATIONS = ("largest", "second largest", "smallest", "second smallest")
BY_TYPICAL_RANK = {"largest": "box_of_cereal", "second largest": "bag_of_chips", "second smallest": "banana",
                   "smallest": "lime"}


def test_prior_picks_reads_the_rank_from_the_question():
    question = "Measuring from the length of the longest dimension (length, width, or height), which food item {} is the {}?"
    assert prior_picks(CATEGORIES, 1, question.format("on the countertop", "largest")) is True
    assert prior_picks(CATEGORIES, 3, question.format("on the countertop", "second largest")) is True
    assert prior_picks(CATEGORIES, 0, question.format("on the countertop", "smallest")) is True
    assert prior_picks(CATEGORIES, 2, question.format("on the countertop", "second smallest")) is True
    assert prior_picks(CATEGORIES, 2, question.format("on the countertop", "smallest")) is False
    assert prior_picks(CATEGORIES, 0, "Reach the largest food item on the countertop.") is False
    assert prior_picks(("lime", "moon_rock", "banana", "apple"), 0, "the smallest") is None   # no typical size
    assert prior_picks(("lime", "lime", "banana", "apple"), 0, "the smallest") is None        # twins: says nothing


def _row(relation: str, answer_category: str, rid: str, task: str = "reach_item") -> dict:
    options = [f"food item {k}" for k in range(1, 5)]
    names = [f"{c}_{i}" for i, c in enumerate(CATEGORIES)]
    # True sizes make the answer unique by far more than the 10% margin: the answer gets 0.40 m for a
    # "largest" question, 0.05 m for a "smallest" one; the other three sit between.
    descending = "largest" in relation
    k = 1 if relation.startswith("second") else 0
    answer = CATEGORIES.index(answer_category)
    others = [i for i in range(4) if i != answer]
    sizes = dict(zip(others, (0.30, 0.20, 0.10) if descending else (0.12, 0.20, 0.30)))
    if k == 0:
        sizes[answer] = 0.40 if descending else 0.05
    else:   # second: one other beyond the answer
        sizes[answer] = 0.25 if descending else 0.16
        sizes[others[0]] = 0.40 if descending else 0.05
    objects = {n: {"category": c, "center": [1.0, 0.1 * i, 0.9], "extents": [0.05, 0.05, sizes[i]], "pixels": 2000}
               for i, (n, c) in enumerate(zip(names, CATEGORIES))}
    meta = {"option_objects": dict(zip(options, names)), "candidates": names, "objects": objects,
            "marks": [[str(k), [10.0 * k, 10.0]] for k in range(1, 5)]}
    question = ("Measuring from the length of the longest dimension (length, width, or height), which food item on "
                f"the countertop is the {relation}?")
    return {"id": rid, "setting": "task_manipulation", "category": "size", "subtype": "object_relative", "task": task,
            "question": question, "options": options, "answer": "ABCD"[answer], "metadata": json.dumps(meta)}


def test_an_answer_the_typical_sizes_pick_breaks_the_rule_and_others_keep_it():
    hit = _row("second largest", "bag_of_chips", "hit")
    assert item_checks(hit) == {"options_real": True, "one_true": True, "mixed_category_prior": False}
    miss = _row("second largest", "lime", "miss")     # a lime that is the second largest: the prior says no
    assert item_checks(miss)["mixed_category_prior"] is True and item_checks(miss)["one_true"] is True
    assert "mixed_category_prior" not in item_checks(_row("largest", "lime", "toys", task="reach_toys"))


def test_the_build_fails_when_the_prior_predicts_every_answer():
    leaky = [_row(r, BY_TYPICAL_RANK[r], f"leak-{i}") for i in range(15) for r in RELATIONS]   # 60 items, all hits
    report = audit(leaky, config_of=lambda row: "task_manipulation")
    with pytest.raises(AuditFailure, match=r"task_manipulation / mixed_category_prior: 60 of 60 \(100\.0%, limit 35%\)"):
        check(report)
    assert "| task_manipulation | mixed_category_prior | 60 | 60 | 100.0 | FAIL |" in report.to_markdown()
    # The same leak on 48 items (under the 50 a share needs) is reported, not failed.
    check(audit(leaky[:48]))


def test_a_set_where_the_prior_picks_one_answer_in_four_passes():
    # Each relation's answer cycles through the four categories: the typical-size ranking picks it once in four.
    rows = [_row(r, c, f"fair-{i}-{r}-{c}") for i in range(4) for r in RELATIONS for c in CATEGORIES]   # 64 items
    report = audit(rows)
    check(report)
    line = next(r for r in report.results if r.rule == "mixed_category_prior")
    assert (line.applies, line.breaks) == (64, 16)
    # Nine more items the prior picks: 25 of 73 (34.2%) stays within chance plus 10 points; a tenth, 26 of 74
    # (35.1%), is over it.
    extra = [_row("largest", "box_of_cereal", f"extra-{i}") for i in range(10)]
    check(audit(rows + extra[:9]))
    line = next(r for r in audit(rows + extra).results if r.rule == "mixed_category_prior")
    assert (line.applies, line.breaks) == (74, 26)
    with pytest.raises(AuditFailure, match="mixed_category_prior: 26 of 74"):
        check(audit(rows + extra))
