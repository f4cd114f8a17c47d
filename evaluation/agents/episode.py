"""One code-as-policy episode: the program runs in the sandbox, then the robot holds still to the budget's end.

Appendix 16.5: termination and success are the simulator's, under the same step budgets as the VLA
policies; a program that ends (or is stopped) early leaves the robot holding still until the episode ends,
and the episode is scored by the same Table S4 rules as every policy (:class:`~bspatial.tasks.episode.EpisodeRun`).

Example:
    >>> from bspatial.sim.mujoco_backend import MujocoBackend
    >>> from bspatial.tasks import sample_instance
    >>> sim = MujocoBackend()
    >>> program = "def run(api):\\n    api.wait(0.2)\\n"
    >>> episode = run_agent_episode(sim, sample_instance("reach_plate", "largest", 0), program, max_steps=20)
    >>> episode.program.outcome, episode.result.status, episode.result.steps, episode.held_steps
    ('finished', 'timeout', 20, 14)
    >>> sim.close()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bspatial.evaluation.agents.api import AgentAPI
from bspatial.evaluation.agents.sandbox import ProgramRun, SandboxLimits, run_program
from bspatial.evaluation.vlm.backend_api import VLMBackend
from bspatial.sim.backend import SimBackend
from bspatial.tasks.base import TaskInstance
from bspatial.tasks.episode import EpisodeResult, EpisodeRun


@dataclass
class AgentEpisode:
    """A program's episode: the scored result, how the program ended, the steps held after it, and the API's
    call log and episode log."""

    result: EpisodeResult
    program: ProgramRun
    held_steps: int
    call_log: list[dict[str, Any]]
    episode_log: list[dict[str, Any]]


def run_agent_episode(backend: SimBackend, instance: TaskInstance, source: str, *, pointer: VLMBackend | None = None,
                      vlm: VLMBackend | None = None, limits: SandboxLimits = SandboxLimits(), split: str = "train",
                      max_steps: int | None = None, require_confinement: bool = True, load: bool = True) -> AgentEpisode:
    """Run program ``source`` on ``instance`` (loaded into ``backend`` unless ``load`` is False) and score it."""
    run = EpisodeRun(backend, instance, split=split, max_steps=max_steps, load=load)
    api = AgentAPI(run, pointer=pointer, vlm=vlm)
    program = run_program(source, api, limits=limits, require_confinement=require_confinement)
    held = api.hold_until_done()
    return AgentEpisode(run.result(), program, held, api.call_log, api.episode_log)
