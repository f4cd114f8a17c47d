"""The learning-rate schedule of Table S3: linear warmup from 0 to the peak, then a cosine down to 0.

Expected values come from the formula written out below (not from transformers), for a small
``TrainingConfig`` derived from the ``tiny`` preset with ``dataclasses.replace``:

* warmup, ``step < W``:   ``lr = peak * step / W``
* cosine, ``W <= step``:  ``lr = peak * 0.5 * (1 + cos(pi * (step - W) / (T - W)))``, floored at 0

with ``W = min(warmup_steps, max_steps)`` and ``T = max_steps``. The last test runs ``train()`` itself
and reads the learning rates it logged, so the schedule checked here is the one training steps with.
"""

import dataclasses
import math

import pytest
import torch

from bspatial.modeling.train import _lr_scheduler, read_metrics, train
from bspatial.modeling.training_config import get_preset

PEAK = 1e-3


def _lr_by_step(config, steps: int) -> list[float]:
    """The scheduler's lr before optimiser step 0, 1, ..., steps (as train()'s loop reads it)."""
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([parameter], lr=config.peak_lr)
    scheduler = _lr_scheduler(optimizer, config)
    lrs = []
    for _ in range(steps + 1):
        lrs.append(scheduler.get_last_lr()[0])
        assert optimizer.param_groups[0]["lr"] == lrs[-1]  # what the optimiser actually steps with
        optimizer.step()
        scheduler.step()
    return lrs


def _formula(step: int, peak: float, warmup: int, total: int) -> float:
    warmup = min(warmup, total)
    if step < warmup:
        return peak * step / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return max(0.0, peak * 0.5 * (1.0 + math.cos(math.pi * progress)))


def test_warmup_then_cosine_at_the_landmark_steps():
    config = dataclasses.replace(get_preset("tiny"), peak_lr=PEAK, warmup_steps=10, max_steps=50)
    lrs = _lr_by_step(config, 50)
    # Landmarks, each written as the number the formula gives by hand.
    assert lrs[0] == 0.0                                             # warmup starts at 0
    assert lrs[5] == pytest.approx(0.5 * PEAK, rel=1e-12)            # half way through the warmup
    assert lrs[9] == pytest.approx(0.9 * PEAK, rel=1e-12)            # last warmup step
    assert lrs[10] == pytest.approx(PEAK, rel=1e-12)                 # end of warmup: the peak
    assert lrs[30] == pytest.approx(0.5 * PEAK, rel=1e-12)           # cosine midpoint: half the peak
    assert lrs[20] == pytest.approx(PEAK * (2 + math.sqrt(2)) / 4, rel=1e-12)  # cos(pi/4) quarter point
    assert lrs[50] == pytest.approx(0.0, abs=1e-15)                  # max_steps: the floor, 0
    assert lrs[49] == pytest.approx(PEAK * 0.5 * (1 + math.cos(math.pi * 39 / 40)), rel=1e-9)
    assert 0 < lrs[49] < 0.01 * PEAK
    # Every step against the written-out formula; the shape: rising, then falling.
    assert lrs == pytest.approx([_formula(s, PEAK, 10, 50) for s in range(51)], rel=1e-9, abs=1e-15)
    assert all(a < b for a, b in zip(lrs[:10], lrs[1:11]))
    assert all(a > b for a, b in zip(lrs[10:50], lrs[11:51]))


def test_paper_warmup_of_4000_steps():
    # Table S3: 4k warmup steps; a 100k-step run (pi05_qwen_frozen) peaks at 4e-4 at step 4000.
    config = get_preset("pi05_qwen_frozen")
    assert (config.warmup_steps, config.max_steps, config.peak_lr) == (4000, 100_000, 4e-4)
    parameter = torch.nn.Parameter(torch.zeros(1))
    scheduler = _lr_scheduler(torch.optim.AdamW([parameter], lr=config.peak_lr), config)
    lambdas = scheduler.lr_lambdas[0]   # LambdaLR: lr(step) = peak * lambda(step)
    assert lambdas(0) == 0.0
    assert lambdas(2000) == pytest.approx(0.5, rel=1e-12)
    assert lambdas(4000) == pytest.approx(1.0, rel=1e-12)
    assert lambdas(28_000) == pytest.approx((2 + math.sqrt(2)) / 4, rel=1e-12)   # a quarter into the cosine
    assert lambdas(52_000) == pytest.approx(0.5, rel=1e-12)    # (4000 + 100000) / 2
    assert lambdas(100_000) == pytest.approx(0.0, abs=1e-12)


def test_a_run_shorter_than_its_warmup_only_warms_up():
    # W = min(warmup_steps, max_steps): a 4-step run with 10 warmup steps ramps over its 4 steps.
    config = dataclasses.replace(get_preset("tiny"), peak_lr=PEAK, warmup_steps=10, max_steps=4)
    lrs = _lr_by_step(config, 3)
    assert lrs == pytest.approx([0.0, 0.25 * PEAK, 0.5 * PEAK, 0.75 * PEAK], rel=1e-12)


def test_no_warmup_starts_at_the_peak():
    config = dataclasses.replace(get_preset("tiny"), peak_lr=PEAK, warmup_steps=0, max_steps=4)
    lrs = _lr_by_step(config, 4)
    assert lrs == pytest.approx([PEAK, PEAK * (2 + math.sqrt(2)) / 4, 0.5 * PEAK, PEAK * (2 - math.sqrt(2)) / 4,
                                 0.0], rel=1e-12, abs=1e-15)


def test_train_steps_with_this_schedule(tmp_path, one_torch_thread, fresh_accelerate_state):
    from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset

    root = tmp_path / "tiny"
    build_tiny_lerobot_dataset(root, tasks=("pick up the cup",), episodes_per_task=1, frames_per_episode=40)
    result = train("tiny", str(root), str(tmp_path / "run"), max_steps=6, warmup_steps=2, peak_lr=PEAK,
                   save_every=100, export=False)
    assert result.last_step == 6
    logged = [(row["step"], row["lr"]) for row in read_metrics(tmp_path / "run")]
    # The loop logs the lr of each optimiser step: step k (1-based) ran with lr(k - 1).
    # W = 2, T = 6: 0, peak / 2, peak, cosine at 1/4, 1/2 (half the peak), 3/4.
    expected = [0.0, 0.5 * PEAK, PEAK, PEAK * (2 + math.sqrt(2)) / 4, 0.5 * PEAK, PEAK * (2 - math.sqrt(2)) / 4]
    assert [step for step, _ in logged] == [1, 2, 3, 4, 5, 6]
    assert [lr for _, lr in logged] == pytest.approx(expected, rel=1e-9, abs=1e-15)
