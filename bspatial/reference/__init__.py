"""The paper's published tables (percent, as printed), shipped as reference rows and test fixtures.

The CSVs in tables/ are copied verbatim from the paper's tables; reports print them beside our own
rows, and tests reproduce the paper's aggregations from them.
"""

from __future__ import annotations

import csv
from importlib import resources

from bspatial.common.registry import unknown_name

TABLE_NAMES = (
    "table1_vlm_vqa",
    "table2_task_vqa_ir",
    "table3_spearman",
    "table4_policies",
    "table5_code_as_policy",
    "tableS11_navigation",
    "tableS2_tasks",
    "tableS5_baseline_per_task",
    "tableS6_code_as_policy_per_task",
    "tableS7_predicted_ir",
    "tableS9_S10_dot_ir_scaling",
)


def load_table(name: str) -> list[dict[str, str]]:
    """Rows of one of the paper's tables as dicts of strings (convert the columns you use).

    Example:
        >>> rows = load_table("tableS5_baseline_per_task")
        >>> rows[0]["task"], rows[0]["n"], rows[0]["strict"]
        ('reach_food_item', '32', '53.1')
    """
    if name not in TABLE_NAMES:
        raise unknown_name("paper table", name, TABLE_NAMES)
    text = resources.files(__package__).joinpath("tables", f"{name}.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


def realise_outcomes(n: int, strict: float, soft: float, wrong: float) -> tuple[list[str], list[bool]]:
    """Episode outcomes realising printed per-task rates (percent of ``n``), for reproducing tables.

    ``strict`` episodes are "correct"; ``soft - strict`` are "none" with soft credit (the paper's
    soft rate includes strict successes); ``wrong`` are "wrong"; the rest "none". Counts are the
    printed rates times ``n``, rounded: the paper prints one decimal, so this recovers the integer
    counts exactly for the n of its tables.

    Example:
        >>> realise_outcomes(4, strict=25.0, soft=50.0, wrong=25.0)
        (['correct', 'none', 'wrong', 'none'], [False, True, False, False])
    """
    counts = {key: round(rate * n / 100.0) for key, rate in (("strict", strict), ("soft", soft), ("wrong", wrong))}
    if not counts["strict"] <= counts["soft"] <= n or counts["soft"] + counts["wrong"] > n:
        raise ValueError(f"rates strict={strict}, soft={soft}, wrong={wrong} are not realisable with n={n}")
    outcomes = ["correct"] * counts["strict"] + ["none"] * (counts["soft"] - counts["strict"]) + ["wrong"] * counts["wrong"]
    credit = [False] * counts["strict"] + [True] * (counts["soft"] - counts["strict"]) + [False] * counts["wrong"]
    rest = n - len(outcomes)
    return outcomes + ["none"] * rest, credit + [False] * rest
