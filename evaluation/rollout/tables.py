"""Episode result files -> Table 4 and per-task (Table S5 / S9 / S10 style) layouts, Markdown + CSV.

Rates come from :func:`bspatial.scoring.action.action_rates` (one implementation of every rule, STYLE
rule 1): pooled over episodes, in percent, each with its Wilson 95% interval. A crashed episode (status
``"error"``) is a failure (outcome ``"none"``, no soft credit) and is counted in the ``errors`` column.

Table 4 layout: one row per policy, held-out +Soft / S and prompt-probe +Soft / S / W. The scripted
expert is the upper reference row (first), the random policy the lower reference row (last).

Example:
    >>> rec = lambda o, s=False: {"policy": "random", "split": "held_out", "task": "reach_dice",
    ...                           "outcome": o, "soft_credit": s, "status": "timeout"}
    >>> rows = table4_rows(group_records([rec("correct"), rec("none", True), rec("wrong"), rec("none")]))
    >>> rows[0]["policy"], rows[0]["held_out_soft"], rows[0]["held_out_strict"]
    ('random (lower reference)', '50.0 [15.0, 85.0]', '25.0 [4.6, 69.9]')
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Mapping, Sequence

from bspatial.scoring.action import ActionRates, RateWithCI, action_rates

UPPER_REFERENCE, LOWER_REFERENCE = "scripted", "random"
"""Reference rows of Table 4 (issue 7: the scripted expert above, a random policy below)."""
TABLE4_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("held_out", "soft", "Held-out +Soft"), ("held_out", "strict", "Held-out S"),
    ("prompt_probe", "soft", "Probe +Soft"), ("prompt_probe", "strict", "Probe S"), ("prompt_probe", "wrong", "Probe W"),
)
"""Table 4's rate columns: (split, rate, header)."""
RATES = ("strict", "soft", "wrong")


def policy_label(spec: str) -> str:
    """Row label of a policy spec: the reference names with their role, a checkpoint by its folder name."""
    if spec == UPPER_REFERENCE:
        return f"{spec} (upper reference)"
    if spec == LOWER_REFERENCE:
        return f"{spec} (lower reference)"
    return Path(spec).name or spec


def group_records(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """(policy spec, split) -> its episode records, policies ordered scripted, checkpoints, random."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["policy"], r["split"]), []).append(r)

    def order(key):
        policy = key[0]
        return (0 if policy == UPPER_REFERENCE else 2 if policy == LOWER_REFERENCE else 1, policy, key[1])
    return {k: groups[k] for k in sorted(groups, key=order)}


def rates_of(records: Sequence[Mapping[str, Any]]) -> ActionRates:
    """Pooled and per-task rates; an "error" record is scored as outcome "none" without soft credit."""
    failed = [r.get("status") == "error" for r in records]
    return action_rates([("none" if f else r["outcome"]) for r, f in zip(records, failed)], [r["task"] for r in records],
                        [bool(r["soft_credit"]) and not f for r, f in zip(records, failed)])


def format_rate(rate: RateWithCI | None) -> str:
    """``"41.6 [37.2, 46.1]"`` (percent, Wilson 95%); ``"-"`` when absent."""
    return "-" if rate is None else f"{rate.rate:.1f} [{rate.low:.1f}, {rate.high:.1f}]"


def _errors(records) -> int:
    return sum(r.get("status") == "error" for r in records)


def table4_rows(groups: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """One Table 4 row per policy: n and errors per split, then the rate columns as formatted cells."""
    policies = list(dict.fromkeys(policy for policy, _ in groups))
    rows = []
    for policy in policies:
        row: dict[str, Any] = {"policy": policy_label(policy)}
        per_split = {split: rates_of(groups[(policy, split)]) for p, split in groups if p == policy}
        for split in ("held_out", "prompt_probe"):
            rates = per_split.get(split)
            row[f"{split}_n"] = rates.n if rates else 0
            row[f"{split}_errors"] = _errors(groups[(policy, split)]) if rates else 0
        for split, rate, _ in TABLE4_COLUMNS:
            rates = per_split.get(split)
            row[f"{split}_{rate}"] = format_rate(getattr(rates, rate) if rates else None)
        rows.append(row)
    return rows


def per_task_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """S5-style rows (Table S2 order, then POOLED): task, n, errors, strict / soft / wrong with CIs (numeric)."""
    rates = rates_of(records)
    rows = []
    for task, task_rates in [*rates.per_task.items(), ("POOLED", {k: getattr(rates, k) for k in RATES})]:
        subset = records if task == "POOLED" else [r for r in records if _canonical(r["task"]) == task]
        row: dict[str, Any] = {"task": task, "n": task_rates["strict"].n, "errors": _errors(subset)}
        for key in RATES:
            r = task_rates[key]
            row.update({key: round(r.rate, 1), f"{key}_ci_low": round(r.low, 1), f"{key}_ci_high": round(r.high, 1),
                        f"{key}_count": r.successes})
        rows.append(row)
    return rows


def _canonical(task: str) -> str:
    from bspatial.scoring.task_specs import canonical_task_name
    return canonical_task_name(task)


def to_markdown(rows: Sequence[Mapping[str, Any]], headers: Mapping[str, str] | None = None) -> str:
    """A pipe table of ``rows`` (columns in the first row's order, renamed by ``headers``)."""
    if not rows:
        return ""
    keys = list(rows[0])
    names = [(headers or {}).get(k, k) for k in keys]
    lines = ["| " + " | ".join(names) + " |", "|" + "|".join("---" for _ in keys) + "|"]
    lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return buffer.getvalue()


def _per_task_markdown(records) -> str:
    rows = [{"task": r["task"], "n": r["n"], "errors": r["errors"],
             **{k: f"{r[k]:.1f} [{r[f'{k}_ci_low']:.1f}, {r[f'{k}_ci_high']:.1f}]" for k in RATES}}
            for r in per_task_rows(records)]
    return to_markdown(rows, {"strict": "Strict↑", "soft": "Soft↑", "wrong": "Wrong↓"})


def write_tables(runs: Sequence[str | Path], out: str | Path) -> dict[str, Path]:
    """Read every run folder's episode files and write ``table4.{md,csv}`` and
    ``per_task_<policy>_<split>.{md,csv}`` into ``out``; returns name -> path."""
    from bspatial.evaluation.rollout.runner import load_results
    from bspatial.evaluation.vlm.run_files import atomic_write

    records = [r for run in runs for r in load_results(run)]
    if not records:
        raise ValueError(f"no episode result files under {[str(r) for r in runs]}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    groups = group_records(records)
    rows = table4_rows(groups)
    headers = {f"{s}_{r}": h for s, r, h in TABLE4_COLUMNS}
    headers.update({"held_out_n": "Held-out n", "held_out_errors": "Held-out errors",
                    "prompt_probe_n": "Probe n", "prompt_probe_errors": "Probe errors", "policy": "Policy"})
    written = {"table4.md": out / "table4.md", "table4.csv": out / "table4.csv"}
    atomic_write(written["table4.md"], to_markdown(rows, headers))
    atomic_write(written["table4.csv"], to_csv(rows))
    for (policy, split), group in groups.items():
        stem = f"per_task_{policy_label(policy).split(' ')[0]}_{split}"
        written[f"{stem}.md"], written[f"{stem}.csv"] = out / f"{stem}.md", out / f"{stem}.csv"
        atomic_write(written[f"{stem}.md"], _per_task_markdown(group))
        atomic_write(written[f"{stem}.csv"], to_csv(per_task_rows(group)))
    return written


__all__ = ["TABLE4_COLUMNS", "format_rate", "group_records", "per_task_rows", "policy_label", "rates_of",
           "table4_rows", "to_csv", "to_markdown", "write_tables"]
