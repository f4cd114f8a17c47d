"""The tiny random Qwen3.5 backbone, built offline: the ``tiny`` training preset, the demo and the tests.

A config dict, a byte-level BPE tokenizer with the vision special tokens, a Qwen3.5-style processor
and a tiny policy config. Nothing here downloads anything. The sizes follow DESIGN §3 (Qwen3.5:
hidden 64, 2 layers, layer_types [linear_attention, full_attention], vision depth 2, patch 16, merge 2).

Not remote code.
"""

from __future__ import annotations

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
