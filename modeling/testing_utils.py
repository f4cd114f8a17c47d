"""Test and benchmark helpers: random policy batches and a tiny LeRobot dataset.

The tiny backbone itself (config, offline tokenizer, processor) is :mod:`bspatial.modeling.tiny_backbone`,
which the ``tiny`` training preset uses too. The prompt built by ``make_batch`` is a stand-in: the
real prompt (instruction + 256-bin state text) belongs to the processor.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from .configuration_bspatial_vla import BSpatialVLAConfig
from .tiny_backbone import build_tiny_processor, build_tiny_tokenizer, tiny_policy_config, tiny_vlm_config

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
    """A tiny LeRobot v3 dataset with BEHAVIOR's feature names (videos, random frames), finalised.

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
                item["task"] = task  # no timestamp / frame_index: lerobot computes them
                dataset.add_frame(item)
            dataset.save_episode(parallel_encoding=False)  # no fork from a threaded process
    dataset.finalize()  # after the last save_episode, as lerobot requires
    return dataset


__all__ = ["build_tiny_lerobot_dataset", "build_tiny_processor", "build_tiny_tokenizer", "make_batch", "tiny_policy_config", "train_tiny_run", "tiny_vlm_config"]


def train_tiny_run(dataset_root, output_dir) -> Path:
    """Train the ``tiny`` preset on ``dataset_root`` into ``output_dir`` for a test fixture: one torch thread
    (tiny matmuls on a 2-core machine are ~10x faster on one) and Accelerate's process-wide state reset after,
    so the next train() in the same test process starts clean. Returns ``output_dir``."""
    from accelerate.state import AcceleratorState, PartialState

    from .train import train

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train("tiny", str(dataset_root), str(output_dir))
    finally:
        torch.set_num_threads(threads)
        AcceleratorState._reset_state(True)
        PartialState._reset_state()
    return Path(output_dir)


def open_expert_gates(model, seed: int) -> None:
    """Redraw the action expert's adaRMSNorm modulation (N(0, 0.5)) and linear weights (N(0, 1 / fan_in)).

    As initialised, the closed adaLN-Zero gates keep every observation out of the actions, so a test that
    compares actions would pass even for code that ignored the observation. Deterministic (own generator,
    fixed module order); afterwards every residual branch of the expert, cross-attention to the VLM
    features included, contributes to the velocity.
    """
    from .modeling_bspatial_vla import BSpatialAdaRMSNorm

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.action_expert.modules():
            if isinstance(module, BSpatialAdaRMSNorm):
                module.weight.copy_(0.5 * torch.randn(module.weight.shape, generator=generator))
                module.bias.copy_(0.5 * torch.randn(module.bias.shape, generator=generator))
            elif isinstance(module, torch.nn.Linear):
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator) / math.sqrt(module.in_features))
