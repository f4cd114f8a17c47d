"""``benchmarks/learned.py --smoke``: the wiring of the learned-policies benchmark, not its learning.

One demonstration of each of the three reach tasks, two training steps of each learner (our tiny baseline, its dot-IR, language-blanked
and attention-map IR variants, an ACT through the real ``lerobot-train``), one held-out and one prompt-probe episode per task each with
the references, capped at a few steps; then the CSV and Markdown tables, Table 3's correlation and the leaderboard. A rerun resumes: it records, trains and rolls
out nothing again.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "learned.py"
POLICIES = ["tiny", "tiny_dot_ir", "tiny_blind_language", "tiny_attn_map_ir", "act", "random", "scripted", "scripted-memorizer"]


def _run(out: Path, results: Path, *flags: str, returncode: int = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--smoke", "--out", str(out), "--results", str(results), *flags],
                          capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled"})
    assert proc.returncode == returncode, proc.stdout[-3000:] + proc.stderr[-5000:]
    return proc


def test_the_smoke_run_writes_a_table4_row_per_policy_and_split_and_resumes(tmp_path):
    out, results = tmp_path / "run", tmp_path / "results"
    _run(out, results)
    with (results / "learned_table4.csv").open() as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert reader.fieldnames == ["policy", "split", "n", "strict", "strict_lo", "strict_hi", "soft", "soft_lo",
                                 "soft_hi", "wrong", "wrong_lo", "wrong_hi"]
    assert [(r["policy"], r["split"]) for r in rows] == [(p, s) for p in POLICIES for s in ("held_out", "prompt_probe")]
    for row in rows:
        assert row["n"] == "3"   # one episode of each task
        for rate in ("strict", "soft", "wrong"):
            assert 0 <= float(row[f"{rate}_lo"]) <= float(row[rate]) <= float(row[f"{rate}_hi"]) <= 100
    markdown = (results / "learned_table4.md").read_text()
    assert "| policy | held-out n |" in markdown and "wall time per step" in markdown
    # The language-blanked learner was prompted with the bare task name, as it was trained.
    blank = [json.loads(p.read_text()) for p in (out / "rollouts" / "tiny_blind_language-held_out" / "episodes").glob("*.json")]
    assert {(r["condition"], r["instruction"]) for r in blank} == {("task_name", "reach plate"), ("task_name", "reach tool"),
                                                                  ("task_name", "reach dice")}
    # The diagnosis of our three learners on the validation demonstrations, in the Markdown beside the table.
    diagnosis = json.loads((out / "diagnosis.json").read_text())
    assert sorted(diagnosis) == ["tiny", "tiny_attn_map_ir", "tiny_blind_language", "tiny_dot_ir"]
    assert diagnosis["tiny_blind_language"]["trained_prompt"] == "bare" and diagnosis["tiny"]["frames"] == 3 * 4
    assert "| learner | frames | val loss: instruction / bare / swapped |" in markdown
    # Table 3's layout and the leaderboard ran on the learned rows.
    assert "tiny" in (out / "reports" / "correlation" / "correlation.md").read_text()
    assert (out / "site" / "index.html").is_file()
    # Perception and action on the same episode: each of our learners joined on its episodes' aligned IR items;
    # the tiny presets have no pointing head, so only the chance points' reference rows (the own-point join of a
    # pointing learner is tested end to end in tests/construction/publishing/test_aligned_records.py).
    assert "Perception and action on the same episode" in markdown
    for learner in ("tiny", "tiny_dot_ir", "tiny_attn_map_ir"):   # the language-blanked one runs another condition
        for split in ("held_out", "prompt_probe"):
            assert f"| {learner} | chance:0 | {split} | soft |" in markdown, (learner, split)
        assert f"| {learner} | {learner} |" not in markdown
        assert (out / "reports" / f"join-{learner}-chance" / "join.md").is_file()
    # The cue ladder of the two IR learners, with its references (no IR slot: their rung is "none", the wrong cue
    # recomputed and scored; capped at 8 steps, no episode reaches any goal, so only the rows are checked here: the
    # references' bands are tests/evaluation/rollout's).
    assert "| scripted | none | 3 |" in markdown and "| scripted-wrong | none | 3 |" in markdown
    for learner in ("tiny_dot_ir", "tiny_attn_map_ir"):
        for cue in ("oracle", "none", "wrong"):
            assert f"| {learner} | {cue} | 3 |" in markdown, (learner, cue)
    # The baseline and the expert under each perturbation axis, paired with their unperturbed episodes.
    for policy in ("tiny", "scripted"):
        assert f"| {policy} | none | - | 3 |" in markdown, policy
        for axis in ("camera", "light", "appearance", "noise", "robot_state"):
            assert f"| {policy} | {axis} | " in markdown and (out / "rollouts" / f"{policy}-held_out-{axis}").is_dir()
    # A rerun finds every step done: nothing is recorded, trained or rolled out again (only the tables, the
    # correlation and the leaderboard are written anew, which takes seconds).
    # A diagnosis is kept only for the weights it was computed on: the entry marked stale is recomputed, the
    # one whose weights are unchanged is kept as it is (its marker survives).
    diagnosis["tiny"].update(weights_sha256="stale", frames=-1)
    diagnosis["tiny_dot_ir"].update(frames=-1)
    (out / "diagnosis.json").write_text(json.dumps(diagnosis))
    before = json.loads((out / "timings.json").read_text())
    rerun = _run(out, results)
    rediagnosed = json.loads((out / "diagnosis.json").read_text())
    assert rediagnosed["tiny"]["frames"] == 3 * 4 and rediagnosed["tiny_dot_ir"]["frames"] == -1
    assert "demos: done" in rerun.stderr and "train tiny: done" in rerun.stderr and "train act: done" in rerun.stderr
    after = json.loads((out / "timings.json").read_text())
    redone = ("analysis", "diagnose", "join")
    assert {k: v for k, v in after.items() if k not in redone} == {k: v for k, v in before.items() if k not in redone}
    assert any(k.startswith("rollout ") for k in before) and "train act" in before
    # A subset of the learners (--learners): their rows and the references', from the finished runs (nothing redone).
    _run(out, results, "--learners", "tiny", "tiny_dot_ir")
    with (results / "learned_table4.csv").open() as f:
        subset = sorted({r["policy"] for r in csv.DictReader(f)})
    assert subset == ["random", "scripted", "scripted-memorizer", "tiny", "tiny_dot_ir"]
    assert {k: v for k, v in json.loads((out / "timings.json").read_text()).items() if k not in redone} == \
        {k: v for k, v in before.items() if k not in redone}


def test_an_unknown_learner_is_refused_by_name_before_anything_runs(tmp_path):
    proc = _run(tmp_path / "run", tmp_path / "results", "--learners", "tiny", "tiny_dot", returncode=2)
    assert "--learners: unknown learner(s) 'tiny_dot' for preset 'tiny'" in proc.stderr
    assert not (tmp_path / "run").exists()
