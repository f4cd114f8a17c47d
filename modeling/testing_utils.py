"""Tiny, offline building blocks for tests and benchmarks: a Qwen3.5 config, a byte-level BPE
tokenizer with the vision special tokens, a Qwen3.5-style processor and random policy batches.

Nothing here downloads anything. The sizes follow DESIGN §3 (Qwen3.5: hidden 64, 2 layers,
layer_types [linear_attention, full_attention], vision depth 2, patch 16, merge 2). The prompt built
by ``make_batch`` is a stand-in: the real prompt (instruction + 256-bin state text) belongs to the
processor.
"""

from __future__ import annotations

import numpy as np
import torch

from .configuration_bspatial_vla import BSpatialVLAConfig

# Qwen3.5's special tokens that the vision path and chat format use.
SPECIAL_TOKENS = (
    "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>",
)
PATCH_SIZE = 16
MERGE_SIZE = 2
TEMPORAL_PATCH_SIZE = 2


def build_tiny_tokenizer():
    """A ``Qwen3_5Tokenizer`` over the 256 byte-level symbols (no merges) plus the special tokens.

    Example:
        >>> tok = build_tiny_tokenizer()
        >>> len(tok), tok.convert_tokens_to_ids("<|image_pad|>")
        (263, 261)
    """
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import Qwen3_5Tokenizer

    vocab = {"<|endoftext|>": 0}
    for symbol in sorted(ByteLevel.alphabet()):
        vocab[symbol] = len(vocab)
    tokenizer = Qwen3_5Tokenizer(vocab=vocab, merges=[])
    tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS)})
    return tokenizer


def build_tiny_processor(tokenizer=None, max_side: int = 64):
    """A ``Qwen3VLProcessor`` (what transformers uses for qwen3_5) sized for tiny images.

    Images are resized so that each side is a multiple of patch * merge = 32 pixels and at most
    ``max_side`` pixels.
    """
    from transformers import Qwen3VLProcessor
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import Qwen2VLImageProcessor
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    tokenizer = build_tiny_tokenizer() if tokenizer is None else tokenizer
    factor = PATCH_SIZE * MERGE_SIZE
    size = {"shortest_edge": factor * factor, "longest_edge": max_side * max_side}
    kwargs = dict(patch_size=PATCH_SIZE, merge_size=MERGE_SIZE, temporal_patch_size=TEMPORAL_PATCH_SIZE, size=size)
    return Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(**kwargs), tokenizer=tokenizer,
                            video_processor=Qwen3VLVideoProcessor(**kwargs))


def tiny_vlm_config(tokenizer=None) -> dict:
    """A tiny Qwen3.5 config dict whose special-token ids match ``build_tiny_tokenizer``."""
    tokenizer = build_tiny_tokenizer() if tokenizer is None else tokenizer
    ids = dict(zip(SPECIAL_TOKENS, tokenizer.convert_tokens_to_ids(list(SPECIAL_TOKENS))))
    text = dict(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=32,
        layer_types=["linear_attention", "full_attention"],
        linear_key_head_dim=16, linear_value_head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4,
        # head_dim 32 * partial_rotary_factor 0.25 = 8 rotary dims = 4 frequencies = sum(mrope_section).
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25,
                         "mrope_section": [2, 1, 1], "mrope_interleaved": True},
        pad_token_id=0, eos_token_id=0,
    )
    vision = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=PATCH_SIZE,
                  spatial_merge_size=MERGE_SIZE, temporal_patch_size=TEMPORAL_PATCH_SIZE, out_hidden_size=64,
                  num_position_embeddings=16)
    return dict(text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
                video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                vision_end_token_id=ids["<|vision_end|>"])


def tiny_policy_config(**overrides) -> BSpatialVLAConfig:
    """A tiny policy config: expert width 32, 2 layers reading VLM hidden states 1 and 2.

    Example:
        >>> tiny_policy_config(ir_mode="attn_map").num_images
        4
    """
    kwargs = dict(vlm_config=tiny_vlm_config(), expert_hidden_size=32, expert_num_layers=2,
                  expert_num_attention_heads=2, expert_head_dim=16, expert_intermediate_size=64,
                  prefix_layers=[1, 2], state_dim=8)
    kwargs.update(overrides)
    return BSpatialVLAConfig(**kwargs)


def make_batch(config: BSpatialVLAConfig, processor, batch_size: int = 2, image_size: int = 32,
               seed: int = 0, num_images: int | None = None, instructions: list[str] | None = None) -> dict:
    """A random processed batch following the model's input contract (plus ``actions`` and pads).

    ``num_images`` overrides ``config.num_images`` to build deliberately mismatched batches.
    """
    rng = np.random.default_rng(seed)
    n = config.num_images if num_images is None else num_images
    images = rng.integers(0, 256, size=(batch_size, n, image_size, image_size, 3), dtype=np.uint8)
    state = rng.uniform(-1, 1, size=(batch_size, config.state_dim)).astype(np.float32)
    if instructions is None:
        instructions = [f"pick up the cup on the {'left' if i % 2 == 0 else 'right'}" for i in range(batch_size)]
    image_text = "<|vision_start|><|image_pad|><|vision_end|>" * n
    texts = []
    for i in range(batch_size):
        bins = np.clip(((state[i] + 1) / 2 * config.state_num_bins).astype(int), 0, config.state_num_bins - 1)
        texts.append(f"{image_text}Task: {instructions[i]}, State: {' '.join(map(str, bins))};\nAction: ")
    processed = processor(images=[list(sample) for sample in images], text=texts, padding=True, return_tensors="pt")
    batch = {k: processed[k] for k in ("input_ids", "attention_mask", "mm_token_type_ids", "pixel_values",
                                       "image_grid_thw")}
    batch["state"] = torch.from_numpy(state)
    batch["actions"] = torch.from_numpy(
        rng.uniform(-1, 1, size=(batch_size, config.chunk_size, config.action_dim)).astype(np.float32))
    is_pad = np.zeros((batch_size, config.chunk_size), dtype=bool)
    is_pad[-1, config.chunk_size - 3:] = True  # the last sample's chunk runs past its episode end
    batch["action_is_pad"] = torch.from_numpy(is_pad)
    return batch


def build_tiny_lerobot_dataset(root, tasks: tuple[str, ...] = ("pick up the cup", "open the drawer"),
                               episodes_per_task: int = 2, frames_per_episode: int = 40, image_size: int = 32,
                               state_dim: int = 8, action_dim: int = 23, fps: int = 10, seed: int = 0,
                               cameras: tuple[str, ...] = ("head", "left_wrist", "right_wrist"),
                               ir_targets: bool = False):
    """A tiny LeRobot v3 dataset with DESIGN §4 feature names (videos, random frames), finalised.

    Actions are a smooth function of time and task so that a policy has something to fit. With
    ``ir_targets``, frames carry ``observation.ir_target`` ((x, y) on the 224 grid; NaN every 7th frame,
    as for a box without a valid projection).
    """
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    shape = (image_size, image_size, 3)
    features = {f"observation.images.rgb.{c}": {"dtype": "video", "shape": shape,
                                                "names": ["height", "width", "channels"]} for c in cameras}
    features["observation.state"] = {"dtype": "float32", "shape": (state_dim,), "names": None}
    features["action"] = {"dtype": "float32", "shape": (action_dim,), "names": None}
    if ir_targets:
        features["observation.ir_target"] = {"dtype": "float32", "shape": (2,), "names": ["x", "y"]}
    dataset = LeRobotDataset.create("bspatial/tiny", fps=fps, features=features, root=root, use_videos=True,
                                    robot_type="r1pro")
    rng = np.random.default_rng(seed)
    for task_index, task in enumerate(tasks):
        for _ in range(episodes_per_task):
            phase = rng.uniform(0, 2 * np.pi)
            for frame in range(frames_per_episode):
                t = frame / fps
                item = {key: rng.integers(0, 256, shape, dtype=np.uint8) for key in features if "images" in key}
                item["observation.state"] = np.sin(t + phase + np.arange(state_dim)).astype(np.float32)
                item["action"] = (np.cos(t + phase + np.arange(action_dim)) + task_index).astype(np.float32)
                if ir_targets:
                    target = rng.integers(0, 224, 2).astype(np.float32)
                    item["observation.ir_target"] = target if frame % 7 != 3 else np.full(2, np.nan, np.float32)
                item["task"] = task  # no timestamp / frame_index: lerobot computes them (DESIGN §3)
                dataset.add_frame(item)
            dataset.save_episode(parallel_encoding=False)  # no fork from a threaded process
    dataset.finalize()  # after the last save_episode (DESIGN §3)
    return dataset


__all__ = ["build_tiny_lerobot_dataset", "build_tiny_processor", "build_tiny_tokenizer", "make_batch", "tiny_policy_config", "tiny_vlm_config"]
