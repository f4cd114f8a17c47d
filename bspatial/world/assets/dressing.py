"""Dressing an object in its category's visual mesh without changing its physics.

:func:`dress` keeps every primitive part of the object (colliders and decorations alike, so the mass
distribution, contacts and therefore trajectories stay exactly as before) but makes them invisible
(``Part(visible=False)``: the MuJoCo backend puts them in a hidden geom group that neither the RGB nor
the segmentation pass draws), and adds the category's procedural mesh pieces as visual parts that carry
no mass and never collide. The pieces are fitted to the object's current bounding box (per-axis scale
and shift of the whole assembly), so sizes, task rules, experts and step budgets see the same object.

Appearance is drawn from an rng seeded by the instance's identity (category, name, extents and pose,
:func:`appearance_seed`), never from the caller's rng: drawing from the scene rng would move every later
draw of the scene generator and change the scenes themselves. It picks one of :data:`SHAPE_VARIANTS`
shape variants (built once per box and cached) and shifts the variant's colours a little per instance.

The meshes are not built at spec time: :func:`dress` hides the primitives and records the model's inputs in
a :class:`~bspatial.world.spec.Look`; :func:`dressed_parts` builds the mesh parts from it (memoised per look)
when a backend loads the scene, with the same draws in the same order, so what is drawn is unchanged while
sampling a scene builds no mesh. Code that transforms parts (rescaling, recolouring) works on
:func:`materialised` specs, whose mesh parts are spelled out, so the meshes follow.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from bspatial.common.seeds import derive_seed
from bspatial.world.assets.geometry import Piece
from bspatial.world.assets.registry import ACCENTED, MODELS, PRINTED
from bspatial.world.relations import object_box
from bspatial.world.spec import Look, Mesh, ObjectSpec, Part, Pose, Texture


def local_box(obj: ObjectSpec) -> tuple[np.ndarray, np.ndarray]:
    """(centre, full extents) of the box enclosing all of ``obj``'s parts, in the object frame."""
    box = object_box(dataclasses.replace(obj, pose=Pose()))
    return np.asarray(box.center, dtype=float), np.asarray(box.extents, dtype=float)


def appearance_seed(obj: ObjectSpec, salt: object = "") -> int:
    """The seed of one instance's look: its category, name, extents (0.1 mm), pose (0.1 mm) and ``salt``
    (e.g. a gallery's seed, to redraw the looks of objects whose names and poses are fixed)."""
    return _appearance_seed(obj, local_box(obj)[1], salt)


def _appearance_seed(obj: ObjectSpec, extents: np.ndarray, salt: object) -> int:
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


SHAPE_VARIANTS = 8
"""Shape variants per category: an instance draws its variant and a colour shift from its appearance seed."""
ASPECT_STEP = 0.02
"""Design boxes are cached per aspect ratio (extents / longest, rounded to this step); the fit to the
instance's own box is exact whatever the rounding (per-axis scale of the assembly)."""
COLOUR_SHIFT = 0.04
"""Per-instance shift of each untextured piece's colour channels (at most, either way): two instances of
one shape variant still differ in tone."""


@dataclass(frozen=True, eq=False)
class _Design:
    """One shape variant built in its design box: each piece's normalised mesh and its box there."""

    lo: np.ndarray
    hi: np.ndarray
    pieces: tuple[tuple[Mesh, np.ndarray, np.ndarray, tuple[float, float, float], Texture | None], ...]


@functools.lru_cache(maxsize=4096)
def _design(category: str, variant: int, aspect: tuple, rgb: tuple, extra) -> _Design:
    """Build one shape variant (the model's rng is seeded by category and variant, so caching changes no
    output). A piece's mesh normalised to its own box is the same for every per-axis scale of the
    assembly, so one build serves every instance of this aspect, whatever its size."""
    rng = np.random.default_rng(derive_seed("shape", category, variant))
    args = () if extra is None else (extra,)
    built = MODELS[category](rng, np.asarray(aspect, dtype=float), rgb, *args)
    if not built:
        raise ValueError(f"category {category!r}: its model must return at least one Piece, got none")
    pieces = []
    for piece in built:
        v = piece.mesh.vertices
        plo, phi = v.min(0), v.max(0)
        if np.any(phi - plo <= 0):
            raise ValueError(f"category {category!r}: every piece must span all three axes, got {plo.tolist()} .. {phi.tolist()}")
        pieces.append((Mesh((v - (plo + phi) / 2) / (phi - plo), piece.mesh.faces, piece.uv), plo, phi, piece.rgb, piece.texture))
    lo = np.min([p[1] for p in pieces], axis=0)
    hi = np.max([p[2] for p in pieces], axis=0)
    return _Design(lo, hi, tuple(pieces))


def _fitted(design: _Design, center: np.ndarray, extents: np.ndarray, rng: np.random.Generator) -> tuple[Part, ...]:
    scale = extents / (design.hi - design.lo)
    mid_design = (design.lo + design.hi) / 2
    parts = []
    for mesh, plo, phi, rgb, texture in design.pieces:
        size = (phi - plo) * scale
        mid = center + ((plo + phi) / 2 - mid_design) * scale
        colour = rgb if texture is not None else tuple(np.clip(np.asarray(rgb) + rng.uniform(-COLOUR_SHIFT, COLOUR_SHIFT, 3),
                                                               0.0, 1.0).tolist())
        parts.append(Part("mesh", tuple(size.tolist()), Pose(tuple(mid.tolist())), rgba=(*colour, 1.0), texture=texture,
                          collide=False, mesh=mesh))
    return tuple(parts)


def dress(obj: ObjectSpec, salt: object = "") -> ObjectSpec:
    """``obj`` wearing its category's visual mesh (see the module docstring); categories without a
    model (:func:`bspatial.world.assets.meshed_categories`) and objects already dressed come back as they are.
    ``salt`` enters :func:`appearance_seed`.

    The spec holds a :class:`~bspatial.world.spec.Look` (the model's inputs), not the meshes: they are built
    when a backend asks for them (:func:`dressed_parts`), so sampling a scene costs no mesh building."""
    if obj.category not in MODELS or obj.look is not None or any(p.kind == "mesh" for p in obj.parts):
        return obj
    center, extents = local_box(obj)
    seed = _appearance_seed(obj, extents, salt)
    extra = printed_texture(obj) if obj.category in PRINTED else accent_rgb(obj) if obj.category in ACCENTED else None
    aspect = tuple(float(v) for v in np.maximum(np.round(extents / extents.max() / ASPECT_STEP), 1) * ASPECT_STEP)
    hidden = tuple(dataclasses.replace(p, visible=False) for p in obj.parts)
    look = Look(obj.category, seed, aspect, base_rgb(obj), extra, tuple(center.tolist()), tuple(extents.tolist()), hidden)
    return dataclasses.replace(obj, parts=hidden, look=look)


@functools.lru_cache(maxsize=4096)
def _resolved(look: Look) -> tuple[Part, ...]:
    # The same draws, in the same order, as dressing eagerly did: the variant, then each piece's colour shift.
    rng = np.random.default_rng(look.seed)
    design = _design(look.category, int(rng.integers(SHAPE_VARIANTS)), look.aspect, look.rgb, look.extra)
    return _fitted(design, np.asarray(look.center), np.asarray(look.extents), rng)


def visual_parts(obj: ObjectSpec) -> tuple[Part, ...]:
    """The mesh parts of ``obj``'s look (built on first use, then memoised per look); () without one."""
    return () if obj.look is None else _resolved(obj.look)


def dressed_parts(obj: ObjectSpec) -> tuple[Part, ...]:
    """Every part a backend builds for ``obj``: its own parts, then its look's mesh parts."""
    return obj.parts + visual_parts(obj)


def materialised(obj: ObjectSpec) -> ObjectSpec:
    """``obj`` with its look's mesh parts spelled out in ``parts`` (and no look): the form to transform
    parts in (rescale, recolour), so the meshes follow the primitives."""
    if obj.look is None:
        return obj
    return dataclasses.replace(obj, parts=dressed_parts(obj), look=None)


def undressed(obj: ObjectSpec) -> ObjectSpec:
    """``obj`` as it was before :func:`dress`: its primitives visible again, no mesh parts, no look."""
    if obj.look is None and not any(p.kind == "mesh" for p in obj.parts):
        return obj
    return dataclasses.replace(obj, look=None, parts=tuple(dataclasses.replace(p, visible=True)
                                                           for p in obj.parts if p.kind != "mesh"))
