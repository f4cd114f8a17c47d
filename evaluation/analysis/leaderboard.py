"""The leaderboard's tables: our runs' rows beside the paper's reference rows, as
:class:`~bspatial.evaluation.analysis.html.TableSection` objects.

Our numbers come from the functions the Markdown reports use, never recomputed here:

* Tables 1 and 2: :meth:`bspatial.evaluation.vlm.report.Run.cells` (the runs' own summaries), bracketed by
  :meth:`~bspatial.evaluation.vlm.report.Run.clustered_intervals` (95%, items clustered by shared scene / frame);
* Table 3: :func:`bspatial.evaluation.analysis.correlate.correlate_runs` (soft held-out success, Sec. 5.3.3);
* perception and action on the same episode: :func:`bspatial.evaluation.analysis.episode_join.join_runs`'s pooled
  soft-success cells;
* Table 4, S9, S10, S11: :func:`bspatial.evaluation.rollout.tables.rates_of` over
  :func:`~bspatial.evaluation.rollout.tables.group_records` (pooled over episodes, Wilson 95% intervals);
* Tables 5 and S6 (code-as-policy): the agent evaluations' records (``bspatial agents evaluate``), grouped and
  labelled by :mod:`bspatial.evaluation.agents.tables`, rates by ``rates_of`` as above.

The paper's rows are :func:`bspatial.reference.load_table`'s CSV values, as printed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bspatial.evaluation.analysis.episode_join import POOLED
from bspatial.evaluation.analysis.html import Cell, Row, TableSection
from bspatial.evaluation.rollout.tables import (MANIPULATION_SPLITS, NAVIGATION_SPLIT, group_records, policy_label,
                                                rates_of)
from bspatial.evaluation.vlm.report import TABLE1_COLUMNS, TABLE2_COLUMNS, Run, run_order
from bspatial.reference import load_table
from bspatial.scoring.action import RateWithCI

TABLE4_RATES: tuple[tuple[str, str, str], ...] = (
    # (our key: split_rate, header, column in table4_policies.csv)
    ("held_out_soft", "Held-out +Soft", "heldout_soft"), ("held_out_strict", "Held-out S", "heldout_strict"),
    ("prompt_probe_soft", "Probe +Soft", "probe_soft"), ("prompt_probe_strict", "Probe S", "probe_strict"),
    ("prompt_probe_wrong", "Probe W", "probe_wrong"),
)
S9_POLICIES: tuple[tuple[str, str], ...] = (
    # (column prefix in tableS9_S10_dot_ir_scaling.csv, row label): Table S9's caption names them.
    ("base", "Base (frozen VLM)"), ("dot100", "Dot IR, 100% data"), ("dot50", "Dot IR, 50% data"),
    ("dot30", "Dot IR, 30% data"),
)
COMPARISON_SPLITS = {"held_out": ("tableS9", "Table S9: per-task held-out success (%)"),
                     "prompt_probe": ("tableS10", "Table S10: per-task prompt-probe success (%)")}
CORRELATION_MEASURES: tuple[tuple[str, str, str | None], ...] = (
    # (measure name, header, column in table3_spearman.csv): Table 3's two columns, then strict IR beside them.
    ("vqa", "VQA ρ", "vqa_rho"), ("ir_tolerant", "IR (tolerant) ρ", "ir_rho"), ("ir_strict", "IR strict ρ", None),
)


def _number(text: str | None) -> Cell:
    """A paper cell shown as printed: as many decimals as the CSV text has (Table S6 prints whole percents)."""
    if text in (None, ""):
        return Cell(None)
    _, _, decimals = text.partition(".")
    return Cell(float(text), digits=len(decimals))


def _rate(rate: RateWithCI | None) -> Cell:
    return Cell(None) if rate is None else Cell(rate.rate, (rate.low, rate.high))


def vlm_table(key: str, runs: Sequence[tuple[str, Run]]) -> TableSection:
    """Table 1 (``key="table1"``) or Table 2 (``"table2"``): a row per VLM run (a blind run labelled
    ``<model> (blind)``, right after its model's seeing run: :func:`~bspatial.evaluation.vlm.report.run_order`),
    then the paper's rows."""
    columns, paper, title, caption = {
        "table1": (TABLE1_COLUMNS, "table1_vlm_vqa", "Table 1: general VQA accuracy (%)",
                   "Single-frame Dir. includes locate; All is pooled over questions; multi-frame pools rotation "
                   "and navigation sequences."),
        "table2": (TABLE2_COLUMNS, "table2_task_vqa_ir", "Table 2: task-grounded VQA and IR accuracy (%)",
                   "Manipulation VQA and IR are unweighted means of per-task accuracies (Appendix 14)."),
    }[key]
    caption += (" Brackets: 95% intervals with items clustered by the scene / frame they share (CR1; `bspatial "
                "report`'s intervals.md sets them beside intervals that take items as independent).")
    rows = []
    for label, run in (runs[i] for i in run_order([run for _, run in runs])):
        cells, intervals = run.cells(), run.clustered_intervals()
        rows.append(Row(label, {"model": Cell(run.label),
                                **{c: Cell(cells.get(summary_key), intervals.get(summary_key))
                                   for c, _, summary_key in columns}}))
    for ref in load_table(paper):
        rows.append(Row(ref["model"], {"model": Cell(ref["model"]), **{c: _number(ref.get(c)) for c, _, _ in columns}},
                        reference=True))
    return TableSection(key, title, caption, "Run", (("model", "Model"), *((c, h) for c, h, _ in columns)), tuple(rows))


def correlation_table(analyses: Sequence[Any], labels: Mapping[Path, str] | None = None) -> TableSection:
    """Table 3: Spearman's rho of per-task perception vs soft held-out success, with the over-tasks
    bootstrap interval; one row per (VLM run, policy). ``labels`` names run folders (VLM and rollout)
    as the page does; a folder without one is shown by its name."""
    labels = labels or {}
    rows = []
    for analysis in analyses:
        vlm = labels.get(analysis.vlm_run, analysis.vlm_run.name)
        cells: dict[str, dict[str, Cell]] = {}
        for c in analysis.correlations:
            if c.rate != "soft" or c.policy.split != "held_out":   # Table 3: soft held-out success
                continue
            interval = (c.over_tasks.low, c.over_tasks.high) if c.over_tasks.low is not None else None
            # The analysis labels a policy by its run's path when two runs share a label: the page's run name is shorter.
            policy = c.policy.label.replace(str(c.policy.run), labels.get(c.policy.run, c.policy.run.name))
            entry = cells.setdefault(policy, {"vlm": Cell(vlm), "tasks": Cell(len(c.joined.tasks))})
            entry[c.measure.name] = Cell(c.rho, interval, digits=3)
        rows += [Row(policy, row) for policy, row in cells.items()]
    for ref in load_table("table3_spearman"):
        rows.append(Row(ref["policy"], {m: _number(ref[col]) for m, _, col in CORRELATION_MEASURES if col},
                        reference=True))
    return TableSection(
        "table3", "Table 3: perception vs soft held-out success, Spearman's ρ over tasks",
        "Average ranks for ties; bracket: 95% bootstrap interval resampling tasks (the item-level interval is in "
        "`bspatial analyze correlate`'s correlation.md). The paper's rows use Qwen3.5-4B's perception scores.",
        "Policy", (("vlm", "VLM run"), ("tasks", "Tasks"), *((m, h) for m, h, _ in CORRELATION_MEASURES)), tuple(rows))


def episode_join_table(joins: Sequence[Any], labels: Mapping[Path, str] | None = None) -> TableSection:
    """Perception and action on the same episode: per (VLM run, policy, split, measure) the pooled soft-success
    cell of :func:`~bspatial.evaluation.analysis.episode_join.join_runs`: success when the episode's own item was
    answered right vs wrong, the within-task difference with its interval, the task-stratified CMH p."""
    labels = labels or {}
    rows = []
    for join in joins:
        vlm = labels.get(join.vlm_run, join.vlm_run.name)
        for c in join.cells:
            if c.family != POOLED or c.rate != "soft":   # the page shows the headline row; the rest is in join.md
                continue
            group, d = c.join.group, c.difference
            interval = None if d is None or d.se == 0 else (100 * d.low, 100 * d.high)   # se 0: no outcome varies
            rows.append(Row(group.label.replace(str(group.run), labels.get(group.run, group.run.name)), {
                "vlm": Cell(vlm), "split": Cell(group.split), "measure": Cell(c.measure), "n_right": Cell(c.n_right),
                "right": Cell(100 * c.successes_right / c.n_right if c.n_right else None),
                "n_wrong": Cell(c.n_wrong), "wrong": Cell(100 * c.successes_wrong / c.n_wrong if c.n_wrong else None),
                "difference": Cell(None if d is None else 100 * d.estimate, interval),
                "cmh_p": Cell(None if c.association is None else c.association.p_value, digits=3)}))
    return TableSection(
        "episode_join", "Perception and action on the same episode",
        "Each rollout episode paired with the VLM's item rendered from its own first frame (the episode_aligned "
        "config); soft success (%) when that item was answered right vs wrong, pooled over families. Difference: "
        "right minus wrong within tasks (Mantel-Haenszel), percentage points; bracket: Sato's 95% interval. CMH p: "
        "Cochran-Mantel-Haenszel test stratified by task. Per-family rows: `bspatial analyze join`.", "Policy",
        (("vlm", "VLM run"), ("split", "Split"), ("measure", "Measure"), ("n_right", "n right"),
         ("right", "Success if right"), ("n_wrong", "n wrong"), ("wrong", "Success if wrong"),
         ("difference", "Difference"), ("cmh_p", "CMH p")), tuple(rows))


def table4(records: Sequence[Mapping[str, Any]]) -> TableSection:
    """Table 4: one row per policy, held-out and prompt-probe rates with Wilson 95% intervals."""
    groups = {k: g for k, g in group_records(records).items() if k[1] in MANIPULATION_SPLITS}
    rows = []
    for policy in dict.fromkeys(p for p, _ in groups):
        cells: dict[str, Cell] = {}
        for split in MANIPULATION_SPLITS:
            group = groups.get((policy, split))
            rates = rates_of(group) if group else None
            cells[f"{split}_n"] = Cell(rates.n if rates else None)
            for rate in ("soft", "strict", "wrong"):
                cells[f"{split}_{rate}"] = _rate(getattr(rates, rate) if rates else None)
        rows.append(Row(policy_label(policy), cells))
    for ref in load_table("table4_policies"):
        rows.append(Row(ref["policy"], {key: _number(ref[col]) for key, _, col in TABLE4_RATES}, reference=True))
    columns = (("held_out_n", "Held-out n"), *((k, h) for k, h, _ in TABLE4_RATES[:2]), ("prompt_probe_n", "Probe n"),
               *((k, h) for k, h, _ in TABLE4_RATES[2:]))
    return TableSection("table4", "Table 4: policy success (%)",
                        "Pooled over episodes; brackets: Wilson 95% intervals. +Soft includes strict successes; "
                        "W is the wrong-target rate (lower is better).", "Policy", columns, tuple(rows))


def comparison_table(records: Sequence[Mapping[str, Any]], split: str) -> TableSection:
    """Table S9 (held-out) or S10 (prompt-probe) in long form: a row per policy and task, then POOLED."""
    key, title = COMPARISON_SPLITS[split]
    rows = []
    for (policy, s), group in group_records(records).items():
        if s != split:
            continue
        rates = rates_of(group)
        per_task = [*rates.per_task.items(), ("POOLED", {"strict": rates.strict, "soft": rates.soft})]
        for task, r in per_task:
            rows.append(Row(policy_label(policy), {"task": Cell(task), "n": Cell(r["strict"].n),
                                                   "strict": _rate(r["strict"]), "soft": _rate(r["soft"])}))
    for ref in load_table("tableS9_S10_dot_ir_scaling"):
        if ref["split"] != split:
            continue
        for prefix, label in S9_POLICIES:
            rows.append(Row(label, {"task": Cell(ref["task"]), "strict": _number(ref[f"{prefix}_strict"]),
                                    "soft": _number(ref[f"{prefix}_soft"])}, reference=True))
    return TableSection(key, title, "Per task (Table S2 order) and POOLED over episodes; brackets: Wilson 95% "
                        "intervals. Sort by Task to line our rows up with the paper's.", "Policy",
                        (("task", "Task"), ("n", "n"), ("strict", "S"), ("soft", "+Soft")), tuple(rows))


def navigation_table(records: Sequence[Mapping[str, Any]]) -> TableSection:
    """Table S11: navigation success per policy and task (strict rate: navigation is binary), then POOLED."""
    from bspatial.tasks.navigation import NAV_TASKS
    from bspatial.world.floorplans import get_floorplan

    rows = []
    for (policy, split), group in group_records(records).items():
        if split != NAVIGATION_SPLIT:
            continue
        rates = rates_of(group)
        for task, r in [*rates.per_task.items(), ("POOLED", {"strict": rates.strict})]:
            scene = get_floorplan(NAV_TASKS[task].plan).title if task in NAV_TASKS else ""
            rows.append(Row(policy_label(policy), {"task": Cell(task), "scene": Cell(scene), "n": Cell(r["strict"].n),
                                                   "success": _rate(r["strict"])}))
    for ref in load_table("tableS11_navigation"):
        rows.append(Row("BEHAVIOR-Spatial-VLA", {"task": Cell(ref["task"]), "scene": Cell(ref["scene"] or None),
                                         "vqa": _number(ref["vqa"]), "success": _number(ref["success"])},
                        reference=True))
    return TableSection("tableS11", "Table S11: navigation success (%)",
                        "Success: the base meets the goal criterion within the budget (Table S4), pooled over "
                        "episodes; brackets: Wilson 95% intervals. The paper's rows: BEHAVIOR-Spatial-VLA's success and "
                        "Qwen3.5-4B's navigation VQA accuracy per task.", "Policy",
                        (("task", "Task"), ("scene", "Scene"), ("n", "n"), ("vqa", "Nav. VQA"), ("success", "Success")),
                        tuple(rows))


def code_as_policy_tables(records: Sequence[Mapping[str, Any]] = ()) -> tuple[TableSection, TableSection]:
    """Tables 5 and S6: our agent runs' held-out rows (Wilson 95% intervals), then the paper's code-as-policy rows."""
    from bspatial.evaluation.agents.tables import agent_groups, agent_label

    ours5, ours6 = [], []
    for policy, group in agent_groups(records).items():
        rates = rates_of(group)
        label = agent_label(policy)
        ours5.append(Row(label, {"group": Cell("ours"), "n": Cell(rates.n), "soft": _rate(rates.soft),
                                 "strict": _rate(rates.strict), "wrong": _rate(rates.wrong)}))
        per_task = [*rates.per_task.items(), ("POOLED", {"strict": rates.strict, "soft": rates.soft})]
        ours6 += [Row(label, {"task": Cell(task), "n": Cell(r["strict"].n), "soft": _rate(r["soft"]),
                              "strict": _rate(r["strict"])}) for task, r in per_task]
    t5 = [Row(r["writer"], {"group": Cell(r["group"]), "soft": _number(r["soft"]), "strict": _number(r["strict"]),
                            "wrong": _number(r["wrong"])}, reference=True) for r in load_table("table5_code_as_policy")]
    s6 = [Row(r["writer"], {"task": Cell(r["task"]), "n": Cell(int(r["n"])), "soft": _number(r["soft"]),
                            "strict": _number(r["strict"])}, reference=True)
          for r in load_table("tableS6_code_as_policy_per_task")]
    return (
        TableSection("table5", "Table 5: code-as-policy agents (%)", "Pooled over held-out episodes (the paper's: "
                     "469); brackets: Wilson 95% intervals. The scripted writer's rows are bounds: its oracle "
                     "pointer is privileged, its chance pointer points at random.", "Writer",
                     (("group", "Group"), ("n", "n"), ("soft", "+Soft"), ("strict", "S"), ("wrong", "W")),
                     tuple(ours5 + t5)),
        TableSection("tableS6", "Table S6: per-task code-as-policy success (%)",
                     "Per-task values are whole percentages as printed; POOLED from episode counts.", "Writer",
                     (("task", "Task"), ("n", "n"), ("soft", "+Soft"), ("strict", "S")), tuple(ours6 + s6)),
    )


__all__ = ["code_as_policy_tables", "comparison_table", "correlation_table", "episode_join_table", "navigation_table",
           "table4", "vlm_table"]
