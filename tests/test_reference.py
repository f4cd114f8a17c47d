"""The packaged paper tables and the realisation of printed rates as episodes."""

import pytest

from bspatial.reference import TABLE_NAMES, load_table, realise_outcomes


def test_every_table_loads_with_rows():
    for name in TABLE_NAMES:
        assert load_table(name), name


def test_unknown_table_lists_known_ones():
    with pytest.raises(ValueError, match="tableS5_baseline_per_task"):
        load_table("table9")


def test_realised_counts_reproduce_each_printed_rate():
    for row in load_table("tableS5_baseline_per_task"):
        n = int(row["n"])
        outcomes, credit = realise_outcomes(n, float(row["strict"]), float(row["soft"]), float(row["wrong"]))
        assert len(outcomes) == len(credit) == n
        strict = 100 * outcomes.count("correct") / n
        soft = 100 * (outcomes.count("correct") + sum(credit)) / n
        wrong = 100 * outcomes.count("wrong") / n
        assert (round(strict, 1), round(soft, 1), round(wrong, 1)) == (
            float(row["strict"]), float(row["soft"]), float(row["wrong"])
        ), row["task"]


def test_unrealisable_rates_are_rejected():
    with pytest.raises(ValueError, match="not realisable"):
        realise_outcomes(10, strict=50.0, soft=40.0, wrong=0.0)


def test_table_s6_matches_table_s2_counts_and_its_pooled_row():
    """Table S6 transcribed per task: n as Table S2's held-out counts; each writer's pooled rate equals the
    episode-weighted mean of its (whole-percent) per-task rates within the rounding of those rates."""
    from bspatial.catalog.tasks import canonical_task_name

    n_heldout = {r["task"]: int(r["n_heldout"]) for r in load_table("tableS2_tasks")}
    rows = load_table("tableS6_code_as_policy_per_task")
    per_task = [r for r in rows if r["task"] != "POOLED"]
    assert {r["task"] for r in per_task} == {t for t, n in n_heldout.items() if n and not t.startswith("move_to")}
    for r in per_task:
        assert canonical_task_name(r["task"]) == r["task"]
        assert int(r["n"]) == n_heldout[r["task"]], r
    pooled = {r["writer"]: r for r in rows if r["task"] == "POOLED"}
    assert sorted(pooled) == sorted({r["writer"] for r in per_task}) and len(pooled) == 5
    for writer, total in pooled.items():
        mine = [r for r in per_task if r["writer"] == writer]
        assert sum(int(r["n"]) for r in mine) == int(total["n"]) == 469
        for rate in ("soft", "strict"):
            weighted = sum(float(r[rate]) * int(r["n"]) for r in mine) / 469
            assert abs(weighted - float(total[rate])) <= 0.5, (writer, rate, weighted, total[rate])
