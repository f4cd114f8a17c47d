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
    # The general path draws Beta(2, 2) (mean 1/2, CDF 3x² - 2x³: 5/32 at x = 1/4, 1/2 at x = 1/2) on the
    # global RNG, then scales it like the default: t = 0.999 x + 0.001, mean 0.5005.
    with torch.random.fork_rng():
        torch.manual_seed(0)
        t = fm.sample_time(200_000, alpha=2.0, beta=2.0, dtype=torch.float64)
    assert t.min() >= 0.001 and t.max() <= 1.0
    assert t.mean().item() == pytest.approx(0.5005, abs=3e-3)
    x = (t - 0.001) / 0.999
    assert (x <= 0.25).double().mean().item() == pytest.approx(5 / 32, abs=3e-3)
    assert (x <= 0.5).double().mean().item() == pytest.approx(0.5, abs=3e-3)
    with pytest.raises(ValueError, match=r"a generator needs alpha == 1 or beta == 1, got alpha=2.0, beta=2.0"):
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
    # openpi posemb_sincos: [sin(2 pi t / p_i), cos(2 pi t / p_i)], periods geometric from 4e-3 to 4.0. With
    # width 6 the periods are 0.004, sqrt(0.004 · 4) = 0.126491 and 4.0; by hand, t = 0.5 gives angles 250 pi,
    # 24.836471 rad and pi/4; t = 1 gives 500 pi, 49.672941 rad and pi/2 (t = 0: sines 0, cosines 1).
    expected = torch.tensor([
        [0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        [0.0, -0.2919553, 0.7071068, 1.0, 0.9564320, 0.7071068],
        [0.0, -0.5584708, 1.0, 1.0, 0.8295242, 0.0],
    ])
    torch.testing.assert_close(fm.time_embedding(torch.tensor([0.0, 0.5, 1.0]), 6), expected, atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="15"):
        fm.time_embedding(torch.zeros(1), 15)
