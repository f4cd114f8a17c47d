"""action_rates reproduces the paper's per-task and pooled action tables (S5, S9, S10, S11, Table 4).

Each table row is realised as episodes: count = round(rate * n / 100) correct episodes, then
(soft - strict) none episodes with soft credit, then the wrong episodes, the rest plain none.
"""

from __future__ import annotations


import pytest

from bspatial.reference import load_table

from bspatial.scoring.action import ActionRates, RateWithCI, action_rates
from bspatial.catalog.tasks import MANIPULATION_EVAL_TASKS, canonical_task_name, get_task

POLICIES = {  # Table S9/S10 column prefix -> Table 4 policy row
    "base": "pi0.5-Qwen (frozen VLM)",
    "dot100": "+ dot IR",
    "dot50": "+ dot IR @ 50% data",
    "dot30": "+ dot IR @ 30% data",
}


def _rows(name: str) -> list[dict[str, str]]:
    return load_table(name.removesuffix(".csv"))


def _count(rate: str, n: int) -> int:
    return round(float(rate) * n / 100)


def _episodes(task: str, n: int, strict: int, soft: int, wrong: int) -> tuple[list[str], list[str], list[bool]]:
    assert strict <= soft and soft + wrong <= n, (task, n, strict, soft, wrong)
    credited = soft - strict
    outcomes = ["correct"] * strict + ["none"] * credited + ["wrong"] * wrong + ["none"] * (n - soft - wrong)
    credit = [False] * strict + [True] * credited + [False] * (n - strict - credited)
    return outcomes, [task] * n, credit


def _realise(rows: list[tuple[str, int, int, int, int]]) -> ActionRates:
    outcomes: list[str] = []
    tasks: list[str] = []
    credit: list[bool] = []
    for row in rows:
        o, t, c = _episodes(*row)
        outcomes += o
        tasks += t
        credit += c
    return action_rates(outcomes, tasks, credit)


def _table4(policy: str) -> dict[str, str]:
    return next(r for r in _rows("table4_policies.csv") if r["policy"] == policy)


def test_table_s5_baseline_per_task_and_pooled():
    s5 = _rows("tableS5_baseline_per_task.csv")
    rows = []
    for r in s5:
        n = int(r["n"])
        rows.append((r["task"], n, _count(r["strict"], n), _count(r["soft"], n), _count(r["wrong"], n)))
    rates = _realise(rows)
    assert rates.n == 469
    for r in s5:
        per_task = rates.per_task[r["task"]]
        for key in ("strict", "soft", "wrong"):
            assert round(per_task[key].rate, 1) == pytest.approx(float(r[key]), abs=0.051), (r["task"], key)
        assert per_task["strict"].n == int(r["n"])
    assert (round(rates.strict.rate, 1), round(rates.soft.rate, 1), round(rates.wrong.rate, 1)) == (27.9, 41.6, 38.2)
    # Pooled over episodes, not a mean of task rates (which would give a different number).
    mean_of_tasks = sum(float(r["strict"]) for r in s5) / len(s5)
    assert round(mean_of_tasks, 1) != 27.9
    base = _table4(POLICIES["base"])
    assert round(rates.strict.rate, 1) == float(base["heldout_strict"])
    assert round(rates.soft.rate, 1) == float(base["heldout_soft"])
    # Per-task order is Table S2's.
    assert list(rates.per_task) == list(MANIPULATION_EVAL_TASKS)


@pytest.mark.parametrize("split", ["held_out", "prompt_probe"])
@pytest.mark.parametrize("policy", list(POLICIES))
def test_tables_s9_s10_pool_to_their_pooled_rows_and_table4(split, policy):
    table = [r for r in _rows("tableS9_S10_dot_ir_scaling.csv") if r["split"] == split]
    pooled_row = next(r for r in table if r["task"] == "POOLED")
    rows = []
    for r in table:
        if r["task"] == "POOLED":
            continue
        spec = get_task(r["task"])  # S9/S10 short names resolve through the aliases
        n = spec.n_heldout if split == "held_out" else spec.n_prompt_probe
        rows.append((r["task"], n, _count(r[f"{policy}_strict"], n), _count(r[f"{policy}_soft"], n), 0))
    rates = _realise(rows)
    assert rates.n == (469 if split == "held_out" else 700)
    for r in table:
        if r["task"] == "POOLED":
            continue
        per_task = rates.per_task[canonical_task_name(r["task"])]
        assert round(per_task["strict"].rate, 1) == pytest.approx(float(r[f"{policy}_strict"]), abs=0.051)
        assert round(per_task["soft"].rate, 1) == pytest.approx(float(r[f"{policy}_soft"]), abs=0.051)
    assert round(rates.strict.rate, 1) == float(pooled_row[f"{policy}_strict"])
    assert round(rates.soft.rate, 1) == float(pooled_row[f"{policy}_soft"])
    t4 = _table4(POLICIES[policy])
    prefix = "heldout" if split == "held_out" else "probe"
    assert round(rates.strict.rate, 1) == float(t4[f"{prefix}_strict"])
    assert round(rates.soft.rate, 1) == float(t4[f"{prefix}_soft"])


def test_table_s11_navigation_pools_to_59_9():
    rows = [r for r in _rows("tableS11_navigation.csv") if r["task"] != "POOLED"]
    outcomes: list[str] = []
    tasks: list[str] = []
    for r in rows:
        n = get_task(r["task"]).n_navigation
        k = _count(r["success"], n)
        outcomes += ["correct"] * k + ["none"] * (n - k)
        tasks += [r["task"]] * n
    rates = action_rates(outcomes, tasks)
    assert rates.n == 401
    assert round(rates.strict.rate, 1) == 59.9
    assert rates.soft == rates.strict  # no soft credit for navigation
    assert rates.wrong.successes == 0
    for r in rows:
        assert round(rates.per_task[r["task"]]["strict"].rate, 1) == float(r["success"])


def test_rates_carry_wilson_intervals_in_percent():
    rates = action_rates(["correct"] * 131 + ["none"] * 338, ["reach_tool"] * 469)
    assert isinstance(rates.strict, RateWithCI)
    assert (rates.strict.successes, rates.strict.n) == (131, 469)
    assert (round(rates.strict.low, 2), round(rates.strict.high, 2)) == (24.06, 32.16)
    assert rates.strict.low < rates.strict.rate < rates.strict.high


def test_flat_dict_keys():
    rates = action_rates(["correct", "wrong", "none", "none"], ["reach_tool", "reach_tool", "place_bowl", "place_bowl"],
                         [False, False, True, False])
    flat = rates.to_flat_dict()
    assert flat["n"] == 4
    assert flat["strict"] == 25.0 and flat["soft"] == 50.0 and flat["wrong"] == 25.0
    # Wilson 95% by hand (z = 1.959964): 1 of 4 (strict, wrong) has centre (1/4 + z²/8) / (1 + z²/4) = 0.3724727 and
    # half-width z·sqrt(3/64 + z²/64) / (1 + z²/4) = 0.3268854; 2 of 4 (soft) has centre 1/2 and half-width
    # z·sqrt(1/16 + z²/64) / (1 + z²/4) = 0.3499610 (printed "25.0 [4.6, 69.9]" and "50.0 [15.0, 85.0]").
    expected_ci = {"strict": (4.558726, 69.935816), "wrong": (4.558726, 69.935816), "soft": (15.003899, 84.996101)}
    for rate, (low, high) in expected_ci.items():
        assert (flat[f"{rate}_ci_low"], flat[f"{rate}_ci_high"]) == (pytest.approx(low, abs=1e-5),
                                                                     pytest.approx(high, abs=1e-5)), rate
    # Per task: 0 of 2 strict on the cabinet gives [0, z² / (2 + z²)] = [0, 65.76198].
    assert flat["place_bowl_in_cabinet/strict_ci_low"] == 0.0
    assert flat["place_bowl_in_cabinet/strict_ci_high"] == pytest.approx(65.761977, abs=1e-5)
    assert flat["reach_tool/n"] == 2 and flat["reach_tool/strict"] == 50.0
    assert flat["place_bowl_in_cabinet/soft"] == 50.0  # aliases are reported under canonical names
    assert flat["place_bowl_in_cabinet/soft_count"] == 1
    assert all(isinstance(v, (int, float)) for v in flat.values())


@pytest.mark.parametrize("kwargs,message", [
    ({"outcomes": ["correct"], "tasks": ["reach_tool", "reach_tool"]}, "tasks has length 2 but outcomes has length 1"),
    ({"outcomes": ["correct"], "tasks": ["reach_tool"], "soft_credit": [False, True]},
     "soft_credit has length 2"),
    ({"outcomes": [], "tasks": []}, "outcomes is empty: there is nothing to score"),
    ({"outcomes": ["success"], "tasks": ["reach_tool"]}, r"outcomes\[0\] must be one of .* got 'success'"),
    ({"outcomes": ["correct"], "tasks": ["reach_moon"]}, "unknown task 'reach_moon'"),
    ({"outcomes": ["correct"], "tasks": ["reach_tool"], "soft_credit": [True]},
     r"soft_credit\[0\] is True but outcomes\[0\] is 'correct'"),
    ({"outcomes": ["wrong"], "tasks": ["move_to_bar"]}, "navigation is correct/none"),
    ({"outcomes": ["none"], "tasks": ["move_to_bar"], "soft_credit": [True]}, "navigation has no soft credit"),
    ({"outcomes": ["none"], "tasks": ["reach_tool"], "soft_credit": ["yes"]}, r"soft_credit\[0\] must be a bool"),
    ({"outcomes": ["none"], "tasks": ["reach_tool"], "confidence": 1.5}, "confidence must be in"),
])
def test_bad_input_names_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        action_rates(**kwargs)
