import pytest
from transformers import AutoConfig, Qwen3_5Config

from bspatial.modeling import BSpatialVLAConfig


def test_defaults_follow_the_paper():
    config = BSpatialVLAConfig()
    assert config.model_type == "bspatial_vla"
    assert isinstance(config.vlm_config, Qwen3_5Config)
    assert (config.chunk_size, config.action_dim) == (32, 23)
    assert config.camera_names == ["head", "left_wrist", "right_wrist"]
    assert (config.state_num_bins, config.state_min, config.state_max) == (256, -1.0, 1.0)
    assert (config.time_beta_alpha, config.time_beta_beta, config.time_scale, config.time_offset) == (1.5, 1.0, 0.999, 0.001)
    assert config.num_inference_steps == 10
    assert config.freeze_vlm is True and config.ir_mode == "none" and config.first_frame_anchor is False
    assert "vlm_config" in BSpatialVLAConfig.sub_configs


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({}, ["head", "left_wrist", "right_wrist"]),
        ({"ir_mode": "dot"}, ["head", "left_wrist", "right_wrist", "ir"]),
        ({"ir_mode": "attn_map"}, ["head", "left_wrist", "right_wrist", "ir"]),
        ({"ir_mode": "dot", "first_frame_anchor": True}, ["head", "left_wrist", "right_wrist", "ir", "anchor"]),
    ],
)
def test_image_slots_per_variant(tiny_config, kwargs, names):
    config = BSpatialVLAConfig(**{**tiny_config.to_dict(), **kwargs})
    assert config.image_names == names and config.num_images == len(names)


@pytest.mark.parametrize(
    ("kwargs", "quoted"),
    [
        ({"ir_mode": "heatmap"}, "'heatmap'"),
        ({"first_frame_anchor": True, "ir_mode": "attn_map"}, "'attn_map'"),
        ({"chunk_size": 0}, "0"),
        ({"action_dim": -3}, "-3"),
        ({"camera_names": ["head", "head"]}, "['head', 'head']"),
        ({"camera_names": ["head", "ir"]}, "['ir']"),
        ({"prefix_layers": [1, 7]}, "[1, 7]"),
        ({"prefix_layers": [1, 1, 2]}, "[1, 1, 2]"),
        ({"state_num_bins": 1}, "1"),
        ({"state_min": 1.0, "state_max": -1.0}, "1.0"),
        ({"time_beta_alpha": 0.0}, "0.0"),
        ({"time_scale": 0.999, "time_offset": 0.1}, "0.1"),
        ({"expert_hidden_size": 33}, "33"),
        ({"vlm_config": {"model_type": "qwen3_5_text"}}, "qwen3_5_text"),
    ],
)
def test_bad_values_raise_and_quote_the_value(tiny_config, kwargs, quoted):
    base = tiny_config.to_dict()
    if "vlm_config" in kwargs:
        base.pop("vlm_config")
        kwargs = {"vlm_config": AutoConfig.for_model("qwen3_5_text")}
    with pytest.raises(ValueError) as info:
        BSpatialVLAConfig(**{**base, **kwargs})
    assert quoted in str(info.value)


def test_default_prefix_layers_spread_over_the_vlm(tiny_config):
    assert BSpatialVLAConfig().prefix_layers == [4, 8, 12, 16, 20, 24, 28, 32]  # 4B-like depth 32, 8 expert layers
    shared = BSpatialVLAConfig(**{**tiny_config.to_dict(), "prefix_layers": [2]})
    assert [shared.expert_prefix_layer(k) for k in range(2)] == [2, 2]


def test_save_and_load_round_trip(tmp_path, tiny_config):
    config = BSpatialVLAConfig(**{**tiny_config.to_dict(), "ir_mode": "dot", "first_frame_anchor": True})
    config.save_pretrained(tmp_path)
    loaded = AutoConfig.from_pretrained(tmp_path)
    assert isinstance(loaded, BSpatialVLAConfig)
    assert loaded.to_diff_dict() == config.to_diff_dict()
    assert isinstance(loaded.vlm_config, Qwen3_5Config)
    assert loaded.vlm_config.text_config.layer_types == ["linear_attention", "full_attention"]


def test_architecture_only(tiny_config):
    # Architecture only: no optimizer / schedule / data fields in the model config.
    forbidden = ("lr", "learning_rate", "optimizer", "weight_decay", "warmup", "batch_size", "betas", "scheduler")
    assert not [key for key in tiny_config.to_dict() if any(word in key for word in forbidden)]
