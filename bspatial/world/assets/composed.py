"""Shapes composed of several parts: elongated food (banana, carrot, cucumber, eggplant, potato, mango)
and toys (teddy bear, car, train, figure, doll, ball).

Elongated food is designed along +x (stem end at -x) and turned to the object's long axis like tools
(:func:`~bspatial.world.assets.tools.along_long_axis`). Models take ``(rng, extents, rgb)``.
"""

from __future__ import annotations

import numpy as np

import bspatial.world.assets.geometry as g
from bspatial.world.assets.geometry import Piece
from bspatial.world.assets.palette import DARK, LEAF, jitter, pick, shade
from bspatial.world.assets.tools import along_long_axis


def _lwh(ext):
    return float(max(ext[0], ext[1])), float(min(ext[0], ext[1])), float(ext[2])


def banana(rng, ext, rgb):
    L, W, H = _lwh(ext)
    bend = rng.uniform(0.25, 0.4) * L
    t = np.linspace(-1, 1, 9)
    path = np.stack([t * L / 2, bend * (1 - t ** 2) - bend / 2, np.full_like(t, H / 2)], 1)
    radii = H / 2 * np.sin(np.linspace(0.25, np.pi - 0.35, 9)) ** 0.6
    body = g.tube(path, radii, sides=6)   # six sides: a banana's ridges
    tip = g.cylinder(0.12 * H, 0.08 * L, center=(-L / 2 - 0.02 * L, -bend / 2, H / 2), axis="x", sections=6)
    return along_long_axis([Piece(body, jitter(rgb, rng, 0.05)), Piece(tip, (0.3, 0.22, 0.1))], ext)


def carrot(rng, ext, rgb):
    L, W, H = _lwh(ext)
    t = np.linspace(0, 1, 8)
    path = np.stack([(0.5 - t) * L * 0.85 + 0.075 * L, np.zeros_like(t), np.full_like(t, H / 2)], 1)
    radii = H / 2 * (1 - t) ** 0.8 + 0.02 * H
    body = g.tube(path[::-1], radii[::-1], sides=10)
    tops = [Piece(g.ellipsoid((0.12 * L, 0.1 * H, 0.12 * H), center=(-0.38 * L, s * 0.12 * H, H / 2 + s * 0.05 * H), subdivisions=1),
                  LEAF) for s in (-1, 0, 1)]
    return along_long_axis([Piece(body, jitter(rgb, rng, 0.04))] + tops, ext)


def cucumber(rng, ext, rgb):
    L, W, H = _lwh(ext)
    t = np.linspace(-1, 1, 9)
    path = np.stack([t * L / 2, 0.05 * L * (1 - t ** 2), np.full_like(t, H / 2)], 1)
    radii = H / 2 * (1 - 0.7 * np.abs(t) ** 4)
    return along_long_axis([Piece(g.tube(path, radii, sides=10), jitter(rgb, rng, 0.03))], ext)


def eggplant(rng, ext, rgb):
    L, W, H = _lwh(ext)
    t = np.linspace(0, 1, 9)
    path = np.stack([(t - 0.5) * 0.85 * L + 0.075 * L, 0.04 * L * np.sin(np.pi * t), np.full_like(t, H / 2)], 1)
    radii = H / 2 * (0.45 + 0.55 * np.sin(np.pi * (0.15 + 0.6 * t))) * np.where(t > 0.95, 0.6, 1.0)
    body = g.tube(path, radii, sides=12)
    cap = g.tube([(-0.5 * L, 0, H / 2), (-0.36 * L, 0, H / 2)], [0.06 * H, 0.28 * H], sides=8)
    return along_long_axis([Piece(body, jitter(rgb, rng, 0.04)), Piece(cap, LEAF)], ext)


def potato(rng, ext, rgb):
    L, W, H = _lwh(ext)
    body = g.bumpy(g.ellipsoid((L / 2, W / 2, H / 2), center=(0, 0, H / 2)), 0.06, rng, lobes=4)
    return along_long_axis([Piece(body, jitter(rgb, rng, 0.05))], ext)


def mango(rng, ext, rgb):
    L, W, H = _lwh(ext)
    body = g.ellipsoid((L / 2, W / 2, H / 2), center=(0, 0, H / 2))
    v = body.vertices
    v[:, 1] += 0.15 * W * (v[:, 0] / (L / 2)) ** 2   # the kidney curve
    # A ripe mango's blend: golden body, a red-orange blush over one cheek, green round the stem end,
    # and the stem itself (a yellow ovoid alone read as a rubber duck).
    blush = g.ellipsoid((0.36 * L, 0.44 * W, 0.4 * H), center=(-0.12 * L, -0.1 * W, 0.58 * H))
    blush.vertices[:, 1] += 0.15 * W * (blush.vertices[:, 0] / (L / 2)) ** 2
    green = g.ellipsoid((0.2 * L, 0.36 * W, 0.36 * H), center=(0.32 * L, 0.05 * W, 0.55 * H))
    green.vertices[:, 1] += 0.15 * W * (green.vertices[:, 0] / (L / 2)) ** 2
    stem = g.cylinder(0.03 * min(W, H), 0.08 * H, center=(0.44 * L, 0.15 * W * 0.77, 0.62 * H), axis="x")
    gold = jitter((0.95, 0.72, 0.15), rng, 0.04)
    return along_long_axis([Piece(body, gold), Piece(blush, jitter((0.86, 0.3, 0.14), rng, 0.04)),
                            Piece(green, jitter((0.45, 0.6, 0.15), rng, 0.04)), Piece(stem, (0.35, 0.25, 0.12))], ext)


def teddy_bear(rng, ext, rgb):
    """Sitting bear: body, head, ears, muzzle, arms, legs (the builder's spheres, softened)."""
    X, Y, H = (float(v) for v in ext)
    fur = jitter(rgb, rng, 0.06)
    light = shade(fur, 1.35)
    parts = [g.ellipsoid((0.45 * X, 0.38 * Y, 0.3 * H), center=(0, 0, 0.3 * H)),
             g.ellipsoid((0.36 * X, 0.3 * Y, 0.22 * H), center=(0, 0, 0.68 * H))]
    parts += [g.ellipsoid((0.1 * X, 0.1 * Y, 0.09 * H), center=(0, s * 0.22 * Y, 0.88 * H), subdivisions=1) for s in (-1, 1)]
    parts += [g.ellipsoid((0.15 * X, 0.12 * Y, 0.18 * H), center=(-0.15 * X, s * 0.38 * Y, 0.35 * H), subdivisions=1) for s in (-1, 1)]
    parts += [g.ellipsoid((0.2 * X, 0.1 * Y, 0.1 * H), center=(-0.3 * X, s * 0.2 * Y, 0.1 * H), subdivisions=1) for s in (-1, 1)]
    pieces = [Piece(m, fur) for m in parts]
    pieces.append(Piece(g.ellipsoid((0.12 * X, 0.12 * Y, 0.08 * H), center=(-0.3 * X, 0, 0.64 * H), subdivisions=1), light))
    pieces += [Piece(g.ellipsoid((0.04 * X, 0.04 * Y, 0.03 * H), center=(-0.32 * X, s * 0.1 * Y, 0.74 * H), subdivisions=1), DARK)
               for s in (-1, 1)]
    return pieces


def toy_car(rng, ext, rgb):
    X, Y, H = (float(v) for v in ext)
    body = g.rounded_box((X, 0.9 * Y, 0.4 * H), 0.12 * H, center=(0, 0, 0.42 * H))
    cabin = g.rounded_box((0.5 * X, 0.8 * Y, 0.35 * H), 0.1 * H, center=(-0.05 * X, 0, 0.78 * H))
    col = jitter(rgb, rng, 0.05)
    pieces = [Piece(body, col), Piece(cabin, (0.65, 0.8, 0.9))]
    for sx in (-0.3, 0.3):
        for sy in (-1, 1):
            pieces.append(Piece(g.cylinder(0.2 * H, 0.12 * Y, center=(sx * X, sy * 0.44 * Y, 0.2 * H), axis="y", sections=12), DARK))
    return pieces


def toy_train(rng, ext, rgb):
    X, Y, H = (float(v) for v in ext)
    col = jitter(rgb, rng, 0.05)
    pieces = [Piece(g.cylinder(0.3 * H, 0.6 * X, center=(-0.18 * X, 0, 0.45 * H), axis="x"), col),
              Piece(g.box((0.35 * X, Y * 0.9, 0.65 * H), center=(0.3 * X, 0, 0.5 * H)), shade(col, 0.7)),
              Piece(g.box((0.42 * X, Y, 0.08 * H), center=(0.3 * X, 0, 0.86 * H)), DARK),
              Piece(g.cylinder(0.09 * H, 0.3 * H, center=(-0.35 * X, 0, 0.85 * H)), DARK)]
    for sx in (-0.35, 0.0, 0.3):
        for sy in (-1, 1):
            pieces.append(Piece(g.cylinder(0.16 * H, 0.1 * Y, center=(sx * X, sy * 0.45 * Y, 0.16 * H), axis="y", sections=12),
                                (0.8, 0.15, 0.15)))
    return pieces


def figure(rng, ext, rgb):
    """A standing figure or doll: legs, torso, arms, head, hair."""
    X, Y, H = (float(v) for v in ext)
    skin = pick([(235, 195, 165), (190, 140, 100), (120, 80, 55)], rng)
    cloth = jitter(rgb, rng, 0.05)
    pieces = [Piece(g.capsule(0.09 * Y, 0.3 * H, center=(0, s * 0.12 * Y, 0.2 * H)), shade(cloth, 0.6)) for s in (-1, 1)]
    pieces.append(Piece(g.rounded_box((0.8 * X, 0.55 * Y, 0.32 * H), 0.05 * H, center=(0, 0, 0.52 * H)), cloth))
    pieces += [Piece(g.capsule(0.06 * Y, 0.25 * H, center=(0, s * 0.38 * Y, 0.52 * H)), skin) for s in (-1, 1)]
    pieces.append(Piece(g.ellipsoid((0.45 * X, 0.25 * Y, 0.12 * H), center=(0, 0, 0.8 * H)), skin))
    pieces.append(Piece(g.ellipsoid((0.5 * X, 0.28 * Y, 0.08 * H), center=(0.05 * X, 0, 0.92 * H), subdivisions=1),
                        pick([(90, 50, 20), (230, 200, 90), (30, 25, 20)], rng)))
    return pieces


def ball(rng, ext, rgb):
    X, Y, H = (float(v) for v in ext)
    body = g.ellipsoid((X / 2, Y / 2, H / 2), center=(0, 0, H / 2), subdivisions=3)
    seam = g.torus(0.5 * X, 0.012 * X, center=(0, 0, H / 2), axis="x")
    return [Piece(body, jitter(rgb, rng, 0.03)), Piece(seam, (0.8, 0.15, 0.15))]


MODELS = {
    "banana": banana, "carrot": carrot, "cucumber": cucumber, "eggplant": eggplant, "potato": potato, "mango": mango,
    "teddy_bear": teddy_bear, "toy_car": toy_car, "toy_train": toy_train, "toy_figure": figure, "doll": figure,
    "softball": ball,
}
