"""Program development, validation and freezing (Appendix 16.5), resumable step by step.

``develop(writer, task, out)`` runs the writer loop over the task's development episodes:

1. The example scene (training-distribution entry :data:`EXAMPLE_INDEX`) is recorded once
   (:mod:`.screening`); its head and wrist images go with the first request, and it is the scene the
   screening mock API is built from.
2. Each development step (entries from :data:`DEVELOPMENT_START` on, ``n_development`` of them; the paper's
   10) allows up to :data:`WRITING_ATTEMPTS` writing attempts; each reply's program is screened. The
   first passing one runs on the step's episode. If none passes, the previous version that passed
   screening runs instead; failing that the step is skipped and the writer told so; at the first step a
   failing program still runs.
3. After the last step, the final program (the last one that ran) is validated once on a held-aside
   training-distribution episode (:data:`VALIDATION_INDEX`: not a development, test or example one); it
   must reach strict success, else the latest version with strict success in development is frozen, else
   the final one.

Development, example and validation episodes are entries of the training manifest
(:func:`bspatial.construction.splits.training_entry`): their seeds can never equal a held-out seed, so
they are disjoint from the test set. The trace split of development episodes is ``development``.

Run folder (every file written atomically, so a kill leaves whole files only):

* ``agent.json``: the settings; a rerun with other settings is refused.
* ``example_scene.npz``: the recorded example scene.
* ``exchanges/step-SS-attempt-A.json``: one writer request (messages, images as SHA-256) and its reply,
  written as soon as the reply arrives, then again with the screening verdict. A rerun reuses the reply
  instead of asking the writer again.
* ``steps/step-SS.json`` (+ ``step-SS-<camera>.png``): the step: attempts, which program ran and why, the
  episode's result record, the feedback. A finished step is never rerun.
* ``validation.json``, ``frozen.json``, ``frozen_program.py``: the validation episode and the frozen program.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bspatial.common.files import (atomic_write_bytes, atomic_write_text, check_run_settings, remove_stale_temp_files,
                                   require_folder_path)
from bspatial.common.locks import run_folder_lock
from bspatial.common.progress import track
from bspatial.construction.splits import training_entry
from bspatial.evaluation.agents import prompts
from bspatial.evaluation.agents.prompts import Message
from bspatial.evaluation.agents.records import agent_policy, feedback, png, program_sha, run_agent
from bspatial.evaluation.agents.sandbox import SandboxLimits
from bspatial.evaluation.agents.screening import SCREEN_LIMITS, RecordedScene, record_scene, screen
from bspatial.evaluation.agents.writers import GenerationSettings, ReplyError, Writer, make_writer, parse_reply, writer_label

logger = logging.getLogger(__name__)

DEVELOPMENT_EPISODES = 10
"""Appendix 16.5: each writer develops its program over 10 training episodes per task."""
WRITING_ATTEMPTS = 3
"""Appendix 16.5: up to three writing attempts per development step."""
EXAMPLE_INDEX, VALIDATION_INDEX, DEVELOPMENT_START = 0, 1, 2
"""Training-manifest entries: the example scene, the held-aside validation episode, then the development ones."""
MANIFEST = "agent.json"
EXAMPLE_SCENE = "example_scene.npz"


@dataclass(frozen=True)
class DevelopSettings:
    """Everything that decides a development run (written to ``agent.json``).

    Attributes:
        writer: the writer spec (``scripted``, ``openai:<url>#<model>``).
        task: canonical task name.
        pointer: the pointing model (``oracle``, ``chance``, a VLM backend spec).
        vlm: the ``ask_vlm`` backend spec.
        n_development: development episodes (paper: 10).
        attempts: writing attempts per step (paper: 3).
        max_steps: cap on each episode's step budget (smoke runs); None = the task's budget.
        build_seed: the split manifests' build seed.
        generation: the writer's generation settings (:class:`GenerationSettings` fields).
        screen_wall_s: the screening wall cap (paper: 60 s).
    """

    writer: str
    task: str
    pointer: str = "oracle"
    vlm: str = "chance"
    n_development: int = DEVELOPMENT_EPISODES
    attempts: int = WRITING_ATTEMPTS
    max_steps: int | None = None
    build_seed: int = 0
    generation: dict[str, Any] = field(default_factory=dict)
    screen_wall_s: float = SCREEN_LIMITS.wall_s

    def __post_init__(self) -> None:
        for name in ("n_development", "attempts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if self.max_steps is not None and (isinstance(self.max_steps, bool) or not isinstance(self.max_steps, int)
                                           or self.max_steps < 1):
            raise ValueError(f"max_steps must be an int >= 1 or None, got {self.max_steps!r}")

    @property
    def policy(self) -> str:
        return agent_policy(writer_label(self.writer), self.pointer)


def _read(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.exists() else None


def _check_manifest(out: Path, settings: DevelopSettings) -> None:
    check_run_settings(out / MANIFEST, asdict(settings), "a development run")


class _Loop:
    """One development run's state; every piece of it can be rebuilt from the run folder."""

    def __init__(self, settings: DevelopSettings, out: Path, writer: Writer, backend, *,
                 require_confinement: bool, limits: SandboxLimits) -> None:
        self.s, self.out, self.writer, self.backend = settings, out, writer, backend
        self.require_confinement, self.limits = require_confinement, limits
        self.system = prompts.system_prompt(settings.task)
        self.exchanges: list[tuple[Message, str]] = []
        self.history: list[str] = []
        self.previous_passing: str | None = None
        self.screen_limits = SandboxLimits(**{**asdict(SCREEN_LIMITS), "wall_s": settings.screen_wall_s,
                                              "inactivity_s": settings.screen_wall_s + 5.0,
                                              "cpu_s": settings.screen_wall_s + 30.0})

    # ---- the example scene ----------------------------------------------------------------------

    def example(self) -> tuple[RecordedScene, Any]:
        from bspatial.tasks import sample_instance

        spec = training_entry(self.s.task, EXAMPLE_INDEX, self.s.build_seed)
        instance = sample_instance(spec.task, spec.variant, spec.seed)
        path = self.out / EXAMPLE_SCENE
        if not path.exists():
            self.backend.load(instance.scene)
            record_scene(self.backend, instance).save(path)
        return RecordedScene.load(path), instance

    # ---- writing and screening ------------------------------------------------------------------

    def _ask(self, step: int, attempt: int, request: Message) -> str:
        path = self.out / "exchanges" / f"step-{step:02d}-attempt-{attempt}.json"
        cached = _read(path)
        if cached is not None:
            return cached["reply"]   # asked before a kill: the writer is not asked twice
        messages = prompts.conversation(self.system, self.exchanges, request)
        reply = self.writer.write(messages, f"{self.s.task}/step-{step:02d}/attempt-{attempt}")
        atomic_write_text(path, json.dumps({"step": step, "attempt": attempt, "writer": self.writer.spec,
                                            "messages": [m.to_log() for m in messages], "reply": reply}))
        return reply

    def _screen(self, reply: str, scene: RecordedScene, instance) -> tuple[str | None, dict[str, Any]]:
        from bspatial.evaluation.agents.pointers import make_pointer
        from bspatial.evaluation.vlm.backends import load_backend

        try:
            plan, source = parse_reply(reply)
        except ReplyError as error:
            return None, {"passed": False, "reason": str(error)}
        pointer = make_pointer(self.s.pointer, instance, lambda: scene.frames.values())
        verdict, _ = screen(source, scene, pointer=pointer, vlm=load_backend(self.s.vlm), limits=self.screen_limits,
                            require_confinement=self.require_confinement)
        return source, {**verdict.to_dict(), "plan": plan, "program_sha256": program_sha(source)}

    def write_step(self, step: int, request: Message, scene, instance) -> tuple[list[dict], str | None, str | None]:
        """The step's attempts, the program that passed (or None) and the last attempt's program."""
        attempts, last_source = [], None
        for attempt in range(self.s.attempts):
            reply = self._ask(step, attempt, request)
            self.exchanges.append((request, reply))
            source, verdict = self._screen(reply, scene, instance)
            last_source = source if source is not None else last_source
            attempts.append({"attempt": attempt, **verdict})
            path = self.out / "exchanges" / f"step-{step:02d}-attempt-{attempt}.json"
            atomic_write_text(path, json.dumps({**json.loads(path.read_text()), "screening": verdict}))
            if verdict["passed"]:
                return attempts, source, last_source
            request = prompts.retry_request(verdict["reason"])
        return attempts, None, last_source

    # ---- one step -------------------------------------------------------------------------------

    def step(self, step: int, request: Message, scene, instance) -> dict[str, Any]:
        attempts, passed, last = self.write_step(step, request, scene, instance)
        notes: list[str] = []
        if passed is not None:
            source, why = passed, "passed screening"
        elif self.previous_passing is not None:
            source, why = self.previous_passing, "every attempt failed screening: the previous version ran"
        elif step == 0 and last is not None:
            source, why = last, "every attempt failed screening: at the first step the program still runs"
        else:
            source, why = None, ("every attempt failed screening and no earlier version passed: "
                                 "the step was skipped")
        if passed is None:
            notes.append(why)
        episode = training_entry(self.s.task, DEVELOPMENT_START + step, self.s.build_seed)
        result: dict[str, Any] = {"step": step, "episode": asdict(episode), "attempts": attempts, "ran": why,
                                  "program": source, "screened": passed is not None, "screening_notes": notes}
        if source is None:
            result.update(record=None, feedback={"step": step, "skipped": why, "screening_notes": notes},
                          views=[])
            return result
        record, ran, views = run_agent(self.backend, episode, source, self.s.policy, pointer=self.s.pointer,
                                       vlm=self.s.vlm, trace_split="development", max_steps=self.s.max_steps,
                                       limits=self.limits, require_confinement=self.require_confinement)
        for camera, image in views.items():
            atomic_write_bytes(self.out / "steps" / f"step-{step:02d}-{camera}.png", image)
        result.update(record=record, feedback={**feedback(step, record, ran), "screening_notes": notes},
                      views=list(views))
        return result

    def absorb(self, result: dict[str, Any]) -> Message:
        """Take a finished step into the state; returns the next request."""
        if result["screened"]:
            self.previous_passing = result["program"]
        fb = result["feedback"]
        self.history.append(f"step {result['step']}: " + (f"skipped ({fb['skipped']})" if fb.get("skipped")
                                                         else fb["verdict"]))
        views = {c: (self.out / "steps" / f"step-{result['step']:02d}-{c}.png").read_bytes() for c in result["views"]}
        return prompts.feedback_request(fb, self.history, views)

    def replay_exchanges(self, step: int, attempts: int, request: Message) -> Message:
        """Rebuild the exchanges of a finished step from its exchange files."""
        for attempt in range(attempts):
            reply = _read(self.out / "exchanges" / f"step-{step:02d}-attempt-{attempt}.json")["reply"]
            self.exchanges.append((request, reply))
            screening = _read(self.out / "exchanges" / f"step-{step:02d}-attempt-{attempt}.json")["screening"]
            request = prompts.retry_request(screening["reason"])
        return request


@dataclass
class DevelopSummary:
    """What :func:`develop` did."""

    out: Path
    steps_run: int
    steps_skipped: int
    frozen_step: int | None
    frozen_reason: str
    validation_outcome: str


def develop(writer: str, task: str, out: str | Path, *, pointer: str = "oracle", vlm: str = "chance",
            n_development: int = DEVELOPMENT_EPISODES, attempts: int = WRITING_ATTEMPTS,
            max_steps: int | None = None, generation: GenerationSettings = GenerationSettings(),
            screen_wall_s: float = SCREEN_LIMITS.wall_s, limits: SandboxLimits = SandboxLimits(),
            require_confinement: bool = True, progress: bool = False, writer_options: dict | None = None
            ) -> DevelopSummary:
    """Develop, validate and freeze a program for ``task`` (module docstring); resumes in ``out``."""
    from bspatial.catalog.tasks import canonical_task_name
    from bspatial.evaluation.rollout.plan import resolve_tasks
    from bspatial.sim.process import close_process_backends, process_backend

    (task,) = resolve_tasks("held_out", [canonical_task_name(task)])
    settings = DevelopSettings(writer, task, pointer, vlm, n_development, attempts, max_steps,
                               generation=asdict(generation), screen_wall_s=screen_wall_s)
    agent = make_writer(writer, task, generation, **(writer_options or {}))   # bad specs fail before any file
    out = require_folder_path(out)
    with run_folder_lock(out, f"agents develop --writer {writer} --task {task}"):
        for folder in (out, out / "exchanges", out / "steps"):   # we hold the lock: temp files are a killed run's
            if folder.is_dir():
                remove_stale_temp_files(folder)
        _check_manifest(out, settings)
        for folder in ("exchanges", "steps"):
            (out / folder).mkdir(exist_ok=True)
        try:
            loop = _Loop(settings, out, agent, process_backend(), require_confinement=require_confinement,
                         limits=limits)
            return _develop(loop, progress)
        finally:
            close_process_backends()


def _develop(loop: _Loop, progress: bool) -> DevelopSummary:
    s, out = loop.s, loop.out
    scene, instance = loop.example()
    images = {c: png(scene.frames[c].rgb) for c in scene.frames}
    request = prompts.first_request(s.task, scene.instruction, images)
    results = []
    for step in track(range(s.n_development), f"develop {s.task}", "step", enabled=progress):
        path = out / "steps" / f"step-{step:02d}.json"
        result = _read(path)
        if result is None:
            result = loop.step(step, request, scene, instance)
            atomic_write_text(path, json.dumps(result))
            logger.info("development step %d: %s", step, result["feedback"].get("verdict") or result["ran"])
        else:
            loop.replay_exchanges(step, len(result["attempts"]), request)
        results.append(result)
        request = loop.absorb(result)
    return _freeze(loop, results)


def _freeze(loop: _Loop, results: list[dict[str, Any]]) -> DevelopSummary:
    """Validate the final program once and freeze one version (module docstring, step 3)."""
    s, out = loop.s, loop.out
    ran = [r for r in results if r["record"] is not None]
    skipped = len(results) - len(ran)
    if not ran:
        raise RuntimeError(f"{out}: no development step ran a program (every attempt of every step failed "
                           f"screening), so there is nothing to freeze")
    final = ran[-1]
    validation = _read(out / "validation.json")
    if validation is None:
        episode = training_entry(s.task, VALIDATION_INDEX, s.build_seed)
        record, _, _ = run_agent(loop.backend, episode, final["program"], s.policy, pointer=s.pointer, vlm=s.vlm,
                                 trace_split="development", max_steps=s.max_steps, limits=loop.limits,
                                 require_confinement=loop.require_confinement)
        validation = {"episode": asdict(episode), "program_step": final["step"], "record": record}
        atomic_write_text(out / "validation.json", json.dumps(validation))
    strict = [r for r in ran if r["record"]["outcome"] == "correct"]
    if validation["record"]["outcome"] == "correct":
        frozen, why = final, "the final program reached strict success on the validation episode"
    elif strict:
        frozen, why = strict[-1], ("validation failed: the latest version with strict success in development "
                                   "is frozen")
    else:
        frozen, why = final, "validation failed and no development version succeeded: the final program is frozen"
    atomic_write_text(out / "frozen_program.py", frozen["program"])
    atomic_write_text(out / "frozen.json", json.dumps({
        "task": s.task, "writer": s.writer, "pointer": s.pointer, "policy": s.policy, "step": frozen["step"],
        "reason": why, "program_sha256": program_sha(frozen["program"]),
        "validation_outcome": validation["record"]["outcome"]}, indent=2))
    logger.info("%s: froze the program of step %d (%s)", s.task, frozen["step"], why)
    return DevelopSummary(out, len(ran), skipped, frozen["step"], why, validation["record"]["outcome"])
