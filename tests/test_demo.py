"""`bspatial demo` end to end in a fresh process: metrics by bare name, the paper's pooled rates, harness tables."""

import os
import subprocess
import sys
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


def test_demo_prints_the_tables_and_reruns_resuming(tmp_path):
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), COLUMNS="200")
    env.pop("HF_EVALUATE_OFFLINE", None)  # the demo sets it itself after seeding the cache
    command = [sys.executable, "-m", "bspatial.cli", "demo", "--workdir", str(tmp_path / "demo")]
    first = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    out = first.stdout
    # Table S5 re-scored through bspatial_action reproduces the paper's pooled held-out rates.
    pooled = next(line for line in out.splitlines() if "POOLED" in line)
    assert "27.9 [" in pooled and "41.6 [" in pooled and "38.2 [" in pooled and "469" in pooled
    assert "Table 1 layout" in out and "Table 2 layout" in out and "IR Strict" in out
    assert "suites built from the simulator" in out
    assert "scripted (upper reference)" in out and "random (lower reference)" in out
    assert "Table S11 layout" in out and "move_to_bookcase" in out
    assert "Tiny trained policy" in out
    # The tiny navigation policy: trained on navigation demos with their context frames, rolled out fed them.
    assert "Table S11 layout: tiny navigation policy" in out
    from bspatial.construction.questions.navigation_vqa import CONTEXT_FRAMES
    from bspatial.evaluation.rollout.episodes import load_results

    records = load_results(tmp_path / "demo" / "rollouts" / "tiny-navigation-policy")
    assert sorted(r["task"] for r in records) == ["move_to_bathroom", "move_to_bookcase", "move_to_table_near_sofa"]
    assert all(r["status"] != "error" and r["context_frames"] == CONTEXT_FRAMES for r in records), records
    assert (tmp_path / "demo" / "demos-navigation" / "meta" / "context_frames" / "episode_000000.png").is_file()
    # The correlation command's functions on the demo's own VLM and rollout runs, then the HTML report.
    assert "Table 3 layout: Spearman's rho" in out and "ir_tolerant" in out
    assert (tmp_path / "demo" / "reports" / "correlation" / "correlation.csv").is_file()
    (line,) = [line for line in out.splitlines() if line.startswith("HTML report")]
    index = tmp_path / "demo" / "site" / "index.html"
    assert line.endswith(index.as_uri()) and index.is_file()
    assert 'table id="table4"' in index.read_text() and (index.parent / "figures" / "failure_modes.svg").is_file()
    second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert second.returncode == 0, second.stderr
    assert "0 to run" in second.stderr  # every harness part and rollout resumed from its run folder
    assert "already done, 0 to run" in second.stderr


def test_a_demo_interrupted_while_training_continues_the_run(tmp_path):
    """The demo's policy folder holds a run stopped at step 1: the rerun resumes it (train refuses to start over)."""
    from bspatial.construction.demonstrations.demos import record_demos
    from bspatial.demo import _POLICY_DEMO_TASK, policy_table
    from bspatial.modeling.train import train

    record_demos(tmp_path / "demos", tasks=[_POLICY_DEMO_TASK], episodes_per_task=1, seed=0)
    stopped = train("tiny", str(tmp_path / "demos"), str(tmp_path / "policy"), stop_at_step=1)
    assert stopped.pretrained_dir is None
    policy_table(tmp_path, seed=0)
    assert (tmp_path / "policy" / "pretrained_model" / "config.json").is_file()
