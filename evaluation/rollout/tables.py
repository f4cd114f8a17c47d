"""Episode result files -> Table 4 and per-task (Table S5 / S9 / S10 style) layouts, Markdown + CSV.

Rates come from :func:`bspatial.scoring.action.action_rates` (one implementation of every rule): pooled over episodes, in percent, each with its Wilson 95% interval. A crashed episode (status
``"error"``) is a failure (outcome ``"none"``, no soft credit) and is counted in the ``errors`` column.

Table 4 layout: one row per policy, held-out +Soft / S and prompt-probe +Soft / S / W. The scripted
expert is the upper reference row (first), the random policy the lower reference row (last).

Table S11 layout (navigation split): one row per navigation task (Table S2 order) and a POOLED row,
each with the binary success rate (Sec. 5.1: the base satisfies the goal criterion) and its Wilson 95%
interval; pooled over episodes, not averaged over tasks (the paper pools action rates
over episodes: its 59.9% is 240 of 401 episodes). One success column per policy in Markdown; the
CSV is long (one row per policy and task).

Example:
    >>> rec = lambda o, s=False: {"policy": "random", "split": "held_out", "task": "reach_dice",
    ...                           "outcome": o, "soft_credit": s, "status": "timeout"}
    >>> rows = table4_rows(group_records([rec("correct"), rec("none", True), rec("wrong"), rec("none")]))
    >>> rows[0]["policy"], rows[0]["held_out_soft"], rows[0]["held_out_strict"]
    ('random (lower reference)', '50.0 [15.0, 85.0]', '25.0 [4.6, 69.9]')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from bspatial.common.paths import folder_name
from bspatial.common.tables import csv_table, markdown_table
from bspatial.scoring.action import ActionRates, RateWithCI, action_rates

UPPER_REFERENCE, LOWER_REFERENCE, IDLE_REFERENCE = "scripted", "random", "hold"
"""Reference rows of Table 4: the scripted expert above; a random policy and a robot that never moves below."""
TABLE4_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("held_out", "soft", "Held-out +Soft"), ("held_out", "strict", "Held-out S"),
    ("prompt_probe", "soft", "Probe +Soft"), ("prompt_probe", "strict", "Probe S"), ("prompt_probe", "wrong", "Probe W"),
)
"""Table 4's rate columns: (split, rate, header)."""
RATES = ("strict", "soft", "wrong")
MANIPULATION_SPLITS = ("held_out", "prompt_probe")
"""Splits of Table 4 and the per-task S5 / S9 / S10 layouts."""
NAVIGATION_SPLIT = "navigation"
"""The split of Table S11."""
SPA_SPLITS = ("spa_id", "spa_ood")
"""Spa-Bench's ID / OOD episodes: reported in the Spa-Bench conditions table, not in Table 4."""


def checkpoint_name(path: str) -> str:
    """The name a checkpoint folder goes by: its own, or its run's where the folder is an export inside a run
    (``<run>/pretrained_model``: ``<run>``; lerobot-train's ``<run>/checkpoints/<step>[/pretrained_model]``:
    ``<run>@<step>``), so that several runs' exports get several names.

    Example:
        >>> checkpoint_name("runs/cpu_reach/pretrained_model"), checkpoint_name("runs/act/checkpoints/003000")
        ('cpu_reach', 'act@003000')
        >>> checkpoint_name("runs/act/checkpoints/last/pretrained_model"), checkpoint_name("ckpt")
        ('act@last', 'ckpt')
    """
    parts = Path(path).parts
    if parts and parts[-1] == "pretrained_model":
        parts = parts[:-1]
    if len(parts) >= 3 and parts[-2] == "checkpoints":
        return f"{parts[-3]}@{parts[-1]}"
    return parts[-1] if parts else str(path)


PRINTED_TABLES: tuple[str, ...] = ("table4.md", "table_s11.md", "spa_bench_conditions.md", "cue_ladder.md")
"""The tables a command prints after writing them (those written: :func:`write_tables` writes what applies)."""
IR_ROW_MARK = " [IR "
"""Joins a policy spec and the IR cue its episodes ran with in a row key (:func:`row_policy`)."""


def row_policy(record: Mapping[str, Any]) -> str:
    """The row a record belongs to: its policy spec, and for an IR checkpoint run with another cue than the
    oracle's, that cue (``<spec> [IR predicted]``): one checkpoint under the oracle and the predicted cue is two
    rows, as in the paper's Table 4, never one pooled row."""
    source = (record.get("ir") or {}).get("source")
    return record["policy"] if source in (None, "oracle") else f"{record['policy']}{IR_ROW_MARK}{source}]"


def policy_label(spec: str) -> str:
    """Row label of a policy spec (or a :func:`row_policy` key): the reference names with their role, a checkpoint
    by :func:`checkpoint_name` (an external one keeps its kind and options: ``lerobot:act@003000#select_action``),
    then the IR cue of a row that names one.

    Example:
        >>> policy_label("runs/dot/checkpoints/000300/pretrained_model [IR predicted]")
        'dot@000300 [IR predicted]'
    """
    spec, mark, cue = spec.partition(IR_ROW_MARK)
    return _spec_label(spec) + (f"{mark}{cue}" if mark else "")


def _spec_label(spec: str) -> str:
    if spec == UPPER_REFERENCE:
        return f"{spec} (upper reference)"
    if spec == LOWER_REFERENCE:
        return f"{spec} (lower reference)"
    if spec == IDLE_REFERENCE:
        return f"{spec} (never moves)"
    kind, sep, target = spec.partition(":")
    if sep and kind in ("lerobot", "replay"):
        folder, hash_, options = target.partition("#")
        return f"{kind}:{checkpoint_name(folder)}{hash_}{options}"
    if sep and kind == "openpi":
        return spec
    return checkpoint_name(spec) or spec


def group_records(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """(row policy, split) -> its episode records, policies ordered scripted, checkpoints, random. The row policy is
    the spec, with the IR cue for a checkpoint run on another cue than the oracle's (:func:`row_policy`).

    Only the paper's protocol enters these tables: records of the ``spatial`` condition (the instruction
    as planned; records without a condition are that) that were applicable. Spa-Bench conditions have
    their own layout (:mod:`bspatial.evaluation.rollout.spa_bench`), and so do episodes run with the wrong cue
    (``--ir wrong``: the cue ladder's, :mod:`bspatial.evaluation.rollout.cue_ladder`).
    """
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("condition", "spatial") != "spatial" or r.get("status") == "not_applicable":
            continue
        if (r.get("ir") or {}).get("source") == "wrong":
            continue
        groups.setdefault((row_policy(r), r["split"]), []).append(r)

    def order(key):
        policy = key[0]
        rank = {UPPER_REFERENCE: 0, LOWER_REFERENCE: 2, IDLE_REFERENCE: 3}.get(policy, 1)
        return (rank, policy, key[1])
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
    # Navigation groups belong to Table S11, not Table 4.
    policies = list(dict.fromkeys(policy for policy, split in groups if split in MANIPULATION_SPLITS))
    rows = []
    for policy in policies:
        row: dict[str, Any] = {"policy": policy_label(policy)}
        per_split = {split: rates_of(groups[(policy, split)]) for p, split in groups
                     if p == policy and split in MANIPULATION_SPLITS}
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


def comparison_rows(groups: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]], split: str) -> list[dict[str, Any]]:
    """Table S9 / S10 layout of one split: a row per task (Table S2 order) and POOLED, strict and soft
    per policy side by side (numbers in percent, rounded to 0.1; the Wilson intervals are in the
    per-task files)."""
    per_policy = {policy: rates_of(group) for (policy, s), group in groups.items() if s == split}
    tasks = list(dict.fromkeys(t for rates in per_policy.values() for t in rates.per_task))
    rows = []
    for task in [*tasks, "POOLED"]:
        row: dict[str, Any] = {"split": split, "task": task}
        for policy, rates in per_policy.items():
            cell = ({k: getattr(rates, k) for k in RATES} if task == "POOLED" else rates.per_task.get(task))
            label = policy_label(policy)
            row[f"{label} S"] = "-" if cell is None else round(cell["strict"].rate, 1)
            row[f"{label} +Soft"] = "-" if cell is None else round(cell["soft"].rate, 1)
        rows.append(row)
    return rows


COMPARISON_TABLES = {"held_out": "table_s9_held_out", "prompt_probe": "table_s10_prompt_probe"}
"""File stems of the per-task policy comparisons (written when a split has two or more policies)."""


def s11_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Table S11 rows of one policy's navigation records: per task (Table S2 order), then POOLED.

    Success is the strict rate (navigation is binary, Table S4); numbers in percent, rounded to 0.1.
    """
    from bspatial.tasks.navigation import NAV_TASKS

    rates = rates_of(records)
    rows = []
    for task, task_rates in [*rates.per_task.items(), ("POOLED", {"strict": rates.strict})]:
        subset = records if task == "POOLED" else [r for r in records if _canonical(r["task"]) == task]
        rate = task_rates["strict"]
        rows.append({"task": task, "scene": NAV_TASKS[task].plan if task in NAV_TASKS else "",
                     "n": rate.n, "errors": _errors(subset), "successes": rate.successes,
                     "success": round(rate.rate, 1), "ci_low": round(rate.low, 1), "ci_high": round(rate.high, 1)})
    return rows


def _s11_tables(groups) -> tuple[str, str]:
    """(Markdown with one success column per policy, long CSV) of the navigation groups."""
    per_policy = {policy: s11_rows(group) for (policy, split), group in groups.items() if split == NAVIGATION_SPLIT}
    long = [{"policy": policy_label(p), **row} for p, rows in per_policy.items() for row in rows]
    tasks = list(dict.fromkeys(row["task"] for rows in per_policy.values() for row in rows if row["task"] != "POOLED"))
    table = []
    for task in [*tasks, "POOLED"]:
        row: dict[str, Any] = {"task": task, "scene": ""}
        for policy, rows in per_policy.items():
            cell = next((r for r in rows if r["task"] == task), None)
            if cell is not None:
                row["scene"] = row["scene"] or cell["scene"]
            row[policy_label(policy)] = ("-" if cell is None else
                                         f"{cell['success']:.1f} [{cell['ci_low']:.1f}, {cell['ci_high']:.1f}] (n={cell['n']})")
        table.append(row)
    return to_markdown(table, {"task": "Task", "scene": "Scene"}), to_csv(long)


def _canonical(task: str) -> str:
    from bspatial.catalog.tasks import canonical_task_name
    return canonical_task_name(task)


def to_markdown(rows: Sequence[Mapping[str, Any]], headers: Mapping[str, str] | None = None) -> str:
    """A pipe table of ``rows`` (columns in the first row's order, renamed by ``headers``)."""
    if not rows:
        return ""
    keys = list(rows[0])
    names = [(headers or {}).get(k, k) for k in keys]
    return markdown_table(names, [[r[k] for k in keys] for r in rows]) + "\n"


def to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    return csv_table(list(rows[0]), rows) if rows else ""


def _per_task_markdown(records) -> str:
    rows = [{"task": r["task"], "n": r["n"], "errors": r["errors"],
             **{k: f"{r[k]:.1f} [{r[f'{k}_ci_low']:.1f}, {r[f'{k}_ci_high']:.1f}]" for k in RATES}}
            for r in per_task_rows(records)]
    return to_markdown(rows, {"strict": "Strict↑", "soft": "Soft↑", "wrong": "Wrong↓"})


def write_tables(runs: Sequence[str | Path], out: str | Path) -> dict[str, Path]:
    """Read every run folder's episode files and write into ``out`` (returns name -> path):

    * manipulation records: ``table4.{md,csv}``, ``per_task_<policy>_<split>.{md,csv}`` and, when a split
      has two or more policies, the S9 / S10 comparison ``table_s9_held_out`` / ``table_s10_prompt_probe``;
    * ``failure_modes.{md,csv}`` (primary modes), ``failure_secondary.{md,csv}`` (secondary annotations) and,
      when a run used a Spa-Bench condition, ``spa_bench_conditions.{md,csv}``;
    * navigation records: ``table_s11.{md,csv}``;
    * when a run used the wrong cue (``--ir wrong``): ``cue_ladder.{md,csv}``, success per policy and cue with the
      share of episodes that followed the wrong cue (:mod:`bspatial.evaluation.rollout.cue_ladder`).
    """
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.common.files import atomic_write_text

    by_run = {str(run): load_results(run) for run in runs}
    records = [r for run_records in by_run.values() for r in run_records]
    if not records:
        raise ValueError(f"no episode result files under {[str(r) for r in runs]}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    groups = group_records(records)
    manipulation = {k: g for k, g in groups.items() if k[1] in MANIPULATION_SPLITS}
    written: dict[str, Path] = {}
    if manipulation:
        rows = table4_rows(manipulation)
        headers = {f"{s}_{r}": h for s, r, h in TABLE4_COLUMNS}
        headers.update({"held_out_n": "Held-out n", "held_out_errors": "Held-out errors",
                        "prompt_probe_n": "Probe n", "prompt_probe_errors": "Probe errors", "policy": "Policy"})
        written.update({"table4.md": out / "table4.md", "table4.csv": out / "table4.csv"})
        atomic_write_text(written["table4.md"], to_markdown(rows, headers))
        atomic_write_text(written["table4.csv"], to_csv(rows))
    if any(split == NAVIGATION_SPLIT for _, split in groups):
        markdown, long_csv = _s11_tables(groups)
        written.update({"table_s11.md": out / "table_s11.md", "table_s11.csv": out / "table_s11.csv"})
        atomic_write_text(written["table_s11.md"], markdown)
        atomic_write_text(written["table_s11.csv"], long_csv)
    for split, stem in COMPARISON_TABLES.items():
        if sum(s == split for _, s in manipulation) >= 2:
            rows = comparison_rows(manipulation, split)
            written.update({f"{stem}.md": out / f"{stem}.md", f"{stem}.csv": out / f"{stem}.csv"})
            atomic_write_text(written[f"{stem}.md"], to_markdown(rows))
            atomic_write_text(written[f"{stem}.csv"], to_csv(rows))
    written.update(_write_spa_bench(records, out))
    written.update(_write_cue_ladder(by_run, out))
    for (policy, split), group in manipulation.items():
        spec, _, cue = policy.partition(IR_ROW_MARK)   # the role after the label's space dropped, the cue kept
        name = policy_label(spec).split(" ")[0] + (f"_ir_{cue.rstrip(']')}" if cue else "")
        stem = f"per_task_{folder_name(name).strip('_')}_{split}"   # no ':' or '/'
        written[f"{stem}.md"], written[f"{stem}.csv"] = out / f"{stem}.md", out / f"{stem}.csv"
        atomic_write_text(written[f"{stem}.md"], _per_task_markdown(group))
        atomic_write_text(written[f"{stem}.csv"], to_csv(per_task_rows(group)))
    return written


def cue_ladder_rows(by_run: Mapping[str, list], label: Callable[[str], str] = policy_label) -> list[dict[str, Any]]:
    """The cue ladder's rows over the runs given (run folder -> its records; the references bound it): per policy
    (named by ``label`` from its spec), rung and task, then POOLED, the records' success and, where the wrong cue is
    scored, the share of episodes that followed it (Wilson 95%)."""
    import json

    from bspatial.evaluation.rollout.cue_ladder import ladder_cells
    from bspatial.evaluation.rollout.runner import MANIFEST_NAME

    runs = {}
    for run, records in by_run.items():
        manifest = Path(run) / MANIFEST_NAME   # the run's seed draws the wrong target (scripted-wrong's too)
        seed = json.loads(manifest.read_text()).get("seed", 0) if manifest.is_file() else 0
        runs[run] = (records, int(seed))
    rows = []
    for cell in ladder_cells(runs):
        rates, followed = rates_of(cell["records"]), cell["followed"]
        rows.append({"policy": label(cell["policy"]), "cue": cell["cue"], "task": cell["task"],
                     "n": len(cell["records"]), "strict": format_rate(rates.strict), "soft": format_rate(rates.soft),
                     "followed_cue": (format_rate(RateWithCI.from_counts(sum(followed), len(followed)))
                                      if followed else "-")})
    return rows


CUE_LADDER_HEADERS = {"followed_cue": "Followed the wrong cue"}


def _write_cue_ladder(by_run: Mapping[str, list], out: Path) -> dict[str, Path]:
    """``cue_ladder`` when any record was run with the wrong cue, over every run given (the references bound it)."""
    from bspatial.common.files import atomic_write_text
    from bspatial.evaluation.rollout.cue_ladder import ir_source

    if not any(ir_source(r) == "wrong" for records in by_run.values() for r in records):
        return {}
    rows = cue_ladder_rows(by_run)
    written = {"cue_ladder.md": out / "cue_ladder.md", "cue_ladder.csv": out / "cue_ladder.csv"}
    atomic_write_text(written["cue_ladder.md"], to_markdown(rows, CUE_LADDER_HEADERS))
    atomic_write_text(written["cue_ladder.csv"], to_csv(rows))
    return written


def _write_spa_bench(records, out: Path) -> dict[str, Path]:
    """``spa_bench_conditions`` (only when a run used a condition other than spatial), ``failure_modes`` and
    ``failure_secondary``."""
    from bspatial.evaluation.rollout.spa_bench import (condition_of, condition_rows, failure_mode_rows,
                                                       secondary_annotation_rows)
    from bspatial.common.files import atomic_write_text

    written: dict[str, Path] = {}
    tables = {"failure_modes": failure_mode_rows(records), "failure_secondary": secondary_annotation_rows(records)}
    if any(condition_of(r) != "spatial" or r["split"] in SPA_SPLITS for r in records):
        tables["spa_bench_conditions"] = condition_rows(records)
    for stem, rows in tables.items():
        if not rows:
            continue
        rows = [{**r, "policy": policy_label(r["policy"])} for r in rows]
        for suffix, text in ((".md", to_markdown(rows)), (".csv", to_csv(rows))):
            written[stem + suffix] = out / f"{stem}{suffix}"
            atomic_write_text(written[stem + suffix], text)
    return written


__all__ = ["COMPARISON_TABLES", "PRINTED_TABLES", "comparison_rows", "MANIPULATION_SPLITS", "NAVIGATION_SPLIT", "TABLE4_COLUMNS", "format_rate", "group_records", "per_task_rows", "row_policy",
           "policy_label", "rates_of", "s11_rows", "table4_rows", "to_csv", "to_markdown", "write_tables"]
