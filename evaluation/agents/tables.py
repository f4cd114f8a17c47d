"""Code-as-policy tables: Table 5 (pooled +Soft, S, W per writer) and Table S6 (per-task soft / strict),
our agent runs beside the paper's rows (:func:`bspatial.reference.load_table`).

Rates are the rollout tables' (:func:`bspatial.evaluation.rollout.tables.rates_of`: pooled over episodes, a
crashed episode a failure, Wilson 95% intervals). One row per agent ``policy`` (``agent:<writer>+<pointer>``,
:func:`~bspatial.evaluation.agents.records.agent_policy`): the scripted writer with the oracle pointer is the
upper reference row (first), with the chance pointer the lower bound (last); the row names say which pointer
was privileged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from bspatial.evaluation.rollout.tables import format_rate, rates_of, to_csv, to_markdown
from bspatial.reference import load_table

AGENT_PREFIX = "agent:"
TABLE_SPLIT = "held_out"
"""Tables 5 and S6 report the held-out episodes (Sec. 6.0.2)."""


def is_agent(record: Mapping[str, Any]) -> bool:
    return str(record.get("policy", "")).startswith(AGENT_PREFIX)


def agent_label(policy: str) -> str:
    """``agent:scripted+oracle`` -> ``scripted writer, oracle pointer (privileged: ...) (upper reference)``."""
    from bspatial.evaluation.agents.pointers import pointer_label

    writer, _, pointer = policy[len(AGENT_PREFIX):].partition("+")
    label = f"{writer} writer, {pointer_label(pointer)}"
    if writer == "scripted" and pointer == "oracle":
        label += " (upper reference)"
    elif writer == "scripted" and pointer.startswith("chance"):
        label += " (lower bound)"
    return label


def agent_groups(records: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Agent policy -> its held-out records; scripted + oracle first, scripted + chance last."""
    groups: dict[str, list] = {}
    for r in records:
        if is_agent(r) and r["split"] == TABLE_SPLIT and r.get("status") != "not_applicable":
            groups.setdefault(r["policy"], []).append(r)

    def order(policy: str) -> tuple[int, str]:
        label = agent_label(policy)
        return (0 if label.endswith("(upper reference)") else 2 if label.endswith("(lower bound)") else 1, policy)
    return {p: groups[p] for p in sorted(groups, key=order)}


def table5_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Our rows (+Soft, S, W with Wilson intervals, n), then the paper's (source ``paper``)."""
    rows = []
    for policy, group in agent_groups(records).items():
        rates = rates_of(group)
        rows.append({"writer": agent_label(policy), "source": "ours", "n": rates.n,
                     "soft": format_rate(rates.soft), "strict": format_rate(rates.strict),
                     "wrong": format_rate(rates.wrong)})
    for ref in load_table("table5_code_as_policy"):
        rows.append({"writer": f"{ref['writer']} ({ref['group']})", "source": "paper", "n": 469,
                     "soft": ref["soft"], "strict": ref["strict"], "wrong": ref["wrong"]})
    return rows


def tableS6_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A row per task (the paper's order) and POOLED: N, then ``soft / strict`` per writer, ours first.

    Our cells are whole percentages like the paper's, pooled over our episodes of the task (with our n in
    brackets when it differs from the paper's N); "-" where we ran no episode of the task.
    """
    from bspatial.catalog.tasks import canonical_task_name

    paper = load_table("tableS6_code_as_policy_per_task")
    tasks = list(dict.fromkeys(r["task"] for r in paper))
    writers = list(dict.fromkeys(r["writer"] for r in paper))
    cell = {(r["task"], r["writer"]): (r["soft"], r["strict"]) for r in paper}
    n_paper = {r["task"]: int(r["n"]) for r in paper}
    ours = {policy: rates_of(group) for policy, group in agent_groups(records).items()}
    rows = []
    for task in tasks:
        row: dict[str, Any] = {"task": task, "N": n_paper[task]}
        for policy, rates in ours.items():
            if task == "POOLED":
                soft, strict, n = rates.soft, rates.strict, rates.n
                text = f"{soft.rate:.1f} / {strict.rate:.1f}"
            else:
                got = rates.per_task.get(canonical_task_name(task))
                if got is None:
                    row[agent_label(policy)] = "-"
                    continue
                soft, strict, n = got["soft"], got["strict"], got["strict"].n
                text = f"{soft.rate:.0f} / {strict.rate:.0f}"
            row[agent_label(policy)] = text + ("" if n == n_paper[task] else f" (n={n})")
        for writer in writers:
            soft, strict = cell[(task, writer)]
            row[f"{writer} (paper)"] = f"{soft} / {strict}"
        rows.append(row)
    return rows


def write_agent_tables(runs: Sequence[str | Path], out: str | Path) -> dict[str, Path]:
    """Read the agent evaluation folders' episode files; write ``table5.{md,csv}`` and ``table_s6.{md,csv}``."""
    from bspatial.common.files import atomic_write_text
    from bspatial.evaluation.rollout.episodes import load_results

    records = [r for run in runs for r in load_results(run)]
    if not any(is_agent(r) and r["split"] == TABLE_SPLIT for r in records):
        raise ValueError(f"no held-out agent episode records under {[str(r) for r in runs]}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    headers5 = {"writer": "Writer", "source": "Source", "n": "n", "soft": "+Soft↑", "strict": "S↑", "wrong": "W↓"}
    for stem, rows, headers in (("table5", table5_rows(records), headers5),
                                ("table_s6", tableS6_rows(records), {"task": "Task", "N": "N"})):
        for suffix, text in ((".md", to_markdown(rows, headers)), (".csv", to_csv(rows))):
            written[stem + suffix] = atomic_write_text(out / f"{stem}{suffix}", text)
    return written
