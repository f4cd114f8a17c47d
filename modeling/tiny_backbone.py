"""The offline random Qwen3.5 backbones: ``tiny`` (the ``tiny`` presets, the demo and the tests) and ``small``
(the ``cpu_reach`` presets, trained from scratch on CPU).

A config dict, a byte-level BPE tokenizer with the vision special tokens, a Qwen3.5-style processor
and a policy config per size (:data:`OFFLINE_BACKBONES`). Nothing here downloads anything. The tiny sizes
are the test models' (Qwen3.5: hidden 64, 2 layers, layer_types [linear_attention, full_attention], vision
depth 2, patch 16, merge 2); the small ones are measured choices (training_config.CPU_REACH_NOTES).

Not remote code.
"""

from __future__ import annotations

from dataclasses import dataclass

from bspatial.common.registry import lookup

from .configuration_bspatial_vla import BSpatialVLAConfig

# Qwen3.5's special tokens that the vision path and chat format use.
SPECIAL_TOKENS = (
    "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>",
)
PATCH_SIZE = 16
MERGE_SIZE = 2
TEMPORAL_PATCH_SIZE = 2


def build_tiny_tokenizer(**special):
    """A ``Qwen3_5Tokenizer`` over the 256 byte-level symbols (no merges) plus the special tokens; ``special``
    (e.g. ``eos_token``, ``pad_token``) goes to its constructor (the harness's tiny checkpoint generates text).

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
    tokenizer = Qwen3_5Tokenizer(vocab=vocab, merges=[], **special)
    tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS)})
    return tokenizer


def build_tiny_processor(tokenizer=None, max_side: int = 64, chat_template: str | None = None):
    """A ``Qwen3VLProcessor`` (what transformers uses for qwen3_5) sized for tiny images.

    Images are resized so that each side is a multiple of patch * merge = 32 pixels and at most
    ``max_side`` pixels. ``chat_template``: the processor's, for a checkpoint that chats (the harness's).
    """
    from transformers import Qwen3VLProcessor
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import Qwen2VLImageProcessor
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    tokenizer = build_tiny_tokenizer() if tokenizer is None else tokenizer
    factor = PATCH_SIZE * MERGE_SIZE
    size = {"shortest_edge": factor * factor, "longest_edge": max_side * max_side}
    kwargs = dict(patch_size=PATCH_SIZE, merge_size=MERGE_SIZE, temporal_patch_size=TEMPORAL_PATCH_SIZE, size=size)
    return Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(**kwargs), tokenizer=tokenizer,
                            video_processor=Qwen3VLVideoProcessor(**kwargs), chat_template=chat_template)


@dataclass(frozen=True)
class OfflineBackboneSize:
    """Widths and depths of an offline random Qwen3.5-shaped backbone and of the expert sized to it.

    Qwen3.5's shape is kept at every size: gated-delta-net (``linear_attention``) layers with a
    ``full_attention`` layer every :data:`FULL_ATTENTION_INTERVAL` layers and as the last layer, head_dim 32
    with a quarter of it rotary (interleaved M-RoPE, sections 2 / 1 / 1), grouped-query attention, a
    patch-16 / merge-2 vision tower projecting to the text width. The expert reads VLM hidden states spread
    evenly over the text depth (``BSpatialVLAConfig``'s default ``prefix_layers``).
    """

    text_hidden_size: int
    text_intermediate_size: int
    text_layers: int
    text_heads: int
    text_kv_heads: int
    vision_depth: int
    vision_hidden_size: int
    vision_intermediate_size: int
    vision_heads: int
    vision_position_embeddings: int
    expert_hidden_size: int
    expert_layers: int
    expert_heads: int
    expert_intermediate_size: int

    @property
    def layer_types(self) -> list[str]:
        """Qwen3.5's 3 : 1 pattern, ending with a full-attention layer (2 layers: linear, full)."""
        return ["full_attention" if (k + 1) % FULL_ATTENTION_INTERVAL == 0 or k == self.text_layers - 1
                else "linear_attention" for k in range(self.text_layers)]


# Qwen3.5 (like Qwen3-Next) puts one full-attention layer after every three gated-delta-net layers.
FULL_ATTENTION_INTERVAL = 4
HEAD_DIM = 32
# The test backbone (hidden 64, 2 layers, vision depth 2) with a width-32 expert: tests and the demo.
TINY = OfflineBackboneSize(text_hidden_size=64, text_intermediate_size=128, text_layers=2, text_heads=2,
                           text_kv_heads=1, vision_depth=2, vision_hidden_size=32, vision_intermediate_size=64,
                           vision_heads=2, vision_position_embeddings=16, expert_hidden_size=32, expert_layers=2,
                           expert_heads=2, expert_intermediate_size=64)
# The CPU training backbone of the ``cpu_reach*`` presets: the sizes and the measurements that chose them are
# in training_config.py (CPU_REACH_NOTES).
SMALL = OfflineBackboneSize(text_hidden_size=128, text_intermediate_size=256, text_layers=4, text_heads=4,
                            text_kv_heads=1, vision_depth=2, vision_hidden_size=64, vision_intermediate_size=128,
                            vision_heads=2, vision_position_embeddings=64, expert_hidden_size=64, expert_layers=4,
                            expert_heads=2, expert_intermediate_size=128)
# The offline backbones a TrainingConfig may name (``backbone="tiny"`` / ``"small"``), built without downloads.
OFFLINE_BACKBONES: dict[str, OfflineBackboneSize] = {"tiny": TINY, "small": SMALL}


def offline_backbone_size(name: str) -> OfflineBackboneSize:
    """The sizes of a named offline backbone; unknown names list the known ones."""
    return lookup(OFFLINE_BACKBONES, name, "offline backbone")


def offline_vlm_config(size: OfflineBackboneSize, tokenizer=None) -> dict:
    """A random Qwen3.5 config dict of ``size`` whose special-token ids match ``build_tiny_tokenizer``."""
    tokenizer = build_tiny_tokenizer() if tokenizer is None else tokenizer
    ids = dict(zip(SPECIAL_TOKENS, tokenizer.convert_tokens_to_ids(list(SPECIAL_TOKENS))))
    text = dict(
        vocab_size=len(tokenizer), hidden_size=size.text_hidden_size, intermediate_size=size.text_intermediate_size,
        num_hidden_layers=size.text_layers, num_attention_heads=size.text_heads,
        num_key_value_heads=size.text_kv_heads, head_dim=HEAD_DIM, layer_types=size.layer_types,
        linear_key_head_dim=16, linear_value_head_dim=16, linear_num_key_heads=size.text_heads,
        linear_num_value_heads=2 * size.text_heads,
        # head_dim 32 * partial_rotary_factor 0.25 = 8 rotary dims = 4 frequencies = sum(mrope_section).
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25,
                         "mrope_section": [2, 1, 1], "mrope_interleaved": True},
        pad_token_id=0, eos_token_id=0,
    )
    vision = dict(depth=size.vision_depth, hidden_size=size.vision_hidden_size,
                  intermediate_size=size.vision_intermediate_size, num_heads=size.vision_heads,
                  patch_size=PATCH_SIZE, spatial_merge_size=MERGE_SIZE, temporal_patch_size=TEMPORAL_PATCH_SIZE,
                  out_hidden_size=size.text_hidden_size, num_position_embeddings=size.vision_position_embeddings)
    return dict(text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
                video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                vision_end_token_id=ids["<|vision_end|>"])


def offline_policy_config(name: str, **overrides) -> BSpatialVLAConfig:
    """A policy config around the named offline backbone, its expert sized by :data:`OFFLINE_BACKBONES`.

    Example:
        >>> config = offline_policy_config("small")
        >>> config.vlm_config.text_config.layer_types, config.prefix_layers
        (['linear_attention', 'linear_attention', 'linear_attention', 'full_attention'], [1, 2, 3, 4])
    """
    size = offline_backbone_size(name)
    kwargs = dict(vlm_config=offline_vlm_config(size), expert_hidden_size=size.expert_hidden_size,
                  expert_num_layers=size.expert_layers, expert_num_attention_heads=size.expert_heads,
                  expert_head_dim=size.expert_hidden_size // size.expert_heads,
                  expert_intermediate_size=size.expert_intermediate_size, state_dim=8)
    kwargs.update(overrides)
    return BSpatialVLAConfig(**kwargs)


def tiny_vlm_config(tokenizer=None) -> dict:
    """A tiny Qwen3.5 config dict whose special-token ids match ``build_tiny_tokenizer``."""
    return offline_vlm_config(TINY, tokenizer)


def tiny_policy_config(**overrides) -> BSpatialVLAConfig:
    """A tiny policy config: expert width 32, 2 layers reading VLM hidden states 1 and 2.

    Example:
        >>> tiny_policy_config(ir_mode="attn_map").num_images
        4
    """
    return offline_policy_config("tiny", **overrides)
