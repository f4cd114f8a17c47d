"""``vla-backbone:<checkpoint>``: the VLM inside a tiny trained policy, evaluated by eval-vlm end to end.

The policy is trained for real (tiny LoRA preset, 4 steps) around the tiny random Qwen3.5 image-text
checkpoint the harness tests use, so its backbone differs from the base (LoRA merged) and the base
keeps the untied LM head that the policy drops. Weights are compared with tensors read straight from
the safetensors files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from typer.testing import CliRunner

from bspatial.evaluation.vlm.backends import load_backend
from bspatial.evaluation.vlm.runner import FINGERPRINT_FILE, SAMPLES_FILE, part_dir, read_jsonl
from bspatial.evaluation.vlm.tiny_checkpoint import write_tiny_checkpoint
from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset
from bspatial.modeling.tiny_backbone import tiny_policy_config
from bspatial.modeling.train import checkpoint_dir, train

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

MAX_NEW_TOKENS = 4
STEPS = 4  # warmup 1 step from lr 0, and adaLN-zero gates closed at step 1: the backbone moves from step 3
# The tiny expert of the policy tests (the backbone path alone would give the paper-size expert).
EXPERT_FIELDS = ("expert_hidden_size", "expert_num_layers", "expert_num_attention_heads", "expert_head_dim",
                 "expert_intermediate_size", "prefix_layers")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("base") / "tiny-qwen3.5", seed=0)


@pytest.fixture(scope="module")
def run(tmp_path_factory, base) -> Path:
    root = tmp_path_factory.mktemp("vla")
    data = root / "data"
    build_tiny_lerobot_dataset(data, episodes_per_task=1, frames_per_episode=8)
    expert = {name: getattr(tiny_policy_config(), name) for name in EXPERT_FIELDS}
    result = train("tiny_lora", str(data), str(root / "run"), max_steps=STEPS, backbone=str(base),
                   model_overrides=expert, save_every=STEPS)
    assert result.pretrained_dir == root / "run" / "pretrained_model"
    return root / "run"


def _tensors(path: Path) -> dict[str, torch.Tensor]:
    with safe_open(str(path), framework="pt") as handle:
        return {key: handle.get_tensor(key) for key in handle.keys()}


def test_extracted_backbone_is_the_policys_backbone_with_the_bases_lm_head(run, base):
    backend = load_backend(f"vla-backbone:{run}", base=str(base), max_new_tokens=MAX_NEW_TOKENS)
    policy = _tensors(run / "pretrained_model" / "model.safetensors")
    base_tensors = _tensors(base / "model.safetensors")
    extracted = backend._model.state_dict()

    backbone = {key.removeprefix("vlm."): value for key, value in policy.items() if key.startswith("vlm.")}
    assert backbone and set(extracted) == {"model." + key for key in backbone} | {"lm_head.weight"}
    for key, value in backbone.items():
        assert torch.equal(extracted["model." + key], value), key
    assert torch.equal(extracted["lm_head.weight"], base_tensors["lm_head.weight"])
    # LoRA training changed the backbone: equality above is with the policy's weights, not the base's.
    changed = [key for key, value in backbone.items() if not torch.equal(value, base_tensors["model." + key])]
    # (LoRA adapts linear layers only: the token embeddings stay the base's.)
    assert changed and "language_model.embed_tokens.weight" not in changed

    identity = backend.identity()
    assert identity["kind"] == "vla-backbone" and identity["extraction"] == "backbone"
    assert identity["checkpoint"] == str(run) and identity["path"] == str((run / "pretrained_model").resolve())
    assert identity["lm_head_from"]["path"] == str(base.resolve())


def test_checkpoint_and_run_folders_resolve_to_their_exports(run, base):
    step = checkpoint_dir(run, STEPS)
    by_checkpoint = load_backend(f"vla-backbone:{step}", base=str(base), max_new_tokens=MAX_NEW_TOKENS)
    by_export = load_backend(f"vla-backbone:{run / 'pretrained_model'}", base=str(base), max_new_tokens=MAX_NEW_TOKENS)
    assert by_checkpoint.identity()["path"] == str((step / "pretrained_model").resolve())
    assert by_export.identity()["path"] == str((run / "pretrained_model").resolve())
    # The final export is a copy of the last checkpoint's: the same backbone either way.
    for (key, a), (_, b) in zip(by_checkpoint._model.state_dict().items(), by_export._model.state_dict().items()):
        assert torch.equal(a, b), key


def test_eval_vlm_runs_end_to_end_on_the_backbone(run, base, repos, tmp_path):
    out = tmp_path / "out"
    command = [sys.executable, "-m", "bspatial.cli", "eval-vlm", "--model", f"vla-backbone:{run}",
               "--model-args", f"base={base},max_new_tokens={MAX_NEW_TOKENS}", "--data", str(repos["vqa"]),
               "--config", "general", "--out", str(out), "--no-progress"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = part_dir(out, "vqa", "general")
    rows = read_jsonl(folder / SAMPLES_FILE)
    assert len(rows) == 33 and all(isinstance(row["raw_output"], str) for row in rows)
    model = json.loads((folder / FINGERPRINT_FILE).read_text())["components"]["model"]
    assert model["kind"] == "vla-backbone" and model["extraction"] == "backbone" and model["checkpoint"] == str(run)


def _eval(spec: str, out: Path, model_args: str = "") -> tuple[int, str]:
    from bspatial.cli import app

    args = ["eval-vlm", "--model", spec, "--out", str(out), "--no-progress"]
    result = CliRunner().invoke(app, args + (["--model-args", model_args] if model_args else []))
    return result.exit_code, result.output


def test_missing_or_incomplete_checkpoints_are_errors_naming_the_path(run, tmp_path):
    code, output = _eval(f"vla-backbone:{tmp_path / 'nowhere'}", tmp_path / "o1")
    assert code == 2 and str(tmp_path / "nowhere") in output

    unfinished = tmp_path / "unfinished"
    shutil.copytree(run, unfinished, ignore=shutil.ignore_patterns("pretrained_model", "*.bin", "*.pkl"))
    (unfinished / "checkpoints" / f"step_{STEPS:09d}" / "pretrained_model").mkdir()
    shutil.copytree(run / "pretrained_model", unfinished / "checkpoints" / f"step_{STEPS:09d}" / "pretrained_model",
                    dirs_exist_ok=True)
    code, output = _eval(f"vla-backbone:{unfinished}", tmp_path / "o2")
    assert code == 2 and "no final export" in output and f"step_{STEPS:09d}" in output

    no_weights = tmp_path / "no_weights"
    no_weights.mkdir()
    shutil.copy(run / "pretrained_model" / "config.json", no_weights)
    code, output = _eval(f"vla-backbone:{no_weights}", tmp_path / "o3")
    assert code == 2 and str(no_weights) in output and "no weights" in output


def test_untied_backbone_without_base_is_refused_naming_the_recorded_base(run, base, tmp_path):
    code, output = _eval(f"vla-backbone:{run}", tmp_path / "out")
    assert code == 2 and "no LM head" in output and f"base={base}" in output


def test_a_base_without_an_lm_head_is_refused(run, tmp_path):
    from bspatial.evaluation.vlm.backend_transformers import CheckpointError

    other = tmp_path / "other"
    shutil.copytree(run / "pretrained_model", other)  # a folder with config + weights but no lm_head
    with pytest.raises(CheckpointError, match="lm_head.weight"):
        load_backend(f"vla-backbone:{run}", base=str(other), max_new_tokens=MAX_NEW_TOKENS)


def test_a_tied_backbone_needs_no_base_and_its_head_is_the_policys_embeddings(tmp_path, base):
    from bspatial.evaluation.vlm.backend_transformers import CheckpointError
    from bspatial.evaluation.vlm.tiny_checkpoint import build_processor
    from bspatial.modeling import BSpatialVLAForActionPrediction
    from bspatial.modeling.processing_bspatial_vla import BSpatialVLAProcessor
    from bspatial.modeling.tiny_backbone import tiny_vlm_config

    qwen = build_processor()  # the tiny image-text processor, chat template included
    config = tiny_policy_config(vlm_config={**tiny_vlm_config(qwen.tokenizer), "tie_word_embeddings": True})
    torch.manual_seed(3)
    policy = BSpatialVLAForActionPrediction(config)
    stats = {key: {"q01": [-1.0] * dim, "q99": [1.0] * dim}
             for key, dim in (("observation.state", config.state_dim), ("action", config.action_dim))}
    export = tmp_path / "pretrained_model"
    policy.save_pretrained(export)
    BSpatialVLAProcessor.from_model_config(config, qwen.image_processor, qwen.tokenizer, stats).save_pretrained(export)

    backend = load_backend(f"vla-backbone:{export}", max_new_tokens=MAX_NEW_TOKENS)
    saved = _tensors(export / "model.safetensors")
    extracted = backend._model.state_dict()
    assert torch.equal(extracted["lm_head.weight"], saved["vlm.language_model.embed_tokens.weight"])
    assert "lm_head_from" not in backend.identity()
    with pytest.raises(CheckpointError, match="ties its LM head"):
        load_backend(f"vla-backbone:{export}", base=str(base), max_new_tokens=MAX_NEW_TOKENS)


def test_another_transformers_vla_is_read_through_its_backbone_sub_config(run, base, tmp_path):
    """A VLA that is not ours: its own model_type, the backbone under ``backbone_config`` / ``backbone.``."""
    from safetensors.torch import save_file

    source = run / "pretrained_model"
    other = tmp_path / "other_vla"
    shutil.copytree(source, other, ignore=shutil.ignore_patterns("*.py", "model.safetensors", "config.json"))
    config = json.loads((source / "config.json").read_text())
    other_config = {"model_type": "someone_elses_vla", "architectures": ["SomeVLA"], "action_dim": 7,
                    "backbone_config": config["vlm_config"]}
    (other / "config.json").write_text(json.dumps(other_config))
    policy = _tensors(source / "model.safetensors")
    renamed = {("backbone." + key.removeprefix("vlm.") if key.startswith("vlm.") else "head." + key): value.contiguous()
               for key, value in policy.items()}
    save_file(renamed, str(other / "model.safetensors"))

    backend = load_backend(f"vla-backbone:{other}", base=str(base), max_new_tokens=MAX_NEW_TOKENS)
    extracted = backend._model.state_dict()
    for key, value in policy.items():
        if key.startswith("vlm."):
            assert torch.equal(extracted["model." + key.removeprefix("vlm.")], value), key
    assert backend.identity()["weight_prefix"] == "backbone."


def test_a_hub_id_is_refused_with_how_to_download_it(tmp_path):
    code, output = _eval("vla-backbone:someone/some-vla", tmp_path / "out")
    assert code == 2 and "hf download someone/some-vla" in output
