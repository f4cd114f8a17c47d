"""Scene-context frames of navigation policies: rendered once per episode, stored with the demonstrations.

Section 4.1 / Appendix 12: a navigation policy receives "the current head-camera view and a variable-length
sequence of curated scene-context frames". Ours are the task-grounded navigation VQA's context tour
(:func:`bspatial.construction.questions.navigation_vqa.context_tour`: the same poses, the same order) rendered at the
policy's image size, so a policy is trained on the frames a VQA question shows and a rollout feeds exactly what
training saw: :func:`policy_context_frames` is called by the demonstration recorder
(:mod:`bspatial.construction.demonstrations.demos`) and by the rollout (:mod:`bspatial.evaluation.rollout.policies`), and
training reads the stored copy back (:class:`bspatial.modeling.training_data.ContextFramesDataset`).

Storage (one file per episode, ``meta/context_frames/episode_000000.png``): the episode's K frames stacked
vertically, in tour order, into one (K * H, W, 3) PNG. Why PNG and not the alternatives:

* lossless: a rollout feeds freshly rendered frames, so training must see those pixels, not JPEG's (the VQA's
  JPEG frames serve a reader, not a policy);
* byte-deterministic: PIL writes no timestamp, whereas ``np.savez`` stamps each zip entry with the write time,
  so the same recording would give other bytes on every run;
* not a LeRobot feature: the frames belong to the episode, not to a time step (a per-frame feature would repeat
  them at every step or need a video of 12 frames per episode), and a file under ``meta/`` is one no LeRobot
  reader (``LeRobotDataset``, ``lerobot-doctor``) looks at;
* one file, viewable as an image on the Hub, per episode instead of K.

Frames are square (``H == W``), so K is the strip's height over its width.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from bspatial.catalog.schema import POLICY_IMAGE_SIZE
from bspatial.common.files import atomic_write_bytes
from bspatial.sim.backend import SimBackend

CONTEXT_FRAMES_DIR = "meta/context_frames"
"""Folder of the per-episode context strips inside a demonstration dataset."""
CONTEXT_FRAME_SIZE = POLICY_IMAGE_SIZE
"""Pixels (square) of a policy's context frame: the policy cameras' size (Appendix 13.3: 224 x 224)."""
_PNG_COMPRESS_LEVEL = 6  # zlib level, fixed so the bytes do not follow a library default


def policy_context_frames(backend: SimBackend, instance) -> np.ndarray:
    """(K, H, W, 3) uint8: ``instance``'s context tour at :data:`CONTEXT_FRAME_SIZE`, in tour order.

    Loads the tour's floor plan into ``backend`` (the backend is left reset on that scene, not on the instance's:
    a caller that goes on with the instance loads it again).
    """
    from bspatial.construction.questions.navigation_vqa import context_tour

    return np.stack(context_tour(backend, instance, size=CONTEXT_FRAME_SIZE)).astype(np.uint8, copy=False)


def context_frames_path(root: str | os.PathLike, episode_index: int) -> Path:
    """Where episode ``episode_index``'s context strip lives in the dataset at ``root``."""
    return Path(root) / CONTEXT_FRAMES_DIR / f"episode_{int(episode_index):06d}.png"


def encode_strip(frames: np.ndarray) -> bytes:
    """PNG bytes of (K, H, W, 3) uint8 frames stacked vertically (``H == W``)."""
    from PIL import Image

    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.shape[1] != frames.shape[2] or frames.dtype != np.uint8:
        raise ValueError(f"context frames must be (K, H, H, 3) uint8, got {frames.shape} {frames.dtype}")
    if not len(frames):
        raise ValueError("an episode's context has at least one frame, got none")
    buffer = io.BytesIO()
    Image.fromarray(frames.reshape(-1, *frames.shape[2:])).save(buffer, format="PNG",
                                                                 compress_level=_PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


def write_context_frames(root: str | os.PathLike, episode_index: int, frames: np.ndarray) -> Path:
    """Write an episode's context strip into the dataset at ``root`` (atomically); returns its path."""
    path = context_frames_path(root, episode_index)
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write_bytes(path, encode_strip(frames))


def read_context_frames(root: str | os.PathLike, episode_index: int) -> np.ndarray:
    """(K, H, W, 3) uint8 context frames of an episode, in tour order.

    Raises:
        FileNotFoundError: the dataset has no strip for the episode (the path is named).
        ValueError: the file is not a strip of square RGB frames.
    """
    from PIL import Image

    path = context_frames_path(root, episode_index)
    if not path.is_file():
        raise FileNotFoundError(f"no context frames for episode {episode_index} at {str(path)!r}")
    with Image.open(path) as image:
        mode, strip = image.mode, np.array(image)   # a writable copy (torch.from_numpy warns on read-only)
    height, width = strip.shape[:2]
    if mode != "RGB" or height % width:
        raise ValueError(f"{str(path)!r} is not a strip of square RGB frames (mode {mode}, {width} x {height})")
    return strip.reshape(height // width, width, width, 3)


__all__ = ["CONTEXT_FRAMES_DIR", "CONTEXT_FRAME_SIZE", "context_frames_path", "encode_strip", "policy_context_frames",
           "read_context_frames", "write_context_frames"]
