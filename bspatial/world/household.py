"""Household object kinds: how each bddl synset of the activities is rendered (category, shape, size range,
colour), and :func:`make_object`, which builds one dressed in its category's mesh
(:mod:`bspatial.world.assets`).

The general-VQA activity scenes (:mod:`bspatial.construction.questions.activities`) draw their objects from
:data:`RENDERABLE`; the task scenes draw their clutter (:mod:`bspatial.tasks.clutter`) from it, so a scene's
non-candidate objects are the same household things the activities show.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bspatial.world import objects as shapes
from bspatial.world.assets import dress
from bspatial.world.spec import ObjectSpec, Part, Pose
from bspatial.world.textures import rgba

@dataclass(frozen=True)
class ObjectKind:
    """How one bddl synset is rendered: its BEHAVIOR category, primitive shape and size.

    Attributes:
        category: BEHAVIOR category (bddl ``category_mapping.csv``).
        shape: ``box`` / ``cylinder`` / ``sphere`` / ``bottle`` / ``pan``, or ``builder:<name>`` for the
            detailed shapes of :mod:`bspatial.world.objects`.
        proportions: (x, y, z) extents as fractions of the longest dimension (max is 1).
        length: (low, high) range of the longest dimension (m), real-world proportions.
        rgb: base colour.
        floor: stands on the floor (buckets, baskets) rather than on furniture.
    """

    category: str
    shape: str
    proportions: tuple[float, float, float]
    length: tuple[float, float]
    rgb: tuple[int, int, int]
    floor: bool = False


def _k(category, shape, proportions, length, rgb, floor=False) -> ObjectKind:
    return ObjectKind(category, shape, proportions, length, rgb, floor)


# synset -> rendering. The most frequent small objects of bddl's activity definitions.
RENDERABLE: dict[str, ObjectKind] = {
    "rag.n.01": _k("rag", "box", (0.8, 1.0, 0.06), (0.2, 0.3), (200, 80, 80)),
    "bowl.n.01": _k("bowl", "builder:bowl", (1, 1, 0.43), (0.14, 0.14), (200, 80, 60)),
    "liquid_soap__bottle.n.01": _k("liquid_soap_bottle", "bottle", (0.35, 0.35, 1.0), (0.18, 0.24), (120, 200, 160)),
    "chopping_board.n.01": _k("chopping_board", "box", (0.7, 1.0, 0.06), (0.3, 0.42), (190, 150, 100)),
    "salt__shaker.n.01": _k("salt_shaker", "cylinder", (0.45, 0.45, 1.0), (0.08, 0.11), (235, 235, 235)),
    "tupperware.n.01": _k("tupperware", "builder:tupperware", (0.8, 1, 0.47), (0.185, 0.185), (60, 150, 210)),
    "plate.n.04": _k("plate", "builder:plate", (1, 1, 0.07), (0.22, 0.3), (40, 70, 150)),
    "bucket.n.01": _k("bucket", "cylinder", (1.0, 1.0, 0.95), (0.28, 0.34), (70, 110, 200), floor=True),
    "detergent__bottle.n.01": _k("detergent_bottle", "bottle", (0.5, 0.5, 1.0), (0.25, 0.32), (240, 120, 30)),
    "carving_knife.n.01": _k("carving_knife", "builder:carving_knife", (0.1, 1, 0.07), (0.33, 0.33), (200, 205, 210)),
    "sponge.n.01": _k("sponge", "box", (0.65, 1.0, 0.35), (0.09, 0.12), (240, 220, 60)),
    "scrub_brush.n.01": _k("scrub_brush", "box", (0.45, 1.0, 0.3), (0.14, 0.2), (150, 90, 50)),
    "frying_pan.n.01": _k("frying_pan", "pan", (1.0, 0.55, 0.12), (0.42, 0.5), (45, 45, 50)),
    "carton.n.02": _k("carton", "box", (0.7, 1.0, 0.7), (0.2, 0.3), (180, 150, 110)),
    "hand_towel.n.01": _k("hand_towel", "box", (0.6, 1.0, 0.1), (0.22, 0.3), (90, 160, 200)),
    "stockpot.n.01": _k("stockpot", "cylinder", (1.0, 1.0, 0.85), (0.24, 0.3), (170, 170, 175)),
    "cookie_sheet.n.01": _k("baking_sheet", "box", (0.7, 1.0, 0.05), (0.35, 0.45), (150, 150, 155)),
    "wicker_basket.n.01": _k("wicker_basket", "cylinder", (1.0, 1.0, 0.7), (0.3, 0.4), (170, 130, 70), floor=True),
    "water_glass.n.02": _k("water_glass", "cylinder", (0.6, 0.6, 1.0), (0.1, 0.13), (190, 215, 230)),
    "water_bottle.n.01": _k("water_bottle", "bottle", (0.3, 0.3, 1.0), (0.2, 0.26), (80, 160, 230)),
    "paper_towel.n.01": _k("paper_towel", "cylinder", (0.45, 0.45, 1.0), (0.22, 0.28), (245, 245, 240)),
    "backpack.n.01": _k("backpack", "box", (0.45, 0.75, 1.0), (0.4, 0.5), (50, 80, 140), floor=True),
    "mug.n.04": _k("mug", "cylinder", (0.85, 0.85, 1.0), (0.09, 0.11), (220, 60, 60)),
    "newspaper.n.03": _k("newspaper", "box", (0.75, 1.0, 0.03), (0.3, 0.4), (225, 225, 215)),
    "tray.n.01": _k("tray", "box", (0.65, 1.0, 0.07), (0.35, 0.45), (120, 80, 50)),
    "apple.n.01": _k("apple", "builder:food", (1, 1, 1), (0.07, 0.095), (190, 30, 35)),
    "mixing_bowl.n.01": _k("mixing_bowl", "cylinder", (1.0, 1.0, 0.45), (0.24, 0.3), (230, 230, 235)),
    "pot_plant.n.01": _k("pot_plant", "cylinder", (0.7, 0.7, 1.0), (0.35, 0.5), (60, 140, 60), floor=True),
    "watering_can.n.01": _k("watering_can", "bottle", (0.7, 0.7, 1.0), (0.28, 0.35), (40, 150, 90), floor=True),
    "saucepan.n.01": _k("saucepan", "pan", (1.0, 0.45, 0.25), (0.32, 0.4), (160, 160, 165)),
    "toothbrush.n.01": _k("toothbrush", "box", (0.08, 1.0, 0.1), (0.17, 0.2), (60, 180, 220)),
    "platter.n.01": _k("platter", "cylinder", (1.0, 1.0, 0.07), (0.32, 0.4), (240, 240, 235)),
    "wine_bottle.n.01": _k("wine_bottle", "bottle", (0.26, 0.26, 1.0), (0.28, 0.32), (40, 90, 50)),
    "pen.n.01": _k("pen", "box", (0.07, 1.0, 0.07), (0.13, 0.15), (30, 40, 160)),
    "pitcher.n.02": _k("pitcher", "bottle", (0.65, 0.65, 1.0), (0.2, 0.26), (200, 220, 235)),
    "wineglass.n.01": _k("wineglass", "bottle", (0.4, 0.4, 1.0), (0.17, 0.22), (210, 225, 235)),
    "hamper.n.02": _k("hamper", "box", (0.6, 0.8, 1.0), (0.5, 0.6), (200, 190, 160), floor=True),
    "vidalia_onion.n.01": _k("vidalia_onion", "sphere", (1, 1, 1), (0.07, 0.1), (210, 180, 120)),
    "beefsteak_tomato.n.01": _k("beefsteak_tomato", "sphere", (1, 1, 1), (0.08, 0.11), (220, 40, 30)),
    "table_knife.n.01": _k("table_knife", "box", (0.09, 1.0, 0.04), (0.2, 0.24), (200, 200, 205)),
    "disinfectant__bottle.n.01": _k("disinfectant_bottle", "bottle", (0.4, 0.4, 1.0), (0.22, 0.28), (230, 230, 90)),
    "olive_oil__bottle.n.01": _k("olive_oil_bottle", "bottle", (0.3, 0.3, 1.0), (0.25, 0.3), (150, 160, 40)),
    "vinegar__bottle.n.01": _k("vinegar_bottle", "bottle", (0.3, 0.3, 1.0), (0.22, 0.28), (190, 120, 80)),
    "milk__carton.n.01": _k("milk_carton", "box", (0.4, 0.4, 1.0), (0.19, 0.25), (240, 240, 250)),
    "casserole.n.02": _k("casserole", "cylinder", (1.0, 1.0, 0.45), (0.25, 0.32), (210, 110, 60)),
    "notebook.n.01": _k("notebook", "box", (0.7, 1.0, 0.05), (0.21, 0.3), (90, 40, 130)),
    "laptop.n.01": _k("laptop", "box", (0.7, 1.0, 0.06), (0.32, 0.38), (70, 70, 75)),
    "pillow.n.01": _k("pillow", "box", (0.65, 1.0, 0.25), (0.45, 0.6), (235, 230, 220)),
    "sock.n.01": _k("sock", "box", (0.35, 1.0, 0.15), (0.2, 0.26), (200, 60, 120)),
    "lemon.n.01": _k("lemon", "builder:food", (1, 1, 1), (0.07, 0.1), (245, 225, 50)),
    "orange.n.01": _k("orange", "builder:food", (1, 1, 1), (0.07, 0.095), (245, 140, 20)),
    "banana.n.02": _k("banana", "builder:food", (1, 1, 1), (0.16, 0.21), (240, 210, 60)),
    "carrot.n.03": _k("carrot", "builder:food", (1, 1, 1), (0.13, 0.2), (240, 120, 25)),
    "hammer.n.02": _k("hammer", "builder:tool", (1, 1, 1), (0.3, 0.3), (30, 30, 35)),
    "screwdriver.n.01": _k("screwdriver", "builder:tool", (1, 1, 1), (0.2, 0.2), (210, 40, 40)),
    "spatula.n.01": _k("spatula", "builder:tool", (1, 1, 1), (0.3, 0.3), (30, 30, 35)),
    "board_game.n.01": _k("board_game", "builder:board_game", (1, 1, 0.16), (0.32, 0.32), (120, 60, 40)),
    "teddy.n.01": _k("teddy_bear", "builder:toy", (1, 1, 1), (0.2, 0.3), (150, 100, 55)),
    "folder.n.02": _k("folder", "builder:folder", (0.77, 1, 0.04), (0.31, 0.31), (230, 190, 40)),
    "paperback_book.n.01": _k("paperback_book", "builder:paperback_book", (0.65, 1, 0.13), (0.2, 0.2), (90, 120, 180)),
    "hardback.n.01": _k("hardback", "builder:hardback", (1, 0.2, 0.9), (0.22, 0.26), (120, 40, 40)),
    "vase.n.01": _k("vase", "bottle", (0.5, 0.5, 1.0), (0.2, 0.3), (60, 120, 170)),
    "kettle.n.01": _k("kettle", "bottle", (0.8, 0.8, 1.0), (0.2, 0.25), (200, 205, 210)),
    "teapot.n.01": _k("teapot", "bottle", (0.9, 0.9, 1.0), (0.15, 0.2), (240, 240, 235)),
    "trash_can.n.01": _k("trash_can", "cylinder", (0.8, 0.8, 1.0), (0.4, 0.55), (120, 125, 130), floor=True),
    "ashcan.n.01": _k("trash_can", "cylinder", (0.8, 0.8, 1.0), (0.4, 0.55), (120, 125, 130), floor=True),
    "recycling_bin.n.01": _k("recycling_bin", "box", (0.7, 0.9, 1.0), (0.4, 0.5), (40, 110, 200), floor=True),
    "dishtowel.n.01": _k("dishtowel", "box", (0.6, 1.0, 0.06), (0.25, 0.35), (230, 230, 200)),
}


def make_object(kind: ObjectKind, name: str, length: float, position, yaw: float, rng: np.random.Generator) -> ObjectSpec:
    """An object of ``kind`` whose longest dimension is ``length`` (m), bottom centre at ``position``."""
    col = rgba(kind.rgb)
    px, py, pz = (p * length for p in kind.proportions)
    if kind.shape.startswith("builder:"):
        return _from_builder(kind, name, length, position, yaw, rng)
    if kind.shape == "box":
        parts = [Part("box", (px, py, pz), Pose((0, 0, pz / 2)), rgba=col)]
    elif kind.shape == "cylinder":
        parts = [Part("cylinder", (px / 2, pz), Pose((0, 0, pz / 2)), rgba=col)]
    elif kind.shape == "sphere":
        parts = [Part("sphere", (length / 2,), Pose((0, 0, length / 2)), rgba=col)]
    elif kind.shape == "bottle":  # body 70% of the height, a narrower neck on top
        parts = [Part("cylinder", (px / 2, 0.7 * pz), Pose((0, 0, 0.35 * pz)), rgba=col),
                 Part("cylinder", (px / 6, 0.3 * pz), Pose((0, 0, 0.85 * pz)), rgba=rgba((235, 235, 235)))]
    elif kind.shape == "pan":  # a disc of diameter py and a handle making up the rest of the length along x
        parts = [Part("cylinder", (py / 2, pz), Pose((-(px - py) / 2, 0, pz / 2)), rgba=col),
                 Part("box", (px - py, 0.03, 0.025), Pose((py / 2 - (px - py) / 2 + (px - py) / 2, 0, pz * 0.8)),
                      rgba=rgba((25, 25, 25)))]
    else:
        raise ValueError(f"object kind {kind.category!r}.shape must be box/cylinder/sphere/bottle/pan/builder:*, "
                         f"got {kind.shape!r}")
    return dress(ObjectSpec(name=name, category=kind.category, parts=tuple(parts),
                            pose=Pose.from_xy_yaw(position[0], position[1], position[2], yaw), mass=0.3))


def _from_builder(kind: ObjectKind, name, length, position, yaw, rng) -> ObjectSpec:
    builder = kind.shape.split(":", 1)[1]
    if builder == "food":
        return shapes.food_item(name, kind.category, length, position, yaw)
    if builder == "tool":
        return shapes.tool(name, kind.category, position, yaw)
    if builder == "toy":
        return shapes.toy(name, kind.category, length, position, rng, yaw)
    if builder == "plate":
        return shapes.plate(name, length, position)
    if builder in ("bowl", "tupperware"):
        return getattr(shapes, builder)(name, position)
    if builder in ("carving_knife", "folder"):
        return getattr(shapes, builder)(name, position, yaw)
    if builder in ("board_game", "paperback_book"):
        return getattr(shapes, builder)(name, position, rng, yaw)
    if builder == "hardback":
        return shapes.hardback(name, position, rng, height=length, thickness=0.04)
    raise ValueError(f"object kind {kind.category!r}: unknown builder {builder!r}")


_BY_CATEGORY: dict[str, ObjectKind] = {}
for _kind in RENDERABLE.values():
    _BY_CATEGORY.setdefault(_kind.category, _kind)   # the first synset of a category (two render as trash_can)


def kind_of(category: str) -> ObjectKind:
    """The household kind of ``category`` (its first synset in :data:`RENDERABLE`)."""
    if category not in _BY_CATEGORY:
        raise ValueError(f"category must be one of the household kinds {sorted(_BY_CATEGORY)}, got {category!r}")
    return _BY_CATEGORY[category]
