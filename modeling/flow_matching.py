"""Flow-matching math shared by training and inference, in the pi0 / pi0.5 convention.

Conventions (openpi ``src/openpi/models/pi0.py``; lerobot ``policies/pi05``), frankly stated because
the literature uses both directions:

* time runs from ``t = 1`` (pure noise) to ``t = 0`` (the data);
* ``x_t = t * noise + (1 - t) * actions``;
* the network regresses the velocity ``u = d x_t / d t = noise - actions``;
* sampling integrates ``dx/dt = v(x_t, t)`` with Euler steps from ``t = 1`` down to ``t = 0``
  (``dt = -1 / num_steps``).

Every function here is a small pure torch function; nothing holds state. This module imports only
torch, because it travels inside checkpoints as remote code.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

# Training time distribution: t ~ Beta(1.5, 1) * 0.999 + 0.001 (openpi pi0.py `sample_time`,
# lerobot pi05 `time_sampling_beta_alpha/beta`, `time_sampling_scale/offset`). Beta(1.5, 1) puts more
# mass near t = 1 (noisy end); the offset keeps t away from 0, where the target is exactly the data.
TIME_BETA_ALPHA = 1.5
TIME_BETA_BETA = 1.0
TIME_SCALE = 0.999
TIME_OFFSET = 0.001
# Denoising steps at inference (paper Section 4: "10 flow-matching denoising steps per inference").
NUM_INFERENCE_STEPS = 10
# Sinusoidal time embedding periods (openpi pi0.py `posemb_sincos(timestep, width, 4e-3, 4.0)`).
TIME_EMBEDDING_MIN_PERIOD = 4e-3
TIME_EMBEDDING_MAX_PERIOD = 4.0


def sample_time(
    batch_size: int,
    *,
    alpha: float = TIME_BETA_ALPHA,
    beta: float = TIME_BETA_BETA,
    scale: float = TIME_SCALE,
    offset: float = TIME_OFFSET,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Draw training times ``t ~ Beta(alpha, beta) * scale + offset``.

    When one Beta parameter is 1 the distribution has a closed-form inverse CDF (Beta(a, 1):
    ``u ** (1 / a)``), so sampling uses ``torch.rand`` and honours ``generator``; other parameters
    fall back to ``torch.distributions.Beta`` on the global RNG (a generator is then refused).

    Returns:
        ``(B,)`` times in ``[offset, offset + scale]``.

    Example:
        >>> t = sample_time(4, generator=torch.Generator().manual_seed(0))
        >>> t.shape, bool(((t >= 0.001) & (t <= 1.0)).all())
        (torch.Size([4]), True)
    """
    if alpha <= 0 or beta <= 0:
        raise ValueError(f"Beta parameters must be positive, got alpha={alpha!r}, beta={beta!r}")
    if beta == 1.0 or alpha == 1.0:
        u = torch.rand(batch_size, generator=generator, device=device, dtype=torch.float64)
        x = u ** (1.0 / alpha) if beta == 1.0 else 1.0 - u ** (1.0 / beta)
    else:
        if generator is not None:
            raise ValueError(f"a generator needs alpha == 1 or beta == 1, got alpha={alpha!r}, beta={beta!r}")
        dist = torch.distributions.Beta(torch.tensor(float(alpha)), torch.tensor(float(beta)))
        x = dist.sample((batch_size,)).to(device=device, dtype=torch.float64)
    return (x * scale + offset).to(dtype)


def _expand_time(time: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``(B,)`` -> ``(B, 1, ..., 1)`` broadcastable against ``like`` ``(B, ...)``."""
    return time.to(like.dtype).reshape(time.shape[0], *([1] * (like.dim() - 1)))


def interpolate(noise: torch.Tensor, actions: torch.Tensor, time: torch.Tensor) -> torch.Tensor:
    """The noisy point on the straight path: ``x_t = t * noise + (1 - t) * actions``.

    Args:
        noise: ``(B, T, D)`` standard normal.
        actions: ``(B, T, D)`` normalised action chunk.
        time: ``(B,)`` with 1 = pure noise.

    Returns:
        ``(B, T, D)``.

    Example:
        >>> a, n = torch.zeros(1, 2, 1), torch.ones(1, 2, 1)
        >>> interpolate(n, a, torch.tensor([0.25])).flatten().tolist()
        [0.25, 0.25]
    """
    t = _expand_time(time, actions)
    return t * noise + (1.0 - t) * actions


def velocity_target(noise: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """The regression target ``u = d x_t / d t = noise - actions``, ``(B, T, D)``."""
    return noise - actions


def euler_step(x_t: torch.Tensor, velocity: torch.Tensor, dt: float) -> torch.Tensor:
    """One explicit Euler step ``x_{t+dt} = x_t + dt * v`` (``dt < 0`` when denoising)."""
    return x_t + dt * velocity


def integrate(
    velocity_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    noise: torch.Tensor,
    num_steps: int = NUM_INFERENCE_STEPS,
) -> torch.Tensor:
    """Integrate from ``t = 1`` (``noise``) to ``t = 0`` with ``num_steps`` Euler steps.

    Args:
        velocity_fn: ``(x_t (B, T, D), t (B,)) -> v (B, T, D)``.
        noise: ``(B, T, D)`` starting point at ``t = 1``.
        num_steps: number of Euler steps (times 1, 1 - 1/n, ..., 1/n are evaluated).

    Returns:
        ``(B, T, D)`` the sample at ``t = 0``.

    Example:
        With the exact velocity of a straight path to ``a`` the integration lands on ``a``:

        >>> a, n = torch.full((1, 3, 2), 0.5), torch.randn(1, 3, 2)
        >>> x0 = integrate(lambda x, t: velocity_target(n, a), n, num_steps=10)
        >>> torch.allclose(x0, a, atol=1e-6)
        True
    """
    if num_steps < 1:
        raise ValueError(f"num_steps must be >= 1, got {num_steps!r}")
    dt = -1.0 / num_steps
    x_t = noise
    for step in range(num_steps):
        time = torch.full((noise.shape[0],), 1.0 + step * dt, device=noise.device, dtype=noise.dtype)
        x_t = euler_step(x_t, velocity_fn(x_t, time), dt)
    return x_t


def masked_mse(prediction: torch.Tensor, target: torch.Tensor, is_pad: torch.Tensor | None = None) -> torch.Tensor:
    """Mean squared error over the real (non-padded) chunk steps.

    Args:
        prediction, target: ``(B, T, D)``.
        is_pad: ``(B, T)`` bool, True where the step lies past the episode end (lerobot's
            ``action_is_pad``); those steps contribute nothing. ``None`` means no padding.

    Returns:
        scalar loss: the sum of squared errors over real steps / (real steps * D).

    Example:
        >>> p, y = torch.zeros(1, 2, 1), torch.tensor([[[1.0], [3.0]]])
        >>> masked_mse(p, y, torch.tensor([[False, True]])).item()
        1.0
    """
    squared = F.mse_loss(prediction, target, reduction="none")
    if is_pad is None:
        return squared.mean()
    keep = (~is_pad.bool()).to(squared.dtype).unsqueeze(-1)
    denominator = (keep.sum() * squared.shape[-1]).clamp_min(1.0)
    return (squared * keep).sum() / denominator


def time_embedding(
    time: torch.Tensor,
    dim: int,
    min_period: float = TIME_EMBEDDING_MIN_PERIOD,
    max_period: float = TIME_EMBEDDING_MAX_PERIOD,
) -> torch.Tensor:
    """Sine-cosine embedding of scalar times with geometrically spaced periods (openpi ``posemb_sincos``).

    Computed on the fly (no buffer), so nothing can be left uninitialised after ``from_pretrained``.

    Args:
        time: ``(B,)``.
        dim: even embedding width.

    Returns:
        ``(B, dim)`` float32: ``[sin(2 pi t / p_i), cos(2 pi t / p_i)]`` for ``dim / 2`` periods ``p_i``.

    Example:
        >>> time_embedding(torch.tensor([0.0, 1.0]), 8).shape
        torch.Size([2, 8])
    """
    if dim % 2:
        raise ValueError(f"time embedding width must be even, got {dim!r}")
    fraction = torch.linspace(0.0, 1.0, dim // 2, device=time.device, dtype=torch.float64)
    period = min_period * (max_period / min_period) ** fraction
    angle = time.to(torch.float64)[:, None] * (2.0 * math.pi / period)[None, :]
    return torch.cat([torch.sin(angle), torch.cos(angle)], dim=-1).to(torch.float32)
