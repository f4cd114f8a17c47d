"""The data contract every layer shares: action and state layouts, cameras, rates, image sizes, LeRobot keys.

One definition each. The remote-code files of ``modeling/`` (which may import only torch,
transformers, numpy, PIL and each other) keep their own copies; ``tests/catalog/test_schema.py`` pins
them equal to these.

Example:
    >>> ACTION_DIM, GRIPPER_DIMS, STATE_DIM
    (23, (14, 22), 84)
    >>> image_key("head")
    'observation.images.rgb.head'
    >>> len(STATE_NAMES), STATE_NAMES[PROPRIO_SLICES["base_velocity"]], ACTION_NAMES[GRIPPER_DIMS[0]]
    (84, ('base_vx', 'base_vy', 'base_wz'), 'left_gripper')
"""

from __future__ import annotations

# ----------------------------------------------------------------------------- robot action (R1Pro)

ACTION_DIM = 23
"""R1Pro action layout (BEHAVIOR's R1Pro): see :data:`ACTION_SLICES`."""
ACTION_SLICES: dict[str, slice] = {
    "base": slice(0, 3),          # vx, vy (robot frame, m/s), wz (rad/s)
    "torso": slice(3, 7),         # 4 absolute joint positions (rad)
    "left_arm": slice(7, 14),     # 7 absolute joint positions (rad)
    "left_gripper": slice(14, 15),   # normalised: +1 fully open, -1 closed
    "right_arm": slice(15, 22),
    "right_gripper": slice(22, 23),
}
ARMS: tuple[str, ...] = ("left", "right")
GRIPPER_DIMS: tuple[int, ...] = tuple(ACTION_SLICES[f"{arm}_gripper"].start for arm in ARMS)
"""Left / right gripper dims of the action."""
ACTION_NAMES: tuple[str, ...] = (
    "base_vx", "base_vy", "base_wz",
    *(f"torso_joint_{i}" for i in range(1, 5)),
    *(f"left_arm_joint_{i}" for i in range(1, 8)), "left_gripper",
    *(f"right_arm_joint_{i}" for i in range(1, 8)), "right_gripper",
)
"""Per-dimension names of the action (LeRobot ``info.json`` ``names``), in :data:`ACTION_SLICES` order. Joints
are numbered from 1 like the simulator's (``robot/left_arm_1`` ...) and BEHAVIOR's R1Pro joints."""

# ----------------------------------------------------------------------------- robot state (observation.state)

PROPRIO_LAYOUT: tuple[tuple[str, int], ...] = (
    ("base_pose", 3), ("base_yaw_cos_sin", 2), ("base_velocity", 3),
    ("torso_qpos", 4), ("torso_qvel", 4),
    ("left_arm_qpos", 7), ("left_arm_qpos_sin", 7), ("left_arm_qpos_cos", 7), ("left_arm_qvel", 7),
    ("right_arm_qpos", 7), ("right_arm_qpos_sin", 7), ("right_arm_qpos_cos", 7), ("right_arm_qvel", 7),
    ("left_gripper", 1), ("right_gripper", 1),
    ("left_eef_pos", 3), ("right_eef_pos", 3),
    ("left_grasp", 1), ("right_grasp", 1),
    ("gripper_width", 2),
)
"""The proprioceptive state every backend reports (``RobotState.proprio``, LeRobot ``observation.state``)."""


def _slices(layout: tuple[tuple[str, int], ...]) -> dict[str, slice]:
    out, start = {}, 0
    for name, size in layout:
        out[name] = slice(start, start + size)
        start += size
    return out


PROPRIO_SLICES: dict[str, slice] = _slices(PROPRIO_LAYOUT)
STATE_DIM = sum(size for _, size in PROPRIO_LAYOUT)


def _joints(prefix: str, n: int, suffix: str) -> tuple[str, ...]:
    return tuple(f"{prefix}_joint_{i}_{suffix}" for i in range(1, n + 1))


_STATE_GROUP_NAMES: dict[str, tuple[str, ...]] = {
    "base_pose": ("base_x", "base_y", "base_yaw"),
    "base_yaw_cos_sin": ("base_yaw_cos", "base_yaw_sin"),
    "base_velocity": ("base_vx", "base_vy", "base_wz"),
    "torso_qpos": _joints("torso", 4, "pos"), "torso_qvel": _joints("torso", 4, "vel"),
    **{f"{arm}_arm_{part}": _joints(f"{arm}_arm", 7, suffix) for arm in ARMS
       for part, suffix in (("qpos", "pos"), ("qpos_sin", "pos_sin"), ("qpos_cos", "pos_cos"), ("qvel", "vel"))},
    "left_gripper": ("left_gripper",), "right_gripper": ("right_gripper",),
    "left_eef_pos": ("left_eef_x", "left_eef_y", "left_eef_z"),
    "right_eef_pos": ("right_eef_x", "right_eef_y", "right_eef_z"),
    "left_grasp": ("left_grasp",), "right_grasp": ("right_grasp",),
    "gripper_width": ("left_gripper_width", "right_gripper_width"),
}
STATE_NAMES: tuple[str, ...] = tuple(name for group, _ in PROPRIO_LAYOUT for name in _STATE_GROUP_NAMES[group])
"""Per-dimension names of ``observation.state`` (LeRobot ``info.json`` ``names``), in :data:`PROPRIO_LAYOUT`
order: a group's dims are named after it (``left_arm_qpos`` -> ``left_arm_joint_1_pos`` ...)."""

# ----------------------------------------------------------------------------- cameras, rates, sizes

CAMERAS: tuple[str, ...] = ("head", "left_wrist", "right_wrist")
"""The robot's cameras (R1Pro: a head camera and one camera on each wrist)."""
HEAD_CAMERA = "head"
CONTROL_HZ = 30
"""Control rate: one action per 1/30 s (BEHAVIOR's 30 Hz; the LeRobot datasets' fps)."""
CHUNK_SIZE = 32
"""Actions per predicted chunk (Section 4.2, Appendix 16.3: 32-step action chunks)."""
POLICY_IMAGE_SIZE = 224
"""Policy images are 224 x 224 (Appendix 13.3)."""
CONTEXT_FRAMES = 12
"""Navigation scene-context frames: tour frames shown before the current view (evenly subsampled, in traversal
order), the same number in task-grounded navigation VQA items and in the navigation policy's prompt."""
CONSTRUCTION_FRAME_SIZE = 720
"""VQA / IR frames are 720 x 720 (Appendix 14: "approximately 20 pixels for a 720 x 720 image")."""

# ----------------------------------------------------------------------------- LeRobot feature keys (BEHAVIOR's)

CAMERA_KEY_PREFIX = "observation.images.rgb."
STATE_KEY = "observation.state"
ACTION_KEY = "action"
ACTION_IS_PAD_KEY = "action_is_pad"
TASK_KEY = "task"
IR_TARGET_KEY = "observation.ir_target"


def image_key(camera: str) -> str:
    """The LeRobot feature key of a robot camera's video."""
    return f"{CAMERA_KEY_PREFIX}{camera}"
