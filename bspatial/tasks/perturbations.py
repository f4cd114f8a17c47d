"""Visual and start-state perturbation axes: rollout conditions beside Spa-Bench's language ones.

A rollout condition is ``<language>+<axis>+...`` (``bspatial rollout --condition camera+light``): at most one of
:data:`bspatial.tasks.conditions.CONDITIONS` (``spatial`` when none is named) and any of :data:`AXES`, each drawn
per episode from the run's ``--seed`` and the episode's scene seed (:func:`perturbation_rng`), so the same episode
is perturbed the same way by every policy and the perturbed run pairs with the unperturbed one scene by scene
(:mod:`bspatial.evaluation.rollout.spa_bench`). The ranges (uniform draws, stated in :data:`RANGES`):

* ``camera``: every robot camera moved from its mounting: the head camera by up to
  :data:`HEAD_CAMERA_SHIFT_M` per axis (forward only along the head's axis: its mounting is 1 cm in front of the
  head's shell, so a shift back would look out from inside it), the wrist cameras by up to
  :data:`WRIST_CAMERA_SHIFT_M`, each turned by up to :data:`CAMERA_TURN_DEG` about each of its axes;
* ``light``: every scene light's intensity scaled by :data:`LIGHT_INTENSITY`, tinted (each channel a factor in
  :data:`LIGHT_CHANNEL`, the largest set to 1) and its direction tilted by up to :data:`LIGHT_TILT_DEG` towards a
  random azimuth;
* ``appearance``: every object's colour, furniture included, shifted in HSV: hue by up to :data:`APPEARANCE_HUE`
  of the circle, saturation and value scaled by :data:`APPEARANCE_SCALE` (a part's colour multiplies its texture,
  so textured parts are tinted with it; an object dressed in a visual mesh gets its look's base colour shifted);
  the floor's too;
* ``noise``: Gaussian noise of a standard deviation in :data:`NOISE_SIGMA` (grey levels of 255) added to every
  image a policy renders, fresh each frame (:class:`NoisyCameras`);
* ``robot_state``: the robot starts off its spawn: the base moved by up to :data:`BASE_SHIFT_M` per axis and turned
  by up to :data:`BASE_TURN_DEG`, every arm joint by up to :data:`ARM_JOINT_RAD` and every torso joint by up to
  :data:`TORSO_JOINT_RAD` from its home (within the joint's range).

Only the scene changes (:func:`perturb_instance`: the instance's scene spec, before it is loaded) and, for
``noise``, what the policy's cameras return: the task, its target and its scoring geometry stay, so the
privileged scripted expert (which reads the simulator's state, not pixels) must keep its success under every axis
(``benchmarks/perturbations.py``): a drop of a policy then measures the policy, not an infeasible scene.

Example:
    >>> split_condition("light+camera"), split_condition("paraphrase+noise"), split_condition("direct")
    (('spatial', ('camera', 'light')), ('paraphrase', ('noise',)), ('direct', ()))
    >>> condition_name("spatial", ("light", "camera")), condition_name("paraphrase", ("noise",))
    ('camera+light', 'paraphrase+noise')
"""

from __future__ import annotations

import colorsys
import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bspatial.catalog.schema import CAMERAS
from bspatial.common.registry import unknown_name
from bspatial.sim.backend import CameraFrame, SimBackend
from bspatial.sim.robot import ARM_RANGE, HOME_ARM, HOME_TORSO, TORSO_RANGE
from bspatial.tasks.base import TaskInstance
from bspatial.world.spec import CameraOffset, LightSpec, ObjectSpec, RobotSpawn

AXES: tuple[str, ...] = ("camera", "light", "appearance", "noise", "robot_state")
"""The perturbation axes, in the order a condition's name lists them."""

HEAD_CAMERA_SHIFT_M = 0.03
WRIST_CAMERA_SHIFT_M = 0.01
CAMERA_TURN_DEG = 5.0
LIGHT_INTENSITY = (0.5, 1.5)
LIGHT_CHANNEL = (0.75, 1.0)
LIGHT_TILT_DEG = 30.0
APPEARANCE_HUE = 0.05
APPEARANCE_SCALE = (0.7, 1.3)
NOISE_SIGMA = (2.0, 8.0)
BASE_SHIFT_M = 0.05
BASE_TURN_DEG = 5.0
ARM_JOINT_RAD = 0.1
TORSO_JOINT_RAD = 0.05

RANGES: dict[str, str] = {
    "camera": f"head camera 0-{HEAD_CAMERA_SHIFT_M * 100:g} cm forward and +-{HEAD_CAMERA_SHIFT_M * 100:g} cm "
              f"sideways and up, wrist cameras +-{WRIST_CAMERA_SHIFT_M * 100:g} cm per "
              f"axis; each turned +-{CAMERA_TURN_DEG:g} deg about each of its axes",
    "light": f"intensity x{LIGHT_INTENSITY[0]:g}-{LIGHT_INTENSITY[1]:g}; colour: channel factors "
             f"{LIGHT_CHANNEL[0]:g}-{LIGHT_CHANNEL[1]:g} (largest 1); direction tilted up to {LIGHT_TILT_DEG:g} deg",
    "appearance": f"every object's and the floor's colour: hue +-{APPEARANCE_HUE * 360:g} deg, saturation and value "
                  f"x{APPEARANCE_SCALE[0]:g}-{APPEARANCE_SCALE[1]:g}",
    "noise": f"Gaussian pixel noise, sigma {NOISE_SIGMA[0]:g}-{NOISE_SIGMA[1]:g} grey levels, fresh each frame",
    "robot_state": f"base +-{BASE_SHIFT_M * 100:g} cm per axis and +-{BASE_TURN_DEG:g} deg; arm joints "
                   f"+-{ARM_JOINT_RAD:g} rad, torso joints +-{TORSO_JOINT_RAD:g} rad from home",
}
"""Each axis's range, as the README and the result tables state it."""

_STREAM = 0x5EED_A7E5
"""Mixed into the episode's seed so the perturbation draws are a stream of their own (the policy's and the
references' draws from :func:`bspatial.evaluation.rollout.plan.episode_rng` stay as they were)."""


def split_condition(condition: str) -> tuple[str, tuple[str, ...]]:
    """``(language condition, axes)`` of a rollout condition (module docstring), axes in :data:`AXES` order.

    Raises:
        ValueError: an unknown part, a repeated one, or two language conditions (naming them).
    """
    from bspatial.tasks.conditions import CONDITIONS

    parts = [p.strip() for p in str(condition).split("+")]
    language = [p for p in parts if p in CONDITIONS]
    axes = [p for p in parts if p in AXES]
    for part in parts:
        if part not in CONDITIONS and part not in AXES:
            raise unknown_name("condition", part, (*CONDITIONS, *AXES))
    if len(set(parts)) != len(parts):
        raise ValueError(f"condition {condition!r} names a part twice")
    if len(language) > 1:
        raise ValueError(f"condition {condition!r} combines language conditions {language}; at most one")
    return (language[0] if language else "spatial"), tuple(a for a in AXES if a in axes)


def axes_only(perturbation: str | None) -> tuple[tuple[str, ...], str]:
    """``(axes, condition name)`` of a perturbation given without a language condition (the gymnasium env's,
    lerobot-eval's and vla-eval's ``perturbation``); None or "" = ``((), "spatial")``.

    Raises:
        ValueError: an unknown axis, or a language condition (those run through ``bspatial rollout --condition``).
    """
    if perturbation is None or not str(perturbation).strip():
        return (), "spatial"
    try:
        language, axes = split_condition(perturbation)
    except ValueError as error:
        raise ValueError(f"perturbation: {error}") from None
    if language != "spatial" or not axes:
        raise ValueError(f"perturbation must be axes from {', '.join(AXES)} joined by '+', got {perturbation!r} "
                         "(language conditions run through bspatial rollout --condition)")
    return axes, condition_name("spatial", axes)


def condition_name(language: str, axes: tuple[str, ...]) -> str:
    """The canonical name of a condition: the language condition (left out when ``spatial`` and axes follow), then
    the axes in :data:`AXES` order, joined by ``+``."""
    ordered = [a for a in AXES if a in axes]
    return "+".join(([] if language == "spatial" and ordered else [language]) + ordered)


def perturbation_rng(run_seed: int, scene_seed: int | None) -> np.random.Generator:
    """The episode's perturbation generator (from the run's ``--seed`` and the episode's scene seed)."""
    return np.random.default_rng([int(run_seed), int(scene_seed or 0), _STREAM])


@dataclass(frozen=True)
class Perturbation:
    """The concrete draws of one episode's axes (what its result record keeps under ``perturbation``)."""

    axes: tuple[str, ...]
    camera_offsets: tuple[CameraOffset, ...] = ()
    light: dict[str, Any] = field(default_factory=dict)
    appearance_seed: int | None = None
    noise_sigma: float = 0.0
    noise_seed: int | None = None
    robot: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Plain values for the record (the draws, rounded)."""
        out: dict[str, Any] = {"axes": list(self.axes)}
        if "camera" in self.axes:
            out["camera"] = {o.camera: {"position_cm": [round(v * 100, 2) for v in o.position],
                                        "rotation_deg": [round(math.degrees(v), 2) for v in o.rotation]}
                             for o in self.camera_offsets}
        if "light" in self.axes:
            out["light"] = {k: (round(v, 3) if isinstance(v, float) else [round(x, 3) for x in v])
                            for k, v in self.light.items()}
        if "appearance" in self.axes:
            out["appearance_seed"] = self.appearance_seed
        if "noise" in self.axes:
            out["noise_sigma"] = round(self.noise_sigma, 2)
        if "robot_state" in self.axes:
            out["robot_state"] = {k: (round(v, 4) if isinstance(v, float) else [round(x, 4) for x in v])
                                  for k, v in self.robot.items()}
        return out


def _uniform(rng: np.random.Generator, bound: float, n: int) -> tuple[float, ...]:
    return tuple(float(v) for v in rng.uniform(-bound, bound, n))


def draw_perturbation(axes: tuple[str, ...], rng: np.random.Generator) -> Perturbation:
    """One episode's draws for ``axes``: every axis draws in :data:`AXES` order, used or not, so an axis's values
    are the same whichever others are combined with it."""
    turn = math.radians(CAMERA_TURN_DEG)
    cameras = []
    for cam in CAMERAS:
        shift = _uniform(rng, HEAD_CAMERA_SHIFT_M if cam == "head" else WRIST_CAMERA_SHIFT_M, 3)
        if cam == "head":   # forward only along the head's x: 1 cm behind its mounting the camera is inside the head
            shift = (abs(shift[0]), *shift[1:])
        cameras.append(CameraOffset(cam, shift, _uniform(rng, turn, 3)))
    cameras = tuple(cameras)
    channels = rng.uniform(*LIGHT_CHANNEL, 3)
    light = {"intensity": float(rng.uniform(*LIGHT_INTENSITY)),
             "colour": tuple(float(c) for c in channels / channels.max()),
             "tilt_deg": float(rng.uniform(0.0, LIGHT_TILT_DEG)), "azimuth_deg": float(rng.uniform(0.0, 360.0))}
    appearance_seed = int(rng.integers(2**31))
    noise_sigma, noise_seed = float(rng.uniform(*NOISE_SIGMA)), int(rng.integers(2**31))
    robot = {"base_shift_m": _uniform(rng, BASE_SHIFT_M, 2),
             "base_turn_deg": float(rng.uniform(-BASE_TURN_DEG, BASE_TURN_DEG)),
             "torso_rad": _uniform(rng, TORSO_JOINT_RAD, 4), "left_arm_rad": _uniform(rng, ARM_JOINT_RAD, 7),
             "right_arm_rad": _uniform(rng, ARM_JOINT_RAD, 7)}
    return Perturbation(
        axes=axes, camera_offsets=cameras if "camera" in axes else (),
        light=light if "light" in axes else {}, appearance_seed=appearance_seed if "appearance" in axes else None,
        noise_sigma=noise_sigma if "noise" in axes else 0.0, noise_seed=noise_seed if "noise" in axes else None,
        robot=robot if "robot_state" in axes else {})


# ---- the scene ---------------------------------------------------------------------------------


def _tilted(direction: tuple[float, float, float], tilt_deg: float, azimuth_deg: float) -> tuple[float, ...]:
    """``direction`` turned by ``tilt_deg`` towards the horizontal azimuth ``azimuth_deg``."""
    d = np.asarray(direction, dtype=float)
    d /= np.linalg.norm(d)
    towards = np.array([math.cos(math.radians(azimuth_deg)), math.sin(math.radians(azimuth_deg)), 0.0])
    axis = np.cross(d, towards)
    if np.linalg.norm(axis) < 1e-9:
        return tuple(d)
    axis /= np.linalg.norm(axis)
    t = math.radians(tilt_deg)   # Rodrigues: d rotated about axis by t
    turned = d * math.cos(t) + np.cross(axis, d) * math.sin(t) + axis * (axis @ d) * (1 - math.cos(t))
    return tuple(float(v) for v in turned)


def _lights(lights: tuple[LightSpec, ...], draw: dict[str, Any]) -> tuple[LightSpec, ...]:
    return tuple(dataclasses.replace(light, diffuse=light.diffuse * draw["intensity"], colour=draw["colour"],
                                     direction=_tilted(light.direction, draw["tilt_deg"], draw["azimuth_deg"]))
                 for light in lights)


def _shift_colour(rgb, hue: float, saturation: float, value: float) -> tuple[float, float, float]:
    h, s, v = colorsys.rgb_to_hsv(*(float(c) for c in rgb[:3]))
    r, g, b = colorsys.hsv_to_rgb((h + hue) % 1.0, min(1.0, s * saturation), min(1.0, v * value))
    return float(r), float(g), float(b)


def _colour_draw(rng: np.random.Generator) -> tuple[float, float, float]:
    return (float(rng.uniform(-APPEARANCE_HUE, APPEARANCE_HUE)), float(rng.uniform(*APPEARANCE_SCALE)),
            float(rng.uniform(*APPEARANCE_SCALE)))


def _recoloured(obj: ObjectSpec, draw: tuple[float, float, float]) -> ObjectSpec:
    if obj.look is not None:   # a dressed object is drawn from its look: shift its base colour, keep its parts
        return dataclasses.replace(obj, look=dataclasses.replace(obj.look, rgb=_shift_colour(obj.look.rgb, *draw)))
    parts = tuple(dataclasses.replace(p, rgba=(*_shift_colour(p.rgba, *draw), p.rgba[3])) for p in obj.parts)
    return dataclasses.replace(obj, parts=parts)


def _spawn(robot: RobotSpawn, draw: dict[str, Any]) -> RobotSpawn:
    def joints(current, home, deltas, ranges):
        base = home if current is None else current
        return tuple(float(np.clip(q + d, lo, hi)) for q, d, (lo, hi) in zip(base, deltas, ranges))

    (dx, dy), yaw = draw["base_shift_m"], robot.yaw + math.radians(draw["base_turn_deg"])
    return dataclasses.replace(robot, x=robot.x + dx, y=robot.y + dy, yaw=yaw,
                               torso=joints(robot.torso, HOME_TORSO, draw["torso_rad"], TORSO_RANGE),
                               left_arm=joints(robot.left_arm, HOME_ARM, draw["left_arm_rad"], ARM_RANGE),
                               right_arm=joints(robot.right_arm, HOME_ARM, draw["right_arm_rad"], ARM_RANGE))


def perturb_instance(instance: TaskInstance, perturbation: Perturbation) -> TaskInstance:
    """``instance`` with its scene perturbed (cameras, lights, colours, the robot's start); task, target and
    scoring geometry unchanged. ``noise`` changes no scene (:class:`NoisyCameras`)."""
    scene = instance.scene
    if "light" in perturbation.axes:
        scene = dataclasses.replace(scene, lights=_lights(scene.lights, perturbation.light))
    if "appearance" in perturbation.axes:
        rng = np.random.default_rng(perturbation.appearance_seed)
        objects = tuple(_recoloured(obj, _colour_draw(rng)) for obj in scene.objects)
        floor = (*_shift_colour(scene.floor_rgba, *_colour_draw(rng)), scene.floor_rgba[3])
        scene = dataclasses.replace(scene, objects=objects, floor_rgba=floor)
    if scene.robot is not None and ("camera" in perturbation.axes or "robot_state" in perturbation.axes):
        robot = scene.robot
        if "robot_state" in perturbation.axes:
            robot = _spawn(robot, perturbation.robot)
        if "camera" in perturbation.axes:
            robot = dataclasses.replace(robot, camera_offsets=perturbation.camera_offsets)
        scene = dataclasses.replace(scene, robot=robot)
    return instance if scene is instance.scene else dataclasses.replace(instance, scene=scene)


# ---- the cameras -------------------------------------------------------------------------------


class NoisyCameras:
    """``backend`` as a policy sees it under the ``noise`` axis: every RGB frame it renders gets Gaussian noise
    (``sigma`` grey levels, from the episode's own generator), everything else is the backend's."""

    def __init__(self, backend: SimBackend, sigma: float, seed: int) -> None:
        self._backend, self.sigma, self.rng = backend, float(sigma), np.random.default_rng(seed)

    def render(self, camera: str, **kwargs) -> CameraFrame:
        frame = self._backend.render(camera, **kwargs)
        noisy = frame.rgb.astype(np.float32) + self.rng.normal(0.0, self.sigma, frame.rgb.shape).astype(np.float32)
        return dataclasses.replace(frame, rgb=np.clip(np.rint(noisy), 0, 255).astype(np.uint8))

    def __getattr__(self, name: str):
        return getattr(self._backend, name)


def episode_perturbation(axes: tuple[str, ...], run_seed: int, scene_seed: int | None) -> Perturbation | None:
    """The episode's draws for ``axes`` (None without axes): what every path (``bspatial rollout``, the gymnasium
    env, lerobot-eval, vla-eval) loads the episode with."""
    return draw_perturbation(axes, perturbation_rng(run_seed, scene_seed)) if axes else None


def seen_by_the_policy(backend: SimBackend, perturbation: Perturbation | None):
    """What a policy renders from: ``backend`` under no ``noise`` axis, else its :class:`NoisyCameras` (the
    episode's own noise generator); the simulator, the trace and the scoring keep ``backend`` itself."""
    if perturbation is None or not perturbation.noise_sigma:
        return backend
    return NoisyCameras(backend, perturbation.noise_sigma, perturbation.noise_seed)


__all__ = ["AXES", "RANGES", "NoisyCameras", "Perturbation", "axes_only", "condition_name", "draw_perturbation",
           "episode_perturbation", "perturb_instance", "perturbation_rng", "seen_by_the_policy", "split_condition"]
