"""Navigation scene-context frames (Section 4.1, Appendix 12): a variable-length ordered sequence in the prefix."""

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoProcessor

from bspatial.modeling import BSpatialVLAForActionPrediction, BSpatialVLAProcessor
from bspatial.modeling.processing_bspatial_vla import CONTEXT_IMAGE_KEY, CONTEXT_IS_PAD_KEY
from bspatial.modeling.testing_utils import open_expert_gates
from bspatial.modeling.tiny_backbone import tiny_policy_config

STATE_DIM, ACTION_DIM, MAX_CONTEXT = 8, 23, 3
STATS = {"observation.state": {"q01": [-2.0] * STATE_DIM, "q99": [2.0] * STATE_DIM},
         "action": {"q01": [-1.0] * ACTION_DIM, "q99": [1.0] * ACTION_DIM}}
VISION_START = "<|vision_start|>"


@pytest.fixture(scope="module")
def nav_config():
    return tiny_policy_config(max_context_frames=MAX_CONTEXT)


@pytest.fixture(scope="module")
def nav_processor(nav_config, processor):
    return BSpatialVLAProcessor.from_model_config(nav_config, processor.image_processor, processor.tokenizer, STATS)


def nav_batch(config, k=MAX_CONTEXT, pads=((False,) * MAX_CONTEXT, (False, True, True)), size=32, seed=0):
    rng = np.random.default_rng(seed)
    batch = {f"observation.images.rgb.{c}": torch.from_numpy(rng.integers(0, 256, (2, 3, size, size), dtype=np.uint8))
             for c in config.camera_names}
    batch[CONTEXT_IMAGE_KEY] = torch.from_numpy(rng.integers(0, 256, (2, k, 3, size, size), dtype=np.uint8))
    batch[CONTEXT_IS_PAD_KEY] = torch.tensor([list(p)[:k] for p in pads], dtype=torch.bool)
    batch["observation.state"] = torch.from_numpy(rng.uniform(-2, 2, (2, STATE_DIM)).astype(np.float32))
    batch["action"] = torch.from_numpy(rng.uniform(-1, 1, (2, 32, ACTION_DIM)).astype(np.float32))
    batch["task"] = ["Move to the sofa.", "Move to the oven."]
    return batch


def _images_per_row(processor, out):
    start = processor.tokenizer.convert_tokens_to_ids(VISION_START)
    return (out["input_ids"] == start).sum(-1).tolist()


def test_each_sample_gets_its_own_number_of_context_images(nav_config, nav_processor):
    out = nav_processor(nav_batch(nav_config))
    # Sample 0: 3 context frames + 3 cameras; sample 1: 1 context frame (two padding) + 3 cameras.
    assert _images_per_row(nav_processor, out) == [6, 4]
    assert out["image_grid_thw"].shape[0] == 10
    text = nav_processor.tokenizer.decode(out["input_ids"][1][out["attention_mask"][1].bool()])
    assert text.startswith("Context: ") and "\nNow: " in text and text.count(VISION_START) == 4
    assert text.index("Context: ") < text.index("\nNow: ") < text.index("Task: Move to the oven.")


def test_padding_frames_change_nothing_and_real_frames_do(nav_config, nav_processor):
    torch.manual_seed(0)
    model = BSpatialVLAForActionPrediction(nav_config).eval()
    open_expert_gates(model, seed=1)
    noise = torch.randn(2, nav_config.chunk_size, nav_config.action_dim, generator=torch.Generator().manual_seed(5))
    batch = nav_batch(nav_config)
    actions = model.sample_actions(nav_processor(batch), noise=noise.clone())
    # Overwrite the padding frames of sample 1 with other pixels: the actions stay the same.
    repainted = dict(batch)
    repainted[CONTEXT_IMAGE_KEY] = batch[CONTEXT_IMAGE_KEY].clone()
    repainted[CONTEXT_IMAGE_KEY][1, 1:] = 255 - repainted[CONTEXT_IMAGE_KEY][1, 1:]
    assert torch.equal(model.sample_actions(nav_processor(repainted), noise=noise.clone()), actions)
    # Change a real context frame of sample 0: its actions move, sample 1's do not.
    changed = dict(batch)
    changed[CONTEXT_IMAGE_KEY] = batch[CONTEXT_IMAGE_KEY].clone()
    changed[CONTEXT_IMAGE_KEY][0, 0] = 255 - changed[CONTEXT_IMAGE_KEY][0, 0]
    moved = model.sample_actions(nav_processor(changed), noise=noise.clone())
    assert not torch.allclose(moved[0], actions[0]) and torch.allclose(moved[1], actions[1], atol=1e-5)
    # The same sample alone gives the same actions as inside the padded batch (masking, not padding, decides).
    alone = {k: (v[1:] if torch.is_tensor(v) else v[1:]) for k, v in batch.items()}
    alone[CONTEXT_IMAGE_KEY], alone[CONTEXT_IS_PAD_KEY] = batch[CONTEXT_IMAGE_KEY][1:, :1], batch[CONTEXT_IS_PAD_KEY][1:, :1]
    single = model.sample_actions(nav_processor(alone), noise=noise[1:].clone())
    assert torch.allclose(single[0], actions[1], atol=1e-4)


def test_trains_saves_and_reloads(tmp_path, nav_config, nav_processor):
    torch.manual_seed(0)
    model = BSpatialVLAForActionPrediction(nav_config)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    batch = nav_processor(nav_batch(nav_config))
    losses = []
    for _ in range(8):
        loss = model.compute_loss(batch, noise=torch.zeros(2, 32, ACTION_DIM), time=torch.full((2,), 0.5))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < losses[0]
    model.save_pretrained(tmp_path)
    nav_processor.save_pretrained(tmp_path)
    loaded, processor = AutoModel.from_pretrained(tmp_path).eval(), AutoProcessor.from_pretrained(tmp_path)
    assert loaded.config.max_context_frames == MAX_CONTEXT and processor.max_context_frames == MAX_CONTEXT
    noise = torch.randn(2, 32, ACTION_DIM, generator=torch.Generator().manual_seed(2))
    again = processor(nav_batch(nav_config))
    assert torch.equal(again["input_ids"], batch["input_ids"])
    assert torch.allclose(loaded.sample_actions(again, noise=noise.clone()),
                          model.eval().sample_actions(batch, noise=noise.clone()), atol=1e-5)


def test_bad_context_inputs_are_refused(nav_config, nav_processor, tiny_config, processor):
    batch = nav_batch(nav_config)
    with pytest.raises(ValueError, match="holds 4 frames per sample, more than max_context_frames=3"):
        nav_processor(nav_batch(nav_config, k=4, pads=((False,) * 4, (False,) * 4)))
    missing = {k: v for k, v in batch.items() if k != CONTEXT_IMAGE_KEY}
    with pytest.raises(ValueError, match="batch lacks 'observation.images.context'"):
        nav_processor(missing)
    plain = BSpatialVLAProcessor.from_model_config(tiny_config, processor.image_processor, processor.tokenizer, STATS)
    with pytest.raises(ValueError, match="takes no context frames"):
        plain(batch)
    floats = dict(batch, **{CONTEXT_IMAGE_KEY: batch[CONTEXT_IMAGE_KEY].float()})
    with pytest.raises(ValueError, match="expected uint8"):
        nav_processor(floats)
    with pytest.raises(ValueError, match="max_context_frames must be a non-negative integer, got -1"):
        tiny_policy_config(max_context_frames=-1)
    # A model without context input refuses a prefix that carries context images.
    model = BSpatialVLAForActionPrediction(tiny_config)
    with pytest.raises(ValueError, match=r"hold \[6, 4\] images per sample, but the config expects 3 per sample"):
        model.compute_loss(nav_processor(batch))
