"""Dressing an object in its category's visual mesh without changing its physics.

:func:`dress` keeps every primitive part of the object (colliders and decorations alike, so the mass
distribution, contacts and therefore trajectories stay exactly as before) but makes them invisible
(``Part(visible=False)``: the MuJoCo backend puts them in a hidden geom group that neither the RGB nor
the segmentation pass draws), and adds the category's procedural mesh pieces as visual parts that carry
no mass and never collide. The pieces are fitted to the object's current bounding box (per-axis scale
and shift of the whole assembly), so sizes, task rules, experts and step budgets see the same object.

Appearance (shape parameters, colours) is drawn from an rng seeded by the instance's identity
(category, name, extents and pose, :func:`appearance_seed`), never from the caller's rng: drawing from
the scene rng would move every later draw of the scene generator and change the scenes themselves.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from bspatial.common.seeds import derive_seed
from bspatial.world.assets.geometry import Piece
from bspatial.world.assets.registry import ACCENTED, MODELS, PRINTED
from bspatial.world.relations import object_box
from bspatial.world.spec import Mesh, ObjectSpec, Part, Pose, Texture


def local_box(obj: ObjectSpec) -> tuple[np.ndarray, np.ndarray]:
    """(centre, full extents) of the box enclosing all of ``obj``'s parts, in the object frame."""
    box = object_box(dataclasses.replace(obj, pose=Pose()))
    return np.asarray(box.center, dtype=float), np.asarray(box.extents, dtype=float)


def appearance_seed(obj: ObjectSpec, salt: object = "") -> int:
    """The seed of one instance's look: its category, name, extents (0.1 mm), pose (0.1 mm) and ``salt``
    (e.g. a gallery's seed, to redraw the looks of objects whose names and poses are fixed)."""
    _, extents = local_box(obj)
    return derive_seed("appearance", obj.category, obj.name, *(f"{v:.4f}" for v in extents),
                       *(f"{v:.4f}" for v in obj.pose.position), salt)


def _by_size(obj: ObjectSpec) -> list[Part]:
    plain = [p for p in obj.parts if p.texture is None and p.kind != "mesh"] or list(obj.parts)
    return sorted(plain, key=lambda p: -float(np.prod(p.local_half_extents())))   # stable: ties keep part order


def base_rgb(obj: ObjectSpec) -> tuple[float, float, float]:
    """The object's own main colour: the largest untextured primitive's (what its builder chose)."""
    return tuple(float(c) for c in _by_size(obj)[0].rgba[:3])


def accent_rgb(obj: ObjectSpec) -> tuple[float, float, float]:
    """The object's second colour: the largest untextured primitive coloured unlike the main one (a
    plate's well under its rim colour, a food box's lid); the main colour when it has only one."""
    parts = _by_size(obj)
    main = parts[0].rgba[:3]
    other = next((p for p in parts if p.rgba[:3] != main), parts[0])
    return tuple(float(c) for c in other.rgba[:3])


def printed_texture(obj: ObjectSpec) -> Texture:
    """The texture of ``obj``'s largest textured part (its label or cover)."""
    textured = [p for p in obj.parts if p.texture is not None]
    if not textured:
        raise ValueError(f"object {obj.name!r} of printed category {obj.category!r} must have a textured part "
                         f"(its label or cover), got none")
    return max(textured, key=lambda p: float(np.prod(p.local_half_extents()))).texture


def fit_pieces(pieces: list[Piece], center, extents) -> tuple[Part, ...]:
    """Visual mesh parts of ``pieces``, the assembly scaled per axis so its box is (center, extents)."""
    if not pieces:
        raise ValueError("pieces must hold at least one Piece, got none")
    lo = np.min([p.mesh.bounds[0] for p in pieces], axis=0)
    hi = np.max([p.mesh.bounds[1] for p in pieces], axis=0)
    if np.any(hi - lo <= 0):
        raise ValueError(f"pieces must span all three axes, got bounds {lo.tolist()} .. {hi.tolist()}")
    scale = np.asarray(extents, dtype=float) / (hi - lo)
    shift = np.asarray(center, dtype=float) - (lo + hi) / 2 * scale
    parts = []
    for piece in pieces:
        v = piece.mesh.vertices * scale + shift
        plo, phi = v.min(0), v.max(0)
        size, mid = phi - plo, (plo + phi) / 2
        mesh = Mesh((v - mid) / size, piece.mesh.faces, piece.uv)
        parts.append(Part("mesh", tuple(size), Pose(tuple(mid)), rgba=(*piece.rgb, 1.0), texture=piece.texture,
                          collide=False, mesh=mesh))
    return tuple(parts)


def dress(obj: ObjectSpec, salt: object = "") -> ObjectSpec:
    """``obj`` wearing its category's visual mesh (see the module docstring); categories without a
    model (:func:`bspatial.world.assets.meshed_categories`) and objects already dressed come back as they are.
    ``salt`` enters :func:`appearance_seed`."""
    model = MODELS.get(obj.category)
    if model is None or any(p.kind == "mesh" for p in obj.parts):
        return obj
    center, extents = local_box(obj)
    rng = np.random.default_rng(appearance_seed(obj, salt))
    if obj.category in PRINTED:
        pieces = model(rng, extents, base_rgb(obj), printed_texture(obj))
    elif obj.category in ACCENTED:
        pieces = model(rng, extents, base_rgb(obj), accent_rgb(obj))
    else:
        pieces = model(rng, extents, base_rgb(obj))
    hidden = tuple(dataclasses.replace(p, visible=False) for p in obj.parts)
    return dataclasses.replace(obj, parts=hidden + fit_pieces(pieces, center, extents))


def undressed(obj: ObjectSpec) -> ObjectSpec:
    """``obj`` as it was before :func:`dress`: its primitives visible again, no mesh parts."""
    if not any(p.kind == "mesh" for p in obj.parts):
        return obj
    return dataclasses.replace(obj, parts=tuple(dataclasses.replace(p, visible=True)
                                                for p in obj.parts if p.kind != "mesh"))
