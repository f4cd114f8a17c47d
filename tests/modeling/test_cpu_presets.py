"""The CPU reach presets (issue 33 item 2): the small offline backbone, the full-VLM adapter and the
language-blanked option (``instruction_source="task_name"``)."""

import dataclasses

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset
from bspatial.modeling.tiny_backbone import OFFLINE_BACKBONES, SMALL, offline_policy_config
from bspatial.modeling.training_config import CPU_REACH_PRESETS, get_preset
from bspatial.modeling.training_data import ProcessorCollate, bare_task_name, build_dataset, dataset_metadata

pytestmark = pytest.mark.usefixtures("one_torch_thread")

INSTRUCTIONS = ("Reach the largest plate from the countertop.", "Reach the leftmost tool on the countertop.")
TASK_NAMES = ("reach_plate", "reach_tool")


@pytest.fixture(scope="module")
def demos_root(tmp_path_factory):
    """A tiny LeRobot set whose episodes carry the ``task_name`` column, as ``bspatial demos`` writes it."""
    root = tmp_path_factory.mktemp("cpu_presets") / "demos"
    build_tiny_lerobot_dataset(root, tasks=INSTRUCTIONS, episodes_per_task=1, frames_per_episode=8, state_dim=84)
    for path in sorted((root / "meta" / "episodes").rglob("*.parquet")):
        table = pq.read_table(path)
        names = [TASK_NAMES[i] for i in table.column("episode_index").to_pylist()]  # one episode per task, in order
        pq.write_table(table.append_column("task_name", pa.array(names)), path)
    return root


def test_bare_task_name_reads_underscores_as_spaces():
    assert [bare_task_name(n) for n in ("reach_plate", "reach_tool", "reach_dice")] == \
        ["reach plate", "reach tool", "reach dice"]


def test_cpu_presets_differ_only_in_their_variant_field():
    base, dot, blind, attn = (get_preset(name) for name in CPU_REACH_PRESETS)
    assert (base.name, dot.name, blind.name, attn.name) == ("cpu_reach", "cpu_reach_dot_ir", "cpu_reach_blind_language",
                                                            "cpu_reach_attn_map_ir")
    assert (base.backbone, base.vlm_adapter, base.instruction_source) == ("small", "full", "instruction")
    assert base.model_overrides["point_loss_weight"] == 1.0 and base.instruction_dropout == 0.0
    assert dict(dot.model_overrides) == {**base.model_overrides, "ir_mode": "dot", "ir_dot_radius": 12,
                                         "point_readout": "image_tokens"}
    assert dict(attn.model_overrides) == {**base.model_overrides, "ir_mode": "attn_map", "point_readout": "image_tokens"}
    assert dot.cue_pretrain_steps == attn.cue_pretrain_steps == 1500 and base.cue_pretrain_steps == 0
    assert blind.instruction_source == "task_name"
    assert dot.instruction_dropout == attn.instruction_dropout == 0.5
    assert dot.cue_decoys == attn.cue_decoys == 0.3 and base.cue_decoys == blind.cue_decoys == 0.0
    ir_fields = {"name", "model_overrides", "instruction_dropout", "cue_decoys", "cue_pretrain_steps"}
    for variant, changed in ((dot, ir_fields), (attn, ir_fields),
                             (blind, {"name", "instruction_source"})):
        differ = {f.name for f in dataclasses.fields(base) if getattr(base, f.name) != getattr(variant, f.name)}
        assert differ == changed


def test_invalid_instruction_source_and_adapter_are_refused_by_name():
    with pytest.raises(ValueError, match=r"instruction_source must be one of \('instruction', 'task_name'\), got 'nope'"):
        get_preset("cpu_reach", instruction_source="nope")
    with pytest.raises(ValueError, match=r"vlm_adapter must be one of \('frozen', 'lora', 'full'\), got 'partial'"):
        get_preset("cpu_reach", vlm_adapter="partial")


def test_small_backbone_builds_with_the_documented_sizes():
    from bspatial.modeling import BSpatialVLAForActionPrediction

    assert OFFLINE_BACKBONES["small"] is SMALL
    config = offline_policy_config("small", state_dim=84)
    text, vision = config.vlm_config.text_config, config.vlm_config.vision_config
    assert (text.hidden_size, text.num_hidden_layers, text.intermediate_size) == (128, 4, 256)
    assert text.layer_types == ["linear_attention"] * 3 + ["full_attention"]  # Qwen3.5's 3 : 1 pattern
    assert (vision.depth, vision.hidden_size, vision.out_hidden_size) == (2, 64, 128)
    assert (config.expert_hidden_size, config.expert_num_layers, config.prefix_layers) == (64, 4, [1, 2, 3, 4])
    torch.manual_seed(0)
    model = BSpatialVLAForActionPrediction(config)
    assert sum(p.numel() for p in model.parameters()) == pytest.approx(1.4e6, rel=0.1)


def test_full_adapter_trains_every_backbone_weight(demos_root):
    from bspatial.modeling.train import build_policy

    config = get_preset("cpu_reach")
    model, processor, report = build_policy(config, dataset_metadata(demos_root))
    assert all(p.requires_grad for p in model.parameters())
    assert report.trainable == report.total and model.config.freeze_vlm is False
    assert processor.image_processor.size["longest_edge"] == config.image_pixels
    frozen, _, frozen_report = build_policy(dataclasses.replace(config, vlm_adapter="frozen"),
                                            dataset_metadata(demos_root))
    assert not any(p.requires_grad for p in frozen.vlm.parameters())
    assert frozen_report.total == report.total


@pytest.mark.parametrize("source, expected", [("instruction", INSTRUCTIONS), ("task_name", ("reach plate", "reach tool"))])
def test_instruction_source_sets_the_prompt_of_the_training_batch(demos_root, source, expected):
    from bspatial.modeling.train import build_policy

    config = get_preset("cpu_reach", instruction_source=source)
    _, processor, _ = build_policy(config, dataset_metadata(demos_root))
    dataset, _ = build_dataset(demos_root, config, chunk_size=32)
    first_of_episode = [0, 8]  # 8 frames per episode
    batch = ProcessorCollate(processor)([dataset[i] for i in first_of_episode])
    prompts = processor.tokenizer.batch_decode(batch["input_ids"], skip_special_tokens=True)
    assert [p.split("Task: ")[1].split(";")[0] for p in prompts] == list(expected)


def test_cpu_reach_reads_the_head_camera_and_leaves_the_state_text_out(demos_root):
    """The state reaches the expert through its state token only: the prompt is images + instruction, and the
    state text the pi0.5 prompt carries (84 dims, ~330 byte-level tokens) is gone."""
    from bspatial.modeling.train import build_policy

    lean = get_preset("cpu_reach")
    pi05 = get_preset("cpu_reach", model_overrides={"camera_names": ["head"], "state_in_prompt": True})
    lengths = {}
    for name, config in (("lean", lean), ("pi05", pi05)):
        model, processor, _ = build_policy(config, dataset_metadata(demos_root))
        assert model.config.camera_names == ["head"]
        dataset, _ = build_dataset(demos_root, config, chunk_size=32)
        batch = ProcessorCollate(processor)([dataset[0]])
        prompt = processor.tokenizer.decode(batch["input_ids"][0], skip_special_tokens=True)
        assert ("State: " in prompt) is (name == "pi05")
        assert prompt.endswith(f"Task: {INSTRUCTIONS[0]};\nAction: ") or name == "pi05"
        lengths[name] = batch["input_ids"].shape[1]
        with torch.no_grad():
            assert torch.isfinite(model(**{k: v for k, v in batch.items() if k != "task"}).loss)
    assert lengths["pi05"] - lengths["lean"] >= 2 * 84  # at least "d " per state dim


def test_the_cpu_dot_survives_the_resize_to_the_models_image_side():
    """cpu_reach reads 96 x 96 images: the paper's radius-4 dot (drawn at 224) keeps a few red pixels there, the
    preset's radius-12 dot a disc of ~80 (pi r^2 with r = 12 * 96 / 224 = 5.1)."""
    import numpy as np
    from PIL import Image

    from bspatial.modeling.ir_rendering import render_dot_ir

    side = int(round(get_preset("cpu_reach").image_pixels ** 0.5))
    assert side == 96

    def red_pixels_at_model_side(radius):
        ir = render_dot_ir(np.full((224, 224, 3), 90, np.uint8), (112, 112), radius)
        small = np.asarray(Image.fromarray(ir).resize((side, side), Image.BICUBIC)).astype(int)
        return int(((small[..., 0] > 200) & (small[..., 1] < 110)).sum())

    paper, cpu = red_pixels_at_model_side(4), red_pixels_at_model_side(get_preset("cpu_reach_dot_ir").model_overrides["ir_dot_radius"])
    assert paper <= 12 and 60 <= cpu <= 100
