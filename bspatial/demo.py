"""`make demo`: the main job on the embedded default, end to end through the public entry points.

What exists so far (foundation): the three scoring rules as `evaluate` metrics, seeded into the
offline cache and loaded by bare name, then

1. the paper's held-out baseline episodes (Table S5 counts) re-scored by ``bspatial_action``, per
   task with Wilson 95% intervals, beside the paper's printed rates;
2. a seeded chance model answering the paper's general-VQA question mix (Table S1 counts) in free
   text, parsed and scored by ``bspatial_vqa`` into Table 1's layout;
3. the VLM harness (``bspatial eval-vlm``) with the chance backend and a tiny random Qwen3.5 on the
   fixture suites (Hub-shaped parquet repos written under ``workdir``: every setting, prompt variant
   and IR region kind), its resumable run folders, and Table 1 / Table 2 from ``bspatial report``;
4. the suites built from the simulator (``bspatial build --preset tiny``: rendered scenes, geometric
   answers, IR masks and placement geometry) evaluated by the harness (Table 2 layout);
5. rollouts of the scripted experts and of a random policy on a few held-out and prompt-probe
   episodes in the simulator, scored by the Table S4 rules (Table 4 layout), and on a few navigation
   episodes (Table S11 layout);
6. the policy pipeline: scripted demonstrations recorded as a LeRobot dataset (``bspatial demos``),
   a tiny random-backbone BEHAVIOR-Spatial-VLA trained a few steps on them (``bspatial train``),
   reloaded with ``from_pretrained`` and rolled out through the receding-horizon controller
   (``bspatial rollout --policy <checkpoint>``), with a capped step budget; then the same for navigation
   (``bspatial demos --suite navigation``, ``bspatial train --preset tiny_navigation``): a tiny navigation
   policy that sees the episode's scene-context frames, rolled out on a few navigation spawns with the
   frames fed (Table S11 layout);
7. the perception-action correlation (``bspatial analyze correlate``) of the simulator-built suites'
   VLM run against the scripted and random held-out rollouts, and the static HTML leaderboard of
   every run above (``bspatial report --html``), whose path is printed last.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bspatial.catalog.counts import MULTI_FRAME_CATEGORY_COUNTS, SINGLE_FRAME_COUNTS
from bspatial.reference import load_table, realise_outcomes
from bspatial.scoring.vqa import MULTI_FRAME_SETTINGS, pooled_accuracy

logger = logging.getLogger(__name__)

# Option sets used by the chance demo (the answer spaces of Table S1's direction / comparison templates).
_DIRECTION_OPTIONS = ["front-left", "front-right", "back-left", "back-right"]
_COMPARISON_OPTIONS = ["object 1", "object 2", "object 3", "object 4"]
_TABLE_WIDTH = 132
_BUILD_PRESET = "tiny"  # bspatial.construction.publishing.presets.PRESETS: every template and IR region kind, in seconds
# One reach task per relation family plus both placement families: a short but complete rollout.
_ROLLOUT_TASKS = ("reach_plate", "reach_dice", "reach_tool", "place_carving_knife", "place_tupperware_in_fridge")
# The trained tiny policy's smoke rollout: one demo task, a few steps of training, capped episodes.
_POLICY_DEMO_TASK = "reach_plate"
# Navigation rollouts: one short in-room route and one through a doorway (Table S11).
_NAVIGATION_TASKS = ("move_to_bookcase", "move_to_bathroom")
_POLICY_SMOKE_STEPS = 90
# The tiny navigation policy's demonstration: the navigation task whose seed-0 training demonstration is the
# shortest (120 steps), so recording it adds little to the demo; it is rolled out there and on _NAVIGATION_TASKS.
_NAVIGATION_POLICY_TASK = "move_to_table_near_sofa"
# The tiny random model only shows the transformers path end to end; short answers keep it fast.
_TINY_MAX_NEW_TOKENS = 16
# Table 1's column suffix per category (table1_vlm_vqa.csv).
_TABLE1_CATEGORY_COLUMNS = {"direction": "dir", "distance": "dist", "size": "size"}


def run_demo(seed: int = 0, workdir: str | Path = ".demo", console: Console | None = None) -> None:
    """Seed the metric cache, load the metrics by bare name offline, print the demo tables."""
    # Non-terminal consoles (make, CI logs) default to 80 columns, which wraps every cell.
    console = console or Console(width=max(Console().width, _TABLE_WIDTH))
    from bspatial.hub import install_metrics

    install_metrics()
    # evaluate reads this at import time: with it, bare names resolve from the seeded cache.
    os.environ["HF_EVALUATE_OFFLINE"] = "1"
    import evaluate

    action = evaluate.load("bspatial_action")
    vqa = evaluate.load("bspatial_vqa")
    console.print(action_table(action))
    console.print(vqa_chance_table(vqa, seed))
    for table in harness_tables(Path(workdir), seed):
        console.print(table)
    console.print(built_suite_table(Path(workdir), seed))
    console.print(rollout_table(Path(workdir), seed))
    console.print(navigation_table(Path(workdir), seed))
    console.print(policy_table(Path(workdir), seed))
    console.print(navigation_policy_table(Path(workdir), seed))
    console.print(correlation_table(Path(workdir), seed))
    index = html_report(Path(workdir), seed)
    logger.info("HTML report of the demo's runs: %s", index)
    console.print(f"HTML report (opens from the file system): {index.resolve().as_uri()}")


def action_table(action_metric) -> Table:
    """Table S5's held-out baseline, realised as episodes and re-scored by the action metric."""
    rows = load_table("tableS5_baseline_per_task")
    outcomes, credit, tasks = [], [], []
    for row in rows:
        o, c = realise_outcomes(int(row["n"]), float(row["strict"]), float(row["soft"]), float(row["wrong"]))
        outcomes += o
        credit += c
        tasks += [row["task"]] * len(o)
    result = action_metric.compute(predictions=outcomes, references=tasks, soft_credit=credit)
    table = Table(title="Held-out baseline (paper Table S5 episodes) re-scored by bspatial_action; Wilson 95% CI")
    for column in ("task", "n", "strict", "+soft", "wrong", "paper S / +Soft / W"):
        table.add_column(column, justify="left" if column == "task" else "right")
    for row in rows:
        task = row["task"]
        table.add_row(
            task,
            row["n"],
            *(_rate_cell(result, f"{task}/{k}") for k in ("strict", "soft", "wrong")),
            f"{row['strict']} / {row['soft']} / {row['wrong']}",
        )
    table.add_row("POOLED", str(result["n"]), *(_rate_cell(result, k) for k in ("strict", "soft", "wrong")), "27.9 / 41.6 / 38.2")
    return table


def _rate_cell(result: dict, key: str) -> str:
    return f"{result[key]:.1f} [{result[key + '_ci_low']:.1f}, {result[key + '_ci_high']:.1f}]"


def chance_answer(options: list[str], rng: random.Random) -> str:
    """The chance reference model: a uniformly drawn option, written as a model would ("B. front")."""
    index = rng.randrange(len(options))
    return f"{'ABCD'[index]}. {options[index]}"


def general_vqa_mix(rng: random.Random) -> list[dict]:
    """Synthetic items with the paper's general-VQA counts per setting / category / subtype."""
    items = []
    for (category, subtype), count in SINGLE_FRAME_COUNTS.items():
        items += [{"setting": "single_frame", "category": category, "subtype": subtype} for _ in range(count)]
    for category, count in MULTI_FRAME_CATEGORY_COUNTS.items():
        # Table S1 gives category totals only; alternate the two multi-frame settings.
        for i in range(count):
            setting = MULTI_FRAME_SETTINGS[i % 2]
            items.append({"setting": setting, "category": category, "subtype": "object_relative"})
    for item in items:
        item["options"] = _DIRECTION_OPTIONS if item["category"] == "direction" else _COMPARISON_OPTIONS
        item["answer"] = "ABCD"[rng.randrange(4)]
    return items


def table1_cells(result: dict) -> dict[str, float]:
    """Table 1's columns from a ``bspatial_vqa`` result (multi-frame pools rotation and navigation)."""
    cells = {
        "single_all": result["setting/single_frame"],
        **{f"single_{col}": result[f"single_frame/{cat}"] for cat, col in _TABLE1_CATEGORY_COLUMNS.items()},
    }
    multi = [s for s in MULTI_FRAME_SETTINGS if f"setting/{s}" in result]
    for column, suffix in (("multi_all", ""), ("multi_dir", "/direction")):
        keys = [f"setting/{s}" if not suffix else f"{s}{suffix}" for s in multi]
        cells[column] = pooled_accuracy([(result[k], result[f"n/{k}"]) for k in keys])
    return cells


def vqa_chance_table(vqa_metric, seed: int) -> Table:
    """Score a seeded chance model on the general-VQA mix and lay it out as Table 1."""
    rng = random.Random(seed)
    items = general_vqa_mix(rng)
    predictions = [chance_answer(item["options"], rng) for item in items]
    result = vqa_metric.compute(
        predictions=predictions,
        references=[i["answer"] for i in items],
        options=[i["options"] for i in items],
        settings=[i["setting"] for i in items],
        categories=[i["category"] for i in items],
        subtypes=[i["subtype"] for i in items],
    )
    cells = table1_cells(result)
    table = Table(title=f"Table 1 layout: chance reference on the paper's general-VQA mix (n={result['n']}, seed {seed})")
    table.add_column("model")
    for column in cells:
        table.add_column(column, justify="right")
    table.add_row("chance", *(f"{v:.1f}" for v in cells.values()))
    for row in load_table("table1_vlm_vqa"):
        if row["model"].lower().startswith("random") or row["model"].lower().startswith("chance"):
            table.add_row(f"paper: {row['model']}", *(row[c] for c in cells))
    logger.info("chance model: %d answers, %d unparseable", result["n"], result["unparseable"])
    return table


def harness_tables(workdir: Path, seed: int) -> list[Table]:
    """Run the VLM harness on the fixture suites with the chance backend and a tiny random Qwen3.5
    checkpoint (written offline; its answers are mostly unparseable and scored incorrect, never
    guessed); Table 1 and 2 layouts, one row per model."""
    import datasets

    from bspatial.evaluation.vlm.backends import load_backend
    from bspatial.evaluation.vlm.fixtures import FIXTURE_CONFIGS, write_fixture_repos
    from bspatial.evaluation.vlm.report import TABLES, load_run, table_rows
    from bspatial.evaluation.vlm.runner import run_suite
    from bspatial.evaluation.vlm.tiny_checkpoint import write_tiny_checkpoint

    datasets.disable_progress_bars()  # the fixture splits are tiny; their bars would bury the tables
    repos = write_fixture_repos(workdir / "fixture")
    tiny = workdir / "tiny-qwen3_5"
    if not tiny.is_dir():
        write_tiny_checkpoint(tiny, seed=seed)
    models = {
        f"chance-{seed}": load_backend(f"chance:{seed}"),
        "tiny-qwen3_5": load_backend(str(tiny), max_new_tokens=_TINY_MAX_NEW_TOKENS),
    }
    runs = []
    for name, backend in models.items():
        run_dir = workdir / "runs" / name
        for suite, configs in FIXTURE_CONFIGS.items():
            for config in configs:
                run_suite(backend, suite, config, run_dir, data=str(repos[suite]), progress=False)
        runs.append(load_run(run_dir))
    tables = []
    for name, title in (("table1", "Table 1 layout"), ("table2", "Table 2 layout")):
        table = Table(title=f"{title}: bspatial eval-vlm on the fixture suites ({workdir / 'runs'})")
        table.add_column("run")
        for _, header, _ in TABLES[name]:
            table.add_column(header, justify="right")
        for row in table_rows(runs, name):
            cells = [row[column] for column, _, _ in TABLES[name]]
            table.add_row(row["run"], *("-" if v is None else f"{v:.1f}" for v in cells))
        tables.append(table)
    return tables


def _layout(title: str, columns: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title)
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*row)
    return table


def built_suite_table(workdir: Path, seed: int) -> Table:
    """Build the tiny preset from the simulator and evaluate the chance backend on it (Table 2 layout)."""
    from bspatial.construction.publishing.build import build
    from bspatial.evaluation.vlm.report import TABLES, load_run, table_rows
    from bspatial.evaluation.vlm.runner import run_suite

    build_dir = workdir / "build"
    if not (build_dir / "vqa").is_dir():
        build(_BUILD_PRESET, build_dir, seed=seed)
    run_dir = workdir / "runs-built" / f"chance-{seed}"
    run_suite(f"chance:{seed}", "vqa", "task_manipulation", run_dir, data=str(build_dir / "vqa"), progress=False)
    run_suite(f"chance:{seed}", "ir", "all", run_dir, data=str(build_dir / "ir"), progress=False)
    (row,) = table_rows([load_run(run_dir)], "table2")
    cells = ["-" if row[c] is None else f"{row[c]:.1f}" for c, _, _ in TABLES["table2"]]
    return _layout(
        f"Table 2 layout on suites built from the simulator (bspatial build --preset {_BUILD_PRESET} -> {build_dir})",
        ["run"] + [header for _, header, _ in TABLES["table2"]],
        [[row["run"], *cells]],
    )


def rollout_table(workdir: Path, seed: int) -> Table:
    """Scripted experts (upper reference) and a random policy (lower) on a few held-out and probe episodes."""
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.runner import run_rollouts
    from bspatial.evaluation.rollout.plan import RunSettings
    from bspatial.evaluation.rollout.tables import TABLE4_COLUMNS, group_records, table4_rows

    runs = []
    for policy in ("scripted", "random"):
        for split in ("held_out", "prompt_probe"):
            out = workdir / "rollouts" / f"{policy}-{split}"
            run_rollouts(policy, split, list(_ROLLOUT_TASKS), out, RunSettings(seed=seed), n_episodes=1)
            runs += load_results(out)
    rows = table4_rows(group_records(runs))
    return _layout(
        f"Table 4 layout: rollouts in the simulator, 1 held-out and 1 prompt-probe episode each of "
        f"{', '.join(_ROLLOUT_TASKS)}",
        ["policy", "n"] + [header for _, _, header in TABLE4_COLUMNS],
        [[r["policy"], f"{r['held_out_n']} + {r['prompt_probe_n']}", *(r[f"{s}_{k}"] for s, k, _ in TABLE4_COLUMNS)]
         for r in rows],
    )


def navigation_table(workdir: Path, seed: int) -> Table:
    """Scripted navigation expert and a random policy on a few validated held-out spawns (Table S11 layout)."""
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.runner import run_rollouts
    from bspatial.evaluation.rollout.plan import RunSettings
    from bspatial.evaluation.rollout.tables import s11_rows

    rows = []
    for policy in ("scripted", "random"):
        out = workdir / "rollouts" / f"{policy}-navigation"
        run_rollouts(policy, "navigation", list(_NAVIGATION_TASKS), out, RunSettings(seed=seed), n_episodes=1)
        rows += [[policy, r["task"], str(r["n"]), f"{r['success']:.1f} [{r['ci_low']:.1f}, {r['ci_high']:.1f}]"]
                 for r in s11_rows(load_results(out))]
    return _layout(f"Table S11 layout: navigation rollouts, 1 held-out spawn each of {', '.join(_NAVIGATION_TASKS)}",
                   ["policy", "task", "n", "success"], rows)


@contextlib.contextmanager
def _one_torch_thread():
    """One intra-op torch thread while the tiny policies train and roll out: their matmuls are too small to share
    (benchmarks/context_frames.py: a tiny training step ~10x faster than with 2 threads on a loaded 2-core machine)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def policy_table(workdir: Path, seed: int) -> Table:
    """Demos -> tiny policy trained with Accelerate -> closed-loop rollout of the checkpoint."""
    from bspatial.construction.demonstrations.demos import record_demos
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.runner import run_rollouts
    from bspatial.evaluation.rollout.plan import RunSettings
    from bspatial.evaluation.rollout.tables import group_records, table4_rows
    from bspatial.modeling.train import train

    demos = workdir / "demos"
    if not demos.is_dir():
        record_demos(demos, tasks=[_POLICY_DEMO_TASK], episodes_per_task=1, seed=seed)
    policy_dir = workdir / "policy"
    checkpoint = policy_dir / "pretrained_model"
    out = workdir / "rollouts" / "tiny-policy"
    with _one_torch_thread():
        if not checkpoint.is_dir():
            # An interrupted demo left a run here: continue it (train refuses to start over in a non-empty folder).
            result = train("tiny", str(demos), str(policy_dir), resume=(policy_dir / "run_config.json").exists())
            logger.info("trained the tiny policy %d steps, final loss %.3f", result.last_step, result.losses[-1])
        run_rollouts(str(checkpoint), "held_out", [_POLICY_DEMO_TASK], out,
                     RunSettings(seed=seed, max_steps=_POLICY_SMOKE_STEPS), n_episodes=1)
    rows = table4_rows(group_records(load_results(out)))
    return _layout(
        f"Tiny trained policy ({checkpoint}): held-out {_POLICY_DEMO_TASK}, budget capped at {_POLICY_SMOKE_STEPS} "
        f"steps (a pipeline check, not a benchmark number)",
        ["policy", "n", "errors", "Held-out +Soft", "Held-out S"],
        [[r["policy"], str(r["held_out_n"]), str(r["held_out_errors"]), r["held_out_soft"], r["held_out_strict"]]
         for r in rows],
    )


def navigation_policy_table(workdir: Path, seed: int) -> Table:
    """Navigation demos (with their context frames) -> tiny navigation policy -> rollouts fed the same frames."""
    from bspatial.construction.demonstrations.demos import record_demos
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.runner import run_rollouts
    from bspatial.evaluation.rollout.plan import RunSettings
    from bspatial.evaluation.rollout.tables import s11_rows
    from bspatial.modeling.train import train

    demos = workdir / "demos-navigation"
    if not demos.is_dir():
        record_demos(demos, tasks=[_NAVIGATION_POLICY_TASK], episodes_per_task=1, seed=seed, suite="navigation")
    policy_dir = workdir / "policy-navigation"
    checkpoint = policy_dir / "pretrained_model"
    out = workdir / "rollouts" / "tiny-navigation-policy"
    tasks = [_NAVIGATION_POLICY_TASK, *(t for t in _NAVIGATION_TASKS if t != _NAVIGATION_POLICY_TASK)]
    with _one_torch_thread():
        if not checkpoint.is_dir():
            result = train("tiny_navigation", str(demos), str(policy_dir),
                           resume=(policy_dir / "run_config.json").exists())
            logger.info("trained the tiny navigation policy %d steps, final loss %.3f", result.last_step,
                        result.losses[-1])
        run_rollouts(str(checkpoint), "navigation", tasks, out, RunSettings(seed=seed, max_steps=_POLICY_SMOKE_STEPS),
                     n_episodes=1)
    records = load_results(out)
    fed = {r["task"]: r["context_frames"] for r in records}
    rows = [[r["task"], str(r["n"]), str(r["errors"]), f"{r['success']:.1f} [{r['ci_low']:.1f}, {r['ci_high']:.1f}]",
             str(fed.get(r["task"], "-"))] for r in s11_rows(records)]
    return _layout(
        f"Table S11 layout: tiny navigation policy with scene-context frames ({checkpoint}), 1 held-out spawn each, "
        f"budget capped at {_POLICY_SMOKE_STEPS} steps (a pipeline check, not a benchmark number)",
        ["task", "n", "errors", "Navigation success (S11)", "context frames fed"], rows)


def _correlation_inputs(workdir: Path, seed: int) -> tuple[Path, list[Path]]:
    # The simulator-built suites and the scripted / random held-out rollouts share the rollout tasks
    # (_ROLLOUT_TASKS are in the tiny preset), so every pair joins at least 3 tasks.
    return (workdir / "runs-built" / f"chance-{seed}",
            [workdir / "rollouts" / f"{policy}-held_out" for policy in ("scripted", "random")])


def correlation_table(workdir: Path, seed: int) -> Table:
    """``bspatial analyze correlate`` on the demo's own runs: per-task perception vs per-task success."""
    from bspatial.evaluation.analysis.correlate import correlate_runs
    from bspatial.evaluation.analysis.report import write_report

    vlm, rollouts = _correlation_inputs(workdir, seed)
    analysis = correlate_runs(vlm, rollouts, seed=seed)
    written = write_report(analysis, workdir / "reports" / "correlation")
    rows = [[c.measure.name, c.policy.label, c.rate, str(len(c.joined.tasks)),
             "n/a" if c.rho is None else f"{c.rho:.3f}", c.undefined or "-"] for c in analysis.correlations
            if c.rate == "soft"]   # Table 3 reads soft success; correlation.md has strict too
    return _layout(f"Table 3 layout: Spearman's rho, {vlm.name} (built suites) vs held-out rollouts "
                   f"({written['correlation.md']}); one episode per task, so a pipeline check, not a finding",
                   ["measure", "policy", "success", "tasks", "rho", "undefined because"], rows)


def html_report(workdir: Path, seed: int) -> Path:
    """``bspatial report --html`` over every run the demo made; returns the site's index.html."""
    from bspatial.evaluation.analysis.site import write_site

    runs = [*sorted((workdir / "runs").iterdir()), *sorted((workdir / "runs-built").iterdir()),
            *sorted((workdir / "rollouts").iterdir())]
    return write_site([r for r in runs if r.is_dir()], workdir / "site", seed=seed)
