"""Backend-neutral scene description: what is in a household scene, in SI units, no simulator types.

A task's scene generator fills a :class:`SceneSpec`; a backend (:mod:`bspatial.sim.mujoco_backend`,
later OmniGibson) turns it into a world. Nothing here imports a simulator, so specs can be built,
validated and serialised anywhere.

Conventions:

* World frame, metres, kilograms, radians; z up. Quaternions are ``(w, x, y, z)``.
* An object is a rigid body named by the task (``name``, unique in the scene) and typed by a BEHAVIOR
  category (``category``, e.g. ``"plate"``, ``"countertop"``), validated against the ``bddl``
  package's category list (``bddl/generated_data/category_mapping.csv``, read offline).
* An object's shape is one or more :class:`Part` primitives in the object's frame (a table is a top
  plus four legs). Sizes are FULL extents, not MuJoCo half-sizes: a box is (length x, width y,
  height z); a cylinder is (radius, height); a sphere is (radius,); a capsule is (radius, length of
  the straight part).
* ``static`` objects are fixed to the world (furniture); the others get a free joint.
* A ``"mesh"`` part is visual only: it never collides and carries no mass, so physics is decided by the
  primitive parts alone. Its :class:`Mesh` is stored normalised (its bounding box is the unit cube
  centred at the origin) and the part's ``size`` (x, y, z full extents) stretches it, so rescaling an
  object (``dataclasses.replace(part, size=...)``) rescales its mesh too. A primitive part with
  ``visible=False`` is a collider only: it shapes contacts and mass but is never drawn (nor seen by
  segmentation); an object wears a mesh by hiding its primitives (:mod:`bspatial.world.assets`).

Example:
    >>> plate = ObjectSpec(name="plate_0", category="plate",
    ...                    parts=(Part("cylinder", (0.11, 0.02), rgba=(0.95, 0.95, 0.9, 1)),),
    ...                    pose=Pose((0.6, 0.0, 0.91)))
    >>> scene = SceneSpec(name="demo", objects=(plate,))
    >>> scene.object("plate_0").category
    'plate'
    >>> SceneSpec(name="bad", objects=(plate, plate))
    Traceback (most recent call last):
    ...
    ValueError: objects[1].name must be unique, got duplicate 'plate_0'
"""

from __future__ import annotations

import csv
import functools
import math
from dataclasses import dataclass, field
from importlib import resources
from typing import Literal

import numpy as np

ShapeKind = Literal["box", "cylinder", "sphere", "capsule", "mesh"]
SHAPE_KINDS: tuple[str, ...] = ("box", "cylinder", "sphere", "capsule", "mesh")
PRIMITIVE_KINDS: tuple[str, ...] = ("box", "cylinder", "sphere", "capsule")
_SIZE_LEN = {"box": 3, "cylinder": 2, "sphere": 1, "capsule": 2, "mesh": 3}
_SIZE_DOC = {"box": "(x, y, z) full extents", "cylinder": "(radius, height)", "sphere": "(radius,)",
             "capsule": "(radius, straight length)", "mesh": "(x, y, z) full extents of its bounding box"}
MESH_NORMALISE_ATOL = 1e-9
"""How far a normalised mesh's bounding box may be from the unit cube centred at the origin."""

DEFAULT_CAMERA_FOVY_DEG = 60.0
"""Vertical field of view of scene cameras unless a spec says otherwise."""


# ----------------------------------------------------------------------------- BEHAVIOR categories


@functools.lru_cache(maxsize=1)
def behavior_categories() -> dict[str, str]:
    """BEHAVIOR object categories -> WordNet-style synsets, read offline from the ``bddl`` package.

    The file is bddl's own category -> synset mapping (the one OmniGibson's asset categories use),
    so a category accepted here is one the OmniGibson backend can also resolve.

    Example:
        >>> behavior_categories()["plate"]
        'plate.n.04'
    """
    path = resources.files("bddl") / "generated_data" / "category_mapping.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["category"]: row["synset"] for row in csv.DictReader(handle)}


def check_category(category: str, *, field_name: str = "category") -> str:
    """Return ``category`` if bddl knows it, else raise a ValueError with close matches."""
    known = behavior_categories()
    if category in known:
        return category
    import difflib

    close = difflib.get_close_matches(category, known, n=5, cutoff=0.6)
    hint = f"; close matches: {close}" if close else ""
    raise ValueError(f"{field_name} must be a BEHAVIOR category from bddl, got {category!r}{hint}")


# ----------------------------------------------------------------------------- small value types


def _rgba(field_name: str, value) -> tuple[float, ...]:
    """A colour (r, g, b, a) with every channel in [0, 1]; errors name ``field_name`` and the value."""
    rgba = _vec(field_name, value, 4)
    if min(rgba) < 0 or max(rgba) > 1:
        raise ValueError(f"{field_name} must lie in [0, 1], got {value!r}")
    return rgba


def _vec(name: str, value, n: int) -> tuple[float, ...]:
    try:
        arr = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be {n} numbers, got {value!r}") from error
    if arr.shape != (n,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be {n} finite numbers, got {value!r}")
    return tuple(float(v) for v in arr)


def yaw_quat(yaw: float) -> tuple[float, float, float, float]:
    """Quaternion (w, x, y, z) of a rotation by ``yaw`` radians about world z."""
    return (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))


@dataclass(frozen=True)
class Pose:
    """Position (m) and orientation quaternion (w, x, y, z); the quaternion is normalised."""

    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", _vec("pose.position", self.position, 3))
        q = np.asarray(_vec("pose.quat", self.quat, 4))
        norm = float(np.linalg.norm(q))
        if norm < 1e-9:
            raise ValueError(f"pose.quat must be non-zero, got {self.quat!r}")
        object.__setattr__(self, "quat", tuple(float(v) for v in q / norm))

    @classmethod
    def from_xy_yaw(cls, x: float, y: float, z: float = 0.0, yaw: float = 0.0) -> "Pose":
        return cls((x, y, z), yaw_quat(yaw))


@dataclass(frozen=True, eq=False)
class Texture:
    """A texture image generated at build time (e.g. drawn with PIL), never downloaded.

    Attributes:
        name: unique within the scene; parts that share a texture reference the same object.
        image: (H, W, 3) uint8 RGB, row 0 at the top.
        repeat: how many times the image tiles across a face (u, v).
    """

    name: str
    image: np.ndarray
    repeat: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        image = np.asarray(self.image)
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"texture {self.name!r}.image must be (H, W, 3) uint8, "
                             f"got shape {image.shape} dtype {image.dtype}")
        object.__setattr__(self, "image", image)
        object.__setattr__(self, "repeat", _vec(f"texture {self.name!r}.repeat", self.repeat, 2))


@dataclass(frozen=True, eq=False)
class Mesh:
    """A triangle mesh normalised to the unit cube: its bounding box is [-0.5, 0.5] on every axis.

    Attributes:
        vertices: (V, 3) float64, bounding box exactly the unit cube centred at the origin.
        faces: (F, 3) int32 vertex indices, counter-clockwise seen from outside (outward normals).
        texcoords: optional (V, 2) float64 texture coordinates in [0, 1], one per vertex.

    :attr:`key` (a digest of the bytes) names the mesh asset in a backend, so identical meshes are
    built once per model however many parts use them.
    """

    vertices: np.ndarray
    faces: np.ndarray
    texcoords: np.ndarray | None = None

    def __post_init__(self) -> None:
        v = np.ascontiguousarray(self.vertices, dtype=np.float64)
        f = np.ascontiguousarray(self.faces, dtype=np.int32)
        if v.ndim != 2 or v.shape[1] != 3 or len(v) < 4 or not np.all(np.isfinite(v)):
            raise ValueError(f"mesh.vertices must be (V>=4, 3) finite, got shape {v.shape}")
        if f.ndim != 2 or f.shape[1] != 3 or len(f) < 4 or f.min() < 0 or f.max() >= len(v):
            raise ValueError(f"mesh.faces must be (F>=4, 3) indices into {len(v)} vertices, got shape {f.shape}")
        lo, hi = v.min(0), v.max(0)
        if not (np.allclose(lo, -0.5, atol=MESH_NORMALISE_ATOL) and np.allclose(hi, 0.5, atol=MESH_NORMALISE_ATOL)):
            raise ValueError(f"mesh.vertices must span the unit cube [-0.5, 0.5]^3, got min {lo.tolist()} "
                             f"max {hi.tolist()}")
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "faces", f)
        if self.texcoords is not None:
            t = np.ascontiguousarray(self.texcoords, dtype=np.float64)
            if t.shape != (len(v), 2) or not np.all(np.isfinite(t)):
                raise ValueError(f"mesh.texcoords must be ({len(v)}, 2) finite, got shape {t.shape}")
            object.__setattr__(self, "texcoords", t)
        # Computed now, not on first use, so a pickled scene is the same bytes whether or not a backend
        # has built it yet (split manifests compare scenes by their pickles).
        object.__setattr__(self, "_key", self._digest())

    @property
    def key(self) -> str:
        """Hex digest of vertices, faces and texcoords: equal meshes share one backend asset."""
        return self._key

    def __eq__(self, other: object) -> bool:   # equal bytes, equal mesh (so equal specs compare equal)
        return isinstance(other, Mesh) and other._key == self._key

    def __hash__(self) -> int:
        return hash(self._key)

    def _digest(self) -> str:
        import hashlib

        digest = hashlib.sha1(self.vertices.tobytes())
        digest.update(self.faces.tobytes())
        if self.texcoords is not None:
            digest.update(self.texcoords.tobytes())
        return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Part:
    """One primitive of an object's shape, posed in the object's frame.

    Attributes:
        kind: "box", "cylinder", "sphere", "capsule" or "mesh".
        size: full extents, see the module docstring (box (x, y, z); cylinder (radius, height)...;
            mesh (x, y, z) of its bounding box, centred on the part frame).
        pose: placement in the object frame (a cylinder's axis is the local z).
        rgba: colour in [0, 1]; multiplied with the texture when there is one.
        texture: optional :class:`Texture` (on a mesh it needs the mesh's texcoords).
        collide: False for decoration (labels, handles drawn flat) that must not touch anything.
        mesh: the :class:`Mesh` of a "mesh" part (required there, forbidden elsewhere).
        visible: False for a collider that is never drawn (an object dressed in a visual mesh).
    """

    kind: ShapeKind
    size: tuple[float, ...]
    pose: Pose = field(default_factory=Pose)
    rgba: tuple[float, float, float, float] = (0.7, 0.7, 0.7, 1.0)
    texture: Texture | None = None
    collide: bool = True
    mesh: Mesh | None = None
    visible: bool = True

    def __post_init__(self) -> None:
        if self.kind not in SHAPE_KINDS:
            raise ValueError(f"part.kind must be one of {SHAPE_KINDS}, got {self.kind!r}")
        if (self.kind == "mesh") != (self.mesh is not None):
            raise ValueError(f"part.mesh must be given exactly when part.kind is 'mesh', got kind {self.kind!r} "
                             f"with mesh {'set' if self.mesh is not None else 'None'}")
        if self.kind == "mesh" and self.collide:
            raise ValueError("part.collide must be False for a 'mesh' part (meshes are visual only), got True")
        if self.kind == "mesh" and not self.visible:
            raise ValueError("part.visible must be True for a 'mesh' part (an invisible visual is nothing), got False")
        if self.kind == "mesh" and self.texture is not None and self.mesh.texcoords is None:
            raise ValueError(f"part.mesh must carry texcoords to show texture {self.texture.name!r}, got none")
        size = _vec(f"part.size ({self.kind}: {_SIZE_DOC[self.kind]})", self.size, _SIZE_LEN[self.kind])
        if min(size) <= 0:
            raise ValueError(f"part.size must be positive, got {self.size!r}")
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "rgba", _rgba("part.rgba", self.rgba))

    def local_half_extents(self) -> np.ndarray:
        """Half extents of this part's own axis-aligned box (in the part frame)."""
        s = self.size
        if self.kind in ("box", "mesh"):
            return np.array(s) / 2
        if self.kind == "cylinder":
            return np.array([s[0], s[0], s[1] / 2])
        if self.kind == "sphere":
            return np.array([s[0]] * 3)
        return np.array([s[0], s[0], s[1] / 2 + s[0]])


@dataclass(frozen=True)
class Look:
    """A cheap reference to an object's visual mesh: what :func:`bspatial.world.assets.dress` draws it from,
    resolved into mesh parts only when a backend or renderer needs them
    (:func:`bspatial.world.assets.dressed_parts`). Building the meshes at spec time cost scene sampling more
    than the rest of it together; a reference of plain values (and the object's own texture) pickles to the
    same bytes every time, which split manifests rely on.

    Attributes:
        category: the model's category.
        seed: the instance's appearance seed (variant and colour shift are drawn from it).
        aspect: the design box (extents / longest, rounded).
        rgb: the model's base colour.
        extra: the model's extra argument (a printed category's texture, an accented one's second colour).
        center, extents: the box the meshes are fitted to, in the object frame.
        over: the primitive parts it was dressed over (by identity: a spec whose leading parts are no longer
            these was transformed without its meshes, so it is rejected rather than drawn wrong).
    """

    category: str
    seed: int
    aspect: tuple[float, float, float]
    rgb: tuple[float, float, float]
    extra: object
    center: tuple[float, float, float]
    extents: tuple[float, float, float]
    over: tuple["Part", ...]


@dataclass(frozen=True)
class ObjectSpec:
    """A rigid object of the scene.

    Attributes:
        name: unique instance name (the id->name map of segmentation uses it).
        category: BEHAVIOR category (validated against bddl).
        parts: its primitives, at least one.
        pose: pose of the object frame in the world.
        static: True for furniture fixed to the world; False gives a free joint.
        mass: total mass in kg for free objects (spread over parts by volume); ignored when static.
        friction: sliding friction coefficient of all its parts.
        look: the reference to its visual mesh when it wears one (:class:`Look`), else None.
    """

    name: str
    category: str
    parts: tuple[Part, ...]
    pose: Pose = field(default_factory=Pose)
    static: bool = False
    mass: float = 0.2
    friction: float = 1.0
    look: Look | None = None

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError(f"object.name must be a non-empty string, got {self.name!r}")
        check_category(self.category, field_name=f"object {self.name!r}.category")
        parts = tuple(self.parts)
        if not parts or not all(isinstance(p, Part) for p in parts):
            raise ValueError(f"object {self.name!r}.parts must be a non-empty sequence of Part, got {self.parts!r}")
        if all(p.kind == "mesh" for p in parts):
            raise ValueError(f"object {self.name!r}.parts must include a primitive (mesh parts are visual only and "
                             f"carry no mass), got only mesh parts")
        object.__setattr__(self, "parts", parts)
        if self.look is not None:
            over = self.look.over
            if len(parts) < len(over) or any(a is not b for a, b in zip(parts, over)):
                raise ValueError(f"object {self.name!r}.parts must start with the parts its look was dressed over "
                                 f"(changing them leaves the look's meshes behind); materialise the look first "
                                 f"(bspatial.world.assets.materialised), got {len(parts)} parts not matching its "
                                 f"{len(over)}")
        if not (self.mass > 0 and math.isfinite(self.mass)):
            raise ValueError(f"object {self.name!r}.mass must be positive, got {self.mass!r}")
        if not (self.friction >= 0 and math.isfinite(self.friction)):
            raise ValueError(f"object {self.name!r}.friction must be >= 0, got {self.friction!r}")


@dataclass(frozen=True, eq=False)
class Surface:
    """A named horizontal support surface (countertop top, shelf layer, floor of a room).

    Attributes:
        name: unique within the scene (e.g. ``"countertop_0/top"``, ``"fridge_0/layer_4"``).
        owner: name of the object it belongs to, or "" for the floor.
        height: world z of the surface plane (m).
        polygon: (M, 2) world-xy boundary, M >= 3 (what "on the surface" means to the rules).
    """

    name: str
    owner: str
    height: float
    polygon: np.ndarray

    def __post_init__(self) -> None:
        poly = np.asarray(self.polygon, dtype=float)
        if poly.ndim != 2 or poly.shape[1] != 2 or len(poly) < 3 or not np.all(np.isfinite(poly)):
            raise ValueError(f"surface {self.name!r}.polygon must be (M>=3, 2) finite, got shape {poly.shape}")
        object.__setattr__(self, "polygon", poly)
        object.__setattr__(self, "height", _vec(f"surface {self.name!r}.height", self.height, 1)[0])


@dataclass(frozen=True)
class CameraSpec:
    """A fixed scene camera (the robot's head / wrist cameras come with the robot).

    The camera looks from ``position`` at ``target`` with world z as up.
    """

    name: str
    position: tuple[float, float, float]
    target: tuple[float, float, float]
    fovy_deg: float = DEFAULT_CAMERA_FOVY_DEG

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", _vec(f"camera {self.name!r}.position", self.position, 3))
        object.__setattr__(self, "target", _vec(f"camera {self.name!r}.target", self.target, 3))
        if np.linalg.norm(np.subtract(self.target, self.position)) < 1e-6:
            raise ValueError(f"camera {self.name!r}.target must differ from its position, got {self.target!r}")
        if not 1.0 < self.fovy_deg < 179.0:
            raise ValueError(f"camera {self.name!r}.fovy_deg must be in (1, 179), got {self.fovy_deg!r}")


@dataclass(frozen=True)
class LightSpec:
    """A directional or spot light. The CPU render profile allows at most one shadow-casting light.

    ``diffuse`` is its intensity, ``colour`` the (r, g, b) factors it is multiplied by (white by default)."""

    position: tuple[float, float, float] = (0.0, 0.0, 3.0)
    direction: tuple[float, float, float] = (0.0, 0.0, -1.0)
    directional: bool = True
    cast_shadow: bool = False
    diffuse: float = 0.7
    colour: tuple[float, float, float] = (1.0, 1.0, 1.0)

    def __post_init__(self) -> None:
        colour = _vec("light.colour", self.colour, 3)
        if not all(0.0 <= c <= 1.0 for c in colour):
            raise ValueError(f"light.colour must be in [0, 1] per channel, got {colour}")
        object.__setattr__(self, "colour", colour)


@dataclass(frozen=True)
class Ceiling:
    """A room's ceiling: a flat slab over ``bounds`` (x0, x1, y0, y1, world metres) whose underside is at
    ``height``, with a ceiling-light fixture (a glowing disc, ``light_radius`` m) under it at each of ``lights``
    (world xy; where the room's lights hang).

    A ceiling is scenery, like the sky it covers up, not an object of the scene: it collides with nothing,
    casts no shadow (the lights above it still light the room), and segmentation labels its pixels background
    (depth 0), as they were before ceilings; a backend draws it only for cameras below it, so a top view looks
    into the rooms (:data:`bspatial.sim.render.CEILING_GROUP`).

    Example:
        >>> Ceiling((0.0, 4.0, 0.0, 3.0), 2.4, lights=((2.0, 1.5),)).lights
        ((2.0, 1.5),)
        >>> Ceiling((0.0, 4.0, 0.0, 3.0), 2.4, lights=((5.0, 1.5),))
        Traceback (most recent call last):
        ...
        ValueError: ceiling.lights[0] must lie within bounds (0.0, 4.0, 0.0, 3.0), got (5.0, 1.5)
    """

    bounds: tuple[float, float, float, float]
    height: float
    lights: tuple[tuple[float, float], ...] = ()
    rgba: tuple[float, float, float, float] = (0.95, 0.94, 0.91, 1.0)
    light_radius: float = 0.18

    def __post_init__(self) -> None:
        x0, x1, y0, y1 = bounds = _vec("ceiling.bounds", self.bounds, 4)
        if not (x0 < x1 and y0 < y1):
            raise ValueError(f"ceiling.bounds must be (x0, x1, y0, y1) with x0 < x1 and y0 < y1, got {self.bounds!r}")
        object.__setattr__(self, "bounds", bounds)
        height = _vec("ceiling.height", self.height, 1)[0]
        if height <= 0:
            raise ValueError(f"ceiling.height must be positive, got {self.height!r}")
        object.__setattr__(self, "height", height)
        lights = tuple(_vec(f"ceiling.lights[{i}]", xy, 2) for i, xy in enumerate(self.lights))
        for i, (x, y) in enumerate(lights):
            if not (x0 <= x <= x1 and y0 <= y <= y1):
                raise ValueError(f"ceiling.lights[{i}] must lie within bounds {bounds}, got {(x, y)}")
        object.__setattr__(self, "lights", lights)
        object.__setattr__(self, "rgba", _rgba("ceiling.rgba", self.rgba))
        if not 0 < self.light_radius < min(x1 - x0, y1 - y0) / 2:
            raise ValueError(f"ceiling.light_radius must be positive and fit the ceiling, got {self.light_radius!r}")


@dataclass(frozen=True)
class CameraOffset:
    """A change of one robot camera's mounting: ``position`` (m) added in its mounting body's frame, then
    ``rotation`` (rad, about the camera's own x, y, z axes in that order) applied to its orientation."""

    camera: str
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rotation: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", _vec(f"camera offset {self.camera!r}.position", self.position, 3))
        object.__setattr__(self, "rotation", _vec(f"camera offset {self.camera!r}.rotation", self.rotation, 3))


@dataclass(frozen=True)
class RobotSpawn:
    """Where the robot starts: base position on the floor and heading (yaw, rad, 0 = facing +x).

    ``torso`` / ``left_arm`` / ``right_arm`` override the robot's home joint positions when given;
    ``camera_offsets`` move its cameras from where the robot mounts them (:class:`CameraOffset`, one per camera).
    """

    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0
    torso: tuple[float, ...] | None = None
    left_arm: tuple[float, ...] | None = None
    right_arm: tuple[float, ...] | None = None
    camera_offsets: tuple[CameraOffset, ...] = ()

    def __post_init__(self) -> None:
        _vec("robot.(x, y, yaw)", (self.x, self.y, self.yaw), 3)
        offsets = tuple(self.camera_offsets)
        cameras = [o.camera for o in offsets]
        if len(set(cameras)) != len(cameras):
            raise ValueError(f"robot.camera_offsets must name each camera once, got {cameras}")
        object.__setattr__(self, "camera_offsets", offsets)
        for name, n in (("torso", 4), ("left_arm", 7), ("right_arm", 7)):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _vec(f"robot.{name}", value, n))


@dataclass(frozen=True)
class SceneSpec:
    """A whole scene: floor, objects, support surfaces, extra cameras, lights and the robot spawn.

    Attributes:
        name: scene name (task + seed, usually).
        objects: the rigid objects; names unique.
        surfaces: named support surfaces; owners must be objects of the scene (or "" for floor).
        cameras: fixed scene cameras (e.g. a top-down view); names must not clash with robot cameras.
        lights: at most one may cast shadows (CPU render profile).
        robot: the robot's spawn, or None for a scene without a robot.
        floor_size: (x, y) full extents of the floor plane (m), centred at the origin.
        floor_rgba: floor colour.
        floor_texture: optional floor texture.
        ceilings: the rooms' ceilings (:class:`Ceiling`): scenery over the walls, not objects.
    """

    name: str
    objects: tuple[ObjectSpec, ...] = ()
    surfaces: tuple[Surface, ...] = ()
    cameras: tuple[CameraSpec, ...] = ()
    lights: tuple[LightSpec, ...] = (LightSpec(position=(1.0, -1.0, 4.0), direction=(-0.2, 0.2, -1.0)),)
    robot: RobotSpawn | None = field(default_factory=RobotSpawn)
    floor_size: tuple[float, float] = (20.0, 20.0)
    floor_rgba: tuple[float, float, float, float] = (0.55, 0.5, 0.45, 1.0)
    floor_texture: Texture | None = None
    ceilings: tuple[Ceiling, ...] = ()

    def __post_init__(self) -> None:
        for field_name in ("objects", "surfaces", "cameras", "lights", "ceilings"):
            object.__setattr__(self, field_name, tuple(getattr(self, field_name)))
        seen: set[str] = set()
        for i, obj in enumerate(self.objects):
            if obj.name in seen:
                raise ValueError(f"objects[{i}].name must be unique, got duplicate {obj.name!r}")
            seen.add(obj.name)
        surface_names: set[str] = set()
        for i, surface in enumerate(self.surfaces):
            if surface.name in surface_names:
                raise ValueError(f"surfaces[{i}].name must be unique, got duplicate {surface.name!r}")
            surface_names.add(surface.name)
            if surface.owner and surface.owner not in seen:
                raise ValueError(f"surfaces[{i}].owner must name an object of the scene, got {surface.owner!r}")
        camera_names = [c.name for c in self.cameras]
        if len(set(camera_names)) != len(camera_names):
            raise ValueError(f"cameras names must be unique, got {camera_names!r}")
        shadows = sum(light.cast_shadow for light in self.lights)
        if shadows > 1:
            raise ValueError(f"lights may hold at most one shadow-casting light (CPU profile), got {shadows}")
        object.__setattr__(self, "floor_size", _vec("floor_size", self.floor_size, 2))
        for i, ceiling in enumerate(self.ceilings):
            if not isinstance(ceiling, Ceiling):
                raise ValueError(f"ceilings[{i}] must be a Ceiling, got {type(ceiling).__name__}")

    def object(self, name: str) -> ObjectSpec:
        """The object called ``name``; unknown names raise listing the known ones."""
        for obj in self.objects:
            if obj.name == name:
                return obj
        raise ValueError(f"object name must be one of {[o.name for o in self.objects]}, got {name!r}")

    def surface(self, name: str) -> Surface:
        for surface in self.surfaces:
            if surface.name == name:
                return surface
        raise ValueError(f"surface name must be one of {[s.name for s in self.surfaces]}, got {name!r}")


def box_object(name: str, category: str, size, position, *, yaw: float = 0.0, rgba=(0.7, 0.7, 0.7, 1.0),
               static: bool = False, mass: float = 0.2, texture: Texture | None = None) -> ObjectSpec:
    """Convenience: a single-box object whose ``position`` is the box centre.

    Example:
        >>> box_object("box_0", "box_of_cereal", (0.06, 0.2, 0.3), (0.5, 0, 0.15)).parts[0].size
        (0.06, 0.2, 0.3)
    """
    return ObjectSpec(name=name, category=category, parts=(Part("box", size, rgba=rgba, texture=texture),),
                      pose=Pose.from_xy_yaw(position[0], position[1], position[2], yaw), static=static, mass=mass)


def table_object(name: str, category: str, top_size, height: float, position_xy, *, yaw: float = 0.0,
                 top_rgba=(0.6, 0.45, 0.3, 1.0), leg_rgba=(0.35, 0.25, 0.18, 1.0),
                 top_thickness: float = 0.04, leg_width: float = 0.05,
                 texture: Texture | None = None) -> ObjectSpec:
    """Convenience: a static four-legged table (top + legs) whose top surface is at ``height``.

    The object frame sits on the floor under the top's centre.

    Example:
        >>> t = table_object("table_0", "breakfast_table", (1.2, 0.8), 0.75, (1.0, 0.0))
        >>> len(t.parts), t.static
        (5, True)
    """
    lx, ly = _vec("top_size", top_size, 2)
    parts = [Part("box", (lx, ly, top_thickness), Pose((0, 0, height - top_thickness / 2)),
                  rgba=top_rgba, texture=texture)]
    leg_h = height - top_thickness
    for sx in (-1, 1):
        for sy in (-1, 1):
            parts.append(Part("box", (leg_width, leg_width, leg_h),
                              Pose((sx * (lx / 2 - leg_width), sy * (ly / 2 - leg_width), leg_h / 2)), rgba=leg_rgba))
    return ObjectSpec(name=name, category=category, parts=tuple(parts),
                      pose=Pose.from_xy_yaw(position_xy[0], position_xy[1], 0.0, yaw), static=True)
