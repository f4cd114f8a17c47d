"""Golden numbers of the tiny policy: a frozen record of what the forward pass and the sampler compute.

In the manner of lerobot's backward-compatibility tests, ``golden/tiny_policy_v1.pt`` holds values
computed once from the tiny random policy (``tiny_policy_config`` + ``build_tiny_processor``,
``torch.manual_seed(0)`` before the model is built, a ``make_batch(seed=0)`` batch):

* ``input_ids`` and ``pixel_values_head``: the processed batch (drift here is in the tokenizer / image
  processor or in ``make_batch``, not in the model);
* ``loss_at_init``: the training loss of the model as initialised, for fixed noise and times;
* ``loss``: the same loss after the adaRMSNorm gates are opened (see below);
* ``actions_head``: the first 8 steps of ``sample_actions`` with ``torch.Generator().manual_seed(0)``.

The expert's gated residual branches start closed (adaLN-Zero: the adaRMSNorm modulation is
initialised to zero), so at init nothing but the state and the noisy actions reaches the output; the
images and the whole VLM path would go unchecked. ``_open_gates`` therefore redraws the expert's
modulation and linear weights from a fixed generator before the loss and actions are recorded.

The test recomputes everything and compares with the stored tensors at ``atol=1e-5``. A failure
means numeric drift: a change in the model, the flow-matching math, the initialisation, the tiny
backbone, or the torch / transformers versions (the file records the versions it was made with). If
the change is intended, regenerate the file and commit it with the change that explains it::

    .venv/bin/python tests/modeling/test_golden.py --regenerate

(bump the ``_v1`` suffix when the meaning of the stored values changes). The negative controls at the
end show that the compared quantities do depend on what they should: the sampling seed and the IR image.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bspatial.modeling import BSpatialVLAForActionPrediction, BSpatialVLAProcessor
from bspatial.modeling.testing_utils import make_batch, open_expert_gates
from bspatial.modeling.tiny_backbone import build_tiny_processor, tiny_policy_config

GOLDEN = Path(__file__).parent / "golden" / "tiny_policy_v1.pt"
ATOL = RTOL = 1e-5
MODEL_SEED, GATE_SEED, NOISE_SEED, SAMPLE_SEED = 0, 1, 123, 0
TIME = (0.3, 0.8)
HEAD_STEPS = 8  # actions stored: the first 8 of the 32 chunk steps (keeps the file a few KB)
STATE_DIM, ACTION_DIM = 8, 23
STATS = {"observation.state": {"q01": [-1.0] * STATE_DIM, "q99": [1.0] * STATE_DIM},
         "action": {"q01": [-1.0] * ACTION_DIM, "q99": [1.0] * ACTION_DIM}}


def _open_gates(model: BSpatialVLAForActionPrediction, seed: int = GATE_SEED) -> None:
    open_expert_gates(model, seed)


def _model(config) -> BSpatialVLAForActionPrediction:
    torch.manual_seed(MODEL_SEED)
    return BSpatialVLAForActionPrediction(config).eval()


def _fixed_draws(config, batch_size: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    noise = torch.randn(batch_size, config.chunk_size, config.action_dim,
                        generator=torch.Generator().manual_seed(NOISE_SEED))
    return noise, torch.tensor(TIME)


def compute_golden(processor=None) -> dict:
    """The values the golden file stores, freshly computed (used by the test and by --regenerate)."""
    import transformers

    processor = build_tiny_processor() if processor is None else processor
    config = tiny_policy_config()
    batch = make_batch(config, processor, batch_size=2, image_size=32, seed=0)
    model = _model(config)
    noise, time = _fixed_draws(config)
    with torch.no_grad():
        loss_at_init = model.compute_loss(batch, noise=noise, time=time)
        _open_gates(model)
        loss = model.compute_loss(batch, noise=noise, time=time)
    actions = model.sample_actions(batch, generator=torch.Generator().manual_seed(SAMPLE_SEED))
    return {
        "input_ids": batch["input_ids"].to(torch.int32),
        "pixel_values_head": batch["pixel_values"][:2, :16].clone(memory_format=torch.contiguous_format),
        "loss_at_init": loss_at_init.detach().clone(),
        "loss": loss.detach().clone(),
        "actions_head": actions[:, :HEAD_STEPS].clone(memory_format=torch.contiguous_format),
        "versions": {"torch": str(torch.__version__), "transformers": str(transformers.__version__)},
    }


@pytest.fixture(scope="module")
def golden() -> dict:
    assert GOLDEN.is_file(), f"{GOLDEN} is missing; regenerate it: python {Path(__file__).name} --regenerate"
    return torch.load(GOLDEN, weights_only=True)


@pytest.fixture(scope="module")
def fresh(processor) -> dict:
    return compute_golden(processor)


def test_golden_file_is_small_and_complete(golden):
    assert GOLDEN.stat().st_size < 16_000
    assert set(golden) == {"input_ids", "pixel_values_head", "loss_at_init", "loss", "actions_head", "versions"}
    assert golden["actions_head"].shape == (2, HEAD_STEPS, 23) and golden["loss"].shape == ()


def test_processed_batch_matches_golden(golden, fresh):
    # Checked first: drift here is in the inputs (tokenizer, image processor, make_batch), not the model.
    assert torch.equal(fresh["input_ids"], golden["input_ids"])
    torch.testing.assert_close(fresh["pixel_values_head"], golden["pixel_values_head"], atol=ATOL, rtol=RTOL)


def test_training_loss_matches_golden(golden, fresh):
    versions = golden["versions"]
    torch.testing.assert_close(fresh["loss_at_init"], golden["loss_at_init"], atol=ATOL, rtol=RTOL,
                               msg=lambda m: f"numeric drift of the initialised model's loss (golden made with {versions}): {m}")
    torch.testing.assert_close(fresh["loss"], golden["loss"], atol=ATOL, rtol=RTOL,
                               msg=lambda m: f"numeric drift of the training loss (golden made with {versions}): {m}")
    # Opening the gates is not a no-op: the two stored losses are different numbers.
    assert abs(golden["loss"].item() - golden["loss_at_init"].item()) > 0.1


def test_sampled_actions_match_golden(golden, fresh):
    versions = golden["versions"]
    torch.testing.assert_close(fresh["actions_head"], golden["actions_head"], atol=ATOL, rtol=RTOL,
                               msg=lambda m: f"numeric drift of sample_actions (golden made with {versions}): {m}")


# ---- negative controls: the compared values depend on what they should ---------------------------


def test_different_generator_seeds_give_different_actions(processor):
    config = tiny_policy_config()
    batch = make_batch(config, processor, seed=0)
    model = _model(config)
    _open_gates(model)
    a = model.sample_actions(batch, generator=torch.Generator().manual_seed(0))
    again = model.sample_actions(batch, generator=torch.Generator().manual_seed(0))
    b = model.sample_actions(batch, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(again, a, atol=0, rtol=0)   # same seed: bit-identical
    # Another seed: far beyond the golden tolerance (measured: mean |a - b| about 1.4, max about 6).
    assert (a - b).abs().mean().item() > 0.3
    assert (a - b).abs().max().item() > 1.0


def _ir_inputs(vla: BSpatialVLAProcessor, config, target_xy: tuple[float, float]):
    """One LeRobot-style observation whose IR image the processor renders as a dot at ``target_xy``."""
    rng = np.random.default_rng(0)
    batch = {f"observation.images.rgb.{c}": torch.from_numpy(rng.integers(0, 256, (1, 3, 32, 32), dtype=np.uint8))
             for c in config.camera_names}
    batch["observation.state"] = torch.from_numpy(rng.uniform(-1, 1, (1, STATE_DIM)).astype(np.float32))
    batch["task"] = ["pick up the cup"]
    batch["observation.ir_target"] = torch.tensor([target_xy])
    return vla(batch)


def _patch_rows(grid: torch.Tensor, image: int) -> slice:
    sizes = grid.prod(-1).tolist()
    start = sum(sizes[:image])
    return slice(start, start + sizes[image])


def test_ir_image_pixels_change_the_predicted_actions(processor):
    config = tiny_policy_config(ir_mode="dot")
    assert config.image_names == ["head", "left_wrist", "right_wrist", "ir"]
    vla = BSpatialVLAProcessor.from_model_config(config, processor.image_processor, processor.tokenizer, STATS)
    near, far = _ir_inputs(vla, config, (40.0, 40.0)), _ir_inputs(vla, config, (180.0, 170.0))
    # The two observations differ only in the IR slot (image 3): the camera patches and the text match.
    grid = near["image_grid_thw"]
    assert torch.equal(grid, far["image_grid_thw"]) and torch.equal(near["input_ids"], far["input_ids"])
    cameras = slice(0, _patch_rows(grid, 3).start)
    assert torch.equal(near["pixel_values"][cameras], far["pixel_values"][cameras])
    assert not torch.equal(near["pixel_values"][_patch_rows(grid, 3)], far["pixel_values"][_patch_rows(grid, 3)])

    model = _model(config)

    def act(inputs):
        return model.sample_actions(inputs, generator=torch.Generator().manual_seed(SAMPLE_SEED))

    # As initialised, the closed adaLN-Zero gates keep every image out of the actions.
    torch.testing.assert_close(act(near), act(far), atol=0, rtol=0)
    _open_gates(model)
    a_near, a_far = act(near), act(far)
    torch.testing.assert_close(act(_ir_inputs(vla, config, (40.0, 40.0))), a_near, atol=0, rtol=0)  # same dot: same
    # Moving the dot moves the actions, by far more than the golden tolerance (measured: max about 0.02).
    assert (a_near - a_far).abs().max().item() > 100 * ATOL


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit(f"usage: python {sys.argv[0]} --regenerate   (rewrites {GOLDEN})")
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    values = compute_golden()
    torch.save(values, GOLDEN)
    print(f"wrote {GOLDEN} ({GOLDEN.stat().st_size} bytes): loss_at_init={values['loss_at_init'].item():.6f} "
          f"loss={values['loss'].item():.6f} versions={values['versions']}")
