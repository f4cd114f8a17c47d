"""The geometry kit every asset family builds from: closed, outward-facing trimesh solids.

Each helper returns a watertight :class:`trimesh.Trimesh` in metres-free "design units" (an asset is
fitted to its object's bounding box afterwards, :func:`bspatial.world.assets.dressing.fit_pieces`), with
few faces (a revolve of 20 sections and ~10 profile points is ~400 faces) so the closed loop stays fast.
Nothing here draws random numbers; families pass in the parameters they drew.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import trimesh
from trimesh import creation

from bspatial.world.spec import Texture

SECTIONS = 20
"""Segments around a surface of revolution: round enough at 224 px, ~40 faces per profile segment."""
MEMO_SIZE = 8192
"""Solids remembered per helper (a few KB each)."""


def _frozen(value):
    """A hashable, exact stand-in for a helper argument (arrays by dtype, shape and bytes)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    return value


def _memo(fn):
    """Remember a solid by its exact arguments and hand out copies (callers move and reshape them).

    A family model draws its numbers from an rng seeded by category and shape variant, and no colour
    enters a helper, so two instances of one variant and aspect call the helpers with equal arguments:
    the second gets copies instead of a trimesh build. Outputs are unchanged (exact keys)."""
    cache: dict = {}

    def copy(result):
        if isinstance(result, tuple):
            return tuple(copy(r) for r in result)
        return result.copy()

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        key = (_frozen(args), _frozen(tuple(sorted(kwargs.items()))))
        if key not in cache:
            if len(cache) >= MEMO_SIZE:
                cache.pop(next(iter(cache)))   # oldest first: a bound, not a policy that changes outputs
            cache[key] = fn(*args, **kwargs)
        return copy(cache[key])

    return wrapper


@dataclass(frozen=True, eq=False)
class Piece:
    """One coloured solid of an asset, in the design frame of its family (fitted later).

    A textured piece carries ``uv`` (one (u, v) per vertex, v = 0 at the image's top row) and the
    ``texture``; its mesh then duplicates vertices along texture seams, so it is closed once vertices
    at the same position are merged (:func:`closed_after_merge`).
    """

    mesh: trimesh.Trimesh
    rgb: tuple[float, float, float]
    uv: np.ndarray | None = None
    texture: Texture | None = None


def closed_after_merge(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """A copy of ``mesh`` with coincident vertices merged (texture seams closed), for closedness checks."""
    merged = trimesh.Trimesh(mesh.vertices.copy(), mesh.faces.copy(), process=False)
    merged.merge_vertices(merge_tex=True, merge_norm=True)
    return merged


@_memo
def textured_box(extents, center=(0.0, 0.0, 0.0)) -> tuple[trimesh.Trimesh, np.ndarray]:
    """A box with four vertices per face, each face showing the whole image (MuJoCo's own box mapping):
    upright on the side faces (image top at +z), on top and bottom with the image top towards +x."""
    ext = np.asarray(extents, dtype=float) / 2
    # (normal axis, sign, u axis, u sign, v axis (image down), v sign)
    faces_def = [(0, -1, 1, -1, 2, -1), (0, 1, 1, 1, 2, -1), (1, -1, 0, 1, 2, -1), (1, 1, 0, -1, 2, -1),
                 (2, 1, 1, 1, 0, -1), (2, -1, 1, -1, 0, -1)]
    verts, uvs, faces = [], [], []
    for axis, sign, ua, us, va, vs in faces_def:
        base = len(verts)
        for u, v in ((0, 0), (1, 0), (1, 1), (0, 1)):
            p = np.zeros(3)
            p[axis] = sign * ext[axis]
            p[ua] = us * (2 * u - 1) * ext[ua]
            p[va] = vs * (2 * v - 1) * ext[va]
            verts.append(p)
            uvs.append((u, v))
        faces += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    mesh = trimesh.Trimesh(np.array(verts) + np.asarray(center, dtype=float), np.array(faces), process=False)
    _orient_faces_out(mesh, np.asarray(center, dtype=float))
    return mesh, np.array(uvs, dtype=float)


@_memo
def textured_cylinder(radius: float, height: float, center=(0.0, 0.0, 0.0),
                      sections: int = SECTIONS) -> tuple[trimesh.Trimesh, np.ndarray]:
    """A closed cylinder along z whose side wraps the image once around (u = angle, image top at the
    top); the caps sample a disc in the image's middle. The seam column is duplicated for the wrap."""
    cx, cy, cz = (float(c) for c in center)
    angles = 2 * np.pi * np.arange(sections + 1) / sections
    verts, uvs, faces = [], [], []
    for z, v in ((cz - height / 2, 1.0), (cz + height / 2, 0.0)):
        for a, u in zip(angles, np.linspace(0, 1, sections + 1)):
            verts.append((cx + radius * np.cos(a), cy + radius * np.sin(a), z))
            uvs.append((u, v))
    n = sections + 1
    for j in range(sections):
        a, b, c, d = j, j + 1, n + j, n + j + 1
        faces += [(a, b, d), (a, d, c)]
    for z, sign in ((cz - height / 2, -1), (cz + height / 2, 1)):
        centre = len(verts)
        verts.append((cx, cy, z))
        uvs.append((0.5, 0.5))
        ring = []
        for a in angles[:-1]:
            ring.append(len(verts))
            verts.append((cx + radius * np.cos(a), cy + radius * np.sin(a), z))
            uvs.append((0.5 + 0.25 * np.cos(a), 0.5 - 0.25 * np.sin(a)))
        for j in range(sections):
            p, q = ring[j], ring[(j + 1) % sections]
            faces.append((centre, p, q) if sign > 0 else (centre, q, p))
    mesh = trimesh.Trimesh(np.array(verts), np.array(faces), process=False)
    return mesh, np.array(uvs, dtype=float)


@_memo
def textured_pillow(extents, nu: int = 9, nv: int = 11) -> tuple[trimesh.Trimesh, np.ndarray]:
    """A bag standing upright (chips): thin along x, its two faces puffed out, edges pinched to zero
    thickness; each face shows the whole image (seen from -x or +x, image top at +z)."""
    lx, ly, lz = (float(v) for v in extents)
    u, v = np.meshgrid(np.linspace(0, 1, nu), np.linspace(0, 1, nv))
    puff = (np.sin(np.pi * u) * np.sin(np.pi * v)) ** 0.35 * lx / 2
    y, z = (u - 0.5) * ly, (1 - v) * lz
    verts, uvs, faces = [], [], []
    index = {}
    for side in (-1, 1):
        for j in range(nv):
            for i in range(nu):
                edge = i in (0, nu - 1) or j in (0, nv - 1)
                key = ("edge", i, j) if edge else (side, i, j)
                if key not in index:   # edge vertices are shared by both faces (zero thickness there)
                    index[key] = len(verts)
                    verts.append((side * puff[j, i], y[j, i], z[j, i]))
                    uvs.append((u[j, i] if side > 0 else 1 - u[j, i], v[j, i]))
        for j in range(nv - 1):
            for i in range(nu - 1):
                k = lambda a, b: index[("edge", a, b)] if (a in (0, nu - 1) or b in (0, nv - 1)) else index[(side, a, b)]
                a, b, c, d = k(i, j), k(i + 1, j), k(i, j + 1), k(i + 1, j + 1)
                on_edge = lambda a_, b_: a_ in (0, nu - 1) or b_ in (0, nv - 1)
                if on_edge(i, j) and on_edge(i + 1, j + 1):   # split along b-c: a diagonal between two pinched
                    quad = [(a, b, c), (b, d, c)]             # edge vertices would be shared by both faces
                else:
                    quad = [(a, b, d), (a, d, c)]
                faces += quad if side > 0 else [f[::-1] for f in quad]
    mesh = trimesh.Trimesh(np.array(verts), np.array(faces), process=False)
    if mesh.volume < 0:   # one winding for both faces by construction; make it outward
        mesh.invert()
    return mesh, np.array(uvs, dtype=float)


def _orient_faces_out(mesh: trimesh.Trimesh, centre: np.ndarray) -> None:
    """Flip, in place, faces of a star-shaped mesh whose normal points towards ``centre``."""
    tri = mesh.vertices[mesh.faces]
    normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    inward = np.einsum("ij,ij->i", normals, tri.mean(1) - centre) < 0
    if inward.any():
        faces = mesh.faces.copy()
        faces[inward] = faces[inward][:, ::-1]
        mesh.faces = faces


@_memo
def revolve(profile, sections: int = SECTIONS) -> trimesh.Trimesh:
    """Solid of revolution about z of a (radius, z) profile that starts and ends on the axis (r = 0).

    The profile runs outside-up then inside-down (a bowl's outer wall, rim, inner wall), so the solid
    is closed and its normals point out.
    """
    pts = np.asarray(profile, dtype=float)
    if pts[0, 0] != 0 or pts[-1, 0] != 0:
        raise ValueError(f"profile must start and end on the axis (r = 0), got {pts[0].tolist()} .. {pts[-1].tolist()}")
    return creation.revolve(pts, sections=sections)


@_memo
def tube(path, radii, sides: int = 10) -> trimesh.Trimesh:
    """A closed tube along a 3-D polyline with a radius per point (bananas, carrots, handles).

    Rings use a rotation-minimising frame along the path; the ends are closed by fans to a centre
    vertex at the first and last path points (a radius of 0 there gives a pointed tip).
    """
    path = np.asarray(path, dtype=float)
    radii = np.asarray(radii, dtype=float)
    n = len(path)
    tangents = np.gradient(path, axis=0)
    tangents /= np.linalg.norm(tangents, axis=1, keepdims=True)
    ref = np.array([0.0, 0.0, 1.0]) if abs(tangents[0, 2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    normal = np.cross(tangents[0], ref)
    normal /= np.linalg.norm(normal)
    angles = 2 * np.pi * np.arange(sides) / sides
    rings = []
    for i in range(n):
        if i:   # parallel transport: remove the normal's component along the new tangent
            normal = normal - tangents[i] * (normal @ tangents[i])
            normal /= np.linalg.norm(normal)
        binormal = np.cross(tangents[i], normal)
        rings.append(path[i] + radii[i] * (np.cos(angles)[:, None] * normal + np.sin(angles)[:, None] * binormal))
    verts = np.concatenate([np.concatenate(rings), path[[0, -1]]])
    faces = []
    for i in range(n - 1):
        for j in range(sides):
            a, b = i * sides + j, i * sides + (j + 1) % sides
            c, d = a + sides, b + sides
            faces += [(a, b, d), (a, d, c)]
    start, end = n * sides, n * sides + 1
    for j in range(sides):
        faces.append((start, (j + 1) % sides, j))
        faces.append((end, (n - 1) * sides + j, (n - 1) * sides + (j + 1) % sides))
    mesh = trimesh.Trimesh(verts, np.array(faces), process=True)
    return _outward(mesh)


def arc_handle(center, radius: float, thickness: float, side=(0.0, -1.0, 0.0), sides: int = 8) -> trimesh.Trimesh:
    """A C-shaped handle: a half ring of ``radius`` in the vertical plane through ``side``, bulging out
    from ``center`` (a point on the vessel's wall) towards ``side`` (mugs, pitchers, kettles)."""
    out = np.asarray(side, dtype=float)
    out /= np.linalg.norm(out)
    angles = np.linspace(-np.pi / 2, np.pi / 2, 9)
    path = [np.asarray(center) + radius * (np.cos(a) * out * 1.2 + np.sin(a) * np.array([0.0, 0.0, 1.0]))
            - radius * 0.15 * out for a in angles]
    return tube(path, [thickness] * len(path), sides=sides)


def _outward(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    if mesh.volume < 0:
        mesh.invert()
    return mesh


@_memo
def box(extents, center=(0.0, 0.0, 0.0)) -> trimesh.Trimesh:
    """An axis-aligned box of full ``extents`` centred at ``center``."""
    return creation.box(extents=extents, transform=trimesh.transformations.translation_matrix(center))


@_memo
def rounded_box(extents, radius: float, center=(0.0, 0.0, 0.0), count: int = 6) -> trimesh.Trimesh:
    """A box with rounded edges and corners: the convex hull of eight corner spheres (the hull's flat
    faces shade flat; pushing a sphere's vertices out instead leaves stretched, creased triangles)."""
    ext = np.asarray(extents, dtype=float)
    r = min(radius, 0.49 * ext.min())
    ball = creation.uv_sphere(radius=r, count=[count, count])
    inner = ext / 2 - r
    corners = [ball.vertices + inner * (2 * np.array(signs) - 1) for signs in np.ndindex(2, 2, 2)]
    hull = trimesh.convex.convex_hull(np.concatenate(corners))
    hull.apply_translation(center)
    return hull


@_memo
def cylinder(radius: float, height: float, center=(0.0, 0.0, 0.0), axis: str = "z",
             sections: int = SECTIONS) -> trimesh.Trimesh:
    """A closed cylinder along ``axis`` ("x", "y" or "z")."""
    mesh = creation.cylinder(radius=radius, height=height, sections=sections)
    return _placed(mesh, center, axis)


@_memo
def capsule(radius: float, length: float, center=(0.0, 0.0, 0.0), axis: str = "z") -> trimesh.Trimesh:
    """A capsule whose straight part is ``length`` long along ``axis``."""
    mesh = creation.capsule(height=length, radius=radius, count=[10, 10])
    mesh.apply_translation((0.0, 0.0, -mesh.bounds[:, 2].mean()))
    return _placed(mesh, center, axis)


@_memo
def ellipsoid(radii, center=(0.0, 0.0, 0.0), subdivisions: int = 2) -> trimesh.Trimesh:
    """An ellipsoid with semi-axes ``radii`` (an icosphere scaled per axis)."""
    mesh = creation.icosphere(subdivisions=subdivisions)
    mesh.vertices = mesh.vertices * np.asarray(radii, dtype=float) + np.asarray(center, dtype=float)
    return mesh


@_memo
def torus(major: float, minor: float, center=(0.0, 0.0, 0.0), axis: str = "z") -> trimesh.Trimesh:
    """A ring (handles, rims); ``axis`` is the ring's axis of symmetry."""
    return _placed(creation.torus(major, minor, major_sections=16, minor_sections=8), center, axis)


@_memo
def extrude(outline, thickness: float, z0: float = 0.0) -> trimesh.Trimesh:
    """A flat outline (list of (x, y)) extruded upwards by ``thickness`` from ``z0`` (blades, spatula heads)."""
    import shapely.geometry

    polygon = shapely.geometry.Polygon(outline)
    if not polygon.is_valid:
        raise ValueError(f"outline must be a simple polygon, got {outline!r}")
    mesh = creation.extrude_polygon(polygon, thickness)
    mesh.apply_translation((0.0, 0.0, z0))
    return _outward(mesh)


@_memo
def slab(extents, heights, center=(0.0, 0.0, 0.0)) -> trimesh.Trimesh:
    """A closed sheet with a flat bottom and a top raised by the (ny, nx) grid ``heights`` (cloth, pillows).

    ``heights`` are the top's offsets above ``extents[2]`` (>= 0) at a regular grid over x, y.
    """
    h = np.asarray(heights, dtype=float)
    ny, nx = h.shape
    lx, ly, lz = extents
    xs, ys = np.linspace(-lx / 2, lx / 2, nx), np.linspace(-ly / 2, ly / 2, ny)
    X, Y = np.meshgrid(xs, ys)
    top = np.stack([X, Y, lz + h], -1).reshape(-1, 3)
    bottom = np.stack([X, Y, np.zeros_like(X)], -1).reshape(-1, 3)
    verts = np.concatenate([top, bottom])
    idx = np.arange(nx * ny).reshape(ny, nx)
    off = nx * ny
    faces = []
    for j in range(ny - 1):
        for i in range(nx - 1):
            a, b, c, d = idx[j, i], idx[j, i + 1], idx[j + 1, i], idx[j + 1, i + 1]
            faces += [(a, b, d), (a, d, c), (off + a, off + d, off + b), (off + a, off + c, off + d)]
    ring = list(idx[0, :]) + list(idx[1:, -1]) + list(idx[-1, -2::-1]) + list(idx[-2:0:-1, 0])
    for k in range(len(ring)):
        a, b = ring[k], ring[(k + 1) % len(ring)]
        faces += [(a, off + a, off + b), (a, off + b, b)]
    mesh = trimesh.Trimesh(verts, np.array(faces), process=True)
    mesh = _outward(mesh)
    mesh.apply_translation(center)
    return mesh


def bumpy(mesh: trimesh.Trimesh, amplitude: float, rng: np.random.Generator, lobes: int = 3) -> trimesh.Trimesh:
    """``mesh`` with a smooth random radial bump (potatoes, onions): a few low-frequency cosines."""
    v = mesh.vertices.copy()
    centre = v.mean(0)
    d = v - centre
    unit = d / np.linalg.norm(d, axis=1, keepdims=True)
    scale = np.ones(len(v))
    for _ in range(lobes):
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        scale += amplitude * np.cos(3.0 * (unit @ direction) + rng.uniform(0, 2 * np.pi))
    return trimesh.Trimesh(centre + d * scale[:, None], mesh.faces.copy(), process=False)


def _placed(mesh: trimesh.Trimesh, center, axis: str) -> trimesh.Trimesh:
    if axis == "x":
        mesh.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, (0, 1, 0)))
    elif axis == "y":
        mesh.apply_transform(trimesh.transformations.rotation_matrix(-np.pi / 2, (1, 0, 0)))
    elif axis != "z":
        raise ValueError(f"axis must be 'x', 'y' or 'z', got {axis!r}")
    mesh.apply_translation(center)
    return mesh
