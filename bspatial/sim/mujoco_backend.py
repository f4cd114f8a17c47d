"""The default simulator backend: a :class:`~bspatial.world.spec.SceneSpec` built with ``mujoco.MjSpec``.

One :class:`MujocoBackend` holds one world. ``step`` runs :data:`SUBSTEPS` physics steps of
:data:`PHYSICS_DT` per action (30 Hz control, BEHAVIOR's demonstration rate). Assisted grasping
(OmniGibson's "assisted" mode): every free object has one inactive weld per hand; when a gripper is
commanded closed and both of its fingers touch a free object, that weld is activated at the current
relative pose; commanding the gripper open releases it. Physics instability (NaN, MuJoCo's bad
qpos/qvel/qacc auto-reset, or velocities above :data:`MAX_ABS_QVEL`) sets status ``sim_error`` and
freezes the world until ``reset``; it never raises.

Example:
    >>> from bspatial.world.spec import SceneSpec, box_object
    >>> scene = SceneSpec("doc", objects=(box_object("box_0", "box_of_cereal", (0.06, 0.2, 0.3), (1.0, 0, 0.15)),))
    >>> sim = MujocoBackend()
    >>> sim.load(scene)
    >>> sim.step(sim.hold_action()).status
    'ok'
    >>> sim.close()
"""

from __future__ import annotations

import logging
import math
from types import SimpleNamespace

import mujoco
import numpy as np

from bspatial.sim import robot as robot_mod
from bspatial.catalog.schema import ACTION_SLICES, ARMS, CAMERAS, CONSTRUCTION_FRAME_SIZE, POLICY_IMAGE_SIZE
from bspatial.sim.backend import (BoundingBox, CameraFrame, Contact, IKResult, ObjectPose, RobotState, StepResult,
                                  check_action)
from bspatial.scoring.geometry import intrinsics_from_fovy
from bspatial.sim.render import CEILING_GROUP, HIDDEN_GROUP, SegmentationRenderer, camera_to_world, gl_context_class
from bspatial.world.spec import Ceiling, ObjectSpec, Part, SceneSpec, Texture
from bspatial.world.assets import dressed_parts

logger = logging.getLogger(__name__)

PHYSICS_DT = 1.0 / 240.0
SUBSTEPS = 8                    # 8 x 1/240 s = 1/30 s per action
CONTROL_DT = PHYSICS_DT * SUBSTEPS
MAX_ABS_QVEL = 200.0            # rad/s or m/s: anything faster is an explosion, not household motion
GRASP_CLOSE_BELOW = 0.0         # gripper command below this (closing) may start an assisted grasp
GRASP_OPEN_ABOVE = 0.0          # command above this releases it
SHADOW_SIZE = 1024              # CPU render profile: shadow map at most 1024 px
# Tessellation of the primitive spheres, capsules and cylinders (MuJoCo's defaults: 28 slices, 16 stacks). The
# robot's shell is 65 such geoms filling the wrist views; at the defaults they were 60% of a closed-loop step's
# three 224 px renders (37.6 ms; 14.0 ms with the robot hidden); at 16 x 8 the step renders in 24.8 ms.
PRIMITIVE_SLICES, PRIMITIVE_STACKS = 16, 8
FLOOR_GRID = 1.0                # m between the floor plane's render grid lines: a fine grid (0.05) costs ~6 ms a pass on llvmpipe
FLOOR_INSTANCE, FLOOR_NAME, ROBOT_NAME = 0, "floor", "robot"
_SCENE_COLLISION = (1, 3)       # contype, conaffinity of scene geoms (robot geoms are (2, 1))
CEILING_BODY = "ceilings"       # the static body of the rooms' ceilings, built last (every other id stays as it was)
CEILING_THICKNESS = 0.05        # m of slab above the ceiling's underside
FIXTURE_THICKNESS = 0.03        # m: a ceiling light's disc hangs this far below the ceiling
# OpenGL's fixed pipeline has no bounce light: a ceiling's underside faces away from every downward light and
# would be lit by the camera's headlight alone, a dull grey. A real ceiling is lit by the light its room's floor
# and walls reflect; this much emission stands in for it (a white ceiling renders about as bright as the walls).
CEILING_EMISSION = 0.25
FIXTURE_EMISSION = 1.0          # the fixture glows white whatever lights it

_BAD_WARNINGS = (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
                 mujoco.mjtWarning.mjWARN_BADQACC)


def _log_mujoco_warning(message: str) -> None:
    logger.warning("MuJoCo: %s", message.strip())


def _route_mujoco_warnings() -> None:
    """Send MuJoCo's warnings to logging instead of a MUJOCO_LOG.TXT in the working directory.

    Each sim_error episode (NaN, divergence) triggers one; a rollout runner would otherwise litter the
    user's folder. A handler the user installed is left in place.
    """
    if mujoco.get_mju_user_warning() is None:
        mujoco.set_mju_user_warning(_log_mujoco_warning)


def _half_size(part: Part) -> list[float]:
    s = part.size
    if part.kind == "mesh":
        return [0.0, 0.0, 0.0]   # a mesh geom takes its size from the mesh asset
    if part.kind == "box":
        return [s[0] / 2, s[1] / 2, s[2] / 2]
    if part.kind in ("cylinder", "capsule"):
        return [s[0], s[1] / 2, 0.0]
    return [s[0], 0.0, 0.0]


def _volume(part: Part) -> float:
    s = part.size
    if part.kind == "mesh":
        return 0.0   # visual only: a mesh carries no mass, so the primitives alone decide the physics
    if part.kind == "box":
        return s[0] * s[1] * s[2]
    if part.kind == "cylinder":
        return math.pi * s[0] ** 2 * s[1]
    if part.kind == "sphere":
        return 4 / 3 * math.pi * s[0] ** 3
    return math.pi * s[0] ** 2 * s[1] + 4 / 3 * math.pi * s[0] ** 3


def _quat_to_mat(quat) -> np.ndarray:
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, np.asarray(quat, float))
    return mat.reshape(3, 3)


def _local_box(obj: ObjectSpec) -> tuple[np.ndarray, np.ndarray]:
    """Centre and half extents, in the object frame, of the box enclosing all its parts."""
    corners = []
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    for part in obj.parts:
        R = _quat_to_mat(part.pose.quat)
        corners.append((signs * part.local_half_extents()) @ R.T + part.pose.position)
    pts = np.concatenate(corners)
    lo, hi = pts.min(0), pts.max(0)
    return (lo + hi) / 2, (hi - lo) / 2


def _offset_cameras(model: mujoco.MjModel, offsets) -> None:
    """Move robot cameras from their mountings (:class:`~bspatial.world.spec.CameraOffset`): the position in the
    mounting body's frame, the rotation about the camera's own axes (x, y, z in turn)."""
    for offset in offsets:
        cam = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, offset.camera)
        if cam < 0 or offset.camera not in CAMERAS:
            raise ValueError(f"robot.camera_offsets: camera must be one of {list(CAMERAS)}, got {offset.camera!r}")
        model.cam_pos[cam] += offset.position
        turn = np.zeros(4)
        mujoco.mju_euler2Quat(turn, np.asarray(offset.rotation, dtype=float), "xyz")   # lower case: intrinsic axes
        rotated = np.zeros(4)
        mujoco.mju_mulQuat(rotated, model.cam_quat[cam].copy(), turn)
        model.cam_quat[cam] = rotated


class MujocoBackend:
    """MuJoCo implementation of :class:`~bspatial.sim.backend.SimBackend` (see the module docstring).

    Args:
        camera_size: default render size (square) of :meth:`render`; policies use 224.
        max_render_size: the largest frame :meth:`render` may produce (720 for construction frames).
    """

    def __init__(self, *, camera_size: int = POLICY_IMAGE_SIZE, max_render_size: int = CONSTRUCTION_FRAME_SIZE) -> None:
        if not 0 < camera_size <= max_render_size:
            raise ValueError(f"camera_size must be in 1..max_render_size={max_render_size}, got {camera_size}")
        _route_mujoco_warnings()
        self.camera_size = camera_size
        self.max_render_size = max_render_size
        self.scene: SceneSpec | None = None
        self.model: mujoco.MjModel | None = None
        self.data: mujoco.MjData | None = None
        self.robot: robot_mod.RobotBinding | None = None
        self.cameras: tuple[str, ...] = ()
        self._renderer: SegmentationRenderer | None = None
        self._gl = None   # one GL context for every scene this backend loads (SegmentationRenderer's gl)
        self.status, self.message = "ok", ""

    # ------------------------------------------------------------------ building

    def load(self, scene: SceneSpec) -> None:
        """Build the world from ``scene`` (replacing any previous one) and reset it."""
        if not isinstance(scene, SceneSpec):
            raise ValueError(f"scene must be a SceneSpec, got {type(scene).__name__}")
        clash = {c.name for c in scene.cameras} & set(CAMERAS)
        if scene.robot is not None and clash:
            raise ValueError(f"scene cameras must not reuse robot camera names {CAMERAS}, got {sorted(clash)}")
        self._close_renderer()
        spec = self._build_spec(scene)
        self.model = spec.compile()
        if scene.robot is not None:
            _offset_cameras(self.model, scene.robot.camera_offsets)
        self.data = mujoco.MjData(self.model)
        self.scene = scene
        self._index(scene)
        self.reset()

    def _build_spec(self, scene: SceneSpec) -> mujoco.MjSpec:
        spec = mujoco.MjSpec()
        spec.modelname = scene.name
        spec.compiler.degree = False           # every angle in a SceneSpec / the robot is in radians
        spec.option.timestep = PHYSICS_DT
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        spec.visual.global_.offwidth = spec.visual.global_.offheight = self.max_render_size
        spec.visual.quality.offsamples = 0
        spec.visual.quality.shadowsize = SHADOW_SIZE
        spec.visual.quality.numslices, spec.visual.quality.numstacks = PRIMITIVE_SLICES, PRIMITIVE_STACKS
        spec.visual.map.znear = 0.001          # x extent = 1 cm: wrist cameras see the fingers and held objects
        spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
        spec.visual.headlight.diffuse = [0.35, 0.35, 0.35]
        spec.stat.extent = 10.0                # fixes near/far planes independent of scene contents
        self._textures: dict[str, str] = {}
        self._meshes: dict[tuple, str] = {}
        floor = spec.worldbody.add_geom(name=FLOOR_NAME, type=mujoco.mjtGeom.mjGEOM_PLANE,
                                        size=[scene.floor_size[0] / 2, scene.floor_size[1] / 2, FLOOR_GRID],
                                        rgba=list(scene.floor_rgba))
        floor.contype, floor.conaffinity = _SCENE_COLLISION
        if scene.floor_texture is not None:
            floor.material = self._material(spec, scene.floor_texture)
        for light in scene.lights:
            spec.worldbody.add_light(pos=list(light.position), dir=list(light.direction),
                                     castshadow=light.cast_shadow, diffuse=[light.diffuse * c for c in light.colour],
                                     type=(mujoco.mjtLightType.mjLIGHT_DIRECTIONAL if light.directional
                                           else mujoco.mjtLightType.mjLIGHT_SPOT))
        for obj in scene.objects:
            self._add_object(spec, obj)
        for cam in scene.cameras:
            forward = np.subtract(cam.target, cam.position)
            forward /= np.linalg.norm(forward)
            right = np.cross(forward, [0, 0, 1.0])
            if np.linalg.norm(right) < 1e-6:      # looking straight down/up: image right = world +y... pick x
                right = np.array([0.0, -1.0, 0.0]) if forward[2] < 0 else np.array([0.0, 1.0, 0.0])
            up = np.cross(right, forward)
            quat = robot_mod._quat_from_axes(right, up)
            spec.worldbody.add_camera(name=cam.name, pos=list(cam.position), quat=list(quat), fovy=cam.fovy_deg)
        if scene.robot is not None:
            robot_mod.build_robot(spec)
            for obj in scene.objects:
                if not obj.static:
                    for side in ARMS:
                        spec.add_equality(name=f"grasp/{side}/{obj.name}", type=mujoco.mjtEq.mjEQ_WELD,
                                          objtype=mujoco.mjtObj.mjOBJ_BODY, active=False,
                                          name1=f"{robot_mod.PREFIX}{side}_hand", name2=obj.name,
                                          solref=[0.01, 1.0])
        if scene.ceilings:
            self._add_ceilings(spec, scene.ceilings)
        return spec

    def _add_ceilings(self, spec: mujoco.MjSpec, ceilings: tuple[Ceiling, ...]) -> None:
        """The ceilings (:class:`~bspatial.world.spec.Ceiling`) as geoms of one static body added after everything
        else, in :data:`~bspatial.sim.render.CEILING_GROUP`: no contacts (contype = conaffinity = 0), no shadows, no
        mass that matters (the body has no joint). Who sees them is decided by the renderer."""
        body = spec.worldbody.add_body(name=CEILING_BODY)
        slab_material = self._plain_material(spec, "ceiling", CEILING_EMISSION)
        fixture_material = self._plain_material(spec, "ceiling_light", FIXTURE_EMISSION)
        for i, ceiling in enumerate(ceilings):
            x0, x1, y0, y1 = ceiling.bounds
            geoms = [body.add_geom(name=f"ceiling/{i}", type=mujoco.mjtGeom.mjGEOM_BOX,
                                   size=[(x1 - x0) / 2, (y1 - y0) / 2, CEILING_THICKNESS / 2],
                                   pos=[(x0 + x1) / 2, (y0 + y1) / 2, ceiling.height + CEILING_THICKNESS / 2],
                                   rgba=list(ceiling.rgba), material=slab_material)]
            geoms += [body.add_geom(name=f"ceiling/{i}/light_{j}", type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                                    size=[ceiling.light_radius, FIXTURE_THICKNESS / 2, 0.0],
                                    pos=[x, y, ceiling.height - FIXTURE_THICKNESS / 2], rgba=[1.0, 1.0, 1.0, 1.0],
                                    material=fixture_material)
                      for j, (x, y) in enumerate(ceiling.lights)]
            for geom in geoms:
                geom.group = CEILING_GROUP
                geom.contype = geom.conaffinity = 0
                geom.castshadow = False

    def _plain_material(self, spec: mujoco.MjSpec, name: str, emission: float) -> str:
        """An untextured material that glows by ``emission`` and has no highlight (one shade over a flat face)."""
        material = spec.add_material(name=f"mat/{name}")
        material.emission = emission
        material.specular = material.shininess = material.reflectance = 0.0
        return material.name

    def _material(self, spec: mujoco.MjSpec, texture: Texture) -> str:
        if texture.name not in self._textures:
            image = np.ascontiguousarray(texture.image)
            tex = spec.add_texture(name=f"tex/{texture.name}", type=mujoco.mjtTexture.mjTEXTURE_2D,
                                   width=image.shape[1], height=image.shape[0], nchannel=3)
            tex.data = image.tobytes()
            mat = spec.add_material(name=f"mat/{texture.name}", texrepeat=list(texture.repeat), texuniform=False)
            mat.textures[int(mujoco.mjtTextureRole.mjTEXROLE_RGB)] = tex.name
            mat.reflectance = 0.0
            self._textures[texture.name] = mat.name
        return self._textures[texture.name]

    def _mesh_asset(self, spec: mujoco.MjSpec, part: Part) -> str:
        """The mesh asset of ``part``, built once per model per (mesh bytes, size).

        Key: :attr:`Mesh.key` (a digest of vertices, faces and texcoords) plus the part's size rounded
        to 0.1 mm, since MuJoCo scales the asset, not the geom; equal keys share one asset, so a scene
        of ten same-sized plates uploads one plate mesh. Built from memory (``uservert`` /
        ``userface``), no files.
        """
        key = (part.mesh.key, *(round(v, 4) for v in part.size))
        if key not in self._meshes:
            name = f"mesh/{part.mesh.key}/{len(self._meshes)}"
            mesh = spec.add_mesh(name=name)
            mesh.uservert = part.mesh.vertices.reshape(-1).tolist()
            mesh.userface = part.mesh.faces.reshape(-1).tolist()
            if part.mesh.texcoords is not None:
                # MuJoCo samples a 2-D texture with v = 0 at its first data row, the image's top row, which
                # is the Mesh convention: no flip (checked by rendering a label, tests/sim/test_meshes.py).
                mesh.usertexcoord = part.mesh.texcoords.reshape(-1).tolist()
            mesh.scale = list(part.size)
            # Visual meshes carry no mass (geom mass 0); shell inertia keeps MuJoCo from rejecting thin
            # or open shapes it would otherwise try to fill with volume.
            mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
            self._meshes[key] = name
        return self._meshes[key]

    def _add_object(self, spec: mujoco.MjSpec, obj: ObjectSpec) -> None:
        body = spec.worldbody.add_body(name=obj.name, pos=list(obj.pose.position), quat=list(obj.pose.quat))
        if not obj.static:
            body.add_freejoint(name=f"{obj.name}/free")
        parts = dressed_parts(obj)   # its look's meshes are built here, not when the scene was sampled
        volumes = np.array([_volume(p) for p in parts])
        kinds = {"box": mujoco.mjtGeom.mjGEOM_BOX, "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
                 "sphere": mujoco.mjtGeom.mjGEOM_SPHERE, "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE,
                 "mesh": mujoco.mjtGeom.mjGEOM_MESH}
        for i, part in enumerate(parts):
            geom = body.add_geom(name=f"{obj.name}/{i}", type=kinds[part.kind], size=_half_size(part),
                                 pos=list(part.pose.position), quat=list(part.pose.quat), rgba=list(part.rgba))
            if part.kind == "mesh":
                geom.meshname = self._mesh_asset(spec, part)
            if not part.visible:
                geom.group = HIDDEN_GROUP
            geom.friction = [obj.friction, 0.005, 0.0001]
            geom.contype, geom.conaffinity = _SCENE_COLLISION if part.collide else (0, 0)
            geom.mass = float(obj.mass * volumes[i] / volumes.sum())
            if part.texture is not None:
                geom.material = self._material(spec, part.texture)

    def _index(self, scene: SceneSpec) -> None:
        """Name <-> id tables: instance ids (0 floor, 1..N objects, N+1 robot), welds, bodies."""
        m = self.model
        B = mujoco.mjtObj.mjOBJ_BODY
        self.object_body = {o.name: mujoco.mj_name2id(m, B, o.name) for o in scene.objects}
        self._local_boxes = {o.name: _local_box(o) for o in scene.objects}
        self.robot = robot_mod.RobotBinding(m) if scene.robot is not None else None
        robot_instance = len(scene.objects) + 1
        self.id_to_name = {FLOOR_INSTANCE: FLOOR_NAME, **{i + 1: o.name for i, o in enumerate(scene.objects)}}
        body_instance = np.full(m.nbody, -1, dtype=np.int32)
        for i, obj in enumerate(scene.objects):
            body_instance[self.object_body[obj.name]] = i + 1
        if self.robot is not None:
            self.id_to_name[robot_instance] = ROBOT_NAME
            body_instance[list(self.robot.bodies)] = robot_instance
        geom_instance = body_instance[m.geom_bodyid]
        geom_instance[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, FLOOR_NAME)] = FLOOR_INSTANCE
        self.geom_instance = geom_instance
        self._body_names = [mujoco.mj_id2name(m, B, b) or "world" for b in range(m.nbody)]
        self._geom_owner = [FLOOR_NAME if geom_instance[g] == FLOOR_INSTANCE else self._body_names[m.geom_bodyid[g]]
                            for g in range(m.ngeom)]
        self.free_bodies = {self.object_body[o.name]: o.name for o in scene.objects if not o.static}
        self._welds = {(side, o.name): mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_EQUALITY, f"grasp/{side}/{o.name}")
                       for o in scene.objects if not o.static and self.robot is not None for side in ARMS}
        self.cameras = tuple(c for c in CAMERAS if self.robot is not None) + tuple(c.name for c in scene.cameras)
        self._camera_ids = {c: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_CAMERA, c) for c in self.cameras}

    # ------------------------------------------------------------------ episode

    def _require_loaded(self) -> None:
        if self.model is None:
            raise RuntimeError("no scene loaded: call load(scene) first")

    def reset(self) -> None:
        """Spawn state: objects at their spec poses, robot at its spawn with home joints, no grasps."""
        self._require_loaded()
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        d.eq_active[:] = 0
        self.grasped: dict[str, str | None] = {side: None for side in ARMS}
        if self.robot is not None:
            sp = self.scene.robot
            self.robot.set_spawn(d, sp.x, sp.y, sp.yaw, sp.torso, sp.left_arm, sp.right_arm)
        mujoco.mj_forward(m, d)
        self.status, self.message = "ok", ""

    @property
    def time(self) -> float:
        return float(self.data.time)

    def hold_action(self) -> np.ndarray:
        """The action that keeps the robot still (current joints, current gripper openings)."""
        self._require_loaded()
        return self.robot.hold_action(self.data)

    def step(self, action) -> StepResult:
        """Apply one 23-dim action for :data:`CONTROL_DT` seconds; see the module docstring."""
        self._require_loaded()
        action = check_action(action)
        if self.robot is None:
            raise RuntimeError("step needs a scene with a robot (scene.robot is None)")
        if self.status == "sim_error":
            return StepResult("sim_error", self.time, self.message)
        bad = np.flatnonzero(~np.isfinite(action))
        if bad.size:
            return self._fail(f"non-finite action at indices {bad.tolist()}")
        m, d = self.model, self.data
        self.robot.apply_action(d, action)
        warnings_before = [d.warning[w].number for w in _BAD_WARNINGS]
        for _ in range(SUBSTEPS):
            mujoco.mj_step(m, d)
        if [d.warning[w].number for w in _BAD_WARNINGS] != warnings_before:
            return self._fail("MuJoCo detected a bad qpos/qvel/qacc (NaN or divergence) and reset the data")
        if not (np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))):
            return self._fail("non-finite state")
        fastest = float(np.max(np.abs(d.qvel))) if m.nv else 0.0
        if fastest > MAX_ABS_QVEL:
            return self._fail(f"velocity {fastest:.1f} exceeds {MAX_ABS_QVEL}")
        for side in ARMS:
            self._update_grasp(side, float(action[ACTION_SLICES[f"{side}_gripper"]][0]))
        return StepResult("ok", self.time)

    def _fail(self, message: str) -> StepResult:
        self.status, self.message = "sim_error", message
        logger.warning("sim_error in scene %s at t=%.3f: %s", self.scene.name, self.time, message)
        return StepResult("sim_error", self.time, message)

    # ------------------------------------------------------------------ assisted grasping

    def _finger_contacts(self, side: str) -> dict[str, set[int]]:
        """Free objects touched by each finger of ``side``: object name -> set of finger body ids."""
        m, d = self.model, self.data
        fingers = self.robot.finger_bodies[side]
        touched: dict[str, set[int]] = {}
        for c in d.contact[:d.ncon]:
            b1, b2 = m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2]
            for finger, other in ((b1, b2), (b2, b1)):
                if finger in fingers and other in self.free_bodies:
                    touched.setdefault(self.free_bodies[other], set()).add(finger)
        return touched

    def _update_grasp(self, side: str, command: float) -> None:
        held = self.grasped[side]
        if held is not None:
            if command > GRASP_OPEN_ABOVE:
                self.data.eq_active[self._welds[(side, held)]] = 0
                self.grasped[side] = None
            return
        if command >= GRASP_CLOSE_BELOW:
            return
        other = {self.grasped[s] for s in ARMS if s != side}
        for name, fingers in self._finger_contacts(side).items():
            if len(fingers) == 2 and name not in other:   # a pinch: both fingers on the object
                self._activate_weld(side, name)
                return

    def _activate_weld(self, side: str, name: str) -> None:
        """Weld ``name`` to the hand at their current relative pose (no jump)."""
        m, d = self.model, self.data
        eq = self._welds[(side, name)]
        hand, body = self.robot.hand_body[side], self.object_body[name]
        # eq_data for a body weld: anchor (3) in body2's frame, then relpose = pose of body2 in body1.
        neg_hand = np.zeros(4)
        mujoco.mju_negQuat(neg_hand, d.xquat[hand])
        rel_pos = np.zeros(3)
        mujoco.mju_rotVecQuat(rel_pos, d.xpos[body] - d.xpos[hand], neg_hand)
        rel_quat = np.zeros(4)
        mujoco.mju_mulQuat(rel_quat, neg_hand, d.xquat[body])
        m.eq_data[eq, 0:3] = 0.0
        m.eq_data[eq, 3:6] = rel_pos
        m.eq_data[eq, 6:10] = rel_quat
        d.eq_active[eq] = 1
        self.grasped[side] = name

    # ------------------------------------------------------------------ queries

    def _check_object(self, name: str) -> int:
        self._require_loaded()
        if name not in self.object_body:
            raise ValueError(f"object name must be one of {sorted(self.object_body)}, got {name!r}")
        return self.object_body[name]

    def object_pose(self, name: str) -> ObjectPose:
        body = self._check_object(name)
        return self._body_pose(body)

    def _body_pose(self, body: int) -> ObjectPose:
        return ObjectPose(self.data.xpos[body].copy(), self.data.xquat[body].copy(),
                          self.data.xmat[body].reshape(3, 3).copy())

    def object_names(self) -> tuple[str, ...]:
        self._require_loaded()
        return tuple(self.object_body)

    def movable_objects(self) -> tuple[str, ...]:
        self._require_loaded()
        return tuple(name for name, body in self.object_body.items() if body in self.free_bodies)

    def robot_link_pose(self, link: str) -> ObjectPose:
        self._require_loaded()
        body = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, f"{robot_mod.PREFIX}{link}")
        if body < 0:
            links = sorted(self.model.body(i).name.removeprefix(robot_mod.PREFIX) for i in range(self.model.nbody)
                           if self.model.body(i).name.startswith(robot_mod.PREFIX))
            raise ValueError(f"link must be one of {links}, got {link!r}")
        return self._body_pose(body)

    def set_base_pose(self, x: float, y: float, yaw: float) -> None:
        self._require_loaded()
        self.data.qpos[self.robot.qpos(self.robot.base_joints)] = (x, y, yaw)
        mujoco.mj_forward(self.model, self.data)

    def object_bbox(self, name: str) -> BoundingBox:
        body = self._check_object(name)
        center_local, half = self._local_boxes[name]
        R = self.data.xmat[body].reshape(3, 3).copy()
        center = self.data.xpos[body] + R @ center_local
        reach = np.abs(R) @ half
        return BoundingBox(center=center, half_extents=half.copy(), rotation=R,
                           aabb_min=center - reach, aabb_max=center + reach)

    def contacts(self) -> list[Contact]:
        """Active contacts, named by scene object, ``"floor"`` or ``"robot/<link>"``; normal force in N."""
        self._require_loaded()
        m, d = self.model, self.data
        force = np.zeros(6)
        out = []
        for i, c in enumerate(d.contact[:d.ncon]):
            if c.exclude != 0:
                continue
            mujoco.mj_contactForce(m, d, i, force)
            out.append(Contact(self._geom_owner[c.geom1], self._geom_owner[c.geom2], tuple(c.pos.tolist()),
                               tuple(c.frame[:3].tolist()), float(force[0])))
        return out

    def robot_state(self) -> RobotState:
        self._require_loaded()
        if self.robot is None:
            raise RuntimeError("robot_state needs a scene with a robot (scene.robot is None)")
        r, d = self.robot, self.data
        eef = {s: r.eef_pose(d, s) for s in ARMS}
        return RobotState(
            base_pose=r.base_pose(d), base_velocity=r.base_velocity(d),
            torso_qpos=d.qpos[r.qpos(r.torso_joints)].copy(),
            left_arm_qpos=d.qpos[r.qpos(r.arm_joints["left"])].copy(),
            right_arm_qpos=d.qpos[r.qpos(r.arm_joints["right"])].copy(),
            gripper={s: r.gripper(d, s) for s in ARMS},
            eef_pos={s: eef[s][0] for s in ARMS}, eef_quat={s: eef[s][1] for s in ARMS},
            grasped=dict(self.grasped), proprio=r.proprio(d, self.grasped))

    def solve_ik(self, side: str, target_pos, target_quat=None, *, use_torso: bool = False,
                 seed_action: np.ndarray | None = None, max_iterations: int = 200) -> IKResult:
        """DLS IK of ``side``'s end-effector site; returns arm (and torso) joints.

        With ``use_torso`` the result's qpos holds the 4 torso joints then the 7 arm joints. The search
        starts from the current state, or with ``seed_action`` from its torso and ``side`` arm targets
        (an expert seeds each waypoint with the joints it last commanded).
        """
        self._require_loaded()
        if side not in ARMS:
            raise ValueError(f"side must be one of {ARMS}, got {side!r}")
        r = self.robot
        joints = np.concatenate([r.torso_joints, r.arm_joints[side]]) if use_torso else r.arm_joints[side]
        start = self.data
        if seed_action is not None:
            seed = check_action(seed_action)
            qpos = self.data.qpos.copy()
            qpos[r.qpos(r.torso_joints)] = seed[ACTION_SLICES["torso"]]
            qpos[r.qpos(r.arm_joints[side])] = seed[ACTION_SLICES[f"{side}_arm"]]
            start = SimpleNamespace(qpos=qpos)  # solve_ik reads only qpos of its starting state
        return robot_mod.solve_ik(self.model, start, r.eef_site[side], joints, target_pos, target_quat,
                                  max_iterations=max_iterations)

    # ------------------------------------------------------------------ rendering

    def render(self, camera: str, *, width: int | None = None, height: int | None = None,
               rgb_only: bool = False) -> CameraFrame:
        """RGB + depth + instance segmentation of ``camera`` in two passes (see :mod:`bspatial.sim.render`); with
        ``rgb_only`` one pass, depth and segmentation None (what a policy or a demonstration reads)."""
        width, height = self._frame_size(camera, width, height)
        if self._renderer is None:
            size = self.max_render_size
            if self._gl is None:
                self._gl = gl_context_class()(size, size)
            self._renderer = SegmentationRenderer(self.model, self.geom_instance, size, size, gl=self._gl)
        cam_id = self._camera_ids[camera]
        rgb, depth, seg = self._renderer.render(self.data, cam_id, width, height, rgb_only=rgb_only)
        K, T_world_cam = self.camera_geometry(camera, width=width, height=height)
        return CameraFrame(camera=camera, rgb=rgb, depth=depth, segmentation=seg, id_to_name=dict(self.id_to_name),
                           K=K, T_world_cam=T_world_cam)

    def camera_geometry(self, camera: str, *, width: int | None = None, height: int | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
        width, height = self._frame_size(camera, width, height)
        cam_id = self._camera_ids[camera]
        return (intrinsics_from_fovy(width, height, float(self.model.cam_fovy[cam_id])),
                camera_to_world(self.data.cam_xpos[cam_id], self.data.cam_xmat[cam_id]))

    def _frame_size(self, camera: str, width: int | None, height: int | None) -> tuple[int, int]:
        """The (width, height) a render of ``camera`` gets (the camera's default size when None), checked."""
        self._require_loaded()
        if camera not in self._camera_ids:
            raise ValueError(f"camera must be one of {list(self.cameras)}, got {camera!r}")
        width = self.camera_size if width is None else int(width)
        height = self.camera_size if height is None else int(height)
        for field_name, value in (("width", width), ("height", height)):
            if not 0 < value <= self.max_render_size:
                raise ValueError(f"{field_name} must be in 1..{self.max_render_size}, got {value}")
        return width, height

    def _close_renderer(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    @property
    def renderer_open(self) -> bool:
        return self._renderer is not None and not self._renderer.closed

    def close(self) -> None:
        """Free the renderer (GL + MjrContext) and drop the model; safe to call twice."""
        self._close_renderer()
        if self._gl is not None:
            self._gl.free()
            self._gl = None
        self.model = self.data = None

    def __enter__(self) -> "MujocoBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
