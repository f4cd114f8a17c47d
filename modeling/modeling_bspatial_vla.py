"""BEHAVIOR-Spatial-VLA: a pi0.5-style flow-matching policy on a Qwen3.5 backbone (paper Section 4).

pi0 shares attention per layer between the VLM and the expert. Qwen3.5's layers are mostly linear
attention (Gated DeltaNet: no keys or values to share), so here the expert instead cross-attends to
prefix hidden states taken from chosen VLM layers (``config.prefix_layers``), with adaRMSNorm time
conditioning (pi0.5) and bidirectional self-attention over the state token and the action tokens.

Input contract (what the processor produces; tensors on the model's device):

=====================  ======================  =============================================================
key                    shape / dtype           meaning
=====================  ======================  =============================================================
``input_ids``          (B, L) long             Qwen3.5 tokens: per image ``<|vision_start|><|image_pad|>*n
                                               <|vision_end|>`` in ``config.image_names`` order, then the
                                               instruction and the discretised state text
``attention_mask``     (B, L) long/bool        1 for real tokens, 0 for padding
``mm_token_type_ids``  (B, L) int              1 on image tokens (Qwen3.5 M-RoPE needs it)
``pixel_values``       (P, C*2*p*p) float      Qwen3.5 image-processor patches of all B * num_images images
``image_grid_thw``     (B * num_images, 3)     patch grid per image, sample-major then image order
``state``              (B, state_dim) float    normalised proprioception (also fed through ``state_proj``)
``actions``            (B, chunk, action_dim)  normalised action chunk (training only)
``action_is_pad``      (B, chunk) bool         True past the episode end (training only, optional)
``point_target``       (B, 2) float            the oracle target pixel in [-1, 1], NaN where none (training
                                               only, optional; read when ``config.point_loss_weight > 0``)
=====================  ======================  =============================================================

Extra keys in a batch dict are ignored by ``compute_loss`` / ``sample_actions``. This file travels
inside checkpoints as remote code: it imports only torch, transformers and its siblings (relative
imports), never the rest of bspatial.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from transformers import PreTrainedModel, Qwen3_5Model
from transformers import initialization as init
from transformers.utils import ModelOutput

# `from .x import y` form only: transformers copies a checkpoint's code files by scanning for it.
from .configuration_bspatial_vla import BSpatialVLAConfig
from .flow_matching import interpolate, masked_mse, sample_time, time_embedding, velocity_target
from .flow_matching import integrate as integrate_flow

# The processed VLM inputs of the contract above, in the order forward() takes them.
PREFIX_KEYS = ("input_ids", "attention_mask", "mm_token_type_ids", "pixel_values", "image_grid_thw")


@dataclass
class BSpatialVLAPrefix(ModelOutput):
    """The encoded prefix, computed once per observation and reused by every denoising step.

    Args:
        keys_values: per expert layer, the cross-attention keys and values
            ``(B, heads, L, head_dim)`` each, projected from the chosen VLM hidden states.
        mask: ``(B, L)`` bool, True on real prefix tokens.
        point: ``(B, 2)`` the predicted target pixel in [-1, 1] (``config.point_loss_weight > 0``), else None.
    """

    keys_values: tuple[tuple[torch.Tensor, torch.Tensor], ...] | None = None
    mask: torch.Tensor | None = None
    point: torch.Tensor | None = None


@dataclass
class BSpatialVLAOutput(ModelOutput):
    """Output of [`BSpatialVLAForActionPrediction.forward`].

    Args:
        loss: scalar masked MSE between ``velocity`` and ``noise - actions``, plus ``point_loss_weight``
            times ``point_loss`` when the batch has point targets.
        velocity: ``(B, chunk, action_dim)`` predicted velocity at the sampled times.
        time: ``(B,)`` the flow-matching times used (1 = noise).
        point_loss: scalar mean squared error of the predicted target pixel over the samples that have one
            (pointing co-training), else None.
    """

    loss: torch.Tensor | None = None
    point_loss: torch.Tensor | None = None
    velocity: torch.Tensor | None = None
    time: torch.Tensor | None = None


class BSpatialRMSNorm(nn.Module):
    """Plain RMSNorm with a learned scale (init 1), used on the VLM features the expert reads."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return (x32 * self.weight.float()).to(x.dtype)


class BSpatialAdaRMSNorm(nn.Module):
    """adaRMSNorm (pi0.5): RMS-normalise, then scale and shift from the time condition; optional gate.

    ``normed = rms(x) * (1 + scale(c)) + shift(c)`` and, when gated, a residual gate ``gate(c)``.
    The modulation is this leaf module's own parameters, initialised to zero (so the norm starts as
    plain RMSNorm and every gated residual branch starts closed, as adaLN-Zero); keeping them on the
    leaf is what lets ``_init_weights`` see them in remote code (transformers skips parameter-less
    parents there).
    """

    def __init__(self, dim: int, cond_dim: int, eps: float, gated: bool = True):
        super().__init__()
        self.chunks = 3 if gated else 2
        self.weight = nn.Parameter(torch.zeros(self.chunks * dim, cond_dim))
        self.bias = nn.Parameter(torch.zeros(self.chunks * dim))
        self.eps = eps

    def forward(self, x: torch.Tensor, cond: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """x ``(B, T, dim)``, cond ``(B, cond_dim)`` -> normed ``(B, T, dim)``, gate ``(B, 1, dim)`` or None."""
        x32 = x.float()
        normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        modulation = F.linear(cond, self.weight, self.bias).float().unsqueeze(1).chunk(self.chunks, dim=-1)
        normed = (normed * (1.0 + modulation[0]) + modulation[1]).to(x.dtype)
        gate = modulation[2].to(x.dtype) if self.chunks == 3 else None
        return normed, gate


class BSpatialAttention(nn.Module):
    """Multi-head attention (SDPA). Self-attention when ``kv_dim`` is None, else cross-attention."""

    def __init__(self, config: BSpatialVLAConfig, kv_dim: int | None = None):
        super().__init__()
        width, self.heads, self.head_dim = (
            config.expert_hidden_size, config.expert_num_attention_heads, config.expert_head_dim
        )
        inner = self.heads * self.head_dim
        kv_in = width if kv_dim is None else kv_dim
        self.q_proj = nn.Linear(width, inner, bias=False)
        self.k_proj = nn.Linear(kv_in, inner, bias=False)
        self.v_proj = nn.Linear(kv_in, inner, bias=False)
        self.o_proj = nn.Linear(inner, width, bias=False)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], x.shape[1], self.heads, self.head_dim).transpose(1, 2)

    def project_kv(self, source: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(B, S, kv_dim)`` -> keys, values ``(B, heads, S, head_dim)``."""
        return self._split(self.k_proj(source)), self._split(self.v_proj(source))

    def forward(
        self,
        x: torch.Tensor,
        keys_values: tuple[torch.Tensor, torch.Tensor] | None = None,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """x ``(B, T, width)``; keys_values from ``project_kv`` (None: self-attention); mask ``(B, S)`` bool."""
        keys, values = self.project_kv(x) if keys_values is None else keys_values
        attn_mask = None if mask is None else mask[:, None, None, :]
        out = F.scaled_dot_product_attention(self._split(self.q_proj(x)), keys.to(x.dtype), values.to(x.dtype),
                                             attn_mask=attn_mask)
        return self.o_proj(out.transpose(1, 2).reshape(x.shape[0], x.shape[1], -1))


class BSpatialMLP(nn.Module):
    """SwiGLU feed-forward block."""

    def __init__(self, config: BSpatialVLAConfig):
        super().__init__()
        width, hidden = config.expert_hidden_size, config.expert_intermediate_size
        self.gate_proj = nn.Linear(width, hidden, bias=False)
        self.up_proj = nn.Linear(width, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class BSpatialExpertLayer(nn.Module):
    """Self-attention over the suffix, cross-attention to one VLM layer's features, MLP; all gated."""

    def __init__(self, config: BSpatialVLAConfig, vlm_hidden_size: int):
        super().__init__()
        width, eps = config.expert_hidden_size, config.expert_rms_norm_eps
        self.self_attn_norm = BSpatialAdaRMSNorm(width, width, eps)
        self.self_attn = BSpatialAttention(config)
        self.prefix_norm = BSpatialRMSNorm(vlm_hidden_size, eps)
        self.cross_attn_norm = BSpatialAdaRMSNorm(width, width, eps)
        self.cross_attn = BSpatialAttention(config, kv_dim=vlm_hidden_size)
        self.mlp_norm = BSpatialAdaRMSNorm(width, width, eps)
        self.mlp = BSpatialMLP(config)

    def project_prefix(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """VLM features ``(B, L, vlm_hidden)`` -> cross-attention keys, values ``(B, heads, L, head_dim)``."""
        return self.cross_attn.project_kv(self.prefix_norm(features).to(self.cross_attn.k_proj.weight.dtype))

    def forward(self, x, cond, prefix_kv, prefix_mask) -> torch.Tensor:
        normed, gate = self.self_attn_norm(x, cond)
        x = x + gate * self.self_attn(normed)
        normed, gate = self.cross_attn_norm(x, cond)
        x = x + gate * self.cross_attn(normed, prefix_kv, prefix_mask)
        normed, gate = self.mlp_norm(x, cond)
        return x + gate * self.mlp(normed)


class BSpatialPointReadout(nn.Module):
    """The ``image_tokens`` pointing head: a soft-argmax over the head-frame image tokens.

    A query (learned, plus a projection of the last prompt token's final hidden state, which has read the
    instruction) scores every head-frame token of the vision tower; the point is the score-weighted mean of the
    tokens' grid centres plus a learned per-token offset. The vision tokens are read where they enter the language
    model (hidden state 0), so the cue's position does not have to cross the hybrid backbone's linear-attention
    layers to reach the last token. ``context=None`` scores with the learned query alone (cue pretraining,
    which runs the vision tower without the language model).
    """

    def __init__(self, hidden_size: int, eps: float):
        super().__init__()
        self.token_norm = BSpatialRMSNorm(hidden_size, eps)
        self.context_norm = BSpatialRMSNorm(hidden_size, eps)
        # Its own parameter, initialised at unit scale (_init_weights): with the policy's 0.02 the scores start
        # ~1e-3 apart and a from-scratch tower stayed at the constant guess for 1,500 cue steps
        # (training_config.CPU_REACH_NOTES, "Where the cue is lost").
        self.query = nn.Parameter(torch.zeros(hidden_size))
        self.context_proj = nn.Linear(hidden_size, hidden_size)
        self.key_proj = nn.Linear(hidden_size, hidden_size)
        self.offset_proj = nn.Linear(hidden_size, 2)

    def forward(self, tokens: torch.Tensor, centres: torch.Tensor, in_frame: torch.Tensor,
                context: torch.Tensor | None = None) -> torch.Tensor:
        """``tokens`` ``(B, L, h)``, ``centres`` ``(B, L, 2)`` in [-1, 1], ``in_frame`` ``(B, L)`` bool
        (at least one per row), ``context`` ``(B, h)`` or None -> points ``(B, 2)`` in [-1, 1]."""
        dtype = self.key_proj.weight.dtype
        normed = self.token_norm(tokens.to(dtype))
        query = self.query.to(dtype).expand(tokens.shape[0], -1)
        if context is not None:
            query = query + self.context_proj(self.context_norm(context.to(dtype)))
        scores = (self.key_proj(normed) * query[:, None]).sum(-1).float() / normed.shape[-1] ** 0.5
        weights = scores.masked_fill(~in_frame, float("-inf")).softmax(-1)
        return (weights[..., None] * (centres.float() + self.offset_proj(normed).float())).sum(1)


def image_token_centres(mm_token_type_ids: torch.Tensor, image_grid_thw: torch.Tensor, merge_size: int,
                        slot_in_frame: list[bool]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per prefix token, its grid centre ``(x, y)`` in [-1, 1] within its image, and whether it is a token of a
    head-frame image slot (``slot_in_frame``, indexed by image modulo the slot count: no context frames).

    Qwen's image processor orders each image's merged tokens row by row over the merged grid, the order
    ``<|image_pad|>`` tokens take in the prompt (tests/modeling/test_point_readout.py checks it on the vision tower).
    """
    is_image = mm_token_type_ids.bool()
    per_image, flags = [], []
    for index, (frames, height, width) in enumerate(image_grid_thw.tolist()):
        rows, cols = height // merge_size, width // merge_size
        ys, xs = torch.meshgrid((torch.arange(rows) + 0.5) / rows * 2 - 1, (torch.arange(cols) + 0.5) / cols * 2 - 1,
                                indexing="ij")
        grid = torch.stack([xs, ys], -1).reshape(-1, 2).repeat(frames, 1)
        per_image.append(grid)
        flags.append(torch.full((len(grid),), slot_in_frame[index % len(slot_in_frame)]))
    centres = torch.zeros(*is_image.shape, 2, device=mm_token_type_ids.device)
    in_frame = torch.zeros_like(is_image)
    if int(is_image.sum()) != sum(len(g) for g in per_image):
        raise ValueError(f"{int(is_image.sum())} image tokens in the prompt, {sum(len(g) for g in per_image)} in "
                         f"image_grid_thw (merge {merge_size})")
    centres[is_image] = torch.cat(per_image).to(centres.device)
    in_frame[is_image] = torch.cat(flags).to(in_frame.device)
    return centres, in_frame


class BSpatialActionExpert(nn.Module):
    """Everything trained from scratch in the frozen-VLM policy: the expert and its action, state and
    time projections (Appendix C.1). One submodule, so peft ``modules_to_save=["action_expert"]`` and
    DROID-style initialisation address it by one name.

    Token layout of the expert's sequence: ``[state, a_1, ..., a_chunk]`` with learned positions, or
    ``[state, point, a_1, ..., a_chunk]`` with pointing co-training (``config.predicts_point``), whose head
    lives here too, trained from scratch: ``point_head`` (last prompt token's final hidden state -> pixel) or
    ``point_readout`` (:class:`BSpatialPointReadout`), per ``config.point_readout``.
    """

    def __init__(self, config: BSpatialVLAConfig, vlm_hidden_size: int):
        super().__init__()
        width = config.expert_hidden_size
        self.config = config
        self.action_in_proj = nn.Linear(config.action_dim, width)
        self.state_proj = nn.Linear(config.state_dim, width)
        self.time_mlp_in = nn.Linear(width, width)
        self.time_mlp_out = nn.Linear(width, width)
        self.leading_tokens = 2 if config.predicts_point else 1
        if config.predicts_point:
            if config.point_readout == "image_tokens":
                self.point_readout = BSpatialPointReadout(vlm_hidden_size, config.expert_rms_norm_eps)
            else:
                self.point_head = nn.Linear(vlm_hidden_size, 2)
            self.point_proj = nn.Linear(2, width)
        self.position_embedding = nn.Embedding(config.chunk_size + self.leading_tokens, width)
        self.layers = nn.ModuleList(
            [BSpatialExpertLayer(config, vlm_hidden_size) for _ in range(config.expert_num_layers)]
        )
        self.final_norm = BSpatialAdaRMSNorm(width, width, config.expert_rms_norm_eps, gated=False)
        self.action_out_proj = nn.Linear(width, config.action_dim)

    def project_prefix(self, hidden_states: tuple[torch.Tensor, ...], mask: torch.Tensor,
                       image_tokens: tuple[torch.Tensor, torch.Tensor] | None = None) -> BSpatialVLAPrefix:
        """Cross-attention keys / values of every expert layer from the VLM's ``hidden_states`` tuple, and the
        point; ``image_tokens`` (centres, in-frame flags of :func:`image_token_centres`) for ``image_tokens``."""
        keys_values = tuple(
            layer.project_prefix(hidden_states[self.config.expert_prefix_layer(k)])
            for k, layer in enumerate(self.layers)
        )
        point = None
        if self.config.predicts_point:
            # The last real token of each row attends to every image and the whole instruction (causal LM);
            # left or right padding alike, it is the highest index the mask keeps.
            positions = torch.arange(mask.shape[1], device=mask.device)
            last = (mask.bool() * positions).argmax(-1)
            final = hidden_states[-1][torch.arange(mask.shape[0], device=mask.device), last]
            if self.config.point_readout == "image_tokens":
                if image_tokens is None:
                    raise ValueError("point_readout='image_tokens' needs the image tokens' centres")
                point = self.point_readout(hidden_states[0], *image_tokens, context=final)
            else:
                point = self.point_head(final.to(self.point_head.weight.dtype)).float()
        return BSpatialVLAPrefix(keys_values=keys_values, mask=mask.bool(), point=point)

    def forward(self, noisy_actions: torch.Tensor, time: torch.Tensor, state: torch.Tensor,
                prefix: BSpatialVLAPrefix) -> torch.Tensor:
        """Velocity ``(B, chunk, action_dim)`` at ``noisy_actions`` ``(B, chunk, action_dim)``, ``time`` ``(B,)``."""
        dtype = self.action_in_proj.weight.dtype
        cfg = self.config
        emb = time_embedding(time, cfg.expert_hidden_size, cfg.time_embedding_min_period,
                                           cfg.time_embedding_max_period).to(dtype)
        cond = F.silu(self.time_mlp_out(F.silu(self.time_mlp_in(emb))))
        leading = [self.state_proj(state.to(dtype))[:, None]]
        if self.config.predicts_point:
            leading.append(self.point_proj(prefix.point.to(dtype))[:, None])
        tokens = torch.cat([*leading, self.action_in_proj(noisy_actions.to(dtype))], 1)
        x = tokens + self.position_embedding.weight[None, : tokens.shape[1]]
        for layer, kv in zip(self.layers, prefix.keys_values):
            x = layer(x, cond, kv, prefix.mask)
        x, _ = self.final_norm(x, cond)
        return self.action_out_proj(x[:, self.leading_tokens:]).float()


class BSpatialVLAPreTrainedModel(PreTrainedModel):
    config: BSpatialVLAConfig
    config_class = BSpatialVLAConfig
    base_model_prefix = "bspatial_vla"
    main_input_name = "input_ids"
    input_modalities = ("image", "text")
    _no_split_modules = ["Qwen3_5DecoderLayer", "Qwen3_5VisionBlock", "BSpatialExpertLayer"]
    _supports_sdpa = True  # the expert always uses SDPA; the VLM follows config._attn_implementation
    _supports_flash_attn = False

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        # The Qwen3.5 child is a PreTrainedModel and runs its own _init_weights ((1 + w) RMSNorm, A_log).
        # Special inits sit on leaves (adaRMS modulation, RMSNorm scale) and on the point readout; no buffers.
        std = self.config.initializer_range
        if isinstance(module, BSpatialPointReadout):
            init.normal_(module.query, mean=0.0, std=1.0)
        elif isinstance(module, BSpatialAdaRMSNorm):
            init.zeros_(module.weight)
            init.zeros_(module.bias)
        elif isinstance(module, BSpatialRMSNorm):
            init.ones_(module.weight)
        elif isinstance(module, nn.Linear):
            init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            init.normal_(module.weight, mean=0.0, std=std)


class BSpatialVLAForActionPrediction(BSpatialVLAPreTrainedModel):
    """The policy: ``compute_loss(batch)`` for training, ``sample_actions(batch)`` for inference.

    See the module docstring for the batch contract. ``from_pretrained`` raises ``ValueError`` when
    the checkpoint lacks any weight (never a silent random init).

    Example:
        >>> from bspatial.modeling.tiny_backbone import tiny_policy_config
        >>> model = BSpatialVLAForActionPrediction(tiny_policy_config())
        >>> sorted(name for name, _ in model.named_children())
        ['action_expert', 'vlm']
        >>> any(p.requires_grad for p in model.vlm.parameters())
        False
    """

    # Written as a class attribute instead of a register_for_auto_class() call at import time: the
    # same effect (save_pretrained writes auto_map and copies the code files), no import side effect.
    _auto_class = "AutoModel"

    def __init__(self, config: BSpatialVLAConfig, vlm: Qwen3_5Model | None = None):
        super().__init__(config)
        self.vlm = Qwen3_5Model(config.vlm_config) if vlm is None else vlm
        self.action_expert = BSpatialActionExpert(config, config.vlm_config.text_config.hidden_size)
        self._apply_freeze()
        self.post_init()

    def _apply_freeze(self) -> None:
        if self.config.freeze_vlm:
            self.vlm.requires_grad_(False)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs):
        """``PreTrainedModel.from_pretrained`` that raises ``ValueError`` listing any missing weight."""
        want_info = kwargs.pop("output_loading_info", False)
        model, info = super().from_pretrained(pretrained_model_name_or_path, *model_args,
                                              output_loading_info=True, **kwargs)
        missing = sorted(info.get("missing_keys", ()))
        if missing:
            shown = ", ".join(missing[:20]) + (f", ... ({len(missing)} in all)" if len(missing) > 20 else "")
            raise ValueError(f"checkpoint {str(pretrained_model_name_or_path)!r} lacks weights: {shown}")
        model._apply_freeze()
        return (model, info) if want_info else model

    @classmethod
    def from_vlm_pretrained(cls, vlm_name_or_path, config: BSpatialVLAConfig | None = None,
                            vlm_kwargs: Mapping | None = None, **config_kwargs) -> BSpatialVLAForActionPrediction:
        """A fresh policy around a pretrained Qwen3.5 backbone (e.g. ``Qwen/Qwen3.5-4B``).

        The backbone loads with ``Qwen3_5Model.from_pretrained`` (a missing backbone weight raises);
        the expert is freshly initialised. ``config_kwargs`` build the config when ``config`` is None.
        """
        vlm, info = Qwen3_5Model.from_pretrained(vlm_name_or_path, output_loading_info=True, **dict(vlm_kwargs or {}))
        if info.get("missing_keys"):
            raise ValueError(f"backbone {str(vlm_name_or_path)!r} lacks weights: {sorted(info['missing_keys'])[:20]}")
        if config is None:
            config = BSpatialVLAConfig(vlm_config=vlm.config.to_dict(), **config_kwargs)
        return cls(config, vlm=vlm)

    # ---- inputs -------------------------------------------------------------------------------

    def _check_inputs(self, input_ids, pixel_values, image_grid_thw, state) -> None:
        batch, expected = input_ids.shape[0], self.config.num_images
        most = expected + self.config.max_context_frames
        names = ", ".join(self.config.image_names)
        if self.config.max_context_frames:
            names += f", plus 0-{self.config.max_context_frames} context frames"
        if pixel_values is None or image_grid_thw is None:
            raise ValueError(f"pixel_values and image_grid_thw are required ({expected} images per sample: {names})")
        per_row = (input_ids == self.config.vlm_config.vision_start_token_id).sum(-1)
        if ((per_row < expected) | (per_row > most)).any():
            wanted = expected if most == expected else f"{expected}-{most}"
            raise ValueError(
                f"input_ids hold {per_row.tolist()} images per sample, but the config expects {wanted} per sample ({names})"
            )
        if image_grid_thw.shape[0] != int(per_row.sum()):
            raise ValueError(
                f"image_grid_thw has {image_grid_thw.shape[0]} images for {batch} samples, but input_ids place "
                f"{int(per_row.sum())} ({names})"
            )
        if state is None or state.dim() != 2 or state.shape != (batch, self.config.state_dim):
            shape = None if state is None else tuple(state.shape)
            raise ValueError(f"state must have shape ({batch}, {self.config.state_dim}), got {shape}")

    def _check_actions(self, actions: torch.Tensor, name: str) -> None:
        want = (self.config.chunk_size, self.config.action_dim)
        if actions.dim() != 3 or tuple(actions.shape[1:]) != want:
            raise ValueError(f"{name} must have shape (B, {want[0]}, {want[1]}), got {tuple(actions.shape)}")

    # ---- model --------------------------------------------------------------------------------

    def encode_prefix(self, input_ids, attention_mask, mm_token_type_ids, pixel_values,
                      image_grid_thw) -> BSpatialVLAPrefix:
        """Run the VLM once and project the chosen hidden states into per-layer keys / values."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        # Gradients through the VLM only when something in it trains (full fine-tuning or LoRA).
        vlm_trains = torch.is_grad_enabled() and any(p.requires_grad for p in self.vlm.parameters())
        with torch.set_grad_enabled(vlm_trains):
            out = self.vlm(input_ids=input_ids, attention_mask=attention_mask, mm_token_type_ids=mm_token_type_ids,
                           pixel_values=pixel_values, image_grid_thw=image_grid_thw, output_hidden_states=True,
                           use_cache=False, return_dict=True)
        image_tokens = None
        if self.config.predicts_point and self.config.point_readout == "image_tokens":
            image_tokens = image_token_centres(mm_token_type_ids, image_grid_thw, self.merge_size,
                                               self.config.point_frame_slots)
        return self.action_expert.project_prefix(out.hidden_states, attention_mask, image_tokens)

    @property
    def merge_size(self) -> int:
        """How many vision patches per side one image token merges (Qwen3.5 ``spatial_merge_size``)."""
        return self.config.vlm_config.vision_config.spatial_merge_size

    def image_features(self, pixel_values: torch.Tensor, image_grid_thw: torch.Tensor) -> torch.Tensor:
        """The vision tower's merged tokens of every image, concatenated in image order ``(tokens, hidden)``:
        what enters the language model at the ``<|image_pad|>`` positions."""
        out = self.vlm.get_image_features(pixel_values=pixel_values, image_grid_thw=image_grid_thw)
        return torch.cat(list(out.pooler_output))   # one tensor per image

    def forward(
        self,
        input_ids: torch.LongTensor,
        state: torch.Tensor,
        actions: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        mm_token_type_ids: torch.Tensor | None = None,
        pixel_values: torch.Tensor | None = None,
        image_grid_thw: torch.LongTensor | None = None,
        action_is_pad: torch.Tensor | None = None,
        noise: torch.Tensor | None = None,
        time: torch.Tensor | None = None,
        point_target: torch.Tensor | None = None,
        **kwargs,
    ) -> BSpatialVLAOutput:
        """Flow-matching training step: loss = masked MSE(v(x_t, t), noise - actions) (+ the weighted point loss
        when ``config.predicts_point`` and ``point_target`` ``(B, 2)`` is given; NaN rows have no target).

        ``noise`` ``(B, chunk, action_dim)`` and ``time`` ``(B,)`` default to fresh draws (global RNG).
        """
        self._check_inputs(input_ids, pixel_values, image_grid_thw, state)
        self._check_actions(actions, "actions")
        actions = actions.float()
        if noise is None:
            noise = torch.randn_like(actions)
        if time is None:
            cfg = self.config
            time = sample_time(actions.shape[0], alpha=cfg.time_beta_alpha, beta=cfg.time_beta_beta,
                                             scale=cfg.time_scale, offset=cfg.time_offset, device=actions.device)
        prefix = self.encode_prefix(input_ids, attention_mask, mm_token_type_ids, pixel_values, image_grid_thw)
        x_t = interpolate(noise, actions, time)
        velocity = self.action_expert(x_t, time, state, prefix)
        loss = masked_mse(velocity, velocity_target(noise, actions), action_is_pad)
        point_loss = None
        if self.config.predicts_point and point_target is not None:
            point_loss = self._point_loss(prefix.point, point_target)
            loss = loss + self.config.point_loss_weight * point_loss
        return BSpatialVLAOutput(loss=loss, velocity=velocity, time=time, point_loss=point_loss)

    @staticmethod
    def _point_loss(point: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean squared error over the rows with a finite target (0 with none, keeping the graph)."""
        target = target.to(point.device, torch.float32)
        if target.shape != point.shape:
            raise ValueError(f"point_target must have shape {tuple(point.shape)}, got {tuple(target.shape)}")
        valid = torch.isfinite(target).all(-1)
        squared = (point - torch.nan_to_num(target)).pow(2).sum(-1)
        return (squared * valid).sum() / valid.sum().clamp(min=1)

    def compute_loss(self, batch: Mapping[str, torch.Tensor], noise: torch.Tensor | None = None,
                     time: torch.Tensor | None = None) -> torch.Tensor:
        """Scalar training loss for a batch dict (see the module docstring); extra keys are ignored."""
        missing = [k for k in ("input_ids", "state", "actions") if batch.get(k) is None]
        if missing:
            raise ValueError(f"batch lacks {missing}; it has {sorted(batch)}")
        inputs = {k: batch[k] for k in (*PREFIX_KEYS, "state", "actions", "action_is_pad", "point_target") if k in batch}
        return self(**inputs, noise=noise, time=time).loss

    @torch.no_grad()
    def sample_actions(self, batch: Mapping[str, torch.Tensor], noise: torch.Tensor | None = None,
                       num_steps: int | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
        """Denoise an action chunk ``(B, chunk, action_dim)`` (normalised; the processor un-normalises).

        The VLM prefix and its per-layer keys / values are computed once and reused by all
        ``num_steps`` (default ``config.num_inference_steps``) Euler steps from t = 1 to t = 0.
        """
        missing = [k for k in ("input_ids", "state") if batch.get(k) is None]
        if missing:
            raise ValueError(f"batch lacks {missing}; it has {sorted(batch)}")
        state = batch["state"]
        self._check_inputs(batch["input_ids"], batch.get("pixel_values"), batch.get("image_grid_thw"), state)
        prefix = self.encode_prefix(*(batch.get(k) for k in PREFIX_KEYS))
        shape = (state.shape[0], self.config.chunk_size, self.config.action_dim)
        if noise is None:
            noise = torch.randn(shape, generator=generator, device=state.device, dtype=torch.float32)
        self._check_actions(noise, "noise")
        if noise.shape[0] != shape[0]:
            raise ValueError(f"noise has batch size {noise.shape[0]}, the batch has {shape[0]}")
        steps = self.config.num_inference_steps if num_steps is None else num_steps
        return integrate_flow(lambda x, t: self.action_expert(x, t, state, prefix), noise.float(), steps)

    def sample_actions_recomputing_prefix(self, batch: Mapping[str, torch.Tensor], noise: torch.Tensor,
                                          num_steps: int | None = None) -> torch.Tensor:
        """Reference path that re-encodes the prefix at every step (for equivalence tests and the
        prefix-caching benchmark); same result as ``sample_actions``, several times slower."""
        state = batch["state"]

        def velocity(x, t):
            prefix = self.encode_prefix(*(batch.get(k) for k in PREFIX_KEYS))
            return self.action_expert(x, t, state, prefix)

        with torch.no_grad():
            steps = self.config.num_inference_steps if num_steps is None else num_steps
            return integrate_flow(velocity, noise.float(), steps)


__all__ = [
    "BSpatialVLAForActionPrediction",
    "BSpatialVLAOutput",
    "BSpatialVLAPrefix",
    "BSpatialVLAPreTrainedModel",
]
