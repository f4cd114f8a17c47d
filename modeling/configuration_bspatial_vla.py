"""Configuration of BEHAVIOR-Spatial-VLA: a pi0.5-style flow-matching policy on a Qwen3.5 backbone.

Architecture only: optimizer, schedule, data and logging live in the training config.
This file travels inside checkpoints as remote code: it imports only transformers and its siblings.
"""

from __future__ import annotations

from transformers import PretrainedConfig, Qwen3_5Config

# `from .x import y` form only: transformers copies a checkpoint's code files by scanning for it.
from .ir_rendering import DOT_RADIUS as PAPER_DOT_RADIUS  # pixels at 224 px (Appendix 13.3)
from .flow_matching import (
    NUM_INFERENCE_STEPS,
    TIME_BETA_ALPHA,
    TIME_BETA_BETA,
    TIME_EMBEDDING_MAX_PERIOD,
    TIME_EMBEDDING_MIN_PERIOD,
    TIME_OFFSET,
    TIME_SCALE,
)

# Paper Section 4: R1Pro-like robot, 23-dim actions, 32-step chunks, three cameras.
DEFAULT_CAMERA_NAMES = ("head", "left_wrist", "right_wrist")
# IR conditioning (Section 4.2, Appendix 13.3): no IR, a dot drawn on the head image, or a
# standalone Gaussian attention map; each occupies one extra image slot.
IR_MODES = ("none", "dot", "attn_map")
IR_IMAGE_NAME = "ir"
ANCHOR_IMAGE_NAME = "anchor"
CONTEXT_IMAGE_NAME = "context"
# Where the pointing head reads (BSpatialVLAConfig.point_readout).
POINT_READOUTS = ("last_token", "image_tokens")


class BSpatialVLAConfig(PretrainedConfig):
    r"""Configuration for [`BSpatialVLAForActionPrediction`].

    The frozen Qwen3.5 VLM (``vlm_config``) encodes the images and the text prefix (instruction plus
    discretised state); the action expert cross-attends to prefix hidden states taken from
    ``prefix_layers`` and predicts ``chunk_size`` x ``action_dim`` actions by flow matching.

    Args:
        vlm_config: a ``qwen3_5`` config (dict or [`Qwen3_5Config`]); ``None`` gives transformers'
            defaults. Real runs take it from the backbone checkpoint (e.g. ``Qwen/Qwen3.5-4B``).
        freeze_vlm: keep the VLM's own weights frozen (paper Section 4: "Unless otherwise stated, the
            VLM is frozen"). Adapters added later (peft LoRA) still train.
        expert_hidden_size, expert_num_layers, expert_num_attention_heads, expert_head_dim,
            expert_intermediate_size: action expert width / depth / heads / MLP width. The defaults
            (1024, 8, 8, 128, 4096) give ~0.27B parameters with the 4B backbone, matching the paper's
            "action expert and projections (0.30B)" (Appendix C.1) in scale.
        prefix_layers: which VLM hidden states the expert layers read, as indices into the VLM's
            ``hidden_states`` tuple (0 = token embeddings, i = output of decoder layer i; the last one
            is after the final norm). Either one index per expert layer (layer k reads
            ``prefix_layers[k]``) or a single index shared by all. ``None`` spreads the expert layers
            evenly over the VLM depth ending at the last layer (for Qwen3.5-4B, 32 layers and 8 expert
            layers: 4, 8, ..., 32, i.e. the outputs of its full-attention layers).
        chunk_size: actions per chunk (paper Section 4: 32-step chunks).
        action_dim: action width (paper Section 4: 23-dim R1Pro actions).
        state_dim: proprioceptive state width (``observation.state``); must match the dataset.
        camera_names: the camera images in input order (default: head, left_wrist, right_wrist).
        state_num_bins, state_min, state_max: the discretisation of the normalised state written into
            the text prefix (pi0.5: 256 bins over [-1, 1]); used by the processor.
        state_in_prompt: write the discretised state into the prompt (pi0.5). False leaves it out: the
            expert reads the state through its own state token either way, and on a byte-level offline
            tokenizer the 84-dim state text is ~85% of the prompt (``training_config.CPU_REACH_NOTES``).
        ir_mode: ``"none"``, ``"dot"`` or ``"attn_map"`` (Appendix 13.3); not ``"none"`` adds one image.
        first_frame_anchor: also feed the first frame's dot-marked head image, as a fifth image
            (Appendix 13.3, "Temporal conditioning"); needs ``ir_mode="dot"``.
        ir_dot_radius: the dot's radius in pixels of the 224 px IR image (Appendix 13.3: 4). A model that
            reads its images smaller than 224 px sees the dot shrunk by the same factor, so a small-image
            preset draws it larger (``training_config.CPU_REACH_NOTES``). Saved with the processor, and the
            rollout's IR conditioner draws the dot with the checkpoint's radius (no train / eval mismatch).
        relative_action_dims, relative_state_dims: action dimensions the model predicts relative to the
            state (openpi's ``DeltaActions``): for each pair, the chunk's ``action[relative_action_dims[i]]``
            is learned as ``action - state[relative_state_dims[i]]`` of the chunk's first frame, normalised
            with the quantiles of those differences, and the state is added back at inference. Empty (the
            default): every action is absolute. The joint-position dims of the R1Pro layout are what a
            preset makes relative: absolute joint targets differ by ~1.5 rad across poses while a chunk
            moves them ~0.05 rad, so with absolute targets the normalised motion is ~3% of the loss's scale
            (``training_config.CPU_REACH_NOTES``).
        point_loss_weight: pointing co-training (pi0.5 co-trains its VLM on object localisation): when > 0, a
            linear head reads the VLM's last hidden state at the last prompt token (which attends to the images and
            the instruction) and predicts the instructed target's pixel in the head image, the oracle IR point
            (``observation.ir_target``, normalised to [-1, 1]); its masked squared error, times this weight, is
            added to the flow-matching loss, and the predicted point enters the expert as one more token
            (``[state, point, a_1, ...]``). Training needs the oracle point only as a label: at rollout time the
            policy predicts it from what it sees. 0 (the default): no head, no token
            (``training_config.CPU_REACH_NOTES`` says why the CPU presets use it).
        point_readout: where the pointing head reads. ``"last_token"``: a linear map of the last prompt token's
            final hidden state. ``"image_tokens"``: the last prompt token's final hidden state (plus a learned
            query) attends over the vision tower's tokens of the head-frame images (the IR source camera and the
            IR image), and the point is the attention-weighted mean of those tokens' grid centres plus a learned
            per-token offset (a soft-argmax). The hybrid backbone's linear-attention layers carry almost nothing
            from an image token to the last prompt token, so a backbone trained from scratch localises a cue
            through the second path only (``training_config.CPU_REACH_NOTES``, "Where the cue is lost").
        max_context_frames: navigation policies (Section 4.1, Appendix 12) also see "a variable-length
            sequence of curated scene-context frames": up to this many ordered frames per sample, placed
            in the prefix before the fixed image slots; a sample with fewer simply has fewer image tokens
            (the prefix attention mask covers the rest). 0 = no context input.
        time_beta_alpha, time_beta_beta, time_scale, time_offset: training time distribution
            ``t ~ Beta(alpha, beta) * scale + offset`` (openpi pi0.py; t = 1 is noise).
        num_inference_steps: Euler steps at inference (paper Section 4: 10).
        time_embedding_min_period, time_embedding_max_period: sinusoidal time embedding periods.
        expert_rms_norm_eps: RMSNorm epsilon in the expert.
        initializer_range: std of the normal init of the expert's linear layers.

    Example:
        >>> config = BSpatialVLAConfig(ir_mode="dot", first_frame_anchor=True)
        >>> config.image_names
        ['head', 'left_wrist', 'right_wrist', 'ir', 'anchor']
        >>> config.prefix_layers, config.vlm_config.model_type
        ([4, 8, 12, 16, 20, 24, 28, 32], 'qwen3_5')
    """

    model_type = "bspatial_vla"
    # Class attribute instead of a register_for_auto_class() call at import time: save_pretrained
    # writes auto_map["AutoConfig"] and copies this file either way.
    _auto_class = "AutoConfig"
    sub_configs_defaults = {"vlm_config": Qwen3_5Config}

    vlm_config: dict | PretrainedConfig | None = None
    freeze_vlm: bool = True
    # Action expert (Section 4: "a flow-matching action expert attends to the resulting prefix features").
    expert_hidden_size: int = 1024
    expert_num_layers: int = 8
    expert_num_attention_heads: int = 8
    expert_head_dim: int = 128
    expert_intermediate_size: int = 4096
    expert_rms_norm_eps: float = 1e-6
    prefix_layers: list[int] | None = None
    initializer_range: float = 0.02
    # Inputs and outputs (Section 4).
    chunk_size: int = 32
    action_dim: int = 23
    state_dim: int = 23
    camera_names: list[str] | None = None
    # State text discretisation (pi0.5: 256 bins over the normalised range [-1, 1]).
    state_num_bins: int = 256
    state_min: float = -1.0
    state_max: float = 1.0
    state_in_prompt: bool = True
    # IR conditioning (Section 4.2, Appendix 13.3).
    ir_mode: str = "none"
    first_frame_anchor: bool = False
    ir_dot_radius: int = PAPER_DOT_RADIUS
    # Actions predicted relative to the state (openpi DeltaActions): paired action / state indices.
    relative_action_dims: list[int] | None = None
    relative_state_dims: list[int] | None = None
    # Pointing co-training: the VLM predicts the target's pixel, the expert reads it (0 = off).
    point_loss_weight: float = 0.0
    point_readout: str = "last_token"
    # Navigation scene-context frames (Section 4.1, Appendix 12).
    max_context_frames: int = 0
    # Flow matching (openpi pi0.py; see flow_matching.py for the convention: t = 1 is noise,
    # x_t = t * noise + (1 - t) * a, target u = noise - a).
    time_beta_alpha: float = TIME_BETA_ALPHA
    time_beta_beta: float = TIME_BETA_BETA
    time_scale: float = TIME_SCALE
    time_offset: float = TIME_OFFSET
    num_inference_steps: int = NUM_INFERENCE_STEPS
    time_embedding_min_period: float = TIME_EMBEDDING_MIN_PERIOD
    time_embedding_max_period: float = TIME_EMBEDDING_MAX_PERIOD

    def __post_init__(self, **kwargs):
        super().__post_init__(**kwargs)  # builds vlm_config from dict / None
        if self.vlm_config.model_type != "qwen3_5":
            raise ValueError(f"vlm_config must be a qwen3_5 config, got model_type={self.vlm_config.model_type!r}")
        if self.camera_names is None:
            self.camera_names = list(DEFAULT_CAMERA_NAMES)
        self.camera_names = list(self.camera_names)
        if self.prefix_layers is None:
            self.prefix_layers = self._default_prefix_layers()
        self.prefix_layers = [int(i) for i in self.prefix_layers]
        self.relative_action_dims = list(self.relative_action_dims or [])
        self.relative_state_dims = list(self.relative_state_dims or [])
        self._validate()

    def _default_prefix_layers(self) -> list[int]:
        num_vlm_layers = self.vlm_config.text_config.num_hidden_layers
        depth = max(self.expert_num_layers, 1)
        return [max(1, round((k + 1) * num_vlm_layers / depth)) for k in range(depth)]

    def _validate(self) -> None:
        for name in ("expert_hidden_size", "expert_num_layers", "expert_num_attention_heads", "expert_head_dim",
                     "expert_intermediate_size", "chunk_size", "action_dim", "state_dim", "num_inference_steps"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.expert_hidden_size % 2:
            raise ValueError(f"expert_hidden_size must be even (sinusoidal time embedding), got {self.expert_hidden_size!r}")
        if not self.camera_names or len(set(self.camera_names)) != len(self.camera_names):
            raise ValueError(f"camera_names must be non-empty and unique, got {self.camera_names!r}")
        reserved = {IR_IMAGE_NAME, ANCHOR_IMAGE_NAME, CONTEXT_IMAGE_NAME} & set(self.camera_names)
        if reserved:
            raise ValueError(f"camera_names may not use the reserved image names {sorted(reserved)!r}")
        if self.ir_mode not in IR_MODES:
            raise ValueError(f"ir_mode must be one of {IR_MODES}, got {self.ir_mode!r}")
        if self.first_frame_anchor and self.ir_mode != "dot":
            raise ValueError(
                f"first_frame_anchor=True needs ir_mode='dot' (Appendix 13.3: the anchor is the first frame's "
                f"dot-marked head image), got ir_mode={self.ir_mode!r}"
            )
        if not isinstance(self.ir_dot_radius, int) or isinstance(self.ir_dot_radius, bool) or self.ir_dot_radius < 1:
            raise ValueError(f"ir_dot_radius must be a positive integer (pixels at 224 px), got {self.ir_dot_radius!r}")
        if self.first_frame_anchor and self.ir_dot_radius != PAPER_DOT_RADIUS:
            # The anchor is drawn by the data pipeline and the rollout with the paper's radius only.
            raise ValueError(f"first_frame_anchor=True draws the paper's dot (radius {PAPER_DOT_RADIUS}); "
                             f"got ir_dot_radius={self.ir_dot_radius!r}")
        self._validate_relative_dims()
        weight = self.point_loss_weight
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight < float("inf"):
            raise ValueError(f"point_loss_weight must be a finite number >= 0, got {weight!r}")
        if self.point_readout not in POINT_READOUTS:
            raise ValueError(f"point_readout must be one of {POINT_READOUTS}, got {self.point_readout!r}")
        if self.point_readout == "image_tokens" and (not self.predicts_point or self.max_context_frames):
            raise ValueError(f"point_readout='image_tokens' needs pointing co-training (point_loss_weight > 0, got "
                             f"{self.point_loss_weight!r}) and no context frames (max_context_frames "
                             f"{self.max_context_frames!r}: their tokens are not in the head camera's frame)")
        if not isinstance(self.max_context_frames, int) or isinstance(self.max_context_frames, bool) \
                or self.max_context_frames < 0:
            raise ValueError(f"max_context_frames must be a non-negative integer, got {self.max_context_frames!r}")
        if self.state_num_bins < 2:
            raise ValueError(f"state_num_bins must be >= 2, got {self.state_num_bins!r}")
        if not self.state_min < self.state_max:
            raise ValueError(f"state_min must be < state_max, got {self.state_min!r} and {self.state_max!r}")
        num_vlm_layers = self.vlm_config.text_config.num_hidden_layers
        bad = [i for i in self.prefix_layers if not 0 <= i <= num_vlm_layers]
        if bad:
            raise ValueError(f"prefix_layers must lie in [0, {num_vlm_layers}] (VLM hidden states), got {self.prefix_layers!r}")
        if len(self.prefix_layers) not in (1, self.expert_num_layers):
            raise ValueError(
                f"prefix_layers needs 1 or expert_num_layers={self.expert_num_layers} entries, got {self.prefix_layers!r}"
            )
        if self.time_beta_alpha <= 0 or self.time_beta_beta <= 0:
            raise ValueError(f"time Beta parameters must be positive, got ({self.time_beta_alpha!r}, {self.time_beta_beta!r})")
        if not (self.time_scale > 0 and self.time_offset >= 0 and self.time_scale + self.time_offset <= 1.0 + 1e-9):
            raise ValueError(
                f"time_scale / time_offset must keep t in (0, 1], got scale={self.time_scale!r}, offset={self.time_offset!r}"
            )

    def _validate_relative_dims(self) -> None:
        actions, states = self.relative_action_dims, self.relative_state_dims
        if len(actions) != len(states):
            raise ValueError(f"relative_action_dims and relative_state_dims must pair up, got {len(actions)} and "
                             f"{len(states)} entries: {actions!r} and {states!r}")
        for name, dims, width in (("relative_action_dims", actions, self.action_dim),
                                  ("relative_state_dims", states, self.state_dim)):
            bad = [d for d in dims if not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < width]
            if bad or len(set(dims)) != len(dims):
                raise ValueError(f"{name} must be distinct indices in [0, {width}), got {dims!r}")

    @property
    def image_names(self) -> list[str]:
        """Image slots in input order: the cameras, then the IR image, then the first-frame anchor."""
        names = list(self.camera_names)
        if self.ir_mode != "none":
            names.append(IR_IMAGE_NAME)
        if self.first_frame_anchor:
            names.append(ANCHOR_IMAGE_NAME)
        return names

    @property
    def ir_source_camera(self) -> str:
        """The camera the IR cue is drawn on and the oracle point is measured in (Appendix 13.3: the head)."""
        return "head" if "head" in self.camera_names else self.camera_names[0]

    @property
    def point_frame_slots(self) -> list[bool]:
        """Per image slot, whether its pixels share the IR source camera's current frame (the camera, the IR image)."""
        return [name in (self.ir_source_camera, IR_IMAGE_NAME) for name in self.image_names]

    @property
    def num_images(self) -> int:
        """How many fixed image slots every sample carries (context frames come on top: 0 to ``max_context_frames``)."""
        return len(self.image_names)

    def expert_prefix_layer(self, expert_layer: int) -> int:
        """The VLM hidden-state index that expert layer ``expert_layer`` cross-attends to."""
        return self.prefix_layers[0] if len(self.prefix_layers) == 1 else self.prefix_layers[expert_layer]

    @property
    def predicts_point(self) -> bool:
        """Whether the policy has the pointing head and the expert's point token (``point_loss_weight > 0``)."""
        return self.point_loss_weight > 0


__all__ = ["BSpatialVLAConfig", "DEFAULT_CAMERA_NAMES", "IR_MODES", "POINT_READOUTS"]
