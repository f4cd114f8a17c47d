import numpy as np
import pytest
import torch
from transformers import AutoProcessor

from bspatial.modeling import BSpatialVLAForActionPrediction, BSpatialVLAProcessor
from bspatial.modeling.processing_bspatial_vla import float_images_to_uint8
from bspatial.modeling.tiny_backbone import tiny_policy_config

STATE_DIM, ACTION_DIM = 8, 23
STATS = {
    "observation.state": {"q01": [-2.0] * STATE_DIM, "q99": [2.0] * STATE_DIM, "mean": [0.0] * STATE_DIM},
    "action": {"q01": np.linspace(-1, 0, ACTION_DIM), "q99": np.linspace(1, 3, ACTION_DIM), "std": [1.0] * ACTION_DIM},
}


def lerobot_batch(config, batch_size=2, size=32, seed=0):
    rng = np.random.default_rng(seed)
    batch = {f"observation.images.rgb.{c}": torch.from_numpy(rng.integers(0, 256, (batch_size, 3, size, size),
                                                                           dtype=np.uint8))
             for c in config.camera_names}
    batch["observation.state"] = torch.from_numpy(rng.uniform(-3, 3, (batch_size, STATE_DIM)).astype(np.float32))
    batch["action"] = torch.from_numpy(rng.uniform(-2, 4, (batch_size, 32, ACTION_DIM)).astype(np.float32))
    batch["action_is_pad"] = torch.zeros(batch_size, 32, dtype=torch.bool)
    batch["task"] = ["pick_up the cup\non the left", "open the drawer"][:batch_size]
    return batch


@pytest.fixture
def vla_processor(tiny_config, processor):
    return BSpatialVLAProcessor.from_model_config(tiny_config, processor.image_processor, processor.tokenizer, STATS)


def test_save_and_auto_processor_round_trip(tmp_path, vla_processor, tiny_config):
    vla_processor.save_pretrained(tmp_path)
    assert (tmp_path / "processing_bspatial_vla.py").exists()  # remote code travels with it
    loaded = AutoProcessor.from_pretrained(tmp_path)
    assert isinstance(loaded, BSpatialVLAProcessor)
    assert loaded.stats == vla_processor.stats and loaded.image_names == vla_processor.image_names
    assert (loaded.state_num_bins, loaded.state_min, loaded.state_max) == (256, -1.0, 1.0)
    batch = lerobot_batch(tiny_config)
    expected, got = vla_processor(batch), loaded(batch)
    assert sorted(got) == sorted(expected)
    assert all(torch.equal(got[k], expected[k]) for k in expected)


def test_state_bins_text_for_known_states(vla_processor):
    # q01 = -2, q99 = 2: normalised = raw / 2; 256 bins over [-1, 1], floor, clipped at both ends.
    state = torch.tensor([[-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -5.0, 0.0155]])
    bins = vla_processor.discretize_state(vla_processor.normalize_state(state))
    assert bins.tolist() == [[0, 64, 128, 192, 255, 255, 0, 128]]
    prompt = vla_processor.build_prompts(["pick_up the cup\non the left"], bins)[0]
    image_text = "<|vision_start|><|image_pad|><|vision_end|>" * 3
    assert prompt == image_text + "Task: pick up the cup on the left, State: 0 64 128 192 255 255 0 128;\nAction: "


def test_state_text_left_out_when_the_config_says_so(tmp_path, tiny_config, processor):
    config = type(tiny_config)(**{**tiny_config.to_dict(), "state_in_prompt": False})
    lean = BSpatialVLAProcessor.from_model_config(config, processor.image_processor, processor.tokenizer, STATS)
    bins = lean.discretize_state(lean.normalize_state(torch.zeros(1, config.state_dim)))
    image_text = "<|vision_start|><|image_pad|><|vision_end|>" * 3
    assert lean.build_prompts(["open the drawer"], bins) == [image_text + "Task: open the drawer;\nAction: "]
    lean.save_pretrained(tmp_path)
    assert AutoProcessor.from_pretrained(tmp_path).state_in_prompt is False


def test_normalize_unnormalize_are_inverse(vla_processor):
    actions = torch.from_numpy(np.random.default_rng(1).uniform(-5, 5, (3, 32, ACTION_DIM)).astype(np.float32))
    normalized = vla_processor.normalize_actions(actions)
    q01, q99 = torch.tensor(STATS["action"]["q01"]).float(), torch.tensor(STATS["action"]["q99"]).float()
    torch.testing.assert_close(vla_processor.normalize_actions(q01.expand(1, 32, -1)), -torch.ones(1, 32, ACTION_DIM))
    torch.testing.assert_close(vla_processor.normalize_actions(q99.expand(1, 32, -1)), torch.ones(1, 32, ACTION_DIM))
    torch.testing.assert_close(vla_processor.unnormalize_actions(normalized), actions, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("feature", ["observation.state", "action"])
def test_stats_without_quantiles_raise_naming_the_feature(tiny_config, processor, feature):
    stats = {k: dict(v) for k, v in STATS.items()}
    del stats[feature]["q99"]
    with pytest.raises(ValueError, match=rf"stats for '{feature}' lack the quantiles \['q99'\]"):
        BSpatialVLAProcessor.from_model_config(tiny_config, processor.image_processor, processor.tokenizer, stats)


def test_stats_width_must_match_config(processor):
    config = tiny_policy_config(state_dim=5)
    with pytest.raises(ValueError, match="'observation.state' have 8 dims, the config expects 5"):
        BSpatialVLAProcessor.from_model_config(config, processor.image_processor, processor.tokenizer, STATS)


def test_uint8_path_equals_reference_qwen_preprocessing(vla_processor, processor, tiny_config):
    batch = lerobot_batch(tiny_config)
    got = vla_processor(batch)
    # Reference: transformers' Qwen3VLProcessor on HWC uint8 arrays, same prompts, same image order.
    prompts = vla_processor.build_prompts(batch["task"], vla_processor.discretize_state(
        vla_processor.normalize_state(batch["observation.state"])))
    images = [[batch[f"observation.images.rgb.{c}"][i].permute(1, 2, 0).numpy() for c in tiny_config.camera_names]
              for i in range(2)]
    ref = processor(images=images, text=prompts, padding=True, return_tensors="pt")
    for key in ("input_ids", "attention_mask", "mm_token_type_ids", "pixel_values", "image_grid_thw"):
        assert torch.equal(got[key], ref[key]), key
    torch.testing.assert_close(got["state"], batch["observation.state"] / 2)


def test_float_images_are_refused_not_rescaled_twice(vla_processor, tiny_config):
    batch = lerobot_batch(tiny_config)
    floats = dict(batch, **{"observation.images.rgb.head": batch["observation.images.rgb.head"].float() / 255})
    with pytest.raises(ValueError, match="'observation.images.rgb.head' has dtype torch.float32; expected uint8"):
        vla_processor(floats)
    converted = dict(floats, **{"observation.images.rgb.head": float_images_to_uint8(floats["observation.images.rgb.head"])})
    assert torch.equal(vla_processor(converted)["pixel_values"], vla_processor(batch)["pixel_values"])


def test_missing_image_raises(vla_processor, tiny_config):
    batch = lerobot_batch(tiny_config)
    del batch["observation.images.rgb.left_wrist"]
    with pytest.raises(ValueError, match="lacks the image 'observation.images.rgb.left_wrist'"):
        vla_processor(batch)


def test_ir_slots_follow_config_order(processor):
    config = tiny_policy_config(ir_mode="dot", first_frame_anchor=True)
    vla = BSpatialVLAProcessor.from_model_config(config, processor.image_processor, processor.tokenizer, STATS)
    batch = lerobot_batch(config, batch_size=1)
    size = (1, 3, 32, 64)  # a different shape per slot makes the order visible in image_grid_thw
    batch["observation.images.ir"] = torch.zeros(size, dtype=torch.uint8)
    batch["observation.images.anchor"] = torch.zeros((1, 3, 64, 32), dtype=torch.uint8)
    grid = vla(batch)["image_grid_thw"]
    assert grid.tolist() == [[1, 2, 2]] * 3 + [[1, 2, 4], [1, 4, 2]]


def test_processed_batch_drives_the_model(vla_processor, tiny_config):
    torch.manual_seed(0)
    model = BSpatialVLAForActionPrediction(tiny_config).eval()
    batch = lerobot_batch(tiny_config, batch_size=1)
    inputs = vla_processor({k: v for k, v in batch.items() if k not in ("action", "action_is_pad")})
    actions = vla_processor.unnormalize_actions(model.sample_actions(inputs))
    assert actions.shape == (1, 32, 23) and torch.isfinite(actions).all()


@pytest.mark.parametrize("ir_mode", ["dot", "attn_map"])
def test_ir_image_rendered_from_the_oracle_target(processor, ir_mode):
    from bspatial.modeling.ir_rendering import render_attention_map_ir, render_dot_ir

    config = tiny_policy_config(ir_mode=ir_mode)
    vla = BSpatialVLAProcessor.from_model_config(config, processor.image_processor, processor.tokenizer, STATS)
    batch = lerobot_batch(config, batch_size=2)
    batch["observation.ir_target"] = torch.tensor([[100.0, 50.0], [float("nan"), float("nan")]])
    head = batch["observation.images.rgb.head"]
    if ir_mode == "dot":
        expected = [render_dot_ir(head[0].permute(1, 2, 0).numpy(), (100, 50)),
                    render_dot_ir(head[1].permute(1, 2, 0).numpy(), None)]
    else:
        expected = [render_attention_map_ir((100, 50)), render_attention_map_ir(None)]
    rendered = vla.render_ir(batch)["observation.images.ir"]
    assert rendered.dtype == torch.uint8 and rendered.shape == (2, 3, 224, 224)
    assert torch.equal(rendered, torch.from_numpy(np.stack(expected)).permute(0, 3, 1, 2))
    explicit = dict(batch, **{"observation.images.ir": rendered})
    got, want = vla(batch), vla(explicit)
    assert set(got) == set(want)
    for key in want:   # the point label keeps the missing target as NaN, so NaN compares equal here
        torch.testing.assert_close(got[key], want[key], rtol=0, atol=0, equal_nan=True)
    assert got["image_grid_thw"].shape[0] == 2 * 4


def test_dot_radius_comes_from_the_config_and_is_saved(tmp_path, processor):
    # Hand-made: a radius-12 dot at (100, 50) on black: d <= 12 red, 12 < d <= 13 white, beyond untouched.
    config = tiny_policy_config(ir_mode="dot", ir_dot_radius=12)
    vla = BSpatialVLAProcessor.from_model_config(config, processor.image_processor, processor.tokenizer, STATS)
    batch = lerobot_batch(config, batch_size=1, size=224)
    batch["observation.images.rgb.head"] = torch.zeros((1, 3, 224, 224), dtype=torch.uint8)
    batch["observation.ir_target"] = torch.tensor([[100.0, 50.0]])
    ir = vla.render_ir(batch)["observation.images.ir"][0].permute(1, 2, 0)
    assert ir[50, 112].tolist() == [255, 51, 51] and ir[62, 100].tolist() == [255, 51, 51]
    assert ir[50, 113].tolist() == [255, 255, 255] and ir[50, 114].tolist() == [0, 0, 0]
    vla.save_pretrained(tmp_path)
    assert AutoProcessor.from_pretrained(tmp_path).ir_dot_radius == 12


@pytest.mark.parametrize("field, value, message", [
    ("ir_dot_radius", 0, "ir_dot_radius must be a positive integer .* got 0"),
    ("ir_dot_radius", 2.5, "ir_dot_radius must be a positive integer .* got 2.5"),
])
def test_bad_dot_radius_is_refused_by_name(field, value, message):
    with pytest.raises(ValueError, match=message):
        tiny_policy_config(ir_mode="dot", **{field: value})


def test_the_anchor_keeps_the_papers_dot():
    with pytest.raises(ValueError, match="first_frame_anchor=True draws the paper's dot .* got ir_dot_radius=12"):
        tiny_policy_config(ir_mode="dot", first_frame_anchor=True, ir_dot_radius=12)


def test_ir_processor_without_target_or_image_raises(processor):
    config = tiny_policy_config(ir_mode="dot")
    vla = BSpatialVLAProcessor.from_model_config(config, processor.image_processor, processor.tokenizer, STATS)
    with pytest.raises(ValueError, match="lacks the image 'observation.images.ir'"):
        vla(lerobot_batch(config))


def test_relative_actions_are_learned_as_differences_and_restored(tmp_path, processor):
    # Action dims 3 and 7 are learned relative to state dims 1 and 5 (hand-made numbers below).
    config = tiny_policy_config(state_dim=STATE_DIM, relative_action_dims=[3, 7], relative_state_dims=[1, 5])
    stats = {"observation.state": STATS["observation.state"],
             "action": {"q01": [-1.0] * ACTION_DIM, "q99": [1.0] * ACTION_DIM}}
    vla = BSpatialVLAProcessor.from_model_config(config, processor.image_processor, processor.tokenizer, stats)
    batch = lerobot_batch(config, batch_size=1)
    batch["observation.state"] = torch.zeros(1, STATE_DIM)
    batch["observation.state"][0, 1], batch["observation.state"][0, 5] = 0.5, -1.0
    batch["action"] = torch.zeros(1, 32, ACTION_DIM)
    batch["action"][0, :, 3], batch["action"][0, :, 7], batch["action"][0, :, 0] = 0.75, -0.5, 0.25
    out = vla(batch)
    # q01 -1 / q99 1 map x to x: dim 3 is 0.75 - 0.5, dim 7 is -0.5 - (-1.0), dim 0 stays absolute.
    assert out["actions"][0, :, 3].tolist() == [0.25] * 32 and out["actions"][0, :, 7].tolist() == [0.5] * 32
    assert out["actions"][0, :, 0].tolist() == [0.25] * 32
    restored = vla.unnormalize_actions(out["actions"], out["state"])
    torch.testing.assert_close(restored, batch["action"], atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match=r"predicts actions \[3, 7\] relative to the state"):
        vla.unnormalize_actions(out["actions"])
    vla.save_pretrained(tmp_path)
    loaded = AutoProcessor.from_pretrained(tmp_path)
    assert (loaded.relative_action_dims, loaded.relative_state_dims) == ([3, 7], [1, 5])


@pytest.mark.parametrize("fields, message", [
    ({"relative_action_dims": [3, 7], "relative_state_dims": [1]}, "must pair up, got 2 and 1"),
    ({"relative_action_dims": [23], "relative_state_dims": [1]}, r"relative_action_dims must be distinct .* \[23\]"),
    ({"relative_action_dims": [3], "relative_state_dims": [8]}, r"relative_state_dims must be distinct .* \[8\]"),
    ({"relative_action_dims": [3, 3], "relative_state_dims": [1, 2]}, r"relative_action_dims must be distinct"),
])
def test_bad_relative_dims_are_refused_by_name(fields, message):
    with pytest.raises(ValueError, match=message):
        tiny_policy_config(state_dim=STATE_DIM, **fields)
