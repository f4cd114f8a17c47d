"""Long, flat things: knives, spatulas, spoons, hammers, screwdrivers, tongs, whisks, pens, brushes.

Each is designed lying flat with its working end at +x and its handle at -x, then turned to the
object's long axis (:func:`along_long_axis`: the builders lay tools along x, knives, pens and brushes
along y). Blade and head outlines are extrusions of 2-D polygons; handles are tubes and capsules.
Models take ``(rng, extents, rgb)`` like every family (see :mod:`bspatial.world.assets.revolve`).
"""

from __future__ import annotations

import numpy as np
import trimesh

import bspatial.world.assets.geometry as g
from bspatial.world.assets.geometry import Piece
from bspatial.world.assets.palette import DARK, STEEL, WOOD, jitter, pick, shade


def along_long_axis(pieces: list[Piece], ext) -> list[Piece]:
    """``pieces`` designed along +x, turned by +90 deg about z when the object is longer in y."""
    if ext[1] <= ext[0]:
        return pieces
    turn = trimesh.transformations.rotation_matrix(np.pi / 2, (0, 0, 1))
    out = []
    for piece in pieces:
        mesh = piece.mesh.copy()
        mesh.apply_transform(turn)
        out.append(Piece(mesh, piece.rgb))
    return out


def _lw(ext) -> tuple[float, float, float]:
    """(length, width, height) of the tool in its design frame (long axis x)."""
    return float(max(ext[0], ext[1])), float(min(ext[0], ext[1])), float(ext[2])


def _handle_colour(rng):
    return pick([(60, 35, 20), (25, 25, 28), (170, 120, 70), (180, 40, 40)], rng)


def knife(rng, ext, rgb, *, carving: bool):
    L, W, H = _lw(ext)
    split = rng.uniform(0.55, 0.65) if carving else rng.uniform(0.58, 0.68)
    x0, x1 = -L / 2 + (1 - split) * L, L / 2   # the blade runs from the bolster to the tip
    # A table knife's blade is as thick as its box allows (a 2 mm sliver vanishes at the gallery's
    # distance), its handle a darker, rounder grip, so blade and handle read apart.
    thick = 0.25 * H if carving else 0.55 * H
    blade = g.extrude([(x0, -0.45 * W), (x1 - 0.25 * (x1 - x0), -0.45 * W), (x1, 0.25 * W), (x1 - 0.05 * (x1 - x0), 0.4 * W),
                       (x0, 0.4 * W)], thick, z0=0.1 * H)
    handle = g.rounded_box((x0 + L / 2, 0.75 * W, H), 0.3 * min(W, H), center=((x0 - L / 2) / 2, 0, H / 2))
    grip = _handle_colour(rng) if carving else pick([(40, 40, 42), (90, 60, 40), (235, 235, 228)], rng)
    pieces = [Piece(blade, shade(STEEL, 1.1)), Piece(handle, grip)]
    if not carving:   # a steel bolster between grip and blade
        pieces.append(Piece(g.box((0.03 * L, 0.8 * W, 0.8 * H), center=(x0, 0, 0.45 * H)), STEEL))
    return along_long_axis(pieces, ext)


def spatula(rng, ext, rgb):
    L, W, H = _lw(ext)
    head_len = rng.uniform(0.28, 0.36) * L
    head = g.extrude([(L / 2 - head_len, -0.35 * W), (L / 2, -0.5 * W), (L / 2, 0.5 * W), (L / 2 - head_len, 0.35 * W)],
                     0.12 * H, z0=0.0)
    handle = g.capsule(0.35 * min(W, H) / 2 + 0.12 * H, L - head_len - 0.3 * H, center=(-head_len / 2, 0, 0.55 * H), axis="x")
    col = jitter(rgb, rng, 0.04)
    return along_long_axis([Piece(head, col), Piece(handle, _handle_colour(rng))], ext)


def wooden_spoon(rng, ext, rgb):
    L, W, H = _lw(ext)
    bowl_len = rng.uniform(0.22, 0.28) * L
    bowl = g.ellipsoid((bowl_len / 2, W / 2, 0.3 * H), center=(L / 2 - bowl_len / 2, 0, 0.3 * H))
    handle = g.capsule(0.2 * H, L - bowl_len - 0.4 * H, center=(-bowl_len / 2, 0, 0.3 * H), axis="x")
    wood = jitter(WOOD, rng, 0.05)
    return along_long_axis([Piece(bowl, wood), Piece(handle, wood)], ext)


def hammer(rng, ext, rgb, *, mallet: bool = False):
    L, W, H = _lw(ext)
    head_w = rng.uniform(0.12, 0.16) * L
    handle = g.capsule(0.2 * H, L - head_w - 0.4 * H, center=(-head_w / 2, 0, 0.5 * H), axis="x")
    if mallet:
        head = g.cylinder(min(head_w, H) / 2, W, center=(L / 2 - head_w / 2, 0, H / 2), axis="y")
        head_col = jitter((0.78, 0.63, 0.43), rng, 0.05)
    else:
        head = g.box((head_w, 0.5 * W, H), center=(L / 2 - head_w / 2, 0.25 * W, H / 2))
        claw = g.tube([(L / 2 - head_w / 2, -0.0 * W, H / 2), (L / 2 - head_w * 0.3, -0.3 * W, H / 2),
                       (L / 2 - head_w * 0.8, -0.5 * W, H / 2)], [0.35 * H, 0.3 * H, 0.15 * H], sides=8)
        head_col = DARK
        return along_long_axis([Piece(handle, jitter(WOOD, rng, 0.05)), Piece(head, head_col), Piece(claw, head_col)], ext)
    return along_long_axis([Piece(handle, jitter(WOOD, rng, 0.05)), Piece(head, head_col)], ext)


def screwdriver(rng, ext, rgb):
    L, W, H = _lw(ext)
    grip = rng.uniform(0.38, 0.45) * L
    handle = g.tube(np.linspace((-L / 2, 0, H / 2), (-L / 2 + grip, 0, H / 2), 5),
                    [0.35 * H, 0.5 * H, 0.5 * H, 0.45 * H, 0.3 * H], sides=10)
    shaft = g.cylinder(0.1 * H, L - grip, center=(-L / 2 + grip + (L - grip) / 2, 0, H / 2), axis="x", sections=8)
    return along_long_axis([Piece(handle, pick([(210, 40, 40), (240, 200, 30), (40, 90, 200)], rng)), Piece(shaft, STEEL)], ext)


def tongs(rng, ext, rgb):
    L, W, H = _lw(ext)
    arms = [Piece(g.tube([(-L / 2, 0.1 * s * W, H / 2), (0, 0.3 * s * W, H / 2), (0.42 * L, 0.4 * s * W, H / 2)],
                         [0.12 * W] * 3, sides=8), STEEL) for s in (-1, 1)]
    heads = [Piece(g.rounded_box((0.12 * L, 0.18 * W, H), 0.3 * H, center=(0.44 * L, 0.41 * s * W, H / 2)), STEEL)
             for s in (-1, 1)]
    grip_col = pick([(25, 25, 28), (180, 40, 40), (40, 90, 170)], rng)
    grips = [Piece(g.capsule(0.14 * W, 0.3 * L, center=(-0.3 * L, 0.2 * s * W, H / 2), axis="x"), grip_col) for s in (-1, 1)]
    hinge = Piece(g.cylinder(0.25 * W, 0.8 * H, center=(-L / 2 + 0.02 * L, 0, H / 2), sections=10), DARK)
    return along_long_axis(arms + heads + grips + [hinge], ext)


def whisk(rng, ext, rgb):
    L, W, H = _lw(ext)
    grip = rng.uniform(0.38, 0.45) * L
    handle = g.capsule(0.25 * H, grip, center=(-L / 2 + grip / 2 + 0.25 * H, 0, H / 2), axis="x")
    wires = []
    x0 = -L / 2 + grip
    for k in range(6):
        angle = np.pi * k / 6
        path = [(x0 + (L / 2 - x0) * t, 0.5 * W * np.sin(np.pi * t ** 0.7) * np.cos(angle),
                 H / 2 + 0.5 * H * np.sin(np.pi * t ** 0.7) * np.sin(angle)) for t in np.linspace(0, 1, 9)]
        wires.append(Piece(g.tube(path, [0.035 * W] * 9, sides=5), STEEL))
    return along_long_axis([Piece(handle, DARK)] + wires, ext)


def rolling_pin(rng, ext, rgb):
    L, W, H = _lw(ext)
    barrel = rng.uniform(0.6, 0.7) * L
    wood = jitter(WOOD, rng, 0.05)
    pieces = [Piece(g.cylinder(H / 2, barrel, center=(0, 0, H / 2), axis="x"), wood)]
    for s in (-1, 1):
        pieces.append(Piece(g.capsule(0.22 * H, (L - barrel) / 2 - 0.44 * H, center=(s * (barrel + (L - barrel) / 2) / 2, 0, H / 2),
                                      axis="x"), wood))
    return along_long_axis(pieces, ext)


def toothbrush(rng, ext, rgb):
    L, W, H = _lw(ext)
    handle = g.tube(np.linspace((-L / 2, 0, 0.35 * H), (L / 2, 0, 0.35 * H), 6), [0.35 * W, 0.45 * W, 0.4 * W, 0.3 * W, 0.3 * W, 0.35 * W],
                    sides=8)
    bristles = g.rounded_box((0.22 * L, 0.8 * W, 0.6 * H), 0.1 * W, center=(L / 2 - 0.13 * L, 0, 0.6 * H))
    return along_long_axis([Piece(handle, jitter(rgb, rng, 0.05)), Piece(bristles, (0.95, 0.95, 0.97))], ext)


def pen(rng, ext, rgb):
    L, W, H = _lw(ext)
    body = g.tube(np.linspace((-L / 2, 0, H / 2), (L / 2, 0, H / 2), 5), [0.3 * H, 0.45 * H, 0.45 * H, 0.4 * H, 0.05 * H], sides=8)
    clip = g.box((0.3 * L, 0.1 * W, 0.2 * H), center=(-0.3 * L, 0, 0.85 * H))
    col = jitter(rgb, rng, 0.05)
    return along_long_axis([Piece(body, col), Piece(clip, STEEL)], ext)


def scrub_brush(rng, ext, rgb):
    L, W, H = _lw(ext)
    block = g.rounded_box((L, W, 0.45 * H), 0.2 * W, center=(0, 0, 0.55 * H + 0.225 * H))
    bristles = g.box((0.9 * L, 0.85 * W, 0.55 * H), center=(0, 0, 0.275 * H))
    return along_long_axis([Piece(block, jitter(rgb, rng, 0.05)), Piece(bristles, pick([(230, 200, 60), (40, 40, 40)], rng))], ext)


MODELS = {
    "carving_knife": lambda rng, ext, rgb: knife(rng, ext, rgb, carving=True),
    "table_knife": lambda rng, ext, rgb: knife(rng, ext, rgb, carving=False),
    "spatula": spatula, "wooden_spoon": wooden_spoon, "hammer": hammer,
    "mallet": lambda rng, ext, rgb: hammer(rng, ext, rgb, mallet=True),
    "screwdriver": screwdriver, "tongs": tongs, "whisk": whisk, "rolling_pin": rolling_pin,
    "toothbrush": toothbrush, "pen": pen, "scrub_brush": scrub_brush,
}
