"""Box-like things that a plain box does not name: cloths, socks, sponges, boards, trays, cartons,
containers, bags, bins, laptops, notebooks, newspapers, pillows, pencil cases and folders.

Rounded boxes (the hull of corner spheres), rimmed trays (a base and four walls), draped cloth (a
slab whose top ripples) and folded paper. Models take ``(rng, extents, rgb)``; the design frame is the
object's own box (x, y, z full extents, bottom at z = 0).
"""

from __future__ import annotations

import numpy as np

import bspatial.world.assets.geometry as g
import bspatial.world.assets.prints as prints
from bspatial.world.assets.geometry import Piece
from bspatial.world.assets.palette import DARK, STEEL, WHITE, jitter, pick, shade


def _xyz(ext):
    return (float(v) for v in ext)


def cloth(rng, ext, rgb, *, folds: int = 2, stripes: bool = False):
    """A folded cloth: a thin slab whose top ripples in soft folds, and a hem stripe."""
    X, Y, Z = _xyz(ext)
    nx, ny = 13, 15
    u, v = np.meshgrid(np.linspace(0, 1, nx), np.linspace(0, 1, ny))
    phase = rng.uniform(0, 2 * np.pi, 3)
    ripple = (0.5 + 0.3 * np.sin(2 * np.pi * folds * v + phase[0]) + 0.2 * np.sin(2 * np.pi * (u + 0.4 * v) * 2 + phase[1])
              + 0.2 * np.cos(2 * np.pi * u * 1.3 + phase[2]))
    ripple = np.clip(ripple, 0.0, None) * np.sin(np.pi * u) ** 0.2 * np.sin(np.pi * v) ** 0.2   # edges lie flat
    body = g.slab((X, Y, 0.2 * Z), ripple / ripple.max() * 0.8 * Z)
    col = jitter(rgb, rng, 0.06)
    hem = g.box((X * 0.98, 0.06 * Y, 0.3 * Z), center=(0, -0.42 * Y, 0.15 * Z))
    pieces = [Piece(body, col), Piece(hem, shade(col, 0.7))]
    if stripes:   # a tea towel's woven bands near both ends
        band = pick([(200, 40, 40), (40, 80, 170), (40, 130, 70)], rng)
        for y in (-0.3, -0.25, 0.25, 0.3):
            pieces.append(Piece(g.box((X * 0.97, 0.025 * Y, 0.9 * Z), center=(0, y * Y, 0.45 * Z)), band))
    return pieces


def sock(rng, ext, rgb):
    """A sock lying flat, along y: a wide leg with a ribbed cuff, a heel and a foot turned towards -x,
    heel and toe in a second colour."""
    X, Y, Z = _xyz(ext)
    r = 0.3 * X
    path = [(0.2 * X, -0.5 * Y + r, r), (0.2 * X, 0.05 * Y, r), (0.17 * X, 0.25 * Y, r), (0.02 * X, 0.36 * Y, r),
            (-0.2 * X, 0.41 * Y, r), (-0.5 * X + r, 0.43 * Y, r)]
    body = g.tube(path, [r, r, 1.05 * r, r, 0.95 * r, 0.85 * r], sides=12)
    col = jitter(rgb, rng, 0.06)
    accent = pick([(245, 245, 245), (30, 30, 30), (230, 200, 60)], rng)
    cuffs = [Piece(g.tube([(0.2 * X, y0, r), (0.2 * X, y0 + 0.03 * Y, r)], [1.06 * r, 1.06 * r], sides=12), shade(col, 0.8))
             for y0 in (-0.5 * Y + r, -0.5 * Y + r + 0.05 * Y, -0.5 * Y + r + 0.1 * Y)]
    heel = g.ellipsoid((0.9 * r, 0.9 * r, 0.95 * r), center=(0.2 * X + 0.15 * r, 0.26 * Y, r), subdivisions=2)
    toe = g.ellipsoid((0.95 * r, 0.85 * r, 0.8 * r), center=(-0.5 * X + 0.95 * r, 0.43 * Y, r), subdivisions=2)
    return [Piece(body, col), Piece(heel, accent), Piece(toe, accent)] + cuffs


def sponge(rng, ext, rgb):
    X, Y, Z = _xyz(ext)
    soft = g.rounded_box((X, Y, 0.7 * Z), 0.12 * Z, center=(0, 0, 0.35 * Z))
    scour = g.rounded_box((X, Y, 0.3 * Z), 0.06 * Z, center=(0, 0, 0.85 * Z))
    return [Piece(soft, jitter(rgb, rng, 0.05)), Piece(scour, pick([(40, 130, 60), (40, 80, 160)], rng))]


def chopping_board(rng, ext, rgb):
    X, Y, Z = _xyz(ext)
    board = g.rounded_box((X, 0.88 * Y, Z), 0.3 * Z, center=(0, -0.06 * Y, Z / 2))
    grip = g.rounded_box((0.35 * X, 0.14 * Y, Z), 0.3 * Z, center=(0, 0.43 * Y, Z / 2))
    col = jitter(rgb, rng, 0.05)
    return [Piece(board, col), Piece(grip, shade(col, 0.9))]


def rimmed(rng, ext, rgb, *, handles: bool, rim: float = 0.05):
    """A tray / baking sheet: a flat base and four low walls (and cut-out handles on trays)."""
    X, Y, Z = _xyz(ext)
    t = rim * min(X, Y)
    col = jitter(rgb, rng, 0.04)
    pieces = [Piece(g.box((X, Y, 0.25 * Z), center=(0, 0, 0.125 * Z)), col)]
    for s in (-1, 1):
        pieces.append(Piece(g.box((t, Y, Z), center=(s * (X - t) / 2, 0, Z / 2)), shade(col, 0.92)))
        pieces.append(Piece(g.box((X, t, Z), center=(0, s * (Y - t) / 2, Z / 2)), shade(col, 0.92)))
    if handles:
        for s in (-1, 1):
            pieces.append(Piece(g.box((0.3 * X, 0.6 * t, 0.35 * Z), center=(0, s * (Y / 2 - 0.3 * t), 0.7 * Z)), DARK))
    return pieces


def carton(rng, ext, rgb):
    """A cardboard carton with its top flaps folded open and a tape strip."""
    X, Y, Z = _xyz(ext)
    col = jitter(rgb, rng, 0.05)
    pieces = [Piece(g.box((X, Y, 0.85 * Z), center=(0, 0, 0.425 * Z)), col)]
    for s in (-1, 1):
        flap = g.box((0.02 * X, 0.9 * Y, 0.3 * Z), center=(s * 0.47 * X, 0, 0.85 * Z + 0.1 * Z))
        pieces.append(Piece(flap, shade(col, 0.9)))
    pieces.append(Piece(g.box((0.15 * X, 1.0 * Y, 0.02 * Z), center=(0, 0, 0.2 * Z)), (0.85, 0.75, 0.55)))
    return pieces


def milk_carton(rng, ext, rgb):
    """A gable-top carton: box, pitched roof and fin, and a blue band."""
    X, Y, Z = _xyz(ext)
    body = g.box((X, Y, 0.75 * Z), center=(0, 0, 0.375 * Z))
    roof = g.extrude([(-X / 2, 0.75 * Z), (X / 2, 0.75 * Z), (0.0, 0.93 * Z)], Y, z0=-Y / 2)
    roof.vertices[:] = roof.vertices[:, [0, 2, 1]]   # extruded along y: swap the extrusion axis into y
    roof.invert()
    fin = g.box((0.08 * X, Y, 0.07 * Z), center=(0, 0, 0.965 * Z))
    band = g.box((X * 1.01, Y * 1.01, 0.2 * Z), center=(0, 0, 0.35 * Z))
    return [Piece(body, WHITE), Piece(roof, WHITE), Piece(fin, WHITE), Piece(band, pick([(40, 90, 190), (200, 40, 40), (40, 140, 70)], rng))]


def container(rng, ext, rgb, *, lid_rgb=None):
    """Tupperware / storage box: a rounded tub and a lid with a lip."""
    X, Y, Z = _xyz(ext)
    tub = g.rounded_box((0.97 * X, 0.97 * Y, 0.82 * Z), 0.06 * min(X, Y), center=(0, 0, 0.41 * Z))
    lid = g.rounded_box((X, Y, 0.18 * Z), 0.04 * min(X, Y), center=(0, 0, 0.91 * Z))
    return [Piece(tub, jitter(rgb, rng, 0.03)), Piece(lid, lid_rgb or jitter(shade(rgb, 0.75), rng, 0.03))]


def tupperware(rng, ext, rgb, accent):
    """A food box: the builder's tub colour (``rgb``, frosted white) under its lid colour (``accent``)."""
    return container(rng, ext, rgb, lid_rgb=jitter(accent, rng, 0.04))


def backpack(rng, ext, rgb):
    X, Y, Z = _xyz(ext)
    col = jitter(rgb, rng, 0.05)
    body = g.rounded_box((0.75 * X, Y, 0.92 * Z), 0.3 * X, center=(0.1 * X, 0, 0.46 * Z))
    pocket = g.rounded_box((0.25 * X, 0.7 * Y, 0.4 * Z), 0.1 * X, center=(-0.35 * X, 0, 0.3 * Z))
    handle = g.torus(0.12 * Y, 0.02 * Y, center=(0.1 * X, 0, 0.93 * Z), axis="x")
    straps = [Piece(g.box((0.06 * X, 0.12 * Y, 0.75 * Z), center=(0.5 * X - 0.03 * X, s * 0.25 * Y, 0.5 * Z)), shade(col, 0.6))
              for s in (-1, 1)]
    return [Piece(body, col), Piece(pocket, shade(col, 0.8)), Piece(handle, DARK)] + straps


def hamper(rng, ext, rgb):
    """A laundry hamper: open-topped woven walls (a wicker print), a rim, and clothes heaped inside
    showing over it (a closed box with bands read as a stack of towels)."""
    X, Y, Z = _xyz(ext)
    col = jitter(rgb, rng, 0.05)
    weave = prints.wicker(tuple(int(round(255 * c)) for c in rgb))
    wall_h, t = 0.82 * Z, 0.04 * min(X, Y)
    pieces = []
    for size, centre in (((t, Y, wall_h), (-(X - t) / 2, 0, wall_h / 2)), ((t, Y, wall_h), ((X - t) / 2, 0, wall_h / 2)),
                         ((X - 2 * t, t, wall_h), (0, -(Y - t) / 2, wall_h / 2)), ((X - 2 * t, t, wall_h), (0, (Y - t) / 2, wall_h / 2))):
        mesh, uv = g.textured_box(size, center=centre)
        pieces.append(Piece(mesh, (1.0, 1.0, 1.0), uv, weave))
    pieces.append(Piece(g.box((X - 2 * t, Y - 2 * t, 0.05 * Z), center=(0, 0, 0.025 * Z)), shade(col, 0.7)))
    rim = g.torus(0.5, 0.06, center=(0, 0, 0))
    rim.vertices[:] = rim.vertices * (X / 1.12, Y / 1.12, 0.05 * Z / 0.12) + (0, 0, wall_h)
    pieces.append(Piece(rim, shade(col, 0.75)))
    for (cx, cy), cloth in zip(((-0.15, -0.1), (0.18, 0.12), (0.0, 0.2)), rng.permutation(4)[:3]):
        colour = [(0.25, 0.35, 0.65), (0.85, 0.85, 0.82), (0.75, 0.25, 0.3), (0.3, 0.55, 0.35)][int(cloth)]
        heap = g.ellipsoid((0.3 * X, 0.28 * Y, 0.16 * Z), center=(cx * X, cy * Y, 0.84 * Z))
        pieces.append(Piece(heap, jitter(colour, rng, 0.04)))
    return pieces


def recycling_bin(rng, ext, rgb):
    """A recycling bin: a tapered body with a hinged lid and the recycling symbol printed on its front and side."""
    X, Y, Z = _xyz(ext)
    col = jitter(rgb, rng, 0.04)
    body = g.rounded_box((0.95 * X, 0.95 * Y, 0.9 * Z), 0.04 * min(X, Y), center=(0, 0, 0.45 * Z))
    lid = g.rounded_box((X, Y, 0.1 * Z), 0.03 * min(X, Y), center=(0, 0, 0.95 * Z))
    sign = prints.recycling_symbol((30, 120, 60))
    pieces = [Piece(body, col), Piece(lid, shade(col, 0.8))]
    for size, centre in (((0.02 * X, 0.5 * Y, 0.42 * Z), (-0.48 * X, 0, 0.5 * Z)),
                         ((0.5 * X, 0.02 * Y, 0.42 * Z), (0, -0.48 * Y, 0.5 * Z))):
        mesh, uv = g.textured_box(size, center=centre)
        pieces.append(Piece(mesh, (1.0, 1.0, 1.0), uv, sign))
    return pieces


def laptop(rng, ext, rgb):
    """A closed laptop: base and lid slabs with a visible seam and a logo."""
    X, Y, Z = _xyz(ext)
    col = pick([(70, 70, 75), (190, 192, 196), (30, 30, 32)], rng)
    base = g.rounded_box((X, Y, 0.5 * Z), 0.2 * Z, center=(0, 0, 0.25 * Z))
    lid = g.rounded_box((0.99 * X, 0.99 * Y, 0.42 * Z), 0.15 * Z, center=(0, 0, 0.79 * Z))
    logo = g.cylinder(0.06 * min(X, Y), 0.1 * Z, center=(0, 0, 0.95 * Z))
    return [Piece(base, shade(col, 0.8)), Piece(lid, col), Piece(logo, shade(col, 1.4))]


def notebook(rng, ext, rgb):
    X, Y, Z = _xyz(ext)
    col = jitter(rgb, rng, 0.06)
    pages = g.box((0.97 * X, 0.97 * Y, 0.8 * Z), center=(0.01 * X, 0, 0.5 * Z))
    covers = [Piece(g.box((X, Y, 0.1 * Z), center=(0, 0, z * Z)), col) for z in (0.05, 0.95)]
    spiral = [Piece(g.torus(0.45 * Z, 0.06 * Z, center=(-0.49 * X, y, 0.5 * Z), axis="y"), STEEL)
              for y in np.linspace(-0.42 * Y, 0.42 * Y, 8)]
    return covers + [Piece(pages, WHITE)] + spiral


def newspaper(rng, ext, rgb):
    """A folded newspaper: stacked sheets with a rounded fold edge, the front page printed on top
    (masthead, headlines, a photo, columns of text)."""
    X, Y, Z = _xyz(ext)
    sheets = g.box((X, 0.98 * Y, 0.85 * Z), center=(0, 0.01 * Y, 0.425 * Z))
    fold = g.cylinder(0.45 * Z, Y, center=(-0.49 * X, 0, 0.45 * Z), axis="y", sections=10)
    paper = jitter(rgb, rng, 0.02)
    page, uv = g.textured_box((0.97 * X, 0.97 * Y, 0.15 * Z), center=(0.01 * X, 0, 0.925 * Z))
    return [Piece(sheets, paper), Piece(fold, paper), Piece(page, (1.0, 1.0, 1.0), uv, prints.front_page())]


def pillow(rng, ext, rgb):
    """A puffy pillow: a slab whose top domes towards the middle, and a piped seam."""
    X, Y, Z = _xyz(ext)
    u, v = np.meshgrid(np.linspace(-1, 1, 11), np.linspace(-1, 1, 13))
    dome = (1 - u ** 2) ** 0.5 * (1 - v ** 2) ** 0.5
    body = g.slab((X, Y, 0.35 * Z), dome * 0.65 * Z)
    col = pick([(235, 230, 220), (170, 190, 220), (220, 180, 190), (200, 210, 170), (120, 130, 160)], rng)
    seam = g.box((X, Y, 0.06 * Z), center=(0, 0, 0.35 * Z))
    return [Piece(body, col), Piece(seam, shade(col, 0.85))]


def pencil_case(rng, ext, rgb):
    X, Y, Z = _xyz(ext)
    col = jitter(rgb, rng, 0.05)
    body = g.capsule(0.5 * min(X, Z), Y - min(X, Z), center=(0, 0, Z / 2), axis="y")
    body.vertices[:, 0] *= X / min(X, Z)
    zip_ = g.box((0.08 * X, 0.85 * Y, 0.06 * Z), center=(0, 0, 0.98 * Z))
    pull = g.box((0.25 * X, 0.04 * Y, 0.08 * Z), center=(0.1 * X, 0.4 * Y, 0.98 * Z))
    return [Piece(body, col), Piece(zip_, DARK), Piece(pull, STEEL)]


def folder(rng, ext, rgb):
    """A document folder lying flat: a back cover with an index tab standing out at one edge, sheets of
    paper, and a front pocket over their lower half with a white label."""
    X, Y, Z = _xyz(ext)
    col = jitter(rgb, rng, 0.05)
    back = g.box((X, 0.9 * Y, 0.25 * Z), center=(0, -0.05 * Y, 0.125 * Z))
    tab = g.box((0.3 * X, 0.1 * Y, 0.25 * Z), center=(0.2 * X, 0.45 * Y, 0.125 * Z))
    paper = g.box((0.92 * X, 0.84 * Y, 0.35 * Z), center=(0, -0.04 * Y, 0.42 * Z))
    pocket = g.box((0.98 * X, 0.5 * Y, 0.3 * Z), center=(0, -0.25 * Y, 0.75 * Z))
    label = g.box((0.4 * X, 0.14 * Y, 0.1 * Z), center=(-0.1 * X, -0.27 * Y, 0.95 * Z))
    return [Piece(back, col), Piece(tab, shade(col, 0.85)), Piece(paper, WHITE), Piece(pocket, shade(col, 1.12)),
            Piece(label, WHITE)]


def storage_box(rng, ext, rgb):
    X, Y, Z = _xyz(ext)
    pieces = container(rng, ext, rgb)
    pieces.append(Piece(g.box((0.02 * X, 0.3 * Y, 0.08 * Z), center=(-0.5 * X, 0, 0.7 * Z)), DARK))
    return pieces


ACCENTED_MODELS = {"tupperware": tupperware}
"""Models that also take the builder's second colour (``model(rng, extents, rgb, accent)``)."""

MODELS = {
    "rag": lambda rng, ext, rgb: cloth(rng, ext, rgb, folds=3),
    "hand_towel": cloth, "dishtowel": lambda rng, ext, rgb: cloth(rng, ext, rgb, stripes=True),
    "sock": sock, "sponge": sponge, "chopping_board": chopping_board,
    "baking_sheet": lambda rng, ext, rgb: rimmed(rng, ext, rgb, handles=False, rim=0.03),
    "tray": lambda rng, ext, rgb: rimmed(rng, ext, rgb, handles=True, rim=0.06),
    "carton": carton, "milk_carton": milk_carton, "storage_box": storage_box,
    "backpack": backpack, "hamper": hamper, "recycling_bin": recycling_bin, "laptop": laptop, "notebook": notebook,
    "newspaper": newspaper, "pillow": pillow, "pencil_case": pencil_case, "folder": folder,
}
