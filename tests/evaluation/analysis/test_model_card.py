"""`bspatial model-card EXPORT --rollout RUN`: the card of a trained export carries the success rates of a real
rollout run of it, equal to the run's own per-task tables, and its YAML is what huggingface_hub reads."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from huggingface_hub import ModelCard
from typer.testing import CliRunner

from bspatial.catalog.schema import STATE_DIM
from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset, train_tiny_run

TASK = "reach_dice"


def invoke(*args: str):
    from bspatial.cli import app

    return CliRunner().invoke(app, list(args))


def _ok(result) -> None:
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A tiny run whose policy takes the simulator's proprioception (so it can be rolled out)."""
    root = tmp_path_factory.mktemp("model_card")
    data = root / "demos"
    build_tiny_lerobot_dataset(data, state_dim=STATE_DIM, frames_per_episode=40)
    return train_tiny_run(data, root / "run")


@pytest.fixture(scope="module")
def rollout_run(trained) -> Path:
    out = trained.parent / "rollout"
    export = trained / "pretrained_model"
    _ok(invoke("rollout", "--policy", str(export), "--split", "held_out", "--tasks", TASK, "--n-episodes", "2",
               "--max-steps", "12", "--out", str(out), "--no-progress"))
    return out


def pooled_row(run: Path) -> dict[str, str]:
    """The POOLED row of the per-task table the rollout command wrote for the export's policy."""
    # The run's policy is <run>/pretrained_model: its tables go by the run's name (tables.checkpoint_name).
    [path] = (run / "tables").glob("per_task_*_held_out.csv")
    with open(path, newline="") as handle:
        (row,) = [r for r in csv.DictReader(handle) if r["task"] == "POOLED"]
    return row


def card_metrics(card: ModelCard) -> dict[tuple[str, str], float]:
    return {(r.dataset_split, r.metric_type): r.metric_value for r in card.data.eval_results}


def test_the_card_carries_the_rollout_runs_success_rates(trained, rollout_run):
    export = trained / "pretrained_model"
    _ok(invoke("model-card", str(export), "--rollout", str(rollout_run)))
    card = ModelCard.load(export / "README.md")
    row = pooled_row(rollout_run)
    assert row["errors"] == "0"  # the episodes ran (a crashed episode would also score 0)
    assert card_metrics(card) == {("held_out", "soft_success"): float(row["soft"]),
                                  ("held_out", "strict_success"): float(row["strict"])}
    assert card.data.eval_results[0].task_type == "robotics"
    assert card.data.library_name == "transformers" and "behavior-spatial" in card.data.tags
    assert card.data.base_model is None  # the tiny random backbone is nobody's base model
    assert f"| held-out instructions | {row['n']} |" in card.text


def test_card_values_follow_the_runs_episodes(tmp_path, trained, rollout_run):
    # The same run with its two episodes' outcomes set to one success and one soft-credited miss; the run's
    # tables are written again by the rollout tables' own code, and the card must follow them.
    from bspatial.evaluation.rollout.tables import write_tables

    run, export = tmp_path / "rollout", tmp_path / "copy" / "pretrained_model"
    shutil.copytree(rollout_run, run, ignore=shutil.ignore_patterns("*.lock*"))
    shutil.copytree(trained / "pretrained_model", export)
    episodes = sorted((run / "episodes").glob("*.json"))
    assert len(episodes) == 2
    for path, (outcome, soft) in zip(episodes, (("correct", False), ("none", True)), strict=True):
        record = json.loads(path.read_text())  # the copied run's episodes name the copied export as their policy
        path.write_text(json.dumps({**record, "policy": str(export), "outcome": outcome, "soft_credit": soft,
                                    "status": "timeout"}))
    shutil.rmtree(run / "tables")
    write_tables([run], run / "tables")
    _ok(invoke("model-card", str(export), "--rollout", str(run)))
    row = pooled_row(run)
    assert (float(row["strict"]), float(row["soft"])) == (50.0, 100.0)  # the fixture's premise
    assert card_metrics(ModelCard.load(export / "README.md")) == {("held_out", "soft_success"): 100.0,
                                                                  ("held_out", "strict_success"): 50.0}


def test_a_run_of_another_policy_is_refused_naming_what_it_holds(trained, rollout_run):
    checkpoint = trained / "checkpoints" / "step_000000002" / "pretrained_model"
    before = (checkpoint / "README.md").read_text()
    result = invoke("model-card", str(checkpoint), "--rollout", str(rollout_run))
    assert result.exit_code == 1
    assert f"holds no episode of {checkpoint}" in result.output and "pretrained_model (held_out)" in result.output
    assert (checkpoint / "README.md").read_text() == before  # the card is left as it was
    not_a_run = invoke("model-card", str(checkpoint), "--rollout", str(trained))
    assert not_a_run.exit_code == 1 and "is not a rollout run folder" in not_a_run.output


def _backbone_run(root: Path, export: Path, verdicts: dict[str, tuple[bool, bool]]) -> Path:
    """An eval-vlm run folder of ``vla-backbone:<export>`` on episode_aligned items, as the runner writes one (the
    fingerprint's model identity as :class:`~bspatial.evaluation.vlm.backend_vla_backbone.VlaBackboneBackend`
    gives it; the sample rows' fields the summary and the join read). ``verdicts``: item id -> (VQA correct, IR
    strict). The backbone's own eval-vlm path is tested in tests/evaluation/vlm/test_backend_vla_backbone.py."""
    run = root / "vlm"
    for part, field in (("vqa-episode_aligned", "correct"), ("ir-episode_aligned", "strict")):
        folder = run / part
        folder.mkdir(parents=True)
        model = {"kind": "vla-backbone", "extraction": "backbone", "checkpoint": str(export)}
        (folder / "fingerprint.json").write_text(json.dumps({"fingerprint": "x", "components": {"model": model}}))
        rows = [{"id": item_id, "task": TASK, field: v[0] if field == "correct" else v[1],
                 **({"tolerant": v[1]} if field == "strict" else {})} for item_id, v in verdicts.items()]
        (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (folder / "summary.json").write_text(json.dumps({"complete": True, "per_task": {TASK: {"n": len(rows)}}}))
    return run


def test_the_backbone_section_joins_its_answers_with_its_episodes(tmp_path, trained, rollout_run):
    """One backbone's three views in one card: its answers on the episode_aligned items of its own rollout's
    episodes, joined per episode. Episode 0 succeeds and episode 1 fails (set here); the backbone answers VQA right
    on both, IR right on episode 0 only, so by hand: VQA 2 right, success if right 1/2, none wrong; IR 1 right
    (success 1/1), 1 wrong (success 0/1), difference +100 points."""
    from bspatial.evaluation.rollout.tables import write_tables

    run, export = tmp_path / "rollout", tmp_path / "copy" / "pretrained_model"
    shutil.copytree(rollout_run, run, ignore=shutil.ignore_patterns("*.lock*"))
    shutil.copytree(trained / "pretrained_model", export)
    ids = []
    for path, outcome in zip(sorted((run / "episodes").glob("*.json")), ("correct", "wrong"), strict=True):
        record = json.loads(path.read_text())
        path.write_text(json.dumps({**record, "policy": str(export), "outcome": outcome, "soft_credit": False,
                                    "status": "decided"}))
        ids.append(f"ep-held_out-{TASK}-{record['index']:04d}")
    shutil.rmtree(run / "tables")
    write_tables([run], run / "tables")
    vlm = _backbone_run(tmp_path, export, {ids[0]: (True, True), ids[1]: (True, False)})
    _ok(invoke("model-card", str(export), "--rollout", str(run), "--vlm", str(vlm)))
    card = (export / "README.md").read_text()
    assert "### Its backbone on its own episodes" in card
    assert "| vqa | held_out | 2 | 100.0 (2/2) | 50.0 (1/2) | – | – | n/a |" in card
    assert "| ir_strict | held_out | 2 | 50.0 (1/2) | 100.0 (1/1) | 0.0 (0/1) | +100.0" in card
    assert card_metrics(ModelCard.load(export / "README.md")) == {("held_out", "soft_success"): 50.0,
                                                                  ("held_out", "strict_success"): 50.0}


def test_a_vlm_run_of_another_model_is_refused(tmp_path, trained, rollout_run):
    vlm = tmp_path / "vlm" / "vqa-episode_aligned"
    vlm.mkdir(parents=True)
    (vlm / "fingerprint.json").write_text(json.dumps({"components": {"model": {"kind": "chance", "spec": "chance"}}}))
    export = trained / "pretrained_model"
    result = invoke("model-card", str(export), "--rollout", str(rollout_run), "--vlm", str(vlm.parent))
    assert result.exit_code == 1
    assert "names model 'chance'" in result.output and f"vla-backbone:{export}" in result.output
    no_rollout = invoke("model-card", str(export), "--vlm", str(vlm.parent))
    assert no_rollout.exit_code == 1 and "give --rollout too" in no_rollout.output
