"""Screening a candidate program before simulation (Appendix 16.5), on a mock API built from a recorded scene.

A :class:`RecordedScene` is one scene's camera frames and robot state, taken once (the task's example
scene). :class:`MockAPI` is the agent API over it: perception, geometry and state calls answer from the
recorded frames exactly as the real API would (same argument checks, same geometry), robot commands are
checked and answered as successes without moving anything. The program runs in the same sandbox as in
evaluation, with the screening limits:

* rejected: it raises (or its child crashes), it ends without ever commanding a motion, it issues
  :data:`PERCEPTION_STREAK` consecutive perception calls without a motion, or it makes no API call for
  :data:`CALL_IDLE_S` seconds;
* accepted: it returns after commanding a motion, or it is still running at the :data:`SCREEN_WALL_S`
  or :data:`SCREEN_CALLS` cap.

Screening is for development only; evaluation runs frozen programs unscreened.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bspatial.catalog.schema import CAMERAS
from bspatial.common.files import atomic_write_bytes
from bspatial.evaluation.agents import api as api_module
from bspatial.evaluation.agents.api import AgentAPI, _finite, _vector
from bspatial.evaluation.agents.sandbox import ProgramRun, SandboxLimits, run_program
from bspatial.evaluation.vlm.backend_api import VLMBackend
from bspatial.sim.backend import CameraFrame

SCREEN_WALL_S = 60.0
"""Appendix 16.5: a program still running after 60 s of screening is accepted ..."""
SCREEN_CALLS = 500
"""... as is one still running at its 500th API call."""
PERCEPTION_STREAK = 100
"""Rejected: 100 consecutive perception calls without a motion."""
CALL_IDLE_S = 20.0
"""Rejected: no API call for 20 s."""
MOTION_METHODS = tuple(m for m in api_module.ROBOT_METHODS if m != "wait")
"""What counts as commanding a motion (``wait`` holds still)."""
SCREEN_LIMITS = SandboxLimits(inactivity_s=SCREEN_WALL_S + 5.0, wall_s=SCREEN_WALL_S, cpu_s=SCREEN_WALL_S + 30.0,
                              call_idle_s=CALL_IDLE_S)
"""The sandbox limits of screening: the wall cap and the no-call limit (the robot-command watchdog plays
no part: the wall cap comes first)."""


# ---------------------------------------------------------------------------- the recorded scene

@dataclass
class RecordedScene:
    """One scene's frames (every camera), robot state (as ``get_state`` reports it) and base pose."""

    task: str
    seed: int
    instruction: str
    frames: dict[str, CameraFrame]
    state: dict[str, Any]
    base_pose: np.ndarray

    def save(self, path: str | Path) -> Path:
        """One ``.npz`` file, written atomically."""
        arrays: dict[str, np.ndarray] = {"base_pose": np.asarray(self.base_pose, float)}
        meta = {"task": self.task, "seed": int(self.seed), "instruction": self.instruction, "state": self.state,
                "id_to_name": {c: {str(k): v for k, v in f.id_to_name.items()} for c, f in self.frames.items()}}
        for camera, frame in self.frames.items():
            for field in ("rgb", "depth", "segmentation", "K", "T_world_cam"):
                arrays[f"{camera}.{field}"] = getattr(frame, field)
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        return atomic_write_bytes(Path(path), buffer.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> "RecordedScene":
        with np.load(path) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            frames = {}
            for camera, names in meta["id_to_name"].items():
                frames[camera] = CameraFrame(camera, *(data[f"{camera}.{f}"] for f in ("rgb", "depth", "segmentation")),
                                             {int(k): v for k, v in names.items()}, data[f"{camera}.K"],
                                             data[f"{camera}.T_world_cam"])
            return cls(meta["task"], meta["seed"], meta["instruction"], frames, meta["state"], data["base_pose"].copy())


def record_scene(backend, instance) -> RecordedScene:
    """Record ``instance`` as loaded in ``backend`` (its start state): every camera's frame and the state."""
    from bspatial.tasks.episode import EpisodeRun

    run = EpisodeRun(backend, instance, max_steps=1)
    state = AgentAPI(run).get_state()
    return RecordedScene(instance.task, int(instance.seed), instance.instruction,
                         {c: backend.render(c) for c in CAMERAS}, state,
                         np.asarray(backend.robot_state().base_pose, float))


# ---------------------------------------------------------------------------- the mock API

@dataclass
class _MockInstance:
    task: str
    seed: int
    instruction: str


class _MockRun:
    """What the sandbox and the API read of a run: steps, status, done, the instance's names."""

    def __init__(self, scene: RecordedScene) -> None:
        self.instance = _MockInstance(scene.task, scene.seed, scene.instruction)
        self.steps, self.status = 0, None

    @property
    def done(self) -> bool:
        return self.status is not None


class MockAPI(AgentAPI):
    """The agent API over a :class:`RecordedScene` (module docstring); ``run.status`` turns to
    ``"call_cap"`` or ``"perception_streak"`` when the sandbox must stop the program."""

    def __init__(self, scene: RecordedScene, *, pointer: VLMBackend | None = None, vlm: VLMBackend | None = None,
                 max_calls: int = SCREEN_CALLS, perception_streak: int = PERCEPTION_STREAK) -> None:
        # Not AgentAPI.__init__: there is no simulator behind this API, only the recorded frames.
        self.scene, self.run = scene, _MockRun(scene)
        self.pointer, self.vlm, self.image_size = pointer, vlm, None
        self.call_log, self.episode_log = [], []
        self._frames, self._requests, self._last_arm, self._log_bytes, self.calls_not_logged = {}, 0, "left", 0, 0
        self.max_calls, self.perception_streak = max_calls, perception_streak
        self.calls = self.streak = self.motions = 0

    def call(self, method: str, args: list | tuple = (), kwargs: dict | None = None) -> Any:
        self.calls += 1
        try:
            return super().call(method, args, kwargs)
        finally:
            if method in MOTION_METHODS:
                self.motions, self.streak = self.motions + 1, 0
            elif method in api_module.PERCEPTION_METHODS:
                self.streak += 1
            if self.streak >= self.perception_streak:
                self.run.status = "perception_streak"
            elif self.calls >= self.max_calls:
                self.run.status = "call_cap"

    def _frame(self, camera: str) -> CameraFrame:
        if camera not in CAMERAS:
            raise ValueError(f"camera must be one of {list(CAMERAS)}, got {camera!r}")
        return self.scene.frames[camera]

    def _base_pose(self) -> np.ndarray:
        return self.scene.base_pose

    def get_state(self) -> dict[str, Any]:
        return {**self.scene.state, "step": self.run.steps, "done": False}

    def _arm(self, arm: str, y: float | None = None) -> str:
        if arm not in ("auto", "left", "right"):
            raise ValueError(f"arm must be one of ['auto', 'left', 'right'], got {arm!r}")
        return arm

    def _moved(self, point=None) -> dict[str, Any]:
        self.run.steps += 1      # a robot command that "moves" the world: the sandbox's watchdog sees it
        return {"success": True, "reason": None, "detail": "screening: no motion is simulated", "steps": 1,
                "point": None if point is None else [float(v) for v in point]}

    def approach(self, p, standoff: float = api_module.DEFAULT_STANDOFF_M, arm: str = "auto") -> dict[str, Any]:
        p, standoff = _vector(p, "p"), _finite(standoff, "standoff")
        if not 0.0 <= standoff <= 5.0:
            raise ValueError(f"standoff must be in [0, 5] m, got {standoff}")
        self._arm(arm)
        return self._moved(p)

    def move_base(self, dx: float = 0.0, dy: float = 0.0, dyaw: float = 0.0) -> dict[str, Any]:
        for value, name in ((dx, "dx"), (dy, "dy"), (dyaw, "dyaw")):
            _finite(value, name)
        return self._moved()

    def move_ee_to(self, p, arm: str = "auto", speed: float | None = None, use_torso: bool = False) -> dict[str, Any]:
        _vector(p, "p"), self._arm(arm), self._speed(speed)
        return self._moved()

    def move_ee_by(self, d, arm: str = "auto", speed: float | None = None, use_torso: bool = False) -> dict[str, Any]:
        _vector(d, "d"), self._arm(arm), self._speed(speed)
        return self._moved()

    def open_gripper(self, arm: str = "auto") -> dict[str, Any]:
        self._arm(arm)
        return self._moved()

    def close_gripper(self, arm: str = "auto") -> dict[str, Any]:
        self._arm(arm)
        return self._moved()

    def wait(self, seconds: float) -> dict[str, Any]:
        seconds = _finite(seconds, "seconds")
        if not 0.0 <= seconds <= api_module.MAX_WAIT_S:
            raise ValueError(f"seconds must be in [0, {api_module.MAX_WAIT_S}], got {seconds}")
        return {"success": True, "reason": None, "detail": "screening: no time passes", "steps": 0, "point": None}

    def hold_until_done(self) -> int:
        return 0


# ---------------------------------------------------------------------------- the verdict

@dataclass(frozen=True)
class Screening:
    """A screening verdict: passed, one sentence why, and the run's numbers."""

    passed: bool
    reason: str
    calls: int
    motions: int
    outcome: str
    wall_s: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def verdict(run: ProgramRun, api: MockAPI, wall_s: float = SCREEN_WALL_S) -> Screening:
    """The screening rule (module docstring) applied to a finished screening run (``wall_s``: its wall cap)."""
    def done(passed: bool, reason: str) -> Screening:
        return Screening(passed, reason, api.calls, api.motions, run.outcome, run.wall_s)

    if run.outcome in ("raised", "crashed"):
        return done(False, f"error: {run.reason}")
    if api.run.status == "perception_streak":
        return done(False, f"{api.perception_streak} consecutive perception calls without a motion")
    if api.run.status == "call_cap":
        return done(True, f"still running at the {api.max_calls}-call cap")
    if run.outcome == "stopped":
        if "no API call" in run.reason:
            return done(False, run.reason)
        if "wall-clock limit" in run.reason:
            return done(True, f"still running at the {wall_s:g} s cap")
        return done(False, f"stopped: {run.reason}")
    if api.motions == 0:
        return done(False, "the program never commands a motion")
    return done(True, "run(api) returned after commanding a motion")


def screen(source: str, scene: RecordedScene, *, pointer: VLMBackend | None = None, vlm: VLMBackend | None = None,
           limits: SandboxLimits = SCREEN_LIMITS, require_confinement: bool = True) -> tuple[Screening, ProgramRun]:
    """Screen program ``source`` on ``scene``; returns the verdict and the sandbox's report."""
    api = MockAPI(scene, pointer=pointer, vlm=vlm)
    run = run_program(source, api, limits=limits, require_confinement=require_confinement)
    return verdict(run, api, limits.wall_s), run
