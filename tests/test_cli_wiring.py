"""`bspatial build`, `bspatial demos` and `bspatial splits` through the real typer app (CliRunner):
the options reach the library, the outputs land where the flags say, and bad input exits non-zero
with a message that names the bad value. Expected counts come from the paper's Table S2 as packaged
(``bspatial.reference``), not from the code that writes the files.

Smallest options throughout: the ``tiny`` build preset, one reach_plate demo, and ``--n-training 140``
for the splits (seed 0 needs at least 135: with fewer, reach_storage_box has under 50 training
configurations that admit a prompt probe and the command exits asking to raise n_training).
"""

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from bspatial.cli import app
from bspatial.reference import load_table

pytestmark = [pytest.mark.slow]

SPLIT_FILES = ("training", "held_out", "prompt_probe", "navigation", "spa_id", "spa_ood")
N_TRAINING = 140


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _flat(text: str) -> str:
    """Output with rich's box characters and line wrapping removed, for matching messages."""
    return " ".join(text.replace("│", " ").replace("╭", " ").replace("╰", " ").split())


# ---- bspatial build ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli_build") / "bench"
    result = _invoke("build", "--preset", "tiny", "--out", str(out))
    assert result.exit_code == 0, result.output
    return out, result.output


def test_build_writes_vqa_and_ir_parquet_repos(built):
    out, output = built
    assert sorted(p.name for p in out.iterdir()) == ["ir", "vqa"]
    assert f"vqa: {out / 'vqa'}" in output and f"ir: {out / 'ir'}" in output
    for suite in ("vqa", "ir"):
        assert (out / suite / "README.md").is_file()
        files = sorted((out / suite).rglob("*.parquet"))
        assert files, f"no parquet files under {out / suite}"
        assert all(pq.read_metadata(f).num_rows > 0 for f in files)
    # The two harness configs every build carries, and the IR "all" config is the union of its task configs.
    assert (out / "vqa" / "task_manipulation" / "test-00000-of-00001.parquet").is_file()
    ir_all = pq.read_metadata(out / "ir" / "all" / "test-00000-of-00001.parquet").num_rows
    # ("tiny" is the stratified subset of "all", not a task config.)
    per_task = [f for f in (out / "ir").rglob("*.parquet") if f.parent.name not in ("all", "tiny")]
    assert per_task and ir_all == sum(pq.read_metadata(f).num_rows for f in per_task)


def test_every_config_of_the_build_scores_through_the_harness(built, tmp_path):
    """tiny build -> eval-vlm -> metrics for every config the repos declare: none is rejected as malformed.

    (Measured before: the builder wrote navigation subtype ``robot_relative``, which the scoring rules did
    not accept, so all 602 task_navigation items of the paper build were refused and the run exited 0.)"""
    import datasets

    out, _ = built
    scored = {}
    for suite in ("vqa", "ir"):
        configs = datasets.get_dataset_config_names(str(out / suite))
        assert configs, suite
        for config in configs:
            rows = sum(pq.read_metadata(f).num_rows for f in (out / suite / config).rglob("*.parquet"))
            result = _invoke("eval-vlm", "--model", "chance", "--suite", suite, "--config", config,
                             "--data", str(out / suite), "--out", str(tmp_path / "runs"), "--no-progress")
            assert result.exit_code == 0, (suite, config, result.output)
            summary = json.loads((tmp_path / "runs" / f"{suite}-{config}" / "summary.json").read_text())
            assert (summary["n_scored"], summary["n_errors"], summary["complete"]) == (rows, 0, True), (suite, config)
            assert summary["metrics"], (suite, config)
            scored[f"{suite}/{config}"] = rows
    assert {"vqa/general_single_frame", "vqa/general_multi_frame", "vqa/task_manipulation",
            "vqa/task_navigation", "ir/all"} <= set(scored)
    assert all(scored.values()), scored


def test_build_into_a_non_empty_folder_without_overwrite_fails_and_keeps_it(built):
    out, _ = built
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    result = _invoke("build", "--preset", "tiny", "--out", str(out))
    assert result.exit_code != 0
    assert str(out) in _flat(result.output) and "not empty" in result.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_build_unknown_preset_names_the_bad_value(tmp_path):
    out = tmp_path / "never"
    result = _invoke("build", "--preset", "huge", "--out", str(out))
    assert result.exit_code != 0
    assert "'huge'" in result.output and "tiny" in result.output   # the bad name and a known one
    assert not out.exists()


# ---- bspatial demos ------------------------------------------------------------------------------


def test_demos_writes_a_lerobot_dataset(tmp_path):
    out = tmp_path / "demos"
    result = _invoke("demos", "--out", str(out), "--task", "reach_plate", "--episodes-per-task", "1")
    assert result.exit_code == 0, result.output
    assert str(out) in result.output
    info = json.loads((out / "meta" / "info.json").read_text())
    assert info["fps"] == 30                           # the 30 Hz control rate
    assert info["codebase_version"] == "v3.0" and info["total_episodes"] == 1 and info["total_tasks"] == 1
    features = info["features"]
    for camera in ("head", "left_wrist", "right_wrist"):
        assert features[f"observation.images.rgb.{camera}"]["dtype"] == "video"
        assert list((out / "videos" / f"observation.images.rgb.{camera}").rglob("*.mp4"))
    assert features["action"]["shape"] == [23]       # R1Pro-like 23-dim actions
    data = sorted((out / "data").rglob("*.parquet"))
    assert data and sum(pq.read_metadata(f).num_rows for f in data) == info["total_frames"] > 0
    tasks = pq.read_table(out / "meta" / "tasks.parquet").to_pandas()
    instruction = tasks.index[0] if "task" not in tasks.columns else tasks["task"].iloc[0]
    assert instruction.startswith("Reach the") and "plate" in instruction
    provenance = json.loads((out / "meta" / "bspatial_demos.json").read_text())
    assert provenance["tasks"] == ["reach_plate"] and provenance["episodes_per_task"] == 1


def test_demos_unknown_task_exits_non_zero_naming_it(tmp_path):
    out = tmp_path / "demos"
    result = _invoke("demos", "--out", str(out), "--task", "reach_moon", "--episodes-per-task", "1")
    assert result.exit_code != 0
    assert "'reach_moon'" in result.output and "reach_plate" in result.output
    assert not (out / "meta" / "info.json").exists()


# ---- bspatial splits -----------------------------------------------------------------------------


def test_splits_writes_the_manifests_with_the_table_s2_counts(tmp_path):
    out = tmp_path / "splits"
    result = _invoke("splits", "--out", str(out), "--n-training", str(N_TRAINING))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{s}.jsonl" for s in SPLIT_FILES] + ["splits.json"])
    for split in SPLIT_FILES:
        assert str(out / f"{split}.jsonl") in result.output
    held_out = [json.loads(line) for line in (out / "held_out.jsonl").read_text().splitlines()]
    table_s2 = {row["task"]: int(row["n_heldout"]) for row in load_table("tableS2_tasks")}
    assert table_s2["reach_hardback"] == 48                        # as printed in the paper
    assert sum(e["task"] == "reach_hardback" for e in held_out) == table_s2["reach_hardback"]
    assert len(held_out) == 469                                      # the paper's held-out total
    training = [json.loads(line) for line in (out / "training.jsonl").read_text().splitlines()]
    assert sum(e["task"] == "reach_hardback" for e in training) == N_TRAINING   # --n-training reached it
    meta = json.loads((out / "splits.json").read_text())
    assert (meta["n_training"], meta["seed"]) == (N_TRAINING, 0)
    assert (meta["totals"]["prompt_probe"], meta["totals"]["navigation"]) == (700, 401)


def test_splits_bad_n_training_exits_non_zero(tmp_path):
    result = _invoke("splits", "--out", str(tmp_path / "zero"), "--n-training", "0")
    assert result.exit_code != 0
    assert "--n-training" in _flat(result.output)
    assert not (tmp_path / "zero").exists()
    # Too few training configurations for 50 prompt probes a task: the library's error, no manifest.
    out = tmp_path / "few"
    result = _invoke("splits", "--out", str(out), "--n-training", "60")
    assert result.exit_code == 1
    assert "raise n_training" in _flat(result.output) and "of the first 60 training configurations" in _flat(result.output)
    assert not list(out.glob("*.jsonl"))
