"""Surfaces of revolution: tableware, cookware, bottles, vases, bins and round fruit.

Every model takes ``(rng, extents, rgb)``: the object's bounding box (x, y, z full extents, m) and its
builder's colour, and returns :class:`~bspatial.world.assets.geometry.Piece` s in a design frame whose
footprint is round with radius ``R = min(x, y) / 2`` and height ``H = z`` (the fit stretches it to the
box exactly). Proportions (rim flare, neck length, handle size) are drawn per instance inside ranges
that keep the category recognisable.
"""

from __future__ import annotations

import numpy as np

import bspatial.world.assets.geometry as g
import bspatial.world.assets.prints as prints
from bspatial.world.assets.geometry import Piece
from bspatial.world.assets.palette import DARK, LEAF, STEEL, WHITE, jitter, pick, shade


def _rh(ext) -> tuple[float, float]:
    return float(min(ext[0], ext[1]) / 2), float(ext[2])


def _scaled(profile, R: float, H: float) -> np.ndarray:
    return np.asarray(profile, dtype=float) * (R, H)


def _vessel(R, H, *, foot, flare, wall, floor) -> object:
    """An open vessel (bowl, mug, glass, pot): outer wall up to the rim, inner wall back down."""
    return g.revolve(_scaled([(0, 0), (foot, 0), (foot, 0.04), (flare, 0.55), (1.0, 1.0), (1.0 - wall, 1.0),
                              (flare - wall, 0.55), (foot - wall, floor), (0, floor)], R, H))


def bowl(rng, ext, rgb):
    R, H = _rh(ext)
    body = _vessel(R, H, foot=rng.uniform(0.4, 0.55), flare=rng.uniform(0.82, 0.92), wall=0.07, floor=0.12)
    return [Piece(body, jitter(rgb, rng))]


def plate(rng, ext, rgb, accent):
    """A plate or saucer: a glazed body in ``accent`` (the builder's well colour, white on most) with a
    raised rim band in ``rgb`` (the builder's rim colour, which tells plates of a task apart)."""
    R, H = _rh(ext)
    well = rng.uniform(0.55, 0.7)
    body = g.revolve(_scaled([(0, 0), (well * 0.9, 0), (well, 0.35), (0.97, 0.85), (0.97, 0.9), (0.9, 0.9),
                              (well, 0.6), (0, 0.6)], R, H))
    band = g.torus(0.95 * R, 0.035 * R, center=(0, 0, 0.93 * H))   # a ring on the rim, flattened to the rim's height
    band.vertices[:, 2] = 0.93 * H + (band.vertices[:, 2] - 0.93 * H) * (0.07 * H / (0.035 * R))
    # The well's edge in a darker glaze: the step from rim to well is what tells a plate from a flat disc.
    edge = g.torus((well + 0.03) * R, 0.03 * R, center=(0, 0, 0.68 * H))
    edge.vertices[:, 2] = 0.68 * H + (edge.vertices[:, 2] - 0.68 * H) * (0.06 * H / (0.03 * R))
    glaze = jitter(accent, rng, 0.02)
    return [Piece(body, glaze), Piece(edge, shade(glaze, 0.82)), Piece(band, jitter(rgb, rng, 0.02))]


def saucer(rng, ext, rgb, accent):
    """A saucer: a small, deeper dish whose middle holds a raised ring the cup stands in, and a thin
    coloured line round the rim."""
    R, H = _rh(ext)
    body = g.revolve(_scaled([(0, 0), (0.45, 0), (0.5, 0.3), (0.97, 0.8), (0.97, 0.86), (0.9, 0.86), (0.5, 0.5),
                              (0.42, 0.45), (0, 0.45)], R, H))
    ring = g.torus(0.3 * R, 0.05 * R, center=(0, 0, 0.5 * H))
    ring.vertices[:, 2] = 0.5 * H + (ring.vertices[:, 2] - 0.5 * H) * (0.12 * H / (0.05 * R))
    line = g.torus(0.95 * R, 0.03 * R, center=(0, 0, 0.9 * H))
    line.vertices[:, 2] = 0.9 * H + (line.vertices[:, 2] - 0.9 * H) * (0.1 * H / (0.03 * R))
    glaze = jitter(accent, rng, 0.02)
    return [Piece(body, glaze), Piece(ring, shade(glaze, 0.75)), Piece(line, jitter(rgb, rng, 0.02))]


def platter(rng, ext, rgb, accent):
    """A serving platter: a broad flat rim with two coloured lines round a shallow well (its footprint is
    its builder's: round boxes give a round platter)."""
    R, H = _rh(ext)
    body = g.revolve(_scaled([(0, 0), (0.6, 0), (0.66, 0.4), (0.72, 0.62), (0.98, 0.82), (0.98, 0.9), (0.72, 0.72),
                              (0.66, 0.5), (0, 0.5)], R, H))
    # An all-white builder (one colour for rim and well) still gets its lines in a glaze colour.
    ink = rgb if max(abs(a - b) for a, b in zip(rgb, accent)) > 0.15 else pick([(40, 70, 150), (150, 40, 40), (40, 110, 70)], rng)
    lines = []
    for radius in (0.93, 0.76):
        line = g.torus(radius * R, 0.025 * R, center=(0, 0, 0.85 * H))
        line.vertices[:, 2] = 0.85 * H + (line.vertices[:, 2] - 0.85 * H) * (0.08 * H / (0.025 * R))
        lines.append(Piece(line, jitter(ink, rng, 0.02)))
    return [Piece(body, jitter(accent, rng, 0.02))] + lines


def cup(rng, ext, rgb, *, handle: bool):
    R, H = _rh(ext)
    if handle:   # a mug: straight walls, the handle on the side (-y: seen side-on from the robot)
        R = float(min(ext[0], ext[1]) / 2) / 1.15
        body = _vessel(R, H, foot=rng.uniform(0.92, 0.97), flare=1.0, wall=0.08, floor=0.08)
        col = jitter(rgb, rng)
        size = rng.uniform(0.26, 0.32) * H
        return [Piece(body, col), Piece(g.arc_handle((0, -0.95 * R, 0.52 * H), size, 0.06 * H), col)]
    body = _vessel(R, H, foot=rng.uniform(0.8, 0.9), flare=rng.uniform(0.92, 1.0), wall=0.08, floor=0.08)
    return [Piece(body, jitter(rgb, rng))]


def wineglass(rng, ext, rgb):
    R, H = _rh(ext)
    stem = rng.uniform(0.3, 0.45)
    body = g.revolve(_scaled([(0, 0), (0.75, 0), (0.75, 0.02), (0.08, 0.04), (0.06, stem), (0.7, stem + 0.12),
                              (1.0, 0.72), (0.9, 1.0), (0.85, 1.0), (0.93, 0.72), (0.6, stem + 0.15), (0, stem + 0.1)], R, H))
    return [Piece(body, jitter(rgb, rng, 0.02))]


def bottle(rng, ext, rgb, *, shoulder=(0.55, 0.7), neck=(0.22, 0.35), cap_rgb=None, label=None):
    """A bottle: body, shoulder, neck and a cap in its own colour; ``label`` (a texture) wraps the body's
    middle, printed with what the bottle holds."""
    R, H = _rh(ext)
    s, n = rng.uniform(*shoulder), rng.uniform(*neck)
    body = g.revolve(_scaled([(0, 0), (0.95, 0), (1.0, 0.03), (1.0, s), (n, s + 0.17), (n, 0.9), (0, 0.9)], R, H))
    cap = g.cylinder(n * R * 1.1, 0.1 * H, center=(0, 0, 0.95 * H))
    pieces = [Piece(body, jitter(rgb, rng, 0.04)), Piece(cap, cap_rgb or pick([(30, 30, 30), (200, 30, 30), (230, 230, 230)], rng))]
    if label is not None:
        band, uv = g.textured_cylinder(1.01 * R, 0.32 * s * H, center=(0, 0, 0.52 * s * H))
        pieces.append(Piece(band, (1.0, 1.0, 1.0), uv, label))
    return pieces


def olive_oil_bottle(rng, ext, rgb):
    """Olive oil: a tall dark-green glass bottle, long slim neck, gold cap, a cream label saying so."""
    glass = jitter((0.2, 0.32, 0.08), rng, 0.03)
    return bottle(rng, ext, glass, shoulder=(0.5, 0.58), neck=(0.2, 0.24), cap_rgb=(0.78, 0.62, 0.2),
                  label=prints.wrap_label("OLIVE OIL", (240, 226, 160), (45, 75, 20), (110, 130, 35)))


def vinegar_bottle(rng, ext, rgb):
    """Vinegar: a clear-amber bottle with round shoulders, a white cap and a white label saying so."""
    return bottle(rng, ext, jitter((0.72, 0.45, 0.2), rng, 0.03), shoulder=(0.62, 0.7), neck=(0.28, 0.34),
                  cap_rgb=(0.93, 0.93, 0.9), label=prints.wrap_label("VINEGAR", (248, 246, 238), (150, 30, 30), (150, 30, 30)))


def wine_bottle(rng, ext, rgb):
    return bottle(rng, ext, rgb, shoulder=(0.58, 0.66), neck=(0.25, 0.3), cap_rgb=(0.45, 0.1, 0.12))


def jug_bottle(rng, ext, rgb):
    """Detergent: a wide bottle with a side grip and a big cap."""
    R, H = _rh(ext)
    pieces = bottle(rng, ext, rgb, shoulder=(0.7, 0.78), neck=(0.35, 0.42),
                    label=prints.wrap_label("DETERGENT", (250, 250, 250), (20, 60, 160), (230, 120, 20)))
    pieces.append(Piece(g.torus(0.22 * H, 0.05 * H, center=(-0.75 * R, 0, 0.62 * H), axis="y"), jitter(rgb, rng)))
    return pieces


def pump_bottle(rng, ext, rgb):
    """Liquid soap: a bottle with a pump head and spout."""
    R, H = _rh(ext)
    body = g.revolve(_scaled([(0, 0), (0.95, 0), (1.0, 0.03), (1.0, 0.62), (0.5, 0.7), (0, 0.7)], R, H))
    stem = g.cylinder(0.18 * R, 0.2 * H, center=(0, 0, 0.78 * H))
    head = g.box((0.9 * R, 0.3 * R, 0.08 * H), center=(0.3 * R, 0, 0.9 * H))
    white = pick([(240, 240, 240), (30, 30, 30)], rng)
    return [Piece(body, jitter(rgb, rng)), Piece(stem, white), Piece(head, white)]


def spray_bottle(rng, ext, rgb):
    """Disinfectant: a bottle with a trigger sprayer head."""
    R, H = _rh(ext)
    body = g.revolve(_scaled([(0, 0), (0.95, 0), (1.0, 0.03), (1.0, 0.6), (0.45, 0.68), (0.35, 0.72), (0, 0.72)], R, H))
    head = g.box((1.6 * R, 0.45 * R, 0.16 * H), center=(0.25 * R, 0, 0.8 * H))
    trigger = g.box((0.2 * R, 0.3 * R, 0.14 * H), center=(0.55 * R, 0, 0.68 * H))
    col = pick([(240, 240, 240), (40, 120, 200), (30, 30, 30)], rng)
    band, uv = g.textured_cylinder(1.01 * R, 0.22 * H, center=(0, 0, 0.3 * H))
    label = prints.wrap_label("DISINFECT", (250, 250, 250), (20, 110, 60), (20, 110, 60))
    return [Piece(body, jitter(rgb, rng)), Piece(head, col), Piece(trigger, col), Piece(band, (1.0, 1.0, 1.0), uv, label)]


def vase(rng, ext, rgb):
    R, H = _rh(ext)
    belly, neck = rng.uniform(0.3, 0.5), rng.uniform(0.35, 0.55)
    body = g.revolve(_scaled([(0, 0), (0.55, 0), (1.0, belly), (neck, 0.82), (neck * 1.2, 0.96), (neck * 1.3, 1.0),
                              (neck * 1.1, 1.0), (neck * 0.9, 0.85), (0, 0.85)], R, H))
    return [Piece(body, pick([(60, 120, 170), (200, 90, 60), (230, 225, 210), (40, 110, 90), (150, 50, 90)], rng))]


def pot(rng, ext, rgb, *, lid: bool, side_handles: bool, long_handle: bool = False):
    """Cookware: a straight-walled pot (stockpot, casserole, saucepan, frying pan)."""
    R, H = _rh(ext)
    pieces = []
    if long_handle:   # pans: the footprint is the disc; the handle runs along +x (the builder's layout)
        R = float(ext[1] / 2)
    body = _vessel(R, H * (0.8 if lid else 1.0), foot=0.92, flare=0.97, wall=0.05, floor=0.08)
    metal = jitter(rgb, rng, 0.03)
    pieces.append(Piece(body, metal))
    if lid:
        lid_mesh = g.revolve(_scaled([(0, 0.8), (1.02, 0.8), (0.9, 0.88), (0.15, 0.92), (0.15, 1.0), (0, 1.0)], R, H))
        pieces.append(Piece(lid_mesh, shade(metal, 0.9)))
    if side_handles:
        for side in (-1, 1):
            pieces.append(Piece(g.box((0.16 * R, 0.35 * R, 0.06 * H), center=(side * 1.05 * R, 0, 0.7 * H)), DARK))
    if long_handle:
        length = float(ext[0]) - 2 * R
        pieces.append(Piece(g.capsule(0.025 * float(ext[0]), length, center=(R + length / 2, 0, 0.75 * H), axis="x"), DARK))
    return pieces


def bucket(rng, ext, rgb):
    R, H = _rh(ext)
    body = _vessel(R, H * 0.85, foot=0.8, flare=0.9, wall=0.04, floor=0.06)
    bail = g.torus(0.95 * R, 0.02 * R, center=(0, 0, 0.85 * H), axis="x")
    return [Piece(body, jitter(rgb, rng)), Piece(bail, STEEL)]


def trash_can(rng, ext, rgb):
    R, H = _rh(ext)
    body = g.revolve(_scaled([(0, 0), (0.88, 0), (1.0, 0.9), (0, 0.9)], R, H))
    lid = g.revolve(_scaled([(0, 0.9), (1.03, 0.9), (1.0, 0.96), (0.3, 1.0), (0, 1.0)], R, H))
    pedal = g.box((0.25 * R, 0.3 * R, 0.04 * H), center=(-0.95 * R, 0, 0.04 * H))
    return [Piece(body, jitter(rgb, rng)), Piece(lid, shade(rgb, 0.8)), Piece(pedal, DARK)]


def basket(rng, ext, rgb):
    R, H = _rh(ext)
    body = _vessel(R, H * 0.8, foot=0.8, flare=0.92, wall=0.06, floor=0.06)
    rims = [Piece(g.torus(R * (0.8 + 0.2 * z), 0.03 * R, center=(0, 0, z * 0.8 * H)), shade(rgb, 0.75))
            for z in (0.3, 0.6, 0.98)]
    handle = g.torus(0.8 * R, 0.04 * R, center=(0, 0, 0.8 * H), axis="x")
    return [Piece(body, jitter(rgb, rng))] + rims + [Piece(handle, shade(rgb, 0.8))]


def pot_plant(rng, ext, rgb):
    R, H = _rh(ext)
    pot_h = rng.uniform(0.35, 0.45)
    pot_mesh = g.revolve(_scaled([(0, 0), (0.55, 0), (0.7, pot_h), (0, pot_h)], R, H))
    pieces = [Piece(pot_mesh, pick([(190, 100, 60), (230, 225, 215), (60, 60, 65)], rng))]
    stem = g.cylinder(0.05 * R, 0.3 * H, center=(0, 0, (pot_h + 0.12) * H))
    pieces.append(Piece(stem, (0.35, 0.25, 0.12)))
    for k in range(5):
        angle = 2 * np.pi * k / 5 + rng.uniform(-0.3, 0.3)
        r, z = rng.uniform(0.3, 0.55) * R, rng.uniform(pot_h + 0.25, 0.8) * H
        leaf = g.ellipsoid((0.45 * R, 0.45 * R, 0.2 * H), center=(r * np.cos(angle), r * np.sin(angle), z), subdivisions=1)
        pieces.append(Piece(leaf, jitter(rgb if rgb[1] > rgb[0] else LEAF, rng, 0.08)))
    return pieces


def paper_towel(rng, ext, rgb):
    R, H = _rh(ext)
    hole = rng.uniform(0.3, 0.4)
    roll = g.revolve(_scaled([(0, 0), (1.0, 0), (1.0, 1.0), (hole, 1.0), (hole, 0.95), (0, 0.95)], R, H))
    core = g.cylinder(0.95 * hole * R, H, center=(0, 0, H / 2))
    return [Piece(roll, jitter(WHITE, rng, 0.03)), Piece(core, jitter((0.62, 0.48, 0.32), rng, 0.04))]


def shaker(rng, ext, rgb):
    """A salt shaker: a glass body showing the white salt inside and a domed steel cap with holes."""
    R, H = _rh(ext)
    waist = rng.uniform(0.78, 0.88)
    glass = g.revolve(_scaled([(0, 0), (1.0, 0), (1.0, 0.06), (waist, 0.45), (0.88, 0.74), (0, 0.74)], R, H))
    salt = g.revolve(_scaled([(0, 0.01), (1.01, 0.01), (1.01, 0.05), (waist + 0.015, 0.4), (0, 0.4)], R, H))
    cap = g.revolve(_scaled([(0, 0.72), (0.93, 0.72), (0.93, 0.86), (0.75, 0.97), (0.4, 1.0), (0, 1.0)], R, H))
    holes = [Piece(g.cylinder(0.09 * R, 0.03 * H, center=(rr * R * np.cos(a), rr * R * np.sin(a), 0.99 * H), sections=6), DARK)
             for rr, n in ((0.0, 1), (0.3, 6)) for a in np.linspace(0, 2 * np.pi, n, endpoint=False)]
    return ([Piece(glass, jitter((0.72, 0.8, 0.84), rng, 0.03)), Piece(salt, (0.97, 0.97, 0.97)),
             Piece(cap, jitter(STEEL, rng, 0.03))] + holes)


def pitcher(rng, ext, rgb):
    R, H = _rh(ext)
    R = R / 1.2
    body = _vessel(R, H, foot=0.85, flare=1.0, wall=0.06, floor=0.05)
    handle = g.arc_handle((0, 0.95 * R, 0.55 * H), 0.3 * H, 0.05 * H, side=(0, 1, 0))
    spout = g.tube([(0, -0.85 * R, 0.86 * H), (0, -1.15 * R, 1.0 * H)], [0.22 * R, 0.1 * R], sides=8)
    col = jitter(rgb, rng)
    return [Piece(body, col), Piece(handle, col), Piece(spout, col)]


def kettle(rng, ext, rgb):
    R, H = _rh(ext)
    body = g.revolve(_scaled([(0, 0), (0.8, 0), (0.85, 0.05), (0.8, 0.55), (0.55, 0.7), (0, 0.72)], R, H))
    lid = g.revolve(_scaled([(0, 0.7), (0.5, 0.7), (0.3, 0.76), (0.12, 0.78), (0.12, 0.82), (0, 0.82)], R, H))
    handle = g.tube([(0, -0.5 * R, 0.62 * H), (0, -0.45 * R, 0.9 * H), (0, -0.2 * R, 1.0 * H), (0, 0.2 * R, 1.0 * H),
                     (0, 0.45 * R, 0.9 * H), (0, 0.5 * R, 0.62 * H)], [0.08 * R] * 6, sides=8)
    spout = g.tube([(0.6 * R, 0, 0.2 * H), (0.9 * R, 0, 0.5 * H), (1.0 * R, 0, 0.66 * H)],
                   [0.16 * R, 0.1 * R, 0.08 * R], sides=8)
    metal = pick([(200, 205, 210), (190, 40, 40), (40, 40, 45), (240, 240, 235)], rng)
    return [Piece(body, metal), Piece(lid, shade(metal, 0.85)), Piece(handle, DARK), Piece(spout, metal)]


def teapot(rng, ext, rgb):
    R, H = _rh(ext)
    body = g.revolve(_scaled([(0, 0), (0.5, 0), (0.62, 0.1), (0.7, 0.4), (0.55, 0.7), (0.35, 0.76), (0, 0.76)], R, H))
    lid = g.revolve(_scaled([(0, 0.74), (0.38, 0.74), (0.25, 0.85), (0.08, 0.88), (0.12, 0.98), (0, 1.0)], R, H))
    handle = g.arc_handle((0, 0.62 * R, 0.42 * H), 0.22 * H, 0.05 * H, side=(0, 1, 0))
    spout = g.tube([(0, -0.55 * R, 0.25 * H), (0, -0.85 * R, 0.5 * H), (0, -1.0 * R, 0.72 * H)],
                   [0.14 * R, 0.08 * R, 0.06 * R], sides=8)
    col = pick([(245, 245, 240), (60, 110, 170), (170, 60, 50), (60, 120, 80)], rng)
    return [Piece(body, col), Piece(lid, col), Piece(handle, col), Piece(spout, col)]


def watering_can(rng, ext, rgb):
    """A watering can: a squat body, a long spout rising from its foot to a rose, an arched handle."""
    R, H = _rh(ext)
    body_h = rng.uniform(0.5, 0.6)
    body = g.revolve(_scaled([(0, 0), (0.6, 0), (0.62, 0.05), (0.6, body_h), (0.35, body_h + 0.08), (0, body_h + 0.08)], R, H))
    spout = g.tube(np.linspace((0.45 * R, 0, 0.12 * H), (0.92 * R, 0, 0.8 * H), 5), [0.09 * R, 0.08 * R, 0.07 * R, 0.06 * R, 0.06 * R],
                   sides=8)
    rose = g.revolve(_scaled([(0, 0), (0.06, 0), (0.16, 0.1), (0.16, 0.13), (0, 0.13)], R, H))
    rose.apply_translation((0.95 * R, 0, 0.76 * H))
    arc = [(-0.5 * R + 0.7 * R * (1 - np.cos(a)) / 2, 0, (body_h + 0.05) * H + (0.95 - body_h) * H * np.sin(a))
           for a in np.linspace(0, np.pi, 9)]
    handle = g.tube(arc, [0.06 * R] * 9, sides=8)
    col = jitter(rgb, rng)
    return [Piece(body, col), Piece(spout, col), Piece(rose, shade(col, 0.8)), Piece(handle, col)]


def round_fruit(rng, ext, rgb, *, top=0.85, dimple=0.06, stem=True, leaf=False):
    """Apples, oranges, tomatoes, onions: a revolved sphere-ish profile with a dimple and a stem."""
    R, H = _rh(ext)
    prof = [(0, dimple), (0.45, 0.0), (0.85, 0.15), (1.0, 0.45), (0.9, 0.8), (0.55, 0.98), (0.15, 1.0 - dimple),
            (0, top)]
    pieces = [Piece(g.revolve(_scaled(prof, R, H), sections=16), jitter(rgb, rng, 0.05))]
    if stem:
        pieces.append(Piece(g.cylinder(0.05 * R, 0.15 * H, center=(0, 0, (top + 0.05) * H), sections=6), (0.35, 0.24, 0.12)))
    if leaf:
        pieces.append(Piece(g.ellipsoid((0.3 * R, 0.12 * R, 0.04 * H), center=(0.2 * R, 0, 0.97 * H), subdivisions=1), LEAF))
    return pieces


def apple(rng, ext, rgb):
    return round_fruit(rng, ext, rgb, top=0.88, dimple=0.1, leaf=bool(rng.integers(2)))


def citrus(rng, ext, rgb):
    R, H = _rh(ext)
    body = g.bumpy(g.ellipsoid((R, R, H / 2), center=(0, 0, H / 2)), 0.015, rng)
    return [Piece(body, jitter(rgb, rng, 0.04))]


def lemon(rng, ext, rgb):
    """A lemon lying along y: an ellipsoid with pointed tips (the builder's capsule along y)."""
    lx, ly, lz = ext
    body = g.ellipsoid((lx / 2, ly * 0.42, lz / 2), center=(0, 0, lz / 2))
    tips = [Piece(g.tube([(0, s * ly * 0.38, lz / 2), (0, s * ly * 0.5, lz / 2)], [lz * 0.18, lz * 0.04], sides=8),
                  jitter(rgb, rng, 0.03)) for s in (-1, 1)]
    return [Piece(body, jitter(rgb, rng, 0.04))] + tips


def onion(rng, ext, rgb):
    R, H = _rh(ext)
    prof = [(0, 0), (0.35, 0.02), (0.9, 0.3), (1.0, 0.5), (0.75, 0.8), (0.25, 0.93), (0.08, 1.0), (0, 1.0)]
    return [Piece(g.revolve(_scaled(prof, R, H), sections=16), jitter(rgb, rng, 0.05))]


def tomato(rng, ext, rgb):
    R, H = _rh(ext)
    body = g.revolve(_scaled([(0, 0.05), (0.6, 0), (1.0, 0.35), (0.95, 0.75), (0.6, 0.95), (0, 0.9)], R, H * 0.9), sections=16)
    calyx = [Piece(g.ellipsoid((0.35 * R, 0.08 * R, 0.05 * H), center=(0.2 * R * np.cos(a), 0.2 * R * np.sin(a), 0.85 * H),
                               subdivisions=1), LEAF) for a in np.linspace(0, 2 * np.pi, 5, endpoint=False)]
    stem = Piece(g.cylinder(0.05 * R, 0.15 * H, center=(0, 0, 0.92 * H), sections=6), LEAF)
    return [Piece(body, jitter(rgb, rng, 0.04))] + calyx + [stem]


def bell_pepper(rng, ext, rgb):
    """Four lobes (ellipsoids round the axis) and a green stem."""
    R, H = _rh(ext)
    lobes = [Piece(g.ellipsoid((0.55 * R, 0.55 * R, 0.4 * H), center=(0.42 * R * np.cos(a), 0.42 * R * np.sin(a), 0.42 * H),
                               subdivisions=2), jitter(rgb, rng, 0.04)) for a in np.linspace(0, 2 * np.pi, 4, endpoint=False)]
    stem = Piece(g.tube([(0, 0, 0.75 * H), (0.05 * R, 0, 0.9 * H), (0.15 * R, 0, 1.0 * H)], [0.12 * R, 0.08 * R, 0.07 * R],
                        sides=8), LEAF)
    return lobes + [stem]


def can(rng, ext, rgb):
    R, H = _rh(ext)
    body = g.revolve(_scaled([(0, 0.02), (0.85, 0), (1.0, 0.06), (1.0, 0.9), (0.85, 0.98), (0.8, 1.0), (0, 1.0)], R, H))
    return [Piece(body, jitter(rgb, rng, 0.02))]


ACCENTED_MODELS = {"plate": plate, "saucer": saucer, "platter": platter}
"""Models that also take the builder's second colour (``model(rng, extents, rgb, accent)``)."""

MODELS = {
    "bowl": bowl, "mixing_bowl": bowl,
    "mug": lambda rng, ext, rgb: cup(rng, ext, rgb, handle=True),
    "water_glass": lambda rng, ext, rgb: cup(rng, ext, rgb, handle=False),
    "wineglass": wineglass, "wine_bottle": wine_bottle, "water_bottle": bottle, "olive_oil_bottle": olive_oil_bottle,
    "vinegar_bottle": vinegar_bottle, "detergent_bottle": jug_bottle, "liquid_soap_bottle": pump_bottle,
    "disinfectant_bottle": spray_bottle, "vase": vase,
    "stockpot": lambda rng, ext, rgb: pot(rng, ext, rgb, lid=True, side_handles=True),
    "casserole": lambda rng, ext, rgb: pot(rng, ext, rgb, lid=True, side_handles=True),
    "saucepan": lambda rng, ext, rgb: pot(rng, ext, rgb, lid=False, side_handles=False, long_handle=True),
    "frying_pan": lambda rng, ext, rgb: pot(rng, ext, rgb, lid=False, side_handles=False, long_handle=True),
    "bucket": bucket, "trash_can": trash_can, "wicker_basket": basket, "pot_plant": pot_plant,
    "paper_towel": paper_towel, "salt_shaker": shaker, "pitcher": pitcher, "kettle": kettle, "teapot": teapot,
    "watering_can": watering_can, "apple": apple, "orange": citrus, "lime": citrus, "lemon": lemon,
    "vidalia_onion": onion, "beefsteak_tomato": tomato, "bell_pepper": bell_pepper,
}
