import pytest
import torch

from bspatial.modeling import flow_matching as fm


def test_paper_constants():
    # openpi pi0.py: t ~ Beta(1.5, 1) * 0.999 + 0.001; paper Section 4: 10 denoising steps.
    assert (fm.TIME_BETA_ALPHA, fm.TIME_BETA_BETA, fm.TIME_SCALE, fm.TIME_OFFSET) == (1.5, 1.0, 0.999, 0.001)
    assert fm.NUM_INFERENCE_STEPS == 10


def test_sample_time_matches_beta_distribution():
    t = fm.sample_time(200_000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert t.min() >= 0.001 and t.max() <= 1.0
    x = (t - 0.001) / 0.999
    # Beta(1.5, 1): mean 0.6, CDF x^1.5.
    assert x.mean().item() == pytest.approx(0.6, abs=3e-3)
    assert (x <= 0.5).double().mean().item() == pytest.approx(0.5**1.5, abs=3e-3)


def test_sample_time_is_reproducible_with_a_generator():
    a = fm.sample_time(5, generator=torch.Generator().manual_seed(7))
    b = fm.sample_time(5, generator=torch.Generator().manual_seed(7))
    assert torch.equal(a, b)


def test_sample_time_general_beta_refuses_generator():
    assert fm.sample_time(3, alpha=2.0, beta=2.0).shape == (3,)
    with pytest.raises(ValueError, match="generator"):
        fm.sample_time(3, alpha=2.0, beta=2.0, generator=torch.Generator())


def test_interpolation_convention_t1_is_noise():
    noise, actions = torch.randn(2, 4, 3), torch.randn(2, 4, 3)
    assert torch.equal(fm.interpolate(noise, actions, torch.ones(2)), noise)
    assert torch.equal(fm.interpolate(noise, actions, torch.zeros(2)), actions)
    t = torch.tensor([0.3, 0.8])
    expected = t[:, None, None] * noise + (1 - t[:, None, None]) * actions
    torch.testing.assert_close(fm.interpolate(noise, actions, t), expected)
    torch.testing.assert_close(fm.velocity_target(noise, actions), noise - actions)


def test_integrate_visits_times_from_one_down():
    seen = []

    def velocity(x, t):
        seen.append(t[0].item())
        return torch.zeros_like(x)

    fm.integrate(velocity, torch.zeros(1, 2, 2), num_steps=4)
    assert seen == pytest.approx([1.0, 0.75, 0.5, 0.25])
    with pytest.raises(ValueError, match="0"):
        fm.integrate(velocity, torch.zeros(1, 2, 2), num_steps=0)


def test_masked_mse_ignores_padded_steps():
    prediction = torch.zeros(2, 3, 2)
    target = torch.ones(2, 3, 2)
    target[1, 2] = 100.0
    is_pad = torch.tensor([[False, False, False], [False, False, True]])
    assert fm.masked_mse(prediction, target, is_pad).item() == pytest.approx(1.0)
    assert fm.masked_mse(prediction, torch.ones(2, 3, 2)).item() == pytest.approx(1.0)


def test_time_embedding_shape_and_odd_width():
    emb = fm.time_embedding(torch.tensor([0.0, 0.5, 1.0]), 16)
    assert emb.shape == (3, 16) and torch.isfinite(emb).all()
    with pytest.raises(ValueError, match="15"):
        fm.time_embedding(torch.zeros(1), 15)
