"""BEHAVIOR-Spatial-VLA processor: LeRobot observations -> model inputs, model actions -> robot actions.

An ordered pipeline of small named steps (lerobot ``policies/pi05/processor_pi05.py`` is the anchor).
Order of ``__call__`` (each step is a method below; the order matters where noted):

0. ``render_ir``          IR variants: draw ``observation.images.ir`` from ``observation.ir_target`` when
                          the batch has the target instead of the image (Appendix 13.3, ir_rendering.py)
1. ``collect_images``     images in ``image_names`` order (cameras, then IR, then anchor), uint8 only;
                          the anchor arrives ready-made in ``observation.images.anchor`` (it is one
                          image per episode, see ``ANCHOR_IMAGE_KEY``)
1b. ``collect_context``   navigation policies (``max_context_frames > 0``): each sample's ordered scene-context
                          frames from ``observation.images.context`` without the ones
                          ``observation.images.context_is_pad`` marks as padding (Section 4.1, Appendix 12)
2. ``normalize_state``    quantile-normalise ``observation.state`` to [-1, 1] with the dataset q01/q99
3. ``discretize_state``   normalised state -> ``state_num_bins`` integer bins (needs step 2 first)
4. ``build_prompts``      image placeholders (context frames first, as ``Context: ... Now: ...``) +
                          ``Task: ..., State: ...;\\nAction: `` (openpi pi0.5 text)
5. ``encode``             Qwen3.5 image processor + tokenizer, image-token expansion, ``mm_token_type_ids``
6. ``relative_actions``   training only: with ``relative_action_dims``, those dims of the chunk minus the
                          chunk's first-frame state (openpi ``DeltaActions``; needs the raw state)
7. ``normalize_actions``  training only: the ``action`` chunk, same quantile map as the state (for relative
                          dims the stats describe the differences)
8. ``point_targets``      when the batch has ``observation.ir_target``: the target pixel mapped to [-1, 1]
                          (``point_target``, NaN where none), the label of pointing co-training

At inference ``unnormalize_actions`` maps the model's chunk back to robot units (inverse of steps 7 and 6:
it takes the processor's normalised ``state`` output to add the state back).

Saved with the model (``save_pretrained`` writes ``processor_config.json`` with the stats and the
prompt settings, plus the tokenizer files). This file travels inside checkpoints as remote code: it
imports only numpy, torch, transformers and its siblings (relative imports).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from transformers import BatchFeature
from transformers.processing_utils import ProcessorMixin

# `from .x import y` form only: transformers copies a checkpoint's code files by scanning for it.
from .ir_rendering import DOT_RADIUS, IR_IMAGE_SIZE, render_attention_map_ir, render_dot_ir, target_or_none

# LeRobot feature keys (BEHAVIOR's names).
STATE_KEY = "observation.state"
ACTION_KEY = "action"
TASK_KEY = "task"
ACTION_IS_PAD_KEY = "action_is_pad"
CAMERA_KEY_PREFIX = "observation.images.rgb."
# IR images (Appendix 13.3) are not recorded by the simulator: the IR renderer adds them per frame.
EXTRA_IMAGE_KEY_PREFIX = "observation.images."
IR_IMAGE_KEY = EXTRA_IMAGE_KEY_PREFIX + "ir"
# First-frame anchor (Appendix 13.3): constant within an episode, so it is built once per episode by
# the caller (training: training_data.FirstFrameAnchorDataset; rollout: ir_rendering.render_first_frame_anchor
# on the first observation), never per frame here.
ANCHOR_IMAGE_KEY = EXTRA_IMAGE_KEY_PREFIX + "anchor"
# Navigation scene-context frames (Section 4.1, Appendix 12): (B, K, C, H, W) uint8, K <= max_context_frames,
# ordered as the tour saw them; the optional (B, K) bool mask marks padding frames (lerobot's *_is_pad naming)
# so that samples with fewer frames batch together. Padding frames are not fed: they get no image tokens.
CONTEXT_IMAGE_KEY = EXTRA_IMAGE_KEY_PREFIX + "context"
CONTEXT_IS_PAD_KEY = CONTEXT_IMAGE_KEY + "_is_pad"
CONTEXT_PREFIX, CURRENT_PREFIX = "Context: ", "\nNow: "
# Oracle IR target per frame: (x, y) on the 224 x 224 policy grid (ir_rendering.target_pixel); NaN when
# the box has no valid projection (-> no dot / a uniform dark-blue map).
IR_TARGET_KEY = "observation.ir_target"
IR_MODES = ("none", "dot", "attn_map")
# The two quantiles that define the normalisation (pi0.5 / lerobot NormalizationMode.QUANTILES).
QUANTILE_LOW, QUANTILE_HIGH = "q01", "q99"
# Guard for constant dimensions (q99 == q01): the map stays finite and exactly invertible.
QUANTILE_EPS = 1e-8
# Qwen3.5 vision placeholders; the image processor's patch grid decides how many pad tokens follow.
VISION_START, IMAGE_PAD, VISION_END = "<|vision_start|>", "<|image_pad|>", "<|vision_end|>"
# openpi pi0.5 prompt (`tokenizer.py`, lerobot `Pi05PrepareStateTokenizerProcessorStep`).
PROMPT_TEMPLATE = "Task: {task}, State: {state};\nAction: "
# The same prompt without the state text (``config.state_in_prompt=False``): the expert still reads the state
# through its state token, so the prefix carries only the images and the instruction.
PROMPT_TEMPLATE_NO_STATE = "Task: {task};\nAction: "


def image_key(name: str, camera_names: Sequence[str]) -> str:
    """LeRobot key of an image slot: cameras under ``observation.images.rgb.``, IR / anchor under
    ``observation.images.``.

    Example:
        >>> image_key("head", ["head"]), image_key("ir", ["head"])
        ('observation.images.rgb.head', 'observation.images.ir')
    """
    return (CAMERA_KEY_PREFIX if name in camera_names else EXTRA_IMAGE_KEY_PREFIX) + name


def float_images_to_uint8(images: torch.Tensor) -> torch.Tensor:
    """Explicit conversion of float [0, 1] frames (lerobot without ``return_uint8``) to uint8."""
    if images.is_floating_point() and (images.min() < 0 or images.max() > 1):
        raise ValueError(f"float images must lie in [0, 1], got [{images.min().item()}, {images.max().item()}]")
    return (images.float() * 255).round().clamp(0, 255).to(torch.uint8)


def quantile_normalize(x: torch.Tensor, q01: torch.Tensor, q99: torch.Tensor) -> torch.Tensor:
    """``2 * (x - q01) / (q99 - q01) - 1``: q01 -> -1, q99 -> 1 (not clipped).

    Example:
        >>> quantile_normalize(torch.tensor([0.0, 5.0, 10.0]), torch.tensor(0.0), torch.tensor(10.0))
        tensor([-1.,  0.,  1.])
    """
    return 2.0 * (x - q01) / (q99 - q01).clamp_min(QUANTILE_EPS) - 1.0


def quantile_unnormalize(y: torch.Tensor, q01: torch.Tensor, q99: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`quantile_normalize`."""
    return (y + 1.0) / 2.0 * (q99 - q01).clamp_min(QUANTILE_EPS) + q01


def discretize(values: np.ndarray, num_bins: int, low: float, high: float) -> np.ndarray:
    """Uniform bins over ``[low, high]``; values outside land in the end bins.

    Example:
        >>> discretize(np.array([-1.0, -0.999, 0.0, 0.999, 1.0, 3.0]), 256, -1.0, 1.0).tolist()
        [0, 0, 128, 255, 255, 255]
    """
    scaled = np.floor((np.asarray(values, dtype=np.float64) - low) / (high - low) * num_bins)
    return np.clip(scaled, 0, num_bins - 1).astype(np.int64)


def _check_stats(stats: Mapping | None, features: Sequence[str]) -> dict[str, dict[str, list[float]]]:
    if stats is None:
        raise ValueError(f"dataset stats are required for {list(features)} (q01 / q99 per feature)")
    clean = {}
    for feature in features:
        if feature not in stats:
            raise ValueError(f"stats lack the feature {feature!r}; they have {sorted(stats)}")
        missing = [q for q in (QUANTILE_LOW, QUANTILE_HIGH) if q not in stats[feature]]
        if missing:
            raise ValueError(f"stats for {feature!r} lack the quantiles {missing} needed for quantile "
                             f"normalisation; they have {sorted(stats[feature])}")
        low = np.asarray(stats[feature][QUANTILE_LOW], dtype=np.float64).reshape(-1)
        high = np.asarray(stats[feature][QUANTILE_HIGH], dtype=np.float64).reshape(-1)
        if low.shape != high.shape or not np.all(np.isfinite(low)) or not np.all(np.isfinite(high)):
            raise ValueError(f"stats for {feature!r}: q01 / q99 must be finite and of equal length, got "
                             f"{low.tolist()} and {high.tolist()}")
        clean[feature] = {QUANTILE_LOW: low.tolist(), QUANTILE_HIGH: high.tolist()}
    return clean


class BSpatialVLAProcessor(ProcessorMixin):
    r"""Turns LeRobot batches into [`BSpatialVLAForActionPrediction`] inputs and its chunks back into actions.

    Args:
        image_processor: the Qwen3.5 image processor (``Qwen2VLImageProcessor``); it rescales uint8
            frames by 1/255 itself, so this processor only accepts uint8 (no double rescale).
        tokenizer: the Qwen3.5 tokenizer, with the vision special tokens.
        stats: dataset stats ``{"observation.state": {"q01": [...], "q99": [...]}, "action": {...}}``
            (lerobot ``dataset.meta.stats``; extra statistics are dropped). Only the quantiles are kept.
        image_names: image slots in input order (``config.image_names``).
        camera_names: which image names are cameras (``observation.images.rgb.<name>``); the others
            (IR, anchor) are read from ``observation.images.<name>``.
        state_num_bins, state_min, state_max: state text discretisation (``config``; pi0.5: 256 over [-1, 1]).
        ir_mode: ``config.ir_mode``; with ``"dot"`` / ``"attn_map"`` a batch may carry
            ``observation.ir_target`` instead of the rendered ``observation.images.ir``.
        ir_source_camera: the camera the dot is drawn on (Appendix 13.3: the head camera).
        max_context_frames: ``config.max_context_frames``; > 0 makes ``observation.images.context`` required.
        state_in_prompt: ``config.state_in_prompt``; False leaves the state text out of the prompt.
        ir_dot_radius: ``config.ir_dot_radius``, the radius :meth:`render_ir` draws the dot with.
        relative_action_dims, relative_state_dims: ``config.relative_action_dims`` / ``relative_state_dims``;
            the ``action`` stats of those dims must then describe ``action - state`` (what training computes).

    Build one from a model config with :meth:`from_model_config`.
    """

    _auto_class = "AutoProcessor"

    def __init__(self, image_processor=None, tokenizer=None, stats: Mapping | None = None,
                 image_names: Sequence[str] | None = None, camera_names: Sequence[str] | None = None,
                 state_num_bins: int = 256, state_min: float = -1.0, state_max: float = 1.0,
                 ir_mode: str = "none", ir_source_camera: str = "head", max_context_frames: int = 0,
                 state_in_prompt: bool = True, ir_dot_radius: int = DOT_RADIUS,
                 relative_action_dims: Sequence[int] = (), relative_state_dims: Sequence[int] = (), **kwargs):
        super().__init__(image_processor, tokenizer, **kwargs)
        if image_names is None or not list(image_names):
            raise ValueError(f"image_names must list the image slots (config.image_names), got {image_names!r}")
        self.stats = _check_stats(stats, (STATE_KEY, ACTION_KEY))
        self.image_names = list(image_names)
        self.camera_names = list(image_names if camera_names is None else camera_names)
        self.state_num_bins, self.state_min, self.state_max = int(state_num_bins), float(state_min), float(state_max)
        if ir_mode not in IR_MODES:
            raise ValueError(f"ir_mode must be one of {IR_MODES}, got {ir_mode!r}")
        self.ir_mode, self.ir_source_camera = ir_mode, ir_source_camera
        if isinstance(max_context_frames, bool) or int(max_context_frames) != max_context_frames or max_context_frames < 0:
            raise ValueError(f"max_context_frames must be a non-negative integer, got {max_context_frames!r}")
        self.max_context_frames = int(max_context_frames)
        self.state_in_prompt = bool(state_in_prompt)
        if isinstance(ir_dot_radius, bool) or int(ir_dot_radius) != ir_dot_radius or ir_dot_radius < 1:
            raise ValueError(f"ir_dot_radius must be a positive integer, got {ir_dot_radius!r}")
        self.ir_dot_radius = int(ir_dot_radius)
        self.relative_action_dims = [int(d) for d in relative_action_dims]
        self.relative_state_dims = [int(d) for d in relative_state_dims]
        if len(self.relative_action_dims) != len(self.relative_state_dims):
            raise ValueError(f"relative_action_dims and relative_state_dims must pair up, got "
                             f"{self.relative_action_dims!r} and {self.relative_state_dims!r}")

    @classmethod
    def from_model_config(cls, config, image_processor, tokenizer, stats: Mapping) -> BSpatialVLAProcessor:
        """A processor whose image order and state bins follow a ``BSpatialVLAConfig``; checks stats widths."""
        processor = cls(image_processor, tokenizer, stats=stats, image_names=config.image_names,
                        camera_names=config.camera_names, state_num_bins=config.state_num_bins,
                        state_min=config.state_min, state_max=config.state_max, ir_mode=config.ir_mode,
                        ir_source_camera=config.ir_source_camera,
                        max_context_frames=config.max_context_frames, state_in_prompt=config.state_in_prompt,
                        ir_dot_radius=config.ir_dot_radius, relative_action_dims=config.relative_action_dims,
                        relative_state_dims=config.relative_state_dims)
        for feature, dim in ((STATE_KEY, config.state_dim), (ACTION_KEY, config.action_dim)):
            width = len(processor.stats[feature][QUANTILE_LOW])
            if width != dim:
                raise ValueError(f"stats for {feature!r} have {width} dims, the config expects {dim}")
        return processor

    # ---- steps ----------------------------------------------------------------------------------

    def _quantiles(self, feature: str, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q = self.stats[feature]
        low = torch.tensor(q[QUANTILE_LOW], dtype=torch.float32, device=like.device)
        high = torch.tensor(q[QUANTILE_HIGH], dtype=torch.float32, device=like.device)
        if like.shape[-1] != low.shape[0]:
            raise ValueError(f"{feature!r} has {like.shape[-1]} dims, its stats have {low.shape[0]}")
        return low, high

    def render_ir(self, batch: Mapping) -> Mapping:
        """Step 0: add ``observation.images.ir`` rendered from ``observation.ir_target`` when it is absent."""
        if self.ir_mode == "none" or IR_IMAGE_KEY in batch or IR_TARGET_KEY not in batch:
            return batch
        targets = torch.as_tensor(batch[IR_TARGET_KEY]).reshape(-1, 2).tolist()
        head = torch.as_tensor(batch[image_key(self.ir_source_camera, self.camera_names)])
        head = head[None] if head.dim() == 3 else head
        images = []
        for i, xy in enumerate(targets):
            target = target_or_none(xy)
            if self.ir_mode == "dot":
                images.append(render_dot_ir(head[i].permute(1, 2, 0).cpu().numpy(), target, self.ir_dot_radius))
            else:
                images.append(render_attention_map_ir(target))
        return {**batch, IR_IMAGE_KEY: torch.from_numpy(np.stack(images)).permute(0, 3, 1, 2).contiguous()}

    def collect_images(self, batch: Mapping) -> list[torch.Tensor]:
        """Step 1: ``B * num_images`` channel-first uint8 frames, sample-major, in ``image_names`` order."""
        per_slot = []
        for name in self.image_names:
            key = image_key(name, self.camera_names)
            if key not in batch:
                hint = (" (the first-frame anchor: build it once per episode with "
                        "ir_rendering.render_first_frame_anchor)" if key == ANCHOR_IMAGE_KEY else "")
                raise ValueError(f"batch lacks the image {key!r}{hint}; the processor expects {self.image_names}")
            frames = torch.as_tensor(batch[key])
            if frames.dtype != torch.uint8:
                # Qwen's image processor rescales by 1/255: float [0, 1] frames would be rescaled twice.
                raise ValueError(
                    f"{key!r} has dtype {frames.dtype}; expected uint8 frames (LeRobotDataset(..., "
                    f"return_uint8=True)). Convert float [0, 1] frames explicitly with float_images_to_uint8()")
            if frames.dim() == 3:
                frames = frames[None]
            if frames.dim() != 4 or frames.shape[1] not in (1, 3):
                raise ValueError(f"{key!r} must be (B, C, H, W) or (C, H, W) uint8, got shape {tuple(frames.shape)}")
            per_slot.append(frames)
        sizes = {len(f) for f in per_slot}
        if len(sizes) != 1:
            raise ValueError(f"image slots {self.image_names} have different batch sizes {[len(f) for f in per_slot]}")
        return [slot[i] for i in range(len(per_slot[0])) for slot in per_slot]

    def collect_context(self, batch: Mapping, batch_size: int) -> list[list[torch.Tensor]]:
        """Step 1b: per sample, its ordered context frames (uint8, channel-first), padding frames left out."""
        if CONTEXT_IMAGE_KEY not in batch:
            if self.max_context_frames:
                raise ValueError(f"batch lacks {CONTEXT_IMAGE_KEY!r}: this policy takes up to {self.max_context_frames} "
                                 f"scene-context frames per sample (an empty sequence is a (B, 0, C, H, W) tensor)")
            return [[] for _ in range(batch_size)]
        if not self.max_context_frames:
            raise ValueError(f"batch has {CONTEXT_IMAGE_KEY!r} but this policy takes no context frames "
                             f"(config.max_context_frames = 0)")
        frames = torch.as_tensor(batch[CONTEXT_IMAGE_KEY])
        frames = frames[None] if frames.dim() == 4 else frames
        if frames.dim() != 5 or frames.shape[2] not in (1, 3) or len(frames) != batch_size:
            raise ValueError(f"{CONTEXT_IMAGE_KEY!r} must be (B={batch_size}, K, C, H, W) uint8, got shape "
                             f"{tuple(frames.shape)}")
        if frames.dtype != torch.uint8:
            raise ValueError(f"{CONTEXT_IMAGE_KEY!r} has dtype {frames.dtype}; expected uint8 frames")
        if frames.shape[1] > self.max_context_frames:
            raise ValueError(f"{CONTEXT_IMAGE_KEY!r} holds {frames.shape[1]} frames per sample, more than "
                             f"max_context_frames={self.max_context_frames}")
        pad = torch.as_tensor(batch.get(CONTEXT_IS_PAD_KEY, torch.zeros(frames.shape[:2], dtype=torch.bool))).bool()
        pad = pad[None] if pad.dim() == 1 else pad
        if tuple(pad.shape) != tuple(frames.shape[:2]):
            raise ValueError(f"{CONTEXT_IS_PAD_KEY!r} must have shape {tuple(frames.shape[:2])}, got {tuple(pad.shape)}")
        return [[frames[i, k] for k in range(frames.shape[1]) if not pad[i, k]] for i in range(batch_size)]

    def normalize_state(self, state: torch.Tensor) -> torch.Tensor:
        """Step 2: quantile-normalise the raw state ``(B, state_dim)``."""
        return quantile_normalize(state.float(), *self._quantiles(STATE_KEY, state))

    def discretize_state(self, normalized_state: torch.Tensor) -> np.ndarray:
        """Step 3: ``(B, state_dim)`` integer bins of the normalised state."""
        return discretize(normalized_state.detach().cpu().numpy(), self.state_num_bins, self.state_min, self.state_max)

    def build_prompts(self, tasks: Sequence[str], state_bins: np.ndarray,
                      context_counts: Sequence[int] | None = None) -> list[str]:
        """Step 4: per sample, its context placeholders (if any), one placeholder per image, then the pi0.5
        task + state text."""
        placeholder = VISION_START + IMAGE_PAD + VISION_END
        counts = [0] * len(tasks) if context_counts is None else list(context_counts)
        prompts = []
        for task, bins, n_context in zip(tasks, state_bins, counts, strict=True):
            # pi0.5 cleaning: one line, underscores read as spaces.
            cleaned = task.strip().replace("_", " ").replace("\n", " ")
            images = placeholder * len(self.image_names)
            if self.max_context_frames:
                images = CONTEXT_PREFIX + placeholder * n_context + CURRENT_PREFIX + images
            text = (PROMPT_TEMPLATE.format(task=cleaned, state=" ".join(map(str, bins))) if self.state_in_prompt
                    else PROMPT_TEMPLATE_NO_STATE.format(task=cleaned))
            prompts.append(images + text)
        return prompts

    def encode(self, images: list[torch.Tensor], prompts: list[str],
               images_per_sample: Sequence[int] | None = None) -> dict[str, torch.Tensor]:
        """Step 5: patches + grids from the image processor; each ``<|image_pad|>`` expanded to the
        image's merged-patch count (Qwen3VLProcessor's rule); ``mm_token_type_ids`` 1 on image tokens.
        ``images`` are sample-major; ``images_per_sample`` defaults to the fixed slots."""
        vision = self.image_processor(images=images, return_tensors="pt")
        grid = vision["image_grid_thw"]
        merge = self.image_processor.merge_size ** 2
        counts = (grid.prod(-1) // merge).tolist()
        per_sample = list(images_per_sample or [len(self.image_names)] * len(prompts))
        starts = np.concatenate([[0], np.cumsum(per_sample)]).astype(int)
        expanded = []
        for i, prompt in enumerate(prompts):
            parts = prompt.split(IMAGE_PAD)
            sample_counts = counts[starts[i]:starts[i + 1]]
            text = parts[0] + "".join(IMAGE_PAD * n + rest for n, rest in zip(sample_counts, parts[1:], strict=True))
            expanded.append(text)
        text_inputs = self.tokenizer(expanded, padding=True, return_tensors="pt", return_token_type_ids=False)
        image_token_id = self.tokenizer.convert_tokens_to_ids(IMAGE_PAD)
        mm_token_type_ids = (text_inputs["input_ids"] == image_token_id).to(text_inputs["input_ids"].dtype)
        return {"input_ids": text_inputs["input_ids"], "attention_mask": text_inputs["attention_mask"],
                "mm_token_type_ids": mm_token_type_ids, "pixel_values": vision["pixel_values"], "image_grid_thw": grid}

    def relative_actions(self, actions: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """Step 6 (training): the ``relative_action_dims`` of a raw chunk ``(B, chunk, action_dim)`` minus the
        raw state ``(B, state_dim)`` of its first frame; the other dims unchanged."""
        if not self.relative_action_dims:
            return actions
        out = actions.float().clone()
        out[..., self.relative_action_dims] -= state.float()[:, None, self.relative_state_dims]
        return out

    def normalize_actions(self, actions: torch.Tensor) -> torch.Tensor:
        """Step 7 (training): quantile-normalise an action chunk ``(B, chunk, action_dim)`` (after step 6)."""
        return quantile_normalize(actions.float(), *self._quantiles(ACTION_KEY, actions))

    def unnormalize_actions(self, actions: torch.Tensor, state: torch.Tensor | None = None) -> torch.Tensor:
        """Inference: the model's normalised chunk ``(B, chunk, action_dim)`` -> robot units.

        ``state`` is this processor's normalised ``state`` output for the same batch; it is required when
        the model predicts ``relative_action_dims`` (their state is added back) and unused otherwise.
        """
        actions = quantile_unnormalize(actions.float(), *self._quantiles(ACTION_KEY, actions))
        if not self.relative_action_dims:
            return actions
        if state is None:
            raise ValueError(f"this policy predicts actions {self.relative_action_dims} relative to the state: "
                             f"pass the processor's normalised 'state' to unnormalize_actions")
        raw_state = quantile_unnormalize(state.float(), *self._quantiles(STATE_KEY, state))
        actions[..., self.relative_action_dims] += raw_state[:, None, self.relative_state_dims]
        return actions

    @staticmethod
    def point_targets(targets) -> torch.Tensor:
        """Step 8: ``observation.ir_target`` ``(B, 2)`` pixels on the 224 grid -> ``[-1, 1]`` (NaN stays NaN)."""
        targets = torch.as_tensor(targets, dtype=torch.float32).reshape(-1, 2)
        return targets / IR_IMAGE_SIZE * 2.0 - 1.0

    @staticmethod
    def point_pixels(points):
        """The inverse of :meth:`point_targets`: ``[-1, 1]`` points (a model's predicted ``point``) -> pixels."""
        return (points + 1.0) / 2.0 * IR_IMAGE_SIZE

    # ---- pipeline -------------------------------------------------------------------------------

    def __call__(self, batch: Mapping, **kwargs) -> BatchFeature:
        """Run steps 0-6 on a (collated) LeRobot batch; ``action`` / ``action_is_pad`` are optional.

        Returns a ``BatchFeature`` with the model's input contract (``input_ids``, ``attention_mask``,
        ``mm_token_type_ids``, ``pixel_values``, ``image_grid_thw``, ``state``) plus ``actions`` and
        ``action_is_pad`` when the batch has them.
        """
        if kwargs:
            raise TypeError(f"unexpected keyword arguments {sorted(kwargs)}")
        if STATE_KEY not in batch or TASK_KEY not in batch:
            raise ValueError(f"batch needs {STATE_KEY!r} and {TASK_KEY!r}; it has {sorted(batch)}")
        batch = self.render_ir(batch)
        images = self.collect_images(batch)
        state = torch.as_tensor(batch[STATE_KEY])
        state = state[None] if state.dim() == 1 else state
        tasks = [batch[TASK_KEY]] if isinstance(batch[TASK_KEY], str) else list(batch[TASK_KEY])
        if not len(tasks) == len(state) == len(images) // len(self.image_names):
            raise ValueError(f"batch sizes differ: {len(tasks)} tasks, {len(state)} states, "
                             f"{len(images) // len(self.image_names)} image sets")
        normalized_state = self.normalize_state(state)
        context = self.collect_context(batch, len(tasks))
        slots = len(self.image_names)
        ordered = [img for i, frames in enumerate(context) for img in (*frames, *images[i * slots:(i + 1) * slots])]
        counts = [len(frames) for frames in context]
        prompts = self.build_prompts(tasks, self.discretize_state(normalized_state), counts)
        out = self.encode(ordered, prompts, [n + slots for n in counts])
        out["state"] = normalized_state
        if ACTION_KEY in batch:
            actions = torch.as_tensor(batch[ACTION_KEY])
            actions = actions[None] if actions.dim() == 2 else actions
            out["actions"] = self.normalize_actions(self.relative_actions(actions, state))
        if ACTION_IS_PAD_KEY in batch:
            pad = torch.as_tensor(batch[ACTION_IS_PAD_KEY]).bool()
            out["action_is_pad"] = pad[None] if pad.dim() == 1 else pad
        if IR_TARGET_KEY in batch:
            out["point_target"] = self.point_targets(batch[IR_TARGET_KEY])
        return BatchFeature(out)


__all__ = ["BSpatialVLAProcessor", "CONTEXT_IMAGE_KEY", "CONTEXT_IS_PAD_KEY", "discretize", "float_images_to_uint8", "image_key", "quantile_normalize",
           "quantile_unnormalize"]
