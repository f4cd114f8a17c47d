"""The simulator interface every backend implements, and the typed values it returns.

A backend owns one world at a time: ``load(scene)`` builds it from a :class:`~bspatial.world.spec.SceneSpec`,
``reset()`` puts it back in the spawn state, ``step(action)`` applies one 23-dim action for one control
period, and the query methods read privileged state for scene generators, experts and traces. The
MuJoCo backend is the default (:mod:`bspatial.sim.mujoco_backend`); an OmniGibson backend plugs in
behind the same protocol.

Camera conventions, shared by every backend:

* ``K`` is the pinhole intrinsics: fx = fy = (H/2) / tan(fovy/2), cx = W/2, cy = H/2; pixel (u, v) with
  u along columns, v along rows, pixel centres at integer + 0.5.
* ``T_world_cam`` maps camera coordinates to world coordinates in the OpenCV convention
  (x right, y down, z forward): ``p_world = T[:3, :3] @ p_cam + T[:3, 3]``.
* ``depth`` is metric z-depth along the camera's z axis (not ray length); 0 where nothing was hit.
* ``segmentation`` holds instance ids; ``id_to_name`` maps each id present to a scene object name,
  a robot part (``"robot"``) or ``"floor"``; -1 is background (nothing rendered).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from bspatial.catalog.schema import ACTION_DIM
from bspatial.scoring.geometry import project_points
from bspatial.scoring.ir_target import box_corners
from bspatial.world.spec import SceneSpec

StepStatus = Literal["ok", "sim_error"]
ROBOT_LINKS: tuple[str, ...] = ("base", "torso_4", "left_hand", "right_hand")
"""Robot links every backend's :meth:`SimBackend.robot_link_pose` accepts (R1Pro: base, top torso link, hands)."""


@dataclass(frozen=True, eq=False)
class CameraFrame:
    """One camera's observation.

    Attributes:
        camera: camera name.
        rgb: (H, W, 3) uint8.
        depth: (H, W) float32 metric z-depth (m); 0 where nothing was hit. None in an ``rgb_only`` render.
        segmentation: (H, W) int32 instance ids, -1 for background. None in an ``rgb_only`` render.
        id_to_name: instance id -> object name for every id the backend assigns (not only visible ones).
        K: (3, 3) float64 intrinsics.
        T_world_cam: (4, 4) float64 camera-to-world transform, OpenCV axes.
    """

    camera: str
    rgb: np.ndarray
    depth: np.ndarray | None
    segmentation: np.ndarray | None
    id_to_name: dict[int, str]
    K: np.ndarray
    T_world_cam: np.ndarray

    @property
    def height(self) -> int:
        return int(self.rgb.shape[0])

    @property
    def width(self) -> int:
        return int(self.rgb.shape[1])

    def mask(self, name: str) -> np.ndarray:
        """Boolean (H, W) mask of the instance called ``name``."""
        if self.segmentation is None:
            raise ValueError(f"camera {self.camera!r} was rendered rgb_only: it has no segmentation to mask {name!r}")
        ids = [i for i, n in self.id_to_name.items() if n == name]
        if not ids:
            raise ValueError(f"name must be an instance of this frame, one of {sorted(set(self.id_to_name.values()))}, got {name!r}")
        return np.isin(self.segmentation, ids)

    def project(self, points_world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Project (N, 3) world points to pixel (u, v); returns (uv (N, 2), z_cam (N,))
        (:func:`bspatial.scoring.geometry.project_points`)."""
        return project_points(points_world, self.K, self.T_world_cam)

    def unproject(self) -> np.ndarray:
        """World points (H, W, 3) of every pixel centre from depth (NaN where depth is 0)."""
        h, w = self.depth.shape
        u, v = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
        z = np.where(self.depth > 0, self.depth, np.nan).astype(float)
        x = (u - self.K[0, 2]) / self.K[0, 0] * z
        y = (v - self.K[1, 2]) / self.K[1, 1] * z
        cam = np.stack([x, y, z], axis=-1)
        return cam @ self.T_world_cam[:3, :3].T + self.T_world_cam[:3, 3]


@dataclass(frozen=True)
class Contact:
    """One contact between two bodies, named as in the scene (robot links are ``"robot/<link>"``).

    ``normal`` points from ``body_a`` to ``body_b``; ``normal_force`` (N) is >= 0 for a pushing contact.
    """

    body_a: str
    body_b: str
    position: tuple[float, float, float]
    normal: tuple[float, float, float]
    normal_force: float


@dataclass(frozen=True)
class ObjectPose:
    """World pose of an object (or robot link) frame: position (m), quaternion (w, x, y, z) and the same
    orientation as a 3x3 matrix whose columns are the frame's axes in world coordinates."""

    position: np.ndarray
    quat: np.ndarray
    rotation: np.ndarray


@dataclass(frozen=True)
class IKResult:
    """Joint positions for the solved joints (torso then arm with ``use_torso``, else arm), and the residual
    errors reached."""

    qpos: np.ndarray
    pos_error: float
    rot_error: float
    iterations: int
    converged: bool


@dataclass(frozen=True)
class BoundingBox:
    """A 3D box: the oriented box of the object's geometry and its world axis-aligned hull.

    Attributes:
        center: (3,) world centre of the oriented box.
        half_extents: (3,) half sizes along the box axes.
        rotation: (3, 3) box axes in world coordinates (columns).
        aabb_min, aabb_max: (3,) world axis-aligned bounds enclosing the oriented box.
    """

    center: np.ndarray
    half_extents: np.ndarray
    rotation: np.ndarray
    aabb_min: np.ndarray
    aabb_max: np.ndarray

    def corners(self) -> np.ndarray:
        """The 8 world corners (8, 3) of the oriented box (what the oracle IR target projects)."""
        return box_corners(self.center, self.half_extents, self.rotation)

    @property
    def extents(self) -> np.ndarray:
        """Full sizes along the box axes; ``max(extents)`` is the object's longest dimension."""
        return 2 * self.half_extents


@dataclass(frozen=True)
class RobotState:
    """Privileged robot state (world frame) plus the proprioceptive vector policies see.

    Attributes:
        base_pose: (3,) x, y, yaw.
        base_velocity: (3,) vx, vy in the robot frame, wz.
        torso_qpos: (4,); left_arm_qpos / right_arm_qpos: (7,).
        gripper: {"left": g, "right": g} normalised openings in [-1, 1] (+1 open).
        eef_pos / eef_quat: {"left": (3,), "right": (3,)/(4,)} world end-effector site poses.
        grasped: {"left": name or None, "right": ...} objects held by assisted grasp.
        proprio: the BEHAVIOR-style proprioceptive vector (see :mod:`bspatial.sim.robot`).
    """

    base_pose: np.ndarray
    base_velocity: np.ndarray
    torso_qpos: np.ndarray
    left_arm_qpos: np.ndarray
    right_arm_qpos: np.ndarray
    gripper: dict[str, float]
    eef_pos: dict[str, np.ndarray]
    eef_quat: dict[str, np.ndarray]
    grasped: dict[str, str | None]
    proprio: np.ndarray


@dataclass(frozen=True)
class StepResult:
    """What one control step reports. ``status`` is "sim_error" once physics went unstable (NaN or
    exploding velocities); the world is then frozen until ``reset`` and ``message`` says why."""

    status: StepStatus
    time: float
    message: str = ""


def check_action(action) -> np.ndarray:
    """Validate a 23-dim action and return it as float64; NaN is allowed (it yields sim_error)."""
    try:
        arr = np.asarray(action, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"action must be {ACTION_DIM} numbers, got {action!r}") from error
    if arr.shape != (ACTION_DIM,):
        raise ValueError(f"action must have shape ({ACTION_DIM},), got shape {arr.shape}")
    return arr


@runtime_checkable
class SimBackend(Protocol):
    """The world interface shared by the MuJoCo default and an OmniGibson backend."""

    cameras: tuple[str, ...]
    """Names accepted by :meth:`render` (robot cameras first, then scene cameras)."""

    def load(self, scene: SceneSpec) -> None:
        """Build the world from ``scene`` (replacing any previous one) and reset it."""

    def reset(self) -> None:
        """Put the loaded world back in its spawn state (status back to "ok")."""

    def step(self, action: np.ndarray) -> StepResult:
        """Apply one 23-dim action (:data:`ACTION_SLICES`) for one control period."""

    def render(self, camera: str, *, width: int | None = None, height: int | None = None,
               rgb_only: bool = False) -> CameraFrame:
        """RGB, depth, instance segmentation, K and T_world_cam of one camera; ``rgb_only``: depth and segmentation
        None (a backend may then skip their cost)."""

    def camera_geometry(self, camera: str, *, width: int | None = None, height: int | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
        """(K, T_world_cam) that :meth:`render` would report for ``camera`` now, without rendering: what decides
        whether an object can be in view before a frame is paid for."""

    def contacts(self) -> list[Contact]:
        """Current contacts between bodies, with normal force."""

    def object_pose(self, name: str) -> ObjectPose:
        """World pose of a scene object."""

    def object_bbox(self, name: str) -> BoundingBox:
        """Oriented and axis-aligned 3D bounding box of a scene object."""

    def robot_state(self) -> RobotState:
        """Robot base, joints, grippers, end-effectors and proprioception."""

    def hold_action(self) -> np.ndarray:
        """The 23-dim action that keeps the robot still (current joints, current gripper openings)."""

    def object_names(self) -> tuple[str, ...]:
        """The loaded scene's objects, in the scene's order."""

    def movable_objects(self) -> tuple[str, ...]:
        """The scene's free (non-static) objects, in the scene's order."""

    def robot_link_pose(self, link: str) -> ObjectPose:
        """World pose of a robot link: at least :data:`ROBOT_LINKS`; an unknown name raises ValueError listing
        the links."""

    def set_base_pose(self, x: float, y: float, yaw: float) -> None:
        """Teleport the base kinematically (no physics step; joints and velocities unchanged); cameras and
        queries see the new pose at once."""

    def solve_ik(self, side: str, target_pos, target_quat=None, *, use_torso: bool = False,
                 seed_action: np.ndarray | None = None, max_iterations: int = 200) -> IKResult:
        """Joints that put ``side``'s end-effector at ``target_pos`` (and ``target_quat``), from the current
        state, or from the torso / arm targets of ``seed_action`` when given. Does not move the robot."""

    def close(self) -> None:
        """Free renderers and simulator resources; safe to call twice."""
