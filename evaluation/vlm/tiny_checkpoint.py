"""A tiny random Qwen3.5 image-text checkpoint, written offline, for tests, benchmarks and ``make demo``.

``write_tiny_checkpoint(folder, seed)`` saves a ``Qwen3_5ForConditionalGeneration`` with the
test-model sizes (hidden 64, 2 layers ``[linear_attention, full_attention]``, vision depth 2, patch
16, merge 2) and a processor (byte-level BPE tokenizer with the Qwen vision tokens, a Qwen-style
chat template, an image processor capped at 64 px a side) into ``folder``. Nothing is downloaded.
The weights depend only on ``seed`` (and the torch version), so two calls give the same model.

The model is random: its answers are mostly unparseable, which is exactly what the harness must
count (never guess). It exists so that the real loading, batching and serving code runs end to end.

The sizes, tokenizer and processor are the policy tests' tiny backbone's
(:mod:`bspatial.modeling.tiny_backbone`), one builder for both; this checkpoint adds what generating text needs
(end-of-turn and padding tokens, a chat template).

Example:
    >>> import tempfile
    >>> from transformers import AutoModelForImageTextToText, AutoProcessor
    >>> path = write_tiny_checkpoint(tempfile.mkdtemp() + "/tiny", seed=0)
    >>> AutoModelForImageTextToText.from_pretrained(path).config.text_config.hidden_size
    64
    >>> "<|vision_start|><|image_pad|><|vision_end|>" in AutoProcessor.from_pretrained(path).apply_chat_template(
    ...     [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "hi"}]}], tokenize=False)
    True
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bspatial.common.files import publish_folder
from bspatial.modeling.tiny_backbone import build_tiny_processor, build_tiny_tokenizer, tiny_vlm_config

MAX_IMAGE_SIDE = 64  # pixels; a 64x64 fixture frame becomes 2x2 merged patches = 4 image tokens

# Qwen's chat format reduced to what the harness sends: a user turn of images then text, optional
# system / assistant turns, and the generation prompt. Images go where their content parts are.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{%- if message['content'] is string -%}{{ message['content'] }}"
    "{%- else -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'image' -%}{{ '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{%- elif part['type'] == 'text' -%}{{ part['text'] }}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{ '<|im_end|>\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\n' }}{%- endif -%}"
)


def build_tokenizer():
    """The tiny byte-level tokenizer (:func:`~bspatial.modeling.tiny_backbone.build_tiny_tokenizer`) with
    ``<|endoftext|>`` (id 0) padding, ``<|im_end|>`` ending a turn, and the chat template."""
    tokenizer = build_tiny_tokenizer(eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_processor(tokenizer=None):
    """The tiny processor (:func:`~bspatial.modeling.tiny_backbone.build_tiny_processor`) with the chat template."""
    return build_tiny_processor(build_tokenizer() if tokenizer is None else tokenizer, max_side=MAX_IMAGE_SIDE,
                                chat_template=CHAT_TEMPLATE)


def build_config(tokenizer=None):
    """The tiny ``Qwen3_5Config`` whose special-token ids match :func:`build_tokenizer`.

    The sizes are the policy tests' tiny backbone (``bspatial.modeling.tiny_backbone``); only the
    padding / end-of-sequence ids differ, because this checkpoint generates text.
    """
    from transformers import Qwen3_5Config

    tokenizer = build_tokenizer() if tokenizer is None else tokenizer
    fields = tiny_vlm_config(tokenizer)
    fields["text_config"].update(pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    return Qwen3_5Config(**fields, tie_word_embeddings=False)


def write_tiny_checkpoint(folder: str | Path, seed: int = 0, overwrite: bool = False) -> Path:
    """Write the tiny random checkpoint + processor to ``folder``; returns the folder.

    The folder is assembled in a temp folder next to it and renamed into place, so a reader never
    sees half a checkpoint. An existing complete checkpoint is kept unless ``overwrite``.

    Args:
        folder: destination folder (its parent is created if needed).
        seed: seeds the random weights (``torch.manual_seed``).
        overwrite: replace an existing folder.

    Raises:
        FileExistsError: ``folder`` exists, is not a checkpoint written here, and ``overwrite`` is false.
    """
    import torch
    from transformers import AutoModelForImageTextToText

    folder = Path(folder)
    if folder.exists() and not overwrite:
        if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
            return folder
        raise FileExistsError(f"{folder} exists and is not a complete checkpoint; pass overwrite=True to replace it")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer()
    config = build_config(tokenizer)
    config.dtype = "float32"
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        model = AutoModelForImageTextToText.from_config(config, dtype=torch.float32)
    finally:
        torch.random.set_rng_state(state)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        model.save_pretrained(staging)
        build_processor(tokenizer).save_pretrained(staging)
        publish_folder(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder


__all__ = ["CHAT_TEMPLATE", "build_config", "build_processor", "build_tokenizer", "write_tiny_checkpoint"]
