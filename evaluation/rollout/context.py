"""The scene-context frames a navigation checkpoint sees during a rollout episode (Section 4.1, Appendix 12).

Rendered once per episode, before its first step, by the function the demonstration recorder stored them with
(:func:`bspatial.construction.demonstrations.context_frames.policy_context_frames`), so a rollout feeds the frames training saw:
the same tour poses, order and size. The checkpoint's every chunk request carries them
(:class:`~bspatial.evaluation.rollout.policies.EpisodePredictor`).
"""

from __future__ import annotations

import numpy as np

from bspatial.sim.backend import SimBackend


def episode_context(backend: SimBackend, instance, max_frames: int):
    """``(1, K, 3, H, W)`` uint8 torch tensor: ``instance``'s context frames, ``K <= max_frames``.

    ``instance`` is loaded into ``backend`` and reset (as :func:`~bspatial.evaluation.rollout.episodes.load_instance`
    leaves it); rendering the tour loads its floor plan, so the instance's scene is loaded again afterwards and the
    episode starts from the same spawn state.

    Raises:
        ValueError: the task has no context tour (context frames exist for navigation tasks only), or the tour
            gives more frames than the checkpoint takes.
    """
    import torch

    from bspatial.catalog.tasks import NAVIGATION_TASKS
    from bspatial.construction.demonstrations.context_frames import policy_context_frames

    if instance.task not in NAVIGATION_TASKS:
        raise ValueError(f"the checkpoint takes scene-context frames (max_context_frames={max_frames}), which exist "
                         f"for navigation tasks only; task {instance.task!r} is a manipulation task")
    frames = policy_context_frames(backend, instance)
    backend.load(instance.scene)   # back on the instance: load resets it to the spawn
    if len(frames) > max_frames:
        raise ValueError(f"task {instance.task!r} has {len(frames)} context frames, more than the checkpoint's "
                         f"max_context_frames={max_frames}")
    return torch.from_numpy(np.ascontiguousarray(frames)).permute(0, 3, 1, 2).contiguous()[None]


__all__ = ["episode_context"]
