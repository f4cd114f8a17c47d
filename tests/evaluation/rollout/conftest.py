"""Shared fixtures of the rollout tests: tiny BSpatialVLA checkpoints saved with save_pretrained."""

from __future__ import annotations

import pytest


def save_tiny_checkpoint(path, **overrides):
    """A tiny random BSpatialVLA + processor at ``path`` (state width = the simulator's proprio)."""
    import torch

    from bspatial.modeling import BSpatialVLAForActionPrediction, BSpatialVLAProcessor
    from bspatial.modeling.tiny_backbone import build_tiny_processor, tiny_policy_config
    from bspatial.catalog.schema import STATE_DIM

    config = tiny_policy_config(state_dim=STATE_DIM, **overrides)
    torch.manual_seed(0)
    model = BSpatialVLAForActionPrediction(config)
    qwen = build_tiny_processor()
    stats = {"observation.state": {"q01": [-3.0] * STATE_DIM, "q99": [3.0] * STATE_DIM},
             "action": {"q01": [-0.5] * 23, "q99": [0.5] * 23}}
    processor = BSpatialVLAProcessor.from_model_config(config, qwen.image_processor, qwen.tokenizer, stats)
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("ckpt"))


@pytest.fixture(scope="session")
def tiny_dot_anchor_checkpoint(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("ckpt-dot-anchor"), ir_mode="dot", first_frame_anchor=True)


@pytest.fixture(scope="session")
def tiny_dot12_checkpoint(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("ckpt-dot12"), ir_mode="dot", ir_dot_radius=12)


@pytest.fixture(scope="session")
def tiny_attn_checkpoint(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("ckpt-attn"), ir_mode="attn_map")


@pytest.fixture(scope="session")
def tiny_point_checkpoint(tmp_path_factory):
    """With the pointing head (pointing co-training, as every cpu_reach preset)."""
    return save_tiny_checkpoint(tmp_path_factory.mktemp("ckpt-point"), point_loss_weight=1.0)
