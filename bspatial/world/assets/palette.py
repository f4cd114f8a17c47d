"""Per-instance colours: small draws around a builder's colour, or from a category's palette."""

from __future__ import annotations

import numpy as np

RGB = tuple[float, float, float]


def jitter(rgb: RGB, rng: np.random.Generator, amount: float = 0.05) -> RGB:
    """``rgb`` with each channel moved by up to ``amount`` (an apple is not every apple's red)."""
    return tuple(float(np.clip(c + rng.uniform(-amount, amount), 0.0, 1.0)) for c in rgb)


def pick(options: list[tuple[int, int, int]], rng: np.random.Generator, amount: float = 0.03) -> RGB:
    """One of ``options`` (0-255 RGB), jittered."""
    choice = options[int(rng.integers(len(options)))]
    return jitter(tuple(c / 255 for c in choice), rng, amount)


def shade(rgb: RGB, factor: float) -> RGB:
    """``rgb`` darker (factor < 1) or lighter (> 1), clipped to [0, 1]."""
    return tuple(float(np.clip(c * factor, 0.0, 1.0)) for c in rgb)


STEEL: RGB = (0.78, 0.79, 0.81)
DARK: RGB = (0.12, 0.12, 0.13)
WOOD: RGB = (0.67, 0.47, 0.27)
LEAF: RGB = (0.24, 0.47, 0.16)
WHITE: RGB = (0.95, 0.95, 0.93)
