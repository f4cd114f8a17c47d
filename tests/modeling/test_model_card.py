"""Every pretrained_model/ export of `bspatial train` carries its model card: README.md rendered from
hub_cards/model_vla.md, read back with huggingface_hub's ModelCard (the real parser the Hub uses)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from huggingface_hub import ModelCard

from bspatial.modeling.model_card import ProtocolResult, render_model_card
from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset, train_tiny_run
from bspatial.modeling.train import checkpoint_dir

REPO_ID = "behavior-spatial/demos"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cards")
    data = root / "demos"
    build_tiny_lerobot_dataset(data, frames_per_episode=40)
    # What `bspatial demos` writes beside the LeRobot files (bspatial.construction.demonstrations.demos.PROVENANCE_FILE);
    # the card reads only its repo id.
    (data / "meta" / "bspatial_demos.json").write_text(json.dumps({"repo_id": REPO_ID}))
    return train_tiny_run(data, root / "run")


def fingerprint(run: Path) -> str:
    return json.loads((run / "run_config.json").read_text())["data"]["fingerprint"]


def test_every_checkpoint_export_has_a_card_naming_its_step_and_fingerprint(run):
    for step in (2, 4):
        export = checkpoint_dir(run, step) / "pretrained_model"
        card = ModelCard.load(export / "README.md")
        assert card.data.model_name == f"BEHAVIOR-Spatial-VLA `tiny` (checkpoint at step {step})"
        assert f"at step {step}, trained on data with fingerprint `{fingerprint(run)}`" in card.text
        assert f"| fingerprint | `{fingerprint(run)}` |" in card.text
        assert json.loads((export / "training_run.json").read_text())["step"] == step
        assert card.data.library_name == "transformers" and card.data.pipeline_tag == "robotics"
        assert card.data.datasets == [REPO_ID]
        assert card.data.base_model is None  # the tiny random backbone
        # No rollout run yet: the task and benchmark, without a metric value.
        assert card.data.eval_results == []
        assert "$" not in card.content  # every placeholder filled


def test_the_final_export_has_the_final_card(run):
    card = ModelCard.load(run / "pretrained_model" / "README.md")
    assert card.data.model_name == "BEHAVIOR-Spatial-VLA `tiny` (final, step 4)"
    assert "this is the final export of the run" in card.text
    assert "Preset `tiny`, step 4 of 4 optimiser steps, saved by a run on 1 process(es)" in card.text
    assert "| batch_size | `2` |" in card.text and "| peak_lr | `0.001` |" in card.text


def test_a_paper_preset_names_its_base_model_and_variant(run, tmp_path):
    # The card of a LoRA run on the paper's backbone, from an export whose record says so.
    export = tmp_path / "pretrained_model"
    shutil.copytree(run / "pretrained_model", export)
    record = json.loads((export / "training_run.json").read_text())
    record["run"]["training_config"].update(name="pi05_qwen_lora", backbone="Qwen/Qwen3.5-4B", vlm_adapter="lora")
    (export / "training_run.json").write_text(json.dumps(record))
    results = [ProtocolResult("held_out", 469, {"soft": 41.6, "strict": 20.3}, "runs/held_out"),
               ProtocolResult("navigation", 401, {"strict": 59.9}, "runs/navigation")]
    card = ModelCard(render_model_card(export, results))
    assert card.data.base_model == "Qwen/Qwen3.5-4B" and "lora" in card.data.tags
    assert {(r.dataset_split, r.metric_type): r.metric_value for r in card.data.eval_results} == {
        ("held_out", "soft_success"): 41.6, ("held_out", "strict_success"): 20.3,
        ("navigation", "strict_success"): 59.9}
    assert "| navigation | 401 | - | 59.9 | `runs/navigation` |" in card.text


def test_bad_results_and_exports_are_refused_naming_them(run, tmp_path):
    with pytest.raises(ValueError, match=r"split must be one of .* got 'test'"):
        ProtocolResult("test", 1, {"strict": 0.0}, "x")
    with pytest.raises(ValueError, match=r"rates must hold 'strict' .* got \['soft'\]"):
        ProtocolResult("held_out", 1, {"soft": 0.0}, "x")
    with pytest.raises(ValueError, match="has no training_run.json"):
        render_model_card(tmp_path)
    same = ProtocolResult("held_out", 1, {"strict": 0.0}, "x")
    with pytest.raises(ValueError, match="one result per protocol"):
        render_model_card(run / "pretrained_model", [same, same])
