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
