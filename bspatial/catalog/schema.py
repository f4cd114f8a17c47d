"""The data contract every layer shares: action and state layouts, cameras, rates, image sizes, LeRobot keys.

One definition each (DESIGN §4). The remote-code files of ``modeling/`` (which may import only torch,
transformers, numpy, PIL and each other) keep their own copies; ``tests/catalog/test_schema.py`` pins
them equal to these.

Example:
    >>> ACTION_DIM, GRIPPER_DIMS, STATE_DIM
    (23, (14, 22), 84)
    >>> image_key("head")
    'observation.images.rgb.head'
"""

from __future__ import annotations

# ----------------------------------------------------------------------------- robot action (R1Pro)

ACTION_DIM = 23
"""R1Pro action layout (DESIGN §4, BEHAVIOR's R1Pro): see :data:`ACTION_SLICES`."""
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
