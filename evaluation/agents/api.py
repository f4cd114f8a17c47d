"""The host side of the code-as-policy agent API (Appendix 16.5) over any ``SimBackend`` episode.

A program defines ``run(api)`` and reaches the robot only through the methods named in :data:`METHODS`
(the sandbox forwards exactly these over its pipe, :mod:`bspatial.evaluation.agents.sandbox`). Positions are
metres in the robot base frame (x forward, y left, z up, origin on the floor under the robot; the frame moves
with the robot, :mod:`bspatial.evaluation.agents.geometry`). Cameras are the robot's: head, left_wrist,
right_wrist.

What a program never sees: world poses (the base's included), object names or identities, segmentation,
the task's target or candidates. ``get_state`` reports end-effector poses in the base frame, gripper
openings, whether each hand holds *something* (not what), joint positions and the step.

Time: perception and state calls render or read the current world and never step it; motion, gripper and
``wait`` calls block until done (:mod:`bspatial.evaluation.agents.motion`) and are the only calls that
advance simulated time. Frames are rendered once per camera and step and reused until the world moves.

``point_at`` and ``ask_vlm`` go through the VLM harness's backends (:mod:`bspatial.evaluation.vlm.backends`:
a transformers checkpoint such as Molmo or Qwen, or any OpenAI-compatible server; the OpenAI backend
retries network errors up to four times, as the paper's tools do). The chance backend answers both, so the
API runs without a model.

Example:
    >>> from bspatial.sim.mujoco_backend import MujocoBackend
    >>> from bspatial.tasks import sample_instance
    >>> from bspatial.tasks.episode import EpisodeRun
    >>> sim = MujocoBackend()
    >>> run = EpisodeRun(sim, sample_instance("reach_plate", "largest", 0), max_steps=60, load=True)
    >>> api = AgentAPI(run)
    >>> api.get_state()["step"], api.wait(0.5)["success"], api.get_state()["step"]
    (0, True, 15)
    >>> sim.close()
"""

from __future__ import annotations

import io
import json
import math
import numbers
import time
from typing import Any

import numpy as np

from bspatial.catalog.schema import ARMS, CAMERAS, CONTROL_HZ
from bspatial.evaluation.agents import geometry
from bspatial.evaluation.agents.motion import DEFAULT_EE_SPEED_M_S, MAX_EE_SPEED_M_S, MAX_WAIT_S, Motor
from bspatial.evaluation.vlm.backend_api import Request, VLMBackend
from bspatial.scoring.point import PointStatus, parse_points
from bspatial.sim.backend import CameraFrame
from bspatial.tasks.episode import EpisodeRun
from bspatial.tasks.experts.motion import ARM_LATERAL_M

POINT_PROMPT = "Point to every {text} in the image."
"""Appendix 16.5: the pointing model's prompt (greedy decoding: the harness backends' default)."""
DEFAULT_STANDOFF_M = 0.55
"""Appendix 16.5: ``approach`` stops with the point this far ahead of the base."""
MAX_TEXT_CHARS = 2000
"""Longest ``point_at`` text / ``ask_vlm`` question a program may send."""
MAX_EPISODE_LOG_BYTES = 8 << 20
"""The episode log holds at most this much (JSON bytes); ``log`` then refuses (a flood must not fill the host)."""
MAX_CALL_LOG = 100_000
"""Calls recorded in :attr:`AgentAPI.call_log`; later ones are only counted (``calls_not_logged``)."""

PERCEPTION_METHODS = ("get_state", "get_image", "get_depth", "pixel_to_point", "point_to_pixel", "pixel_to_ray",
                      "point_at", "ask_vlm", "log")
ROBOT_METHODS = ("approach", "move_base", "move_ee_to", "move_ee_by", "open_gripper", "close_gripper", "wait")
"""The robot commands: the only calls that advance simulated time (and reset the sandbox's watchdog)."""
METHODS = PERCEPTION_METHODS + ROBOT_METHODS
"""Everything a program may call (plus the ``instruction`` attribute)."""


def _finite(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _vector(value, name: str, size: int = 3) -> np.ndarray:
    try:
        items = list(value)
    except TypeError:
        raise ValueError(f"{name} must be {size} numbers, got {value!r}") from None
    if len(items) != size:
        raise ValueError(f"{name} must be {size} numbers, got {len(items)}: {value!r}")
    return np.array([_finite(v, f"{name}[{i}]") for i, v in enumerate(items)])


def _text(value, name: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT_CHARS:
        raise ValueError(f"{name} must be a non-empty string of at most {MAX_TEXT_CHARS} characters, got {value!r:.80}")
    return value


def _png(rgb: np.ndarray) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="PNG")
    return buffer.getvalue()


class AgentAPI:
    """The agent API over one running episode (see the module docstring).

    Args:
        run: the episode (:class:`~bspatial.tasks.episode.EpisodeRun`) the program controls.
        pointer: the open-vocabulary pointing model for ``point_at`` (None: ``point_at`` raises).
        vlm: the VLM for ``ask_vlm`` (None: ``ask_vlm`` raises).
        image_size: (width, height) of rendered frames (default: the backend's camera size).

    Attributes:
        call_log: one dict per call: method, arguments, outcome, steps before / after, wall seconds.
        episode_log: what the program wrote with ``log``.
    """

    def __init__(self, run: EpisodeRun, *, pointer: VLMBackend | None = None, vlm: VLMBackend | None = None,
                 image_size: tuple[int, int] | None = None) -> None:
        self.run, self.pointer, self.vlm = run, pointer, vlm
        self.image_size = image_size
        self.motor = Motor(run)
        self.call_log: list[dict[str, Any]] = []
        self.episode_log: list[dict[str, Any]] = []
        self._frames: dict[str, tuple[int, CameraFrame]] = {}
        self._requests = 0
        self._last_arm = "left"
        self._log_bytes = 0
        self.calls_not_logged = 0

    @property
    def instruction(self) -> str:
        return self.run.instance.instruction

    # ------------------------------------------------------------------ dispatch

    def call(self, method: str, args: list | tuple = (), kwargs: dict | None = None) -> Any:
        """Run one API method by name (what the sandbox's pipe does); unknown names raise ValueError."""
        if method not in METHODS:
            raise ValueError(f"method must be one of the agent API's {list(METHODS)}, got {method!r}")
        started, step = time.perf_counter(), self.run.steps
        entry: dict[str, Any] = {"method": method, "args": _summary(args), "kwargs": _summary(kwargs or {}),
                                 "step_before": step}
        try:
            value = getattr(self, method)(*args, **(kwargs or {}))
        except Exception as error:
            entry.update(error=f"{type(error).__name__}: {error}")
            raise
        else:
            if isinstance(value, dict) and "success" in value:
                entry.update(success=value["success"], reason=value["reason"])
            return value
        finally:
            entry.update(step_after=self.run.steps, wall_s=round(time.perf_counter() - started, 4))
            if len(self.call_log) < MAX_CALL_LOG:
                self.call_log.append(entry)
            else:
                self.calls_not_logged += 1

    # ------------------------------------------------------------------ observation and state

    def _base_pose(self) -> np.ndarray:
        return np.asarray(self.run.backend.robot_state().base_pose, float)

    def _frame(self, camera: str) -> CameraFrame:
        if camera not in CAMERAS:
            raise ValueError(f"camera must be one of {list(CAMERAS)}, got {camera!r}")
        cached = self._frames.get(camera)
        if cached is None or cached[0] != self.run.steps:
            size = {} if self.image_size is None else {"width": self.image_size[0], "height": self.image_size[1]}
            self._frames[camera] = (self.run.steps, self.run.backend.render(camera, **size))
        return self._frames[camera][1]

    def get_state(self) -> dict[str, Any]:
        """End-effector poses (base frame), gripper openings, holding flags, joints and the current step."""
        state = self.run.backend.robot_state()
        pose = state.base_pose
        eef = {}
        for side in ARMS:
            position = geometry.world_to_base(state.eef_pos[side], pose)[0]
            eef[side] = {"position": position.tolist(), "quat": _base_quat(state.eef_quat[side], float(pose[2]))}
        return {"step": self.run.steps, "time_s": self.run.steps / CONTROL_HZ, "eef": eef,
                "gripper": {side: float(state.gripper[side]) for side in ARMS},
                "holding": {side: state.grasped[side] is not None for side in ARMS},
                "joints": {"torso": state.torso_qpos.tolist(), "left_arm": state.left_arm_qpos.tolist(),
                           "right_arm": state.right_arm_qpos.tolist()},
                "done": self.run.done}

    def get_image(self, camera: str) -> np.ndarray:
        """The camera's RGB image (H, W, 3) uint8."""
        return self._frame(camera).rgb.copy()

    def get_depth(self, camera: str) -> np.ndarray:
        """The camera's depth (H, W) float32: metres along the optical axis, pixel-aligned; 0 where nothing."""
        return self._frame(camera).depth.copy()

    # ------------------------------------------------------------------ geometry

    def pixel_to_point(self, u: float, v: float, camera: str) -> list[float] | None:
        """The base-frame point seen at pixel (u, v) (median of a 5 x 5 depth patch), None if nothing is seen."""
        point = geometry.pixel_to_point(self._frame(camera), _finite(u, "u"), _finite(v, "v"), self._base_pose())
        return None if point is None else point.tolist()

    def point_to_pixel(self, p, camera: str) -> list[float] | None:
        """The pixel (u, v) at which base-frame ``p`` appears; None when it is behind the camera."""
        uv = geometry.point_to_pixel(self._frame(camera), _vector(p, "p"), self._base_pose())
        return None if uv is None else list(uv)

    def pixel_to_ray(self, u: float, v: float, camera: str) -> dict[str, list[float]]:
        """The ray through pixel (u, v): base-frame origin and unit direction."""
        origin, direction = geometry.pixel_to_ray(self._frame(camera), _finite(u, "u"), _finite(v, "v"),
                                                  self._base_pose())
        return {"origin": origin.tolist(), "direction": direction.tolist()}

    # ------------------------------------------------------------------ perception tools

    def _ask(self, backend: VLMBackend | None, tool: str, prompt: str, cameras: tuple[str, ...], kind: str) -> str:
        if backend is None:
            raise RuntimeError(f"{tool}: no model was given for this episode (AgentAPI({tool.split('_')[0]}=...))")
        images = tuple(_png(self._frame(c).rgb) for c in cameras)
        self._requests += 1
        request = Request(f"{self.run.instance.task}/{self.run.instance.seed}/{tool}/{self._requests}", prompt,
                          images, kind)
        return backend.generate([request])[0].text

    def point_at(self, text: str, camera: str) -> list[list[float]]:
        """Pixels (u, v) of every instance of ``text`` in the camera's current image (the pointing model's
        points on its 0-1000 grid, scaled to the image; unreadable or out-of-range points are dropped)."""
        frame = self._frame(camera)
        reply = self._ask(self.pointer, "point_at", POINT_PROMPT.format(text=_text(text, "text")), (camera,), "point")
        points = [p.to_pixels(frame.width, frame.height) for p in parse_points(reply)
                  if p.status is PointStatus.PARSED]
        # The 0-1000 grid includes 1000, the far edge: keep such points inside the image.
        return [[min(u, frame.width - 1e-6), min(v, frame.height - 1e-6)] for u, v in points]

    def ask_vlm(self, question: str, cameras) -> str:
        """A free-form answer from the VLM about the current images of ``cameras`` (a name or a list)."""
        names = (cameras,) if isinstance(cameras, str) else tuple(cameras)
        if not names:
            raise ValueError(f"cameras must name at least one of {list(CAMERAS)}, got {cameras!r}")
        for c in names:
            self._frame(c)
        return self._ask(self.vlm, "ask_vlm", _text(question, "question"), names, "text")

    def log(self, msg: str, **data: Any) -> None:
        """Write ``msg`` and ``data`` (JSON values) to the episode log."""
        entry = {"step": self.run.steps, "msg": str(msg)[:MAX_TEXT_CHARS], **data}
        try:
            size = len(json.dumps(entry))
        except (TypeError, ValueError) as error:
            raise ValueError(f"log data must be JSON values: {error}") from None
        if self._log_bytes + size > MAX_EPISODE_LOG_BYTES:
            raise ValueError(f"the episode log is full ({self._log_bytes} of {MAX_EPISODE_LOG_BYTES} bytes); "
                             f"this entry has {size}")
        self._log_bytes += size
        self.episode_log.append(entry)

    # ------------------------------------------------------------------ motion

    def _arm(self, arm: str, y: float | None = None) -> str:
        """``arm`` itself, or for "auto" the holding arm, else for a target point left when y >= 0 and right
        otherwise (Appendix 16.5); calls without a target point (``move_ee_by``, the grippers) take the arm
        the previous hand call used, the left one at first (our choice: the paper names only the point rule)."""
        if arm not in ("auto", *ARMS):
            raise ValueError(f"arm must be one of {['auto', *ARMS]}, got {arm!r}")
        if arm == "auto":
            held = [side for side, name in self.run.backend.robot_state().grasped.items() if name is not None]
            if held:
                arm = held[0]
            elif y is None:
                arm = self._last_arm
            else:
                arm = "left" if y >= 0 else "right"
        self._last_arm = arm
        return arm

    def approach(self, p, standoff: float = DEFAULT_STANDOFF_M, arm: str = "auto") -> dict[str, Any]:
        """Turn to face ``p`` and drive until it is ``standoff`` ahead, offset toward the reaching arm.

        Returns the motion result with ``point``: ``p`` re-expressed in the new base frame.
        """
        p = _vector(p, "p")
        standoff = _finite(standoff, "standoff")
        if not 0.0 <= standoff <= 5.0:
            raise ValueError(f"standoff must be in [0, 5] m, got {standoff}")
        side = self._arm(arm, float(p[1]))
        pose = self._base_pose()
        world = geometry.base_to_world(p, pose)[0]
        yaw = pose[2] + math.atan2(p[1], p[0])            # face the point from where the base stands
        lateral = ARM_LATERAL_M if side == "left" else -ARM_LATERAL_M
        c, s = math.cos(yaw), math.sin(yaw)
        goal = world[:2] - (c * standoff - s * lateral, s * standoff + c * lateral)
        result = self.motor.drive(goal, yaw)
        point = geometry.world_to_base(world, self._base_pose())[0]
        return {**result.to_dict(), "point": point.tolist()}

    def move_base(self, dx: float = 0.0, dy: float = 0.0, dyaw: float = 0.0) -> dict[str, Any]:
        """Relative base motion (base frame, metres and radians); stops short when blocked."""
        d = np.array([_finite(dx, "dx"), _finite(dy, "dy"), 0.0])
        dyaw = _finite(dyaw, "dyaw")
        pose = self._base_pose()
        goal = geometry.base_to_world(d, pose)[0]
        return self.motor.drive(goal[:2], pose[2] + dyaw).to_dict()

    def _speed(self, speed) -> float:
        speed = DEFAULT_EE_SPEED_M_S if speed is None else _finite(speed, "speed")
        if not 0.0 < speed <= MAX_EE_SPEED_M_S:
            raise ValueError(f"speed must be in (0, {MAX_EE_SPEED_M_S}] m/s, got {speed}")
        return speed

    def move_ee_to(self, p, arm: str = "auto", speed: float | None = None, use_torso: bool = False) -> dict[str, Any]:
        """Straight-line end-effector motion to base-frame ``p`` (orientation not controlled)."""
        p = _vector(p, "p")
        side, speed = self._arm(arm, float(p[1])), self._speed(speed)
        return self.motor.line(side, geometry.base_to_world(p, self._base_pose())[0], speed, bool(use_torso)).to_dict()

    def move_ee_by(self, d, arm: str = "auto", speed: float | None = None, use_torso: bool = False) -> dict[str, Any]:
        """Relative end-effector motion by base-frame ``d``."""
        d = _vector(d, "d")
        side, speed = self._arm(arm), self._speed(speed)
        state = self.run.backend.robot_state()
        pose = state.base_pose
        goal = geometry.base_to_world(geometry.world_to_base(state.eef_pos[side], pose)[0] + d, pose)[0]
        return self.motor.line(side, goal, speed, bool(use_torso)).to_dict()

    def open_gripper(self, arm: str = "auto") -> dict[str, Any]:
        """Open the gripper (``auto``: the holding arm, else the arm of the previous hand call)."""
        return self.motor.gripper(self._arm(arm), 1.0).to_dict()

    def close_gripper(self, arm: str = "auto") -> dict[str, Any]:
        """Close the gripper (``auto``: the holding arm, else the arm of the previous hand call); touching an object with both
        fingers starts the assisted grasp."""
        return self.motor.gripper(self._arm(arm), -1.0).to_dict()

    def wait(self, seconds: float) -> dict[str, Any]:
        """Hold still for ``seconds`` of simulated time."""
        seconds = _finite(seconds, "seconds")
        if not 0.0 <= seconds <= MAX_WAIT_S:
            raise ValueError(f"seconds must be in [0, {MAX_WAIT_S}], got {seconds}")
        return self.motor.hold_steps(int(round(seconds * CONTROL_HZ))).to_dict()

    def hold_until_done(self) -> int:
        """Hold still until the episode's budget ends (after the program stopped); returns the steps."""
        return self.motor.hold_until_done()


def _base_quat(quat_world, yaw: float) -> list[float]:
    """A world (w, x, y, z) orientation expressed in the base frame (rotated by -yaw about z)."""
    w, x, y, z = (float(v) for v in quat_world)
    c, s = math.cos(-yaw / 2), math.sin(-yaw / 2)     # q_base = q_z(-yaw) * q_world
    return [c * w - s * z, c * x - s * y, c * y + s * x, c * z + s * w]


def _summary(value: Any) -> Any:
    """A short JSON-safe rendering of call arguments for the call log."""
    if isinstance(value, dict):
        return {str(k): _summary(v) for k, v in list(value.items())[:10]}
    if isinstance(value, (list, tuple)):
        return [_summary(v) for v in value[:10]]
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    return str(value)[:200]
