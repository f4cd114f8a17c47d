"""One agent episode as a result record (the rollout runner's format plus the program's report), and the
development feedback a writer gets from it.

The record is :func:`bspatial.evaluation.rollout.episodes.finished_record`'s (so the rollout tables, the
failure modes and the leaderboard read agent runs like any policy's), with ``policy`` = the agent's label
(:func:`agent_policy`) and an ``agent`` section: writer, pointer, the program's SHA-256, how the program ended,
its calls and the steps held after it.

Feedback (Appendix 16.5, development only): the strict outcome and whether the hand ended nearer the
correct or a wrong candidate (placement: how far the object ended from the instructed goal point), the
printed output, the API call log and the final camera views.
"""

from __future__ import annotations

import hashlib
import io
from typing import TYPE_CHECKING, Any

import numpy as np

from bspatial.catalog.schema import CAMERAS
from bspatial.evaluation.agents.episode import AgentEpisode, run_agent_episode
from bspatial.evaluation.agents.pointers import make_pointer
from bspatial.evaluation.agents.sandbox import SandboxLimits
from bspatial.evaluation.rollout.episodes import _record, finished_record
from bspatial.sim.backend import SimBackend

if TYPE_CHECKING:
    from bspatial.construction.splits import SplitEntry

FEEDBACK_CAMERAS = CAMERAS
"""The final camera views shown to the writer: head and both wrists."""


def agent_policy(writer_label: str, pointer: str) -> str:
    """The ``policy`` of an agent's records: ``agent:<writer>+<pointer>`` (one table row per pair)."""
    return f"agent:{writer_label}+{pointer}"


def program_sha(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def png(rgb: np.ndarray) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="PNG")
    return buffer.getvalue()


def run_agent(backend: SimBackend, episode: SplitEntry, source: str, policy: str, *, pointer: str,
              vlm: str = "chance", trace_split: str, max_steps: int | None = None,
              limits: SandboxLimits = SandboxLimits(), require_confinement: bool = True
              ) -> tuple[dict[str, Any], AgentEpisode | None, dict[str, bytes]]:
    """Run ``source`` on ``episode``: (result record, the episode or None if it crashed, final views as PNG).

    A crash of the host side (the scene cannot load, a model server is down) becomes a status ``"error"``
    record, as in the rollout runner; whatever the program does is part of its episode.
    """
    from bspatial.evaluation.rollout.episodes import load_instance
    from bspatial.evaluation.vlm.backends import load_backend

    instruction = None
    try:
        instance, _ = load_instance(backend, episode)
        instruction = instance.instruction
        steps = instance.step_budget if max_steps is None else min(max_steps, instance.step_budget)
        pointing = make_pointer(pointer, instance, lambda: [backend.render(c) for c in CAMERAS])
        result = run_agent_episode(backend, instance, source, pointer=pointing, vlm=load_backend(vlm),
                                   limits=limits, split=trace_split, max_steps=steps,
                                   require_confinement=require_confinement, load=False)
    except Exception as error:  # recorded, not hidden: the record says what failed
        record = _record(episode, policy, instruction=instruction, message=f"{type(error).__name__}: {error}")
        return {**record, "agent": {"program_sha256": program_sha(source)}}, None, {}
    record = finished_record(episode, policy, result.result, protocol="per_step", instruction=instruction)
    program = result.program
    record["agent"] = {"program_sha256": program_sha(source), "program_outcome": program.outcome,
                       "program_reason": program.reason, "calls": program.calls,
                       "robot_commands": program.robot_commands, "refused": program.refused,
                       "held_steps": result.held_steps, "wall_s": program.wall_s,
                       "protections": list(program.protections)}
    views = {c: png(backend.render(c).rgb) for c in FEEDBACK_CAMERAS}
    return record, result, views


def nearest_candidate(record: dict[str, Any]) -> str:
    """Whether the hand ended nearer the correct or a wrong candidate (reach), or how far the object ended
    from the goal (placement), from the record's trace."""
    trace = record.get("trace")
    if not trace:
        return "no trace (the episode did not run)"
    if trace.get("countertop") or trace.get("container"):
        return _placement_note(trace)
    eef = np.asarray(trace["eef_positions"], float)[-1]               # (E, 3) at the last step
    candidates = np.asarray(trace["candidate_positions"], float)[-1]  # (K, 3)
    distances = np.linalg.norm(eef[:, None, :] - candidates[None, :, :], axis=-1).min(axis=0)
    nearest = int(np.argmin(distances))
    correct = nearest == trace["instructed_candidate"]
    return (f"the hand ended nearer the {'correct' if correct else 'a wrong'} candidate "
            f"({distances[nearest]:.2f} m from it)")


def _placement_note(trace: dict[str, Any]) -> str:
    """Where the object ended: held or not, and which side of the reference / which compartment."""
    held = bool((trace.get("object_held") or [False])[-1])
    final = np.asarray(trace["object_positions"], float)[-1]
    where = "was still held at the end" if held else "was released"
    if trace.get("countertop"):
        top = trace["countertop"]
        offset = float(np.dot(final[:2] - np.asarray(top["reference_center"], float)[:2],
                              np.asarray(top["right_axis"], float)[:2]))
        side = "right" if offset > 0 else "left"
        right = side == top["instructed_side"]
        return f"the object {where} on the {'instructed' if right else 'wrong'} side of the reference ({abs(offset):.2f} m)"
    bands = np.asarray(trace["container"]["compartment_bands"], float)
    inside = [i for i, (low, high) in enumerate(bands) if low <= final[2] <= high]
    if not inside:
        return f"the object {where} outside every compartment's height band"
    right = inside[0] == trace["container"]["instructed_compartment"]
    return f"the object {where} at the height of the {'instructed' if right else 'a wrong'} compartment"


def verdict_text(record: dict[str, Any]) -> str:
    """The strict outcome, in words, plus :func:`nearest_candidate`."""
    if record["status"] == "error":
        return f"the episode could not run: {record['message']}"
    strict = {"correct": "strict success", "wrong": "wrong target", "none": "no success"}[record["outcome"]]
    return f"{strict} (status {record['status']}, {record['steps']} steps); {nearest_candidate(record)}"


def feedback(step: int, record: dict[str, Any], episode: AgentEpisode | None) -> dict[str, Any]:
    """The feedback of a development step that ran (what :func:`~bspatial.evaluation.agents.prompts.feedback_request` shows)."""
    printed = ""
    call_log: list[dict[str, Any]] = []
    if episode is not None:
        logs = "\n".join(f"log: {e}" for e in episode.episode_log[-50:])
        printed = "\n".join(part for part in (episode.program.stdout, episode.program.stderr,
                                               episode.program.traceback, logs) if part)
        call_log = episode.call_log
    agent = record.get("agent", {})
    return {"step": step, "verdict": verdict_text(record), "strict_success": record["outcome"] == "correct",
            "program_outcome": agent.get("program_outcome", "not run"),
            "program_reason": agent.get("program_reason", record.get("message", "")),
            "printed": printed, "call_log": call_log}
