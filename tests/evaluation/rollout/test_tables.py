"""Tables from result files match an independent count (no simulator)."""

import csv
import json

import numpy as np

from bspatial.evaluation.rollout.tables import write_tables
from bspatial.scoring.stats import wilson_interval


def write_run(folder, policy, split, seed):
    rng = np.random.default_rng(seed)
    (folder / "episodes").mkdir(parents=True)
    records = []
    for i in range(40):
        task = ["reach_plate", "reach_dice", "place_bowl_in_cabinet"][i % 3]
        status = "error" if i % 13 == 5 else "timeout"
        outcome = "none" if status == "error" else str(rng.choice(["correct", "wrong", "none"]))
        soft = bool(outcome == "none" and status != "error" and rng.random() < 0.5)
        r = dict(task=task, variant="v", seed=i, split=split, index=i, policy=policy, status=status,
                 outcome=outcome, soft_credit=soft, detail="", steps=1, message="", trace=None)
        (folder / "episodes" / f"{task}-{i:04d}.json").write_text(json.dumps(r))
        records.append(r)
    return records


def count(records, task=None):
    rows = [r for r in records if task is None or r["task"] == task]
    strict = sum(r["outcome"] == "correct" for r in rows)
    soft = strict + sum(r["outcome"] == "none" and r["soft_credit"] for r in rows)
    return len(rows), strict, soft, sum(r["outcome"] == "wrong" for r in rows), sum(r["status"] == "error" for r in rows)


def cell(k, n):
    low, high = wilson_interval(k, n)
    return f"{100 * k / n:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def test_tables_match_an_independent_count(tmp_path):
    runs = {("random", "held_out"): 1, ("scripted", "held_out"): 2, ("scripted", "prompt_probe"): 3}
    data = {key: write_run(tmp_path / f"{key[0]}-{key[1]}", *key, seed) for key, seed in runs.items()}
    written = write_tables([tmp_path / f"{p}-{s}" for p, s in runs], tmp_path / "tables")
    rows = list(csv.DictReader(written["table4.csv"].open()))
    assert [r["policy"] for r in rows] == ["scripted (upper reference)", "random (lower reference)"]
    n, strict, soft, wrong, errors = count(data[("scripted", "prompt_probe")])
    assert (rows[0]["prompt_probe_n"], rows[0]["prompt_probe_errors"]) == (str(n), str(errors))
    assert rows[0]["prompt_probe_soft"] == cell(soft, n)
    assert rows[0]["prompt_probe_strict"] == cell(strict, n)
    assert rows[0]["prompt_probe_wrong"] == cell(wrong, n)
    n, strict, soft, _, errors = count(data[("random", "held_out")])
    assert rows[1]["held_out_soft"] == cell(soft, n) and rows[1]["held_out_strict"] == cell(strict, n)
    assert rows[1]["prompt_probe_soft"] == "-" and errors > 0
    per_task = list(csv.DictReader(written["per_task_random_held_out.csv"].open()))
    assert [r["task"] for r in per_task] == ["reach_plate", "reach_dice", "place_bowl_in_cabinet", "POOLED"]
    for row in per_task:
        n, strict, soft, wrong, errors = count(data[("random", "held_out")], None if row["task"] == "POOLED" else row["task"])
        assert (int(row["n"]), int(row["strict_count"]), int(row["soft_count"]), int(row["wrong_count"]),
                int(row["errors"])) == (n, strict, soft, wrong, errors)
        low, high = wilson_interval(soft, n)
        assert (float(row["soft_ci_low"]), float(row["soft_ci_high"])) == (round(100 * low, 1), round(100 * high, 1))
    assert "Held-out +Soft" in written["table4.md"].read_text()
    assert "| POOLED |" in written["per_task_scripted_prompt_probe.md"].read_text()


def test_table_s11_pools_the_papers_navigation_counts(tmp_path):
    """Result files realising Table S11's published rates give back its rows and the pooled 59.9 (240/401)."""
    from bspatial.reference import load_table
    from bspatial.catalog.tasks import TASKS

    paper = {r["task"]: r for r in load_table("tableS11_navigation")}
    folder = tmp_path / "nav"
    (folder / "episodes").mkdir(parents=True)
    expected_successes = 0
    for task, row in paper.items():
        if task == "POOLED":
            continue
        n = TASKS[task].n_navigation
        k = round(float(row["success"]) * n / 100)
        expected_successes += k
        for i in range(n):
            r = dict(task=task, variant="", seed=i, split="navigation", index=i, policy="ckpt", status="decided",
                     outcome="correct" if i < k else "none", soft_credit=False, detail="", steps=1, message="",
                     trace=None, ir=None, spawn=None)
            (folder / "episodes" / f"{task}-{i:04d}.json").write_text(json.dumps(r))
    written = write_tables([folder], tmp_path / "tables")
    rows = {r["task"]: r for r in csv.DictReader(written["table_s11.csv"].open())}
    for task, row in paper.items():
        assert float(rows[task]["success"]) == float(row["success"]), task
    pooled = rows["POOLED"]
    assert (int(pooled["n"]), int(pooled["successes"])) == (401, expected_successes) == (401, 240)
    # Wilson 95% by hand: p = 240/401, z = 1.959964.
    p, n, z = 240 / 401, 401, 1.959964
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    assert (float(pooled["success"]), float(pooled["ci_low"]), float(pooled["ci_high"])) == (
        59.9, round(100 * (centre - half), 1), round(100 * (centre + half), 1))
    assert "| POOLED |  | 59.9 [" in written["table_s11.md"].read_text()


def test_s9_s10_layout_reproduces_the_paper_from_realised_episodes(tmp_path):
    """Episode records realising Table S9 / S10's base and dot-IR columns come back as the printed table."""
    import csv as csv_module

    from bspatial.evaluation.rollout.tables import COMPARISON_TABLES
    from bspatial.reference import load_table, realise_outcomes
    from bspatial.catalog.tasks import canonical_task_name, get_task

    paper = load_table("tableS9_S10_dot_ir_scaling")
    for split in ("held_out", "prompt_probe"):
        records = []
        for policy in ("base", "dot100"):
            for row in (r for r in paper if r["split"] == split and r["task"] != "POOLED"):
                spec = get_task(row["task"])
                n = spec.n_heldout if split == "held_out" else spec.n_prompt_probe
                outcomes, credit = realise_outcomes(n, float(row[f"{policy}_strict"]), float(row[f"{policy}_soft"]), 0.0)
                records += [{"policy": policy, "split": split, "task": canonical_task_name(row["task"]), "outcome": o,
                             "soft_credit": c, "status": "decided"} for o, c in zip(outcomes, credit)]
        run = tmp_path / split / "episodes"
        run.mkdir(parents=True)
        for i, r in enumerate(records):
            (run / f"{i:05d}.json").write_text(json.dumps(r))
        written = write_tables([tmp_path / split], tmp_path / split / "tables")
        ours = list(csv_module.DictReader(written[f"{COMPARISON_TABLES[split]}.csv"].open()))
        printed = {canonical_task_name(r["task"]) if r["task"] != "POOLED" else "POOLED": r
                   for r in paper if r["split"] == split}
        assert {r["task"] for r in ours} == set(printed)
        for r in ours:
            for policy in ("base", "dot100"):
                assert float(r[f"{policy} S"]) == float(printed[r["task"]][f"{policy}_strict"]), (split, r["task"])
                assert float(r[f"{policy} +Soft"]) == float(printed[r["task"]][f"{policy}_soft"]), (split, r["task"])


def test_one_checkpoint_under_two_ir_cues_is_two_rows_never_one_pooled_row(tmp_path):
    spec = "runs/dot/checkpoints/000300/pretrained_model"
    runs = {}
    for cue, seed in (("oracle", 1), ("predicted", 2)):
        records = write_run(tmp_path / cue, spec, "held_out", seed)
        for r in records:   # the IR summary a dot-IR checkpoint's records carry
            r["ir"] = {"source": cue, "mode": "dot"}
            (tmp_path / cue / "episodes" / f"{r['task']}-{r['index']:04d}.json").write_text(json.dumps(r))
        runs[cue] = records
    written = write_tables([tmp_path / "oracle", tmp_path / "predicted"], tmp_path / "tables")
    rows = {r["policy"]: r for r in csv.DictReader(written["table4.csv"].open())}
    assert set(rows) == {"dot@000300", "dot@000300 [IR predicted]"}
    for label, cue in (("dot@000300", "oracle"), ("dot@000300 [IR predicted]", "predicted")):
        n, strict, _, _, errors = count(runs[cue])
        assert rows[label]["held_out_n"] == str(n) and rows[label]["held_out_errors"] == str(errors)
        assert rows[label]["held_out_strict"] == cell(strict, n)
    assert {"per_task_dot_000300_held_out.csv", "per_task_dot_000300_ir_predicted_held_out.csv"} <= set(written)
