"""Printed things: the builder's own label / cover texture on a better shape (cans and canisters wrap
it round, chips bags puff it out, books show their page block between the covers, board games a lid).

Models here take ``(rng, extents, rgb, texture)``: ``texture`` is the object's printed texture (its
builder's), required. Textured pieces are white so the texture shows its own colours.
"""

from __future__ import annotations

import numpy as np

import bspatial.world.assets.geometry as g
from bspatial.world.assets.geometry import Piece
from bspatial.world.assets.palette import STEEL, jitter, pick, shade

PRINT = (1.0, 1.0, 1.0)   # textured pieces: the texture's colours as printed
PAGES = (0.94, 0.92, 0.85)


def _xyz(ext):
    return (float(v) for v in ext)


def can(rng, ext, rgb, texture):
    """A drinks can: printed wall, silver shoulder and lid with a rim, silver base."""
    X, Y, H = _xyz(ext)
    R = min(X, Y) / 2
    wall, uv = g.textured_cylinder(R, 0.8 * H, center=(0, 0, 0.48 * H))
    top = g.revolve([(0, 0.86 * H), (R, 0.86 * H), (R, 0.88 * H), (0.82 * R, 0.97 * H), (0.86 * R, H), (0.8 * R, H),
                     (0.76 * R, 0.97 * H), (0, 0.97 * H)])
    base = g.revolve([(0, 0.02 * H), (0.8 * R, 0), (R, 0.06 * H), (R, 0.09 * H), (0, 0.09 * H)])
    tab = g.box((0.35 * R, 0.15 * R, 0.02 * H), center=(0.3 * R, 0, 0.975 * H))
    metal = jitter(STEEL, rng, 0.02)
    return [Piece(wall, PRINT, uv, texture), Piece(top, metal), Piece(base, metal), Piece(tab, shade(metal, 0.8))]


def canister(rng, ext, rgb, texture):
    """An oat canister: printed cardboard tube and a coloured lid with a lip."""
    X, Y, H = _xyz(ext)
    R = min(X, Y) / 2
    wall, uv = g.textured_cylinder(0.97 * R, 0.92 * H, center=(0, 0, 0.46 * H))
    lid = g.revolve([(0, 0.9 * H), (R, 0.9 * H), (R, H), (0, H)])
    return [Piece(wall, PRINT, uv, texture), Piece(lid, pick([(200, 40, 35), (40, 90, 170), (230, 200, 60)], rng))]


def chips_bag(rng, ext, rgb, texture):
    """A chips bag standing upright: a puffed printed pillow with crimped seals top and bottom."""
    X, Y, H = _xyz(ext)
    bag, uv = g.textured_pillow((X, Y, 0.9 * H))
    bag.apply_translation((0, 0, 0.05 * H))
    seal = jitter(rgb, rng, 0.03)
    crimps = [Piece(g.box((0.12 * X, Y, 0.06 * H), center=(0, 0, z)), seal) for z in (0.03 * H, 0.97 * H)]
    return [Piece(bag, PRINT, uv, texture)] + crimps


def hardback(rng, ext, rgb, texture):
    """An upright hardback (thickness along y, spine at -x): printed boards and spine, the page block
    showing at the fore-edge (+x), head and tail."""
    X, Y, H = _xyz(ext)
    board = 0.08 * Y
    pieces = []
    for s in (-1, 1):
        mesh, uv = g.textured_box((X, board, H), center=(0, s * (Y - board) / 2, H / 2))
        pieces.append(Piece(mesh, PRINT, uv, texture))
    spine, uv = g.textured_box((0.04 * X, Y, H), center=(-0.48 * X, 0, H / 2))
    pieces.append(Piece(spine, PRINT, uv, texture))
    pieces.append(Piece(g.box((0.94 * X, Y - 2 * board, 0.94 * H), center=(0.0, 0, H / 2)), jitter(PAGES, rng, 0.02)))
    return pieces


def paperback(rng, ext, rgb, texture):
    """A paperback lying flat: printed front and back covers, pages showing on three sides."""
    X, Y, Z = _xyz(ext)
    cover = 0.08 * Z
    front, uv = g.textured_box((X, Y, cover), center=(0, 0, Z - cover / 2))
    back, uv_back = g.textured_box((X, Y, cover), center=(0, 0, cover / 2))
    spine, uv_spine = g.textured_box((0.03 * X, Y, Z), center=(-0.485 * X, 0, Z / 2))
    pages = g.box((0.96 * X, 0.97 * Y, Z - 2 * cover), center=(0.01 * X, 0, Z / 2))
    return [Piece(front, PRINT, uv, texture), Piece(back, PRINT, uv_back, texture), Piece(spine, PRINT, uv_spine, texture),
            Piece(pages, jitter(PAGES, rng, 0.02))]


def board_game(rng, ext, rgb, texture):
    """A boxed board game: printed lid over a plain base, the seam between them visible."""
    X, Y, Z = _xyz(ext)
    lid, uv = g.textured_box((X, Y, 0.6 * Z), center=(0, 0, 0.7 * Z))
    base = g.box((0.985 * X, 0.985 * Y, 0.42 * Z), center=(0, 0, 0.21 * Z))
    return [Piece(lid, PRINT, uv, texture), Piece(base, pick([(40, 40, 45), (235, 230, 220), (120, 30, 30)], rng))]


def _corner_rgb(texture) -> tuple[float, float, float]:
    """The colour of the texture's top-left pixel (a die's body, a carton's printed ground)."""
    return tuple(float(c) / 255 for c in texture.image[0, 0])


def carton(rng, ext, rgb, texture):
    """A cereal / cracker carton: the printed box with its top tuck flap and glued side seam showing."""
    X, Y, Z = _xyz(ext)
    body, uv = g.textured_box((X, Y, 0.965 * Z), center=(0, 0, 0.4825 * Z))
    ground = jitter(_corner_rgb(texture), rng, 0.03)
    flap = g.box((rng.uniform(0.85, 0.95) * X, 0.98 * Y, 0.035 * Z), center=(0.03 * X, 0, 0.9825 * Z))
    seam = g.box((0.02 * X, 0.99 * Y, 0.01 * Z), center=(-0.46 * X, 0, 0.968 * Z))
    return [Piece(body, PRINT, uv, texture), Piece(flap, shade(ground, 0.92)), Piece(seam, shade(ground, 0.7))]


def die(rng, ext, rgb, texture):
    """A die with rounded edges: printed faces inside a frame of edge rods and corner balls in its body colour."""
    X, Y, Z = _xyz(ext)
    r = rng.uniform(0.07, 0.11) * min(X, Y, Z)
    faces, fuv = g.textured_box((X, Y, Z), center=(0, 0, Z / 2))
    colour = _corner_rgb(texture)
    pieces = [Piece(faces, PRINT, fuv, texture)]
    half = np.array([X, Y, Z]) / 2 - r
    centre = np.array([0.0, 0.0, Z / 2])
    for axis, name in enumerate("xyz"):
        others = [a for a in range(3) if a != axis]
        for s0 in (-1, 1):
            for s1 in (-1, 1):
                c = centre.copy()
                c[others[0]] += s0 * half[others[0]]
                c[others[1]] += s1 * half[others[1]]
                pieces.append(Piece(g.cylinder(r * 1.02, 2 * half[axis], center=tuple(c), axis=name, sections=8), colour))
    for signs in np.ndindex(2, 2, 2):
        c = centre + (2 * np.array(signs) - 1) * half
        pieces.append(Piece(g.ellipsoid((r * 1.02,) * 3, center=tuple(c), subdivisions=1), colour))
    return pieces


MODELS = {
    "can_of_soda": can, "box_of_oatmeal": canister, "bag_of_chips": chips_bag, "hardback": hardback,
    "paperback_book": paperback, "board_game": board_game, "box_of_cereal": carton, "box_of_crackers": carton,
    "dice": die, "toy_dice": die,
}
