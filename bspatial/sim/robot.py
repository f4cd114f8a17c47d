"""The R1Pro-like dual-arm holonomic mobile manipulator: MjSpec builder, action mapping, state, IK.

Kinematic layout (all names prefixed ``robot/``; every length in metres):

* ``base``: x / y slide joints and a yaw hinge in world axes, velocity-controlled (a holonomic
  base; the action's vx, vy are in the robot frame and rotated to world here). Top at z = 0.30.
* ``torso_1..3`` pitch hinges (axis y) and ``torso_4`` yaw (axis z); the chest sits at z ~1.0 when
  the torso is straight, the shoulders at z = 1.25, the head camera at z ~1.50 looking down 35 deg.
* Each arm: shoulder pitch (y), shoulder roll (x), upper-arm yaw (z), elbow pitch (y, 0.30 below),
  forearm yaw (z), wrist pitch (y, 0.28 below), wrist roll (z). At zero the arm hangs straight down.
* Each gripper: two fingers sliding symmetrically, 0 (closed) to 0.05 m each (10 cm opening);
  the normalised command maps -1 -> closed, +1 -> fully open (OmniGibson's convention for R1Pro).
  The end-effector site ``robot/<side>_eef`` sits between the finger pads; the hand approaches along
  the site's -z axis and the fingers close along its y axis (a top-down grasp has site z pointing up).

Every robot body has gravity compensation, so joint-position control holds poses without sag.
Robot geoms never collide with each other (contype 2 / conaffinity 1) but do with the scene.

Looks: the collision geoms above are a stick figure. :func:`add_r1pro_visuals` dresses it in
R1Pro proportions (a wheeled base with three drive wheels and a bumper, a white-shelled torso column
with dark joint housings, a chest, a head with a stereo face plate, two 7-DoF arms with shoulder / elbow
/ wrist housings and white link shells, parallel grippers with a palm and finger plates). Every one of
those geoms is *visual only*: contype = conaffinity = 0 and in :data:`VISUAL_GROUP`, and every body keeps
its explicit inertia, so contacts, masses and therefore physics, experts and step budgets are unchanged
(``tests/sim/test_robot_visuals.py`` replays a motion with and without them and compares trajectories).

Proprioceptive state (``robot_state().proprio``, 84 floats, float32), index by index
(:data:`bspatial.catalog.schema.PROPRIO_SLICES` is the machine-readable form; a test keeps the two in sync):

======  ====================  ==============================================================
index   name                  meaning
======  ====================  ==============================================================
0:3     base_pose             x, y (m, world), yaw (rad)
3:5     base_yaw_cos_sin      cos(yaw), sin(yaw)
5:8     base_velocity         vx, vy (m/s, robot frame), wz (rad/s)
8:12    torso_qpos            torso joints 1-4 (rad)
12:16   torso_qvel            torso joint velocities (rad/s)
16:23   left_arm_qpos         left arm joints 1-7 (rad)
23:30   left_arm_qpos_sin     sin of the above
30:37   left_arm_qpos_cos     cos of the above
37:44   left_arm_qvel         left arm joint velocities (rad/s)
44:51   right_arm_qpos        right arm joints 1-7 (rad)
51:58   right_arm_qpos_sin
58:65   right_arm_qpos_cos
65:72   right_arm_qvel
72:73   left_gripper          normalised opening in [-1, 1] (+1 open)
73:74   right_gripper
74:77   left_eef_pos          left end-effector position in the robot base frame (m)
77:80   right_eef_pos
80:81   left_grasp            1.0 while the left hand holds an object (assisted grasp), else 0.0
81:82   right_grasp
82:84   gripper_width         left, right finger opening (m)
======  ====================  ==============================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from bspatial.catalog.robot import BASE_CENTRE_HEIGHT_M, BASE_HALF_EXTENTS_M, BASE_TOP_M, HEAD_FOVY_DEG, HEAD_PITCH_DEG, \
    WRIST_FOVY_DEG
from bspatial.catalog.schema import ACTION_DIM, ACTION_SLICES, ARMS, PROPRIO_SLICES, STATE_DIM
from bspatial.sim.backend import IKResult

PREFIX = "robot/"
TORSO_JOINTS = tuple(f"{PREFIX}torso_{i}" for i in range(1, 5))
ARM_JOINTS = {side: tuple(f"{PREFIX}{side}_arm_{i}" for i in range(1, 8)) for side in ARMS}
FINGER_JOINTS = {side: (f"{PREFIX}{side}_finger_a", f"{PREFIX}{side}_finger_b") for side in ARMS}
BASE_JOINTS = (f"{PREFIX}base_x", f"{PREFIX}base_y", f"{PREFIX}base_yaw")

FINGER_TRAVEL = 0.05          # each finger, m: 10 cm max opening
BASE_MAX_SPEED = 1.0           # m/s, |vx|, |vy| clip
BASE_MAX_YAW_RATE = 1.5        # rad/s
BASE_KV = 20000.0              # velocity gain: stiff enough that arm and torso reactions barely move the base
ARM_KP, ARM_KV = 400.0, 40.0
TORSO_KP, TORSO_KV = 4000.0, 400.0
FINGER_KP, FINGER_KV = 300.0, 10.0
FINGER_FORCE = 60.0            # N per finger

TORSO_RANGE = ((-1.2, 1.2), (-1.2, 1.2), (-1.2, 1.2), (-2.8, 2.8))
ARM_RANGE = ((-3.0, 1.6), (-1.8, 1.8), (-2.9, 2.9), (-2.6, 0.1), (-2.9, 2.9), (-2.0, 2.0), (-2.9, 2.9))

HOME_TORSO = (0.0, 0.0, 0.0, 0.0)
# Upper arm forward-down, elbow bent, hand pointing down: the grippers hang ~0.45 m in front of the
# base centre at z ~0.95, above a countertop, in view of the head camera.
HOME_ARM = (-0.55, 0.0, 0.0, -1.35, 0.0, 1.9, 0.0)


def _quat_from_axes(x_axis, y_axis) -> np.ndarray:
    x = np.asarray(x_axis, float) / np.linalg.norm(x_axis)
    y = np.asarray(y_axis, float) / np.linalg.norm(y_axis)
    z = np.cross(x, y)
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.column_stack([x, y, z]).reshape(-1))
    return quat


def _body(parent, name: str, pos, mass: float, gravcomp: bool = True):
    body = parent.add_body(name=PREFIX + name, pos=list(pos))
    body.gravcomp = 1.0 if gravcomp else 0.0
    body.mass = mass
    body.inertia = [mass * 0.01] * 3
    body.explicitinertial = True
    return body


VISUAL_GROUP = 2
"""Geom group of the visual-only R1Pro shell (group 1 holds the collision geoms); both render by default."""
SHELL_RGBA = (0.93, 0.93, 0.94, 1.0)     # R1Pro's white shells
JOINT_RGBA = (0.16, 0.16, 0.18, 1.0)     # dark joint housings, bumper, grippers
TRIM_RGBA = (0.45, 0.47, 0.52, 1.0)


def _geom(body, kind, size, pos=(0, 0, 0), rgba=(0.85, 0.85, 0.88, 1.0), collide=True, fromto=None, quat=None):
    geom = body.add_geom(type=kind, size=list(size) + [0] * (3 - len(size)), rgba=list(rgba))
    if fromto is not None:
        geom.fromto = list(fromto)
    else:
        geom.pos = list(pos)
    if quat is not None:
        geom.quat = list(quat)
    geom.contype, geom.conaffinity = (2, 1) if collide else (0, 0)
    geom.group = 1
    return geom


def _visual(body, kind, size, pos=(0, 0, 0), rgba=SHELL_RGBA, fromto=None, quat=None):
    """A visual-only geom: no contacts (contype = conaffinity = 0), no mass (bodies have explicit inertia)."""
    geom = _geom(body, kind, size, pos, rgba, collide=False, fromto=fromto, quat=quat)
    geom.group = VISUAL_GROUP
    geom.density = 0.0
    return geom


_ALONG_Y = (math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0)   # turns a cylinder's z axis onto y


def _hinge(body, name, axis, rng, armature=0.05, damping=1.0):
    joint = body.add_joint(name=PREFIX + name, type=mujoco.mjtJoint.mjJNT_HINGE, axis=list(axis))
    joint.range = list(rng)
    joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
    joint.armature = armature
    joint.damping = [damping, 0, 0]  # MuJoCo 4: damping is a 3-vector
    return joint


def build_robot(spec: mujoco.MjSpec) -> None:
    """Add the robot (bodies, joints, actuators in action order, cameras, eef sites) to ``spec``.

    The base starts at the world origin facing +x; :meth:`RobotBinding.set_spawn` moves it.
    """
    G, B, D = mujoco.mjtGeom, mujoco.mjtGain, mujoco.mjtBias
    base = _body(spec.worldbody, "base", (0, 0, 0), 60.0, gravcomp=False)
    base.add_joint(name=BASE_JOINTS[0], type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[1, 0, 0], armature=1.0)
    base.add_joint(name=BASE_JOINTS[1], type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, 1, 0], armature=1.0)
    base.add_joint(name=BASE_JOINTS[2], type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1], armature=1.0)
    _geom(base, G.mjGEOM_BOX, BASE_HALF_EXTENTS_M, (0, 0, BASE_CENTRE_HEIGHT_M), rgba=(0.25, 0.25, 0.28, 1))

    parent, z = base, BASE_TOP_M
    lengths = (0.25, 0.25, 0.20)
    for i, length in enumerate(lengths):
        link = _body(parent, f"torso_{i + 1}", (0, 0, z), 4.0)
        _hinge(link, f"torso_{i + 1}", (0, 1, 0), TORSO_RANGE[i], armature=0.2, damping=5.0)
        _geom(link, G.mjGEOM_CAPSULE, (0.07,), fromto=(0, 0, 0.02, 0, 0, length - 0.02), rgba=(0.8, 0.8, 0.82, 1))
        parent, z = link, length
    chest = _body(parent, "torso_4", (0, 0, z), 6.0)
    _hinge(chest, "torso_4", (0, 0, 1), TORSO_RANGE[3], armature=0.2, damping=5.0)
    _geom(chest, G.mjGEOM_BOX, (0.10, 0.18, 0.15), (0, 0, 0.13))
    head = _body(chest, "head", (0.0, 0, 0.45), 1.0)
    _geom(head, G.mjGEOM_BOX, (0.06, 0.10, 0.05), rgba=(0.2, 0.2, 0.22, 1))
    _geom(head, G.mjGEOM_CAPSULE, (0.03,), fromto=(0, 0, -0.05, 0, 0, -0.17), rgba=(0.6, 0.6, 0.62, 1))
    pitch = math.radians(HEAD_PITCH_DEG)
    head.add_camera(name="head", pos=[0.07, 0, 0], fovy=HEAD_FOVY_DEG,
                    quat=list(_quat_from_axes((0, -1, 0), (math.sin(pitch), 0, math.cos(pitch)))))
    for sign, side in ((1, "left"), (-1, "right")):
        _build_arm(chest, side, (0, sign * 0.25, 0.25))

    _add_actuators(spec)
    add_r1pro_visuals(spec)


def _build_arm(chest, side: str, shoulder_pos) -> None:
    G = mujoco.mjtGeom
    axes = ((0, 1, 0), (1, 0, 0), (0, 0, 1), (0, 1, 0), (0, 0, 1), (0, 1, 0), (0, 0, 1))
    offsets = ((0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, -0.30), (0, 0, 0), (0, 0, -0.28), (0, 0, 0))
    parent = chest
    for i in range(7):
        pos = shoulder_pos if i == 0 else offsets[i]
        link = _body(parent, f"{side}_arm_link_{i + 1}", pos, 1.0)
        _hinge(link, f"{side}_arm_{i + 1}", axes[i], ARM_RANGE[i])
        if i == 2:
            _geom(link, G.mjGEOM_CAPSULE, (0.045,), fromto=(0, 0, 0, 0, 0, -0.27))
        elif i == 4:
            _geom(link, G.mjGEOM_CAPSULE, (0.04,), fromto=(0, 0, 0, 0, 0, -0.25))
        elif i == 0:
            _geom(link, G.mjGEOM_SPHERE, (0.06,), rgba=(0.3, 0.3, 0.33, 1))
        parent = link
    hand = _body(parent, f"{side}_hand", (0, 0, 0), 0.5)
    _geom(hand, G.mjGEOM_BOX, (0.035, 0.06, 0.035), (0, 0, -0.035), rgba=(0.3, 0.3, 0.33, 1))
    hand.add_site(name=f"{PREFIX}{side}_eef", pos=[0, 0, -0.115], size=[0.01, 0, 0])
    hand.add_camera(name=f"{side}_wrist", pos=[0.07, 0, -0.03], fovy=WRIST_FOVY_DEG,
                    quat=list(_quat_from_axes((0, -1, 0), (1, 0, 0))))
    for suffix, sign in (("a", 1), ("b", -1)):
        finger = _body(hand, f"{side}_finger_{suffix}", (0, 0, -0.07), 0.1)
        joint = finger.add_joint(name=f"{PREFIX}{side}_finger_{suffix}", type=mujoco.mjtJoint.mjJNT_SLIDE,
                                 axis=[0, sign, 0], range=[0, FINGER_TRAVEL], armature=0.01)
        joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
        joint.damping = [2.0, 0, 0]
        geom = _geom(finger, G.mjGEOM_BOX, (0.015, 0.006, 0.035), (0, sign * 0.006, -0.035), rgba=(0.15, 0.15, 0.17, 1))
        geom.friction = [1.5, 0.01, 0.001]
        geom.name = f"{PREFIX}{side}_finger_{suffix}_pad"


def add_r1pro_visuals(spec: mujoco.MjSpec) -> None:
    """Dress the robot of ``spec`` (built by :func:`build_robot`) in R1Pro-like visual-only geoms.

    Sizes follow R1Pro's proportions on our kinematics: a 0.62 x 0.54 m base 0.32 m tall on three wheels,
    a torso column ~0.17 m wide, shoulders 0.5 m apart, arm links ~0.1 m thick, a palm ~0.15 m wide.
    Shells stay clear of the head camera (0.07 m in front of the head) and of the wrist cameras (0.07 m
    along the hand's x): the views see the arms and fingers, not the inside of a shell.
    """
    G = mujoco.mjtGeom
    body = {b.name.removeprefix(PREFIX): b for b in spec.bodies if b.name.startswith(PREFIX)}
    base = body["base"]
    _visual(base, G.mjGEOM_BOX, (0.31, 0.27, 0.03), (0, 0, 0.09), rgba=JOINT_RGBA)           # bumper band
    _visual(base, G.mjGEOM_BOX, (0.29, 0.245, 0.012), (0, 0, 0.305))                          # top deck
    _visual(base, G.mjGEOM_BOX, (0.012, 0.16, 0.03), (0.305, 0, 0.2), rgba=(0.05, 0.05, 0.07, 1))  # sensor strip
    for angle in (0.0, 2.094, 4.189):   # three steerable drive wheels in wells at the base's corners
        c, s_ = math.cos(angle), math.sin(angle)
        _visual(base, G.mjGEOM_CYLINDER, (0.075, 0.03), (0.21 * c, 0.19 * s_, 0.075), rgba=(0.08, 0.08, 0.08, 1),
                quat=_yaw_quat_along_y(angle))
        _visual(base, G.mjGEOM_CYLINDER, (0.035, 0.032), (0.21 * c, 0.19 * s_, 0.075), rgba=TRIM_RGBA,
                quat=_yaw_quat_along_y(angle))
    for i, length in enumerate((0.25, 0.25, 0.20)):        # torso column: joint housing + white link shell
        link = body[f"torso_{i + 1}"]
        _visual(link, G.mjGEOM_CYLINDER, (0.085, 0.09), (0, 0, 0), rgba=JOINT_RGBA, quat=_ALONG_Y)
        _visual(link, G.mjGEOM_BOX, (0.075, 0.085, length / 2 - 0.05), (0, 0, length / 2))
    chest = body["torso_4"]
    _visual(chest, G.mjGEOM_BOX, (0.11, 0.19, 0.14), (-0.01, 0, 0.14))                          # chest shell
    _visual(chest, G.mjGEOM_BOX, (0.005, 0.12, 0.06), (0.1, 0, 0.16), rgba=TRIM_RGBA)           # chest panel
    _visual(chest, G.mjGEOM_CYLINDER, (0.07, 0.02), (0, 0, 0.02), rgba=JOINT_RGBA)              # waist yaw ring
    head = body["head"]
    _visual(head, G.mjGEOM_BOX, (0.05, 0.115, 0.065), (-0.015, 0, 0.005))                       # head shell
    _visual(head, G.mjGEOM_BOX, (0.004, 0.1, 0.035), (0.062, 0, 0.0), rgba=(0.03, 0.03, 0.04, 1))  # face plate
    for y in (-0.06, 0.06):                                                                      # stereo lenses
        _visual(head, G.mjGEOM_CYLINDER, (0.014, 0.004), (0.066, y, 0.0), rgba=TRIM_RGBA,
                quat=(math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0))
    for side in ARMS:
        _arm_visuals(body, side)


def _yaw_quat_along_y(yaw: float) -> list[float]:
    """A cylinder turned onto the y axis, then yawed: a wheel rolling along heading ``yaw``."""
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, np.array([math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)]), np.array(_ALONG_Y))
    return out.tolist()


def _arm_visuals(body: dict, side: str) -> None:
    G = mujoco.mjtGeom
    link = lambda i: body[f"{side}_arm_link_{i}"]  # noqa: E731
    _visual(link(1), G.mjGEOM_CYLINDER, (0.07, 0.06), (0, 0, 0), rgba=JOINT_RGBA, quat=_ALONG_Y)    # shoulder
    _visual(link(2), G.mjGEOM_SPHERE, (0.066,), (0, 0, -0.03))
    _visual(link(3), G.mjGEOM_CAPSULE, (0.054,), fromto=(0, 0, -0.05, 0, 0, -0.24))                # upper arm
    _visual(link(4), G.mjGEOM_CYLINDER, (0.058, 0.05), (0, 0, 0), rgba=JOINT_RGBA, quat=_ALONG_Y)   # elbow
    _visual(link(5), G.mjGEOM_CAPSULE, (0.047,), fromto=(0, 0, -0.04, 0, 0, -0.21))                # forearm
    _visual(link(6), G.mjGEOM_CYLINDER, (0.046, 0.042), (0, 0, 0), rgba=JOINT_RGBA, quat=_ALONG_Y)  # wrist
    _visual(link(7), G.mjGEOM_CYLINDER, (0.042, 0.012), (0, 0, -0.004), rgba=TRIM_RGBA)           # flange
    hand = body[f"{side}_hand"]
    # Palm: wide along the finger axis (y), no deeper along x than the collision box, so the wrist camera
    # (0.07 m along x) looks past it.
    _visual(hand, G.mjGEOM_BOX, (0.034, 0.075, 0.026), (0, 0, -0.045), rgba=JOINT_RGBA)
    for suffix, sign in (("a", 1), ("b", -1)):
        finger = body[f"{side}_finger_{suffix}"]
        _visual(finger, G.mjGEOM_BOX, (0.017, 0.004, 0.028), (0, sign * 0.016, -0.03), rgba=TRIM_RGBA)
        _visual(finger, G.mjGEOM_BOX, (0.016, 0.008, 0.008), (0, sign * 0.008, -0.066), rgba=JOINT_RGBA)


def _add_actuators(spec: mujoco.MjSpec) -> None:
    """Actuators in action order (R1Pro layout); each gripper has two finger actuators fed the same command."""
    def position(joint, kp, kv, rng, force):
        act = spec.add_actuator(name=joint + "_act", target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_position(kp=kp, kv=kv)
        act.ctrlrange = list(rng)
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-force, force]
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE

    for joint in BASE_JOINTS:
        act = spec.add_actuator(name=joint + "_act", target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        # No force limit: implicitfast integrates the velocity gain implicitly only while the force is not
        # clamped; a clamped stiff gain on the light yaw axis oscillated (the base spun at 2.5 rad/s).
        act.set_to_velocity(kv=BASE_KV)
    for joint, rng in zip(TORSO_JOINTS, TORSO_RANGE):
        position(joint, TORSO_KP, TORSO_KV, rng, 2000.0)
    for side in ARMS:
        for joint, rng in zip(ARM_JOINTS[side], ARM_RANGE):
            position(joint, ARM_KP, ARM_KV, rng, 300.0)
        for joint in FINGER_JOINTS[side]:
            position(joint, FINGER_KP, FINGER_KV, (0, FINGER_TRAVEL), FINGER_FORCE)


# ----------------------------------------------------------------------------- compiled-model binding



def _ids(model, kind, names) -> np.ndarray:
    return np.array([mujoco.mj_name2id(model, kind, n) for n in names], dtype=int)


@dataclass
class RobotBinding:
    """Index tables of the robot inside one compiled model, and the per-step maths on them."""

    model: mujoco.MjModel

    def __post_init__(self) -> None:
        m, J = self.model, mujoco.mjtObj.mjOBJ_JOINT
        self.base_joints = _ids(m, J, BASE_JOINTS)
        self.torso_joints = _ids(m, J, TORSO_JOINTS)
        self.arm_joints = {s: _ids(m, J, ARM_JOINTS[s]) for s in ARMS}
        self.finger_joints = {s: _ids(m, J, FINGER_JOINTS[s]) for s in ARMS}
        if np.any(self.base_joints < 0):
            raise ValueError("model has no robot: robot joints not found")
        self.qpos = lambda ids: m.jnt_qposadr[ids]
        self.dof = lambda ids: m.jnt_dofadr[ids]
        act_names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(m.nu)]
        self.act = {name: i for i, name in enumerate(act_names) if name and name.startswith(PREFIX)}
        self.eef_site = {s: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f"{PREFIX}{s}_eef") for s in ARMS}
        self.hand_body = {s: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"{PREFIX}{s}_hand") for s in ARMS}
        self.finger_bodies = {s: {mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"{PREFIX}{s}_finger_{x}")
                                  for x in "ab"} for s in ARMS}
        self.base_body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, PREFIX + "base")
        root = m.body_rootid
        self.bodies = {b for b in range(m.nbody) if root[b] == self.base_body}
        # Per action index: actuator ids driven by it (the base ones are rotated before writing).
        self._arm_act = {s: [self.act[j + "_act"] for j in ARM_JOINTS[s]] for s in ARMS}
        self._torso_act = [self.act[j + "_act"] for j in TORSO_JOINTS]
        self._finger_act = {s: [self.act[j + "_act"] for j in FINGER_JOINTS[s]] for s in ARMS}
        self._base_act = [self.act[j + "_act"] for j in BASE_JOINTS]

    # -- action

    def apply_action(self, data: mujoco.MjData, action: np.ndarray) -> None:
        """Write ``data.ctrl`` from a validated 23-dim action (R1Pro layout)."""
        yaw = float(data.qpos[self.qpos(self.base_joints)[2]])
        vx, vy, wz = action[ACTION_SLICES["base"]]
        vx, vy = np.clip([vx, vy], -BASE_MAX_SPEED, BASE_MAX_SPEED)
        c, s = math.cos(yaw), math.sin(yaw)
        data.ctrl[self._base_act] = (c * vx - s * vy, s * vx + c * vy,
                                     np.clip(wz, -BASE_MAX_YAW_RATE, BASE_MAX_YAW_RATE))
        data.ctrl[self._torso_act] = action[ACTION_SLICES["torso"]]
        for side in ARMS:
            data.ctrl[self._arm_act[side]] = action[ACTION_SLICES[f"{side}_arm"]]
            g = float(np.clip(action[ACTION_SLICES[f"{side}_gripper"]][0], -1.0, 1.0))
            data.ctrl[self._finger_act[side]] = (g + 1.0) / 2.0 * FINGER_TRAVEL

    def hold_action(self, data: mujoco.MjData) -> np.ndarray:
        """The 23-dim action that keeps the robot where it is (zero base velocity, current joints)."""
        action = np.zeros(ACTION_DIM)
        action[ACTION_SLICES["torso"]] = data.qpos[self.qpos(self.torso_joints)]
        for side in ARMS:
            action[ACTION_SLICES[f"{side}_arm"]] = data.qpos[self.qpos(self.arm_joints[side])]
            action[ACTION_SLICES[f"{side}_gripper"]] = self.gripper(data, side)
        return action

    def set_spawn(self, data: mujoco.MjData, x: float, y: float, yaw: float, torso=None, left_arm=None,
                  right_arm=None) -> None:
        """Put the robot at its spawn pose with home joints and open grippers (qpos and ctrl)."""
        data.qpos[self.qpos(self.base_joints)] = (x, y, yaw)
        data.qpos[self.qpos(self.torso_joints)] = HOME_TORSO if torso is None else torso
        for side, arm in (("left", left_arm), ("right", right_arm)):
            data.qpos[self.qpos(self.arm_joints[side])] = HOME_ARM if arm is None else arm
            data.qpos[self.qpos(self.finger_joints[side])] = FINGER_TRAVEL
        action = np.zeros(ACTION_DIM)
        action[ACTION_SLICES["torso"]] = data.qpos[self.qpos(self.torso_joints)]
        for side in ARMS:
            action[ACTION_SLICES[f"{side}_arm"]] = data.qpos[self.qpos(self.arm_joints[side])]
            action[ACTION_SLICES[f"{side}_gripper"]] = 1.0
        self.apply_action(data, action)

    # -- state

    def gripper(self, data: mujoco.MjData, side: str) -> float:
        width = float(data.qpos[self.qpos(self.finger_joints[side])].mean())
        return width / FINGER_TRAVEL * 2.0 - 1.0

    def base_pose(self, data: mujoco.MjData) -> np.ndarray:
        return data.qpos[self.qpos(self.base_joints)].copy()

    def base_velocity(self, data: mujoco.MjData) -> np.ndarray:
        vxw, vyw, wz = data.qvel[self.dof(self.base_joints)]
        yaw = self.base_pose(data)[2]
        c, s = math.cos(yaw), math.sin(yaw)
        return np.array([c * vxw + s * vyw, -s * vxw + c * vyw, wz])

    def eef_pose(self, data: mujoco.MjData, side: str) -> tuple[np.ndarray, np.ndarray]:
        site = self.eef_site[side]
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, data.site_xmat[site])
        return data.site_xpos[site].copy(), quat

    def proprio(self, data: mujoco.MjData, grasped: dict[str, str | None]) -> np.ndarray:
        """The :data:`PROPRIO_LAYOUT` vector (see the module docstring)."""
        out = np.zeros(STATE_DIM, dtype=np.float32)
        P = PROPRIO_SLICES
        pose = self.base_pose(data)
        out[P["base_pose"]] = pose
        out[P["base_yaw_cos_sin"]] = (math.cos(pose[2]), math.sin(pose[2]))
        out[P["base_velocity"]] = self.base_velocity(data)
        out[P["torso_qpos"]] = data.qpos[self.qpos(self.torso_joints)]
        out[P["torso_qvel"]] = data.qvel[self.dof(self.torso_joints)]
        c, s = math.cos(pose[2]), math.sin(pose[2])
        to_base = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]])
        for side in ARMS:
            q = data.qpos[self.qpos(self.arm_joints[side])]
            out[P[f"{side}_arm_qpos"]] = q
            out[P[f"{side}_arm_qpos_sin"]] = np.sin(q)
            out[P[f"{side}_arm_qpos_cos"]] = np.cos(q)
            out[P[f"{side}_arm_qvel"]] = data.qvel[self.dof(self.arm_joints[side])]
            out[P[f"{side}_gripper"]] = self.gripper(data, side)
            out[P[f"{side}_eef_pos"]] = to_base @ (self.eef_pose(data, side)[0] - [pose[0], pose[1], 0.0])
            out[P[f"{side}_grasp"]] = float(grasped.get(side) is not None)
        out[P["gripper_width"]] = [2 * data.qpos[self.qpos(self.finger_joints[s])].mean() for s in ARMS]
        return out


# ----------------------------------------------------------------------------- inverse kinematics

IK_DAMPING = 0.05      # DLS lambda
IK_MAX_STEP = 0.2      # rad per iteration, per joint
IK_TOL_POS = 1e-4      # m
IK_TOL_ROT = 1e-3      # rad


def base_to_world_quat(quat: np.ndarray, yaw: float) -> np.ndarray:
    """Rotate a base-frame orientation (w, x, y, z) by the base yaw: the world-frame orientation."""
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, np.array([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]), quat)
    return out


def solve_ik(model: mujoco.MjModel, data: mujoco.MjData, site: int, joint_ids: np.ndarray,
             target_pos, target_quat=None, *, max_iterations: int = 200, damping: float = IK_DAMPING,
             rot_weight: float = 0.5) -> IKResult:
    """Damped-least-squares IK of a site over hinge/slide joints, on a scratch copy of ``data``.

    The orientation error comes from ``mju_subQuat``, which expresses it in the site's local frame; it
    is rotated to the world frame (``site_xmat @ err``) before meeting the world-frame Jacobian from
    ``mj_jacSite`` (without the rotation the arm oscillates). Joint limits are enforced
    by clipping after each step. ``data`` is not modified.
    """
    scratch = mujoco.MjData(model)
    scratch.qpos[:] = data.qpos
    qadr = model.jnt_qposadr[joint_ids]
    dadr = model.jnt_dofadr[joint_ids]
    lo, hi = model.jnt_range[joint_ids].T
    limited = model.jnt_limited[joint_ids].astype(bool)
    target_pos = np.asarray(target_pos, float)
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    site_quat, rot_err = np.zeros(4), np.zeros(3)
    pos_norm = rot_norm = float("inf")
    for it in range(1, max_iterations + 1):
        mujoco.mj_kinematics(model, scratch)
        mujoco.mj_comPos(model, scratch)
        err_pos = target_pos - scratch.site_xpos[site]
        pos_norm = float(np.linalg.norm(err_pos))
        if target_quat is not None:
            mujoco.mju_mat2Quat(site_quat, scratch.site_xmat[site])
            mujoco.mju_subQuat(rot_err, np.asarray(target_quat, float), site_quat)
            rot_world = scratch.site_xmat[site].reshape(3, 3) @ rot_err
            rot_norm = float(np.linalg.norm(rot_world))
        else:
            rot_norm = 0.0
        if pos_norm < IK_TOL_POS and rot_norm < IK_TOL_ROT:
            break
        mujoco.mj_jacSite(model, scratch, jacp, jacr, site)
        if target_quat is not None:
            J = np.vstack([jacp[:, dadr], rot_weight * jacr[:, dadr]])
            err = np.concatenate([err_pos, rot_weight * rot_world])
        else:
            J, err = jacp[:, dadr], err_pos
        dq = J.T @ np.linalg.solve(J @ J.T + damping**2 * np.eye(len(err)), err)
        dq = np.clip(dq, -IK_MAX_STEP, IK_MAX_STEP)
        q = scratch.qpos[qadr] + dq
        q[limited] = np.clip(q[limited], lo[limited], hi[limited])
        scratch.qpos[qadr] = q
    return IKResult(qpos=scratch.qpos[qadr].copy(), pos_error=pos_norm, rot_error=rot_norm, iterations=it,
                    converged=pos_norm < 10 * IK_TOL_POS and rot_norm < 10 * IK_TOL_ROT)
