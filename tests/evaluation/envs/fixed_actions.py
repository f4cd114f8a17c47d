"""A fixed action per (manifest entry, step), whichever env plays it: what makes two env paths comparable.

A plain module (no relative imports), so a test's subprocess can import it too."""

import numpy as np

from bspatial.evaluation.envs.env import action_space

SPACE = action_space()


def fixed_action(entry: int, step: int) -> np.ndarray:
    """A uniform draw inside the action bounds, seeded by the entry and the step."""
    u = np.random.default_rng([entry, step]).random(SPACE.shape[0])
    return (SPACE.low + u * (SPACE.high - SPACE.low)).astype(np.float32)
