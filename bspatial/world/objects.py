"""Movable household objects for the manipulation tasks, with category-appropriate shapes and looks.

Every builder returns an :class:`~bspatial.world.spec.ObjectSpec` whose frame sits at the centre of the
object's bottom face, so an object rests on a surface of height ``h`` at ``z = h``; size parameters are
the object's longest dimension (``length``) unless said otherwise. Colours come from the caller's rng.
The primitives each builder lists are the object's physics (contacts, mass, size); every category also
wears a procedural visual mesh over them (:func:`bspatial.world.assets.dress`), so what a camera sees
is a mug or a teapot while what the robot touches is unchanged.

Example:
    >>> from bspatial.world.relations import object_box
    >>> round(object_box(food_item("orange_0", "orange", 0.08, (0.5, 0.0, 0.9))).longest, 3)
    0.08
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from bspatial.world.assets import dress
from bspatial.world.spec import ObjectSpec, Part, Pose
from bspatial.world.textures import (board_game_texture, book_texture, dice_texture, label_texture, paperback_texture,
                                   pizza_texture, rgba)

_LYING = (math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0)   # local z -> world -y: a capsule lying along y
_ALONG_X = (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)  # local z -> world x


def _obj(name, category, parts, position, yaw=0.0, mass=0.2, friction=1.0) -> ObjectSpec:
    # The primitives below decide physics and size; dress() hides them under the category's visual
    # mesh (bspatial.world.assets) where one exists, leaving contacts and masses exactly as they are.
    return dress(ObjectSpec(name=name, category=category, parts=tuple(parts),
                            pose=Pose.from_xy_yaw(position[0], position[1], position[2], yaw), mass=mass,
                            friction=friction))


# ----------------------------------------------------------------------------- food

# category -> (longest-dimension range in m, colour): real-world proportions (Table S2 food items). Ranges
# were widened where a narrower one made a category's typical size decide the size-rank tasks:
# every range stays inside what a shop sells, with the source of each widened end below.
FOOD_ITEMS: dict[str, tuple[tuple[float, float], tuple[int, int, int]]] = {
    "apple": ((0.065, 0.095), (190, 30, 35)),
    "orange": ((0.065, 0.095), (245, 140, 20)),
    "lemon": ((0.07, 0.1), (245, 225, 50)),
    "lime": ((0.045, 0.065), (90, 170, 40)),
    # USDA FoodData Central banana sizes: "extra small" under 6 in (15 cm) to "extra large" 9 in (23 cm) and up.
    "banana": ((0.14, 0.24), (240, 210, 60)),
    # USDA FoodData Central carrots: "small" 5.5 in (14 cm) and under, "large" 7.25-8.5 in (18-22 cm).
    "carrot": ((0.12, 0.22), (240, 120, 25)),
    # Field cucumbers 6-8 in (USDA "small" to "large"); a long slicing cucumber reaches 25 cm.
    "cucumber": ((0.15, 0.25), (40, 110, 40)),
    # Bell peppers from a small 7 cm to an extra-large 12 cm (retail grades).
    "bell_pepper": ((0.07, 0.12), (200, 25, 25)),
    # From a small "creamer" potato (6 cm) to a large baking russet (13 cm).
    "potato": ((0.06, 0.13), (170, 130, 80)),
    "eggplant": ((0.14, 0.22), (80, 30, 90)),
    # Ataulfo mangoes are about 9-12 cm long, Kent and Keitt up to 15 cm.
    "mango": ((0.09, 0.15), (245, 170, 40)),
}


def food_item(name: str, category: str, length: float, position, yaw: float = 0.0) -> ObjectSpec:
    """A fruit or vegetable whose longest dimension is ``length``."""
    if category not in FOOD_ITEMS:
        raise ValueError(f"food category must be one of {sorted(FOOD_ITEMS)}, got {category!r}")
    col = rgba(FOOD_ITEMS[category][1])
    green = rgba((60, 120, 40))
    L = length
    if category in ("apple", "orange", "lime"):
        parts = [Part("sphere", (L / 2,), Pose((0, 0, L / 2)), rgba=col)]
        if category == "apple":
            parts.append(Part("cylinder", (0.004, 0.02), Pose((0, 0, L)), rgba=rgba((90, 60, 30)), collide=False))
    elif category == "bell_pepper":
        parts = [Part("cylinder", (0.45 * L, 0.8 * L), Pose((0, 0, 0.4 * L)), rgba=col),
                 Part("cylinder", (0.01, 0.2 * L), Pose((0, 0, 0.9 * L)), rgba=green, collide=False)]
    else:   # elongated items lie on their side, long axis along the object's y
        radius = {"lemon": 0.33, "banana": 0.1, "carrot": 0.09, "cucumber": 0.12, "potato": 0.3,
                  "eggplant": 0.2, "mango": 0.33}[category] * L
        parts = [Part("capsule", (radius, L - 2 * radius), Pose((0, 0, radius), _LYING), rgba=col)]
        if category in ("carrot", "eggplant"):
            parts.append(Part("sphere", (radius * 0.9,), Pose((0, L / 2 - radius, radius)), rgba=green, collide=False))
    return _obj(name, category, parts, position, yaw, mass=0.15)


# category -> (longest-dimension range, label text, colour): packaged food standing upright. Package sizes
# span single-serve to family size (widened as the produce above; sources per line).
PACKAGED_FOOD: dict[str, tuple[tuple[float, float], str, tuple[int, int, int]]] = {
    "box_of_cereal": ((0.24, 0.32), "CEREAL", (205, 40, 35)),
    # An 18 oz oat canister stands about 18 cm, the 42 oz canister about 24 cm.
    "box_of_oatmeal": ((0.15, 0.25), "OATS", (60, 110, 170)),
    # A 1-2 oz snack bag is about 17-20 cm tall, a family-size bag 30-33 cm.
    "bag_of_chips": ((0.17, 0.32), "CHIPS", (240, 190, 30)),
    # Small boxes (water crackers) stand 12-15 cm, family boxes (saltines, cheese crackers) 20-22 cm.
    "box_of_crackers": ((0.12, 0.22), "CRACKERS", (40, 140, 80)),
}


def packaged_food(name: str, category: str, length: float, position, yaw: float = 0.0) -> ObjectSpec:
    """A labelled food package standing upright; its height is ``length`` (the longest side)."""
    if category not in PACKAGED_FOOD:
        raise ValueError(f"packaged food category must be one of {sorted(PACKAGED_FOOD)}, got {category!r}")
    _, text, colour = PACKAGED_FOOD[category]
    tex = label_texture(f"{name}_label", text, colour)
    white = rgba((255, 255, 255))
    h = length
    if category == "box_of_oatmeal":   # the classic cylindrical oat canister
        parts = [Part("cylinder", (0.3 * h, h), Pose((0, 0, h / 2)), rgba=white, texture=tex),
                 Part("cylinder", (0.31 * h, 0.03 * h), Pose((0, 0, h)), rgba=rgba((210, 40, 35)), collide=False)]
    elif category == "bag_of_chips":
        parts = [Part("box", (0.05, 0.7 * h, 0.92 * h), Pose((0, 0, 0.46 * h)), rgba=white, texture=tex),
                 Part("box", (0.015, 0.7 * h, 0.08 * h), Pose((0, 0, 0.96 * h)), rgba=rgba(colour), collide=False)]
    else:
        parts = [Part("box", (0.26 * h, 0.7 * h, h), Pose((0, 0, h / 2)), rgba=white, texture=tex)]
    return _obj(name, category, parts, position, yaw, mass=0.3)


# ----------------------------------------------------------------------------- tableware


def plate(name: str, diameter: float, position, *, rim_rgb=(40, 70, 150), pizza: bool = False) -> ObjectSpec:
    """A ceramic plate: white disc with a coloured rim band and a flat well; optionally a pizza on it."""
    r = diameter / 2
    parts = [Part("cylinder", (r, 0.018), Pose((0, 0, 0.009)), rgba=rgba(rim_rgb)),
             Part("cylinder", (r * 0.86, 0.0185), Pose((0, 0, 0.00925)), rgba=rgba((245, 245, 240)), collide=False),
             Part("cylinder", (r * 0.62, 0.019), Pose((0, 0, 0.0095)), rgba=rgba((232, 232, 228)), collide=False)]
    if not pizza:
        return _obj(name, "plate", parts, position, mass=0.4)
    pizza_parts = [Part("cylinder", (r * 0.8, 0.012), Pose((0, 0, 0.024)), rgba=rgba((225, 175, 95))),
                   Part("cylinder", (r * 0.7, 0.0125), Pose((0, 0, 0.0245)), rgba=rgba((255, 255, 255)),
                        texture=pizza_texture(f"{name}_pizza"), collide=False)]
    # The plate alone wears the plate mesh; the pizza stays a visible primitive on it, listed before the
    # meshes so the primitives keep their order (and the physics its exact numbers).
    dressed = _obj(name, "plate", parts, position, mass=0.4)
    primitives = [p for p in dressed.parts if p.kind != "mesh"]
    meshes = [p for p in dressed.parts if p.kind == "mesh"]
    return dataclasses.replace(dressed, parts=tuple(primitives + pizza_parts + meshes))


def saucer(name: str, position, *, rgb=(235, 235, 230)) -> ObjectSpec:
    """A small saucer (14 cm) with a gold rim line."""
    return _obj(name, "saucer", (Part("cylinder", (0.07, 0.015), Pose((0, 0, 0.0075)), rgba=rgba((200, 170, 60))),
                                 Part("cylinder", (0.062, 0.0155), Pose((0, 0, 0.00775)), rgba=rgba(rgb), collide=False)),
                position, mass=0.15)


def bowl(name: str, position, *, rgb=(200, 80, 60)) -> ObjectSpec:
    """A bowl (14 cm across, 6 cm tall): coloured outside, pale inside."""
    return _obj(name, "bowl", (Part("cylinder", (0.05, 0.02), Pose((0, 0, 0.01)), rgba=rgba(rgb)),
                               Part("cylinder", (0.07, 0.04), Pose((0, 0, 0.04)), rgba=rgba(rgb)),
                               Part("cylinder", (0.06, 0.041), Pose((0, 0, 0.0405)), rgba=rgba((240, 235, 225)),
                                    collide=False)), position, mass=0.25)


def tupperware(name: str, position, *, lid_rgb=(60, 150, 210)) -> ObjectSpec:
    """A food-storage container: translucent-white box with a coloured lid."""
    return _obj(name, "tupperware", (Part("box", (0.14, 0.18, 0.07), Pose((0, 0, 0.035)), rgba=rgba((225, 230, 232))),
                                     Part("box", (0.145, 0.185, 0.015), Pose((0, 0, 0.0775)), rgba=rgba(lid_rgb))),
                position, mass=0.3)


def carving_knife(name: str, position, yaw: float = 0.0) -> ObjectSpec:
    """A carving knife lying flat: long steel blade and a dark wooden handle (blade along the object's y)."""
    return _obj(name, "carving_knife", (Part("box", (0.032, 0.21, 0.006), Pose((0, 0.07, 0.003)), rgba=rgba((200, 205, 210))),
                                        Part("box", (0.028, 0.12, 0.022), Pose((0, -0.095, 0.011)), rgba=rgba((60, 35, 20)))),
                position, yaw, mass=0.15)


# ----------------------------------------------------------------------------- toys, games, books, boxes

TOYS: dict[str, tuple[float, float]] = {   # longest-dimension ranges (m)
    "teddy_bear": (0.18, 0.3),
    "toy_car": (0.1, 0.2),
    "toy_figure": (0.08, 0.16),
    "toy_train": (0.12, 0.22),
    "doll": (0.15, 0.28),
    "toy_dice": (0.04, 0.07),
    "softball": (0.09, 0.1),
}


def toy(name: str, category: str, length: float, position, rng: np.random.Generator, yaw: float = 0.0) -> ObjectSpec:
    """A toy whose longest dimension is ``length`` (cars and trains point along the object's x)."""
    L = length
    col = rgba(tuple(int(c) for c in rng.integers(40, 230, 3)))
    dark = rgba((30, 30, 30))
    if category == "teddy_bear":
        fur = rgba((150, 100, 55))
        parts = [Part("sphere", (0.22 * L,), Pose((0, 0, 0.22 * L)), rgba=fur),
                 Part("sphere", (0.17 * L,), Pose((0, 0, 0.6 * L)), rgba=fur),
                 Part("sphere", (0.065 * L,), Pose((0, 0.12 * L, 0.74 * L)), rgba=fur),
                 Part("sphere", (0.065 * L,), Pose((0, -0.12 * L, 0.74 * L)), rgba=fur),
                 Part("sphere", (0.05 * L,), Pose((-0.15 * L, 0, 0.58 * L)), rgba=rgba((220, 190, 150)), collide=False)]
    elif category == "toy_car":
        parts = [Part("box", (L, 0.45 * L, 0.2 * L), Pose((0, 0, 0.18 * L)), rgba=col),
                 Part("box", (0.5 * L, 0.4 * L, 0.16 * L), Pose((-0.05 * L, 0, 0.36 * L)), rgba=rgba((170, 210, 230)))]
        for sx in (-0.3, 0.3):
            for sy in (-0.22, 0.22):
                parts.append(Part("cylinder", (0.09 * L, 0.06 * L), Pose((sx * L, sy * L, 0.09 * L), (0.7071068, 0.7071068, 0, 0)),
                                  rgba=dark))
    elif category == "toy_train":
        parts = [Part("box", (0.6 * L, 0.3 * L, 0.3 * L), Pose((-0.2 * L, 0, 0.2 * L)), rgba=col),
                 Part("box", (0.35 * L, 0.3 * L, 0.45 * L), Pose((0.3 * L, 0, 0.275 * L)), rgba=rgba((200, 30, 30))),
                 Part("cylinder", (0.05 * L, 0.12 * L), Pose((-0.35 * L, 0, 0.41 * L)), rgba=dark)]
    elif category in ("toy_figure", "doll"):
        skin = rgba((235, 195, 165))
        parts = [Part("box", (0.12 * L, 0.28 * L, 0.62 * L), Pose((0, 0, 0.31 * L)), rgba=col),
                 Part("sphere", (0.14 * L,), Pose((0, 0, 0.76 * L)), rgba=skin),
                 Part("box", (0.1 * L, 0.3 * L, 0.06 * L), Pose((0, 0, 0.92 * L)), rgba=rgba((90, 50, 20)), collide=False)]
    elif category == "toy_dice":
        parts = [Part("box", (L, L, L), Pose((0, 0, L / 2)), rgba=rgba((255, 255, 255)), texture=dice_texture(f"{name}_pips", body=(220, 40, 40), pip=(250, 250, 250)))]
    elif category == "softball":
        parts = [Part("sphere", (L / 2,), Pose((0, 0, L / 2)), rgba=rgba((235, 230, 80)))]
    else:
        raise ValueError(f"toy category must be one of {sorted(TOYS)}, got {category!r}")
    return _obj(name, category, parts, position, yaw, mass=0.2)


def dice(name: str, size: float, position, yaw: float = 0.0) -> ObjectSpec:
    """A white die with black pips (BEHAVIOR ``dice``)."""
    return _obj(name, "dice", (Part("box", (size, size, size), Pose((0, 0, size / 2)), rgba=rgba((255, 255, 255)),
                                    texture=dice_texture(f"{name}_pips")),), position, yaw, mass=0.05)


def board_game(name: str, position, rng: np.random.Generator, yaw: float = 0.0) -> ObjectSpec:
    """A boxed board game lying flat (32 x 32 x 5 cm) with a printed lid."""
    c0 = tuple(int(c) for c in rng.integers(30, 200, 3))
    tex = board_game_texture(f"{name}_lid", (c0, (245, 240, 225)))
    return _obj(name, "board_game", (Part("box", (0.32, 0.32, 0.05), Pose((0, 0, 0.025)), rgba=rgba((255, 255, 255)), texture=tex),),
                position, yaw, mass=0.6)


def paperback_book(name: str, position, rng: np.random.Generator, yaw: float = 0.0) -> ObjectSpec:
    """A paperback lying flat (13 x 20 x 2.5 cm) with a printed cover."""
    cover = tuple(int(c) for c in rng.integers(40, 230, 3))
    return _obj(name, "paperback_book", (Part("box", (0.13, 0.2, 0.025), Pose((0, 0, 0.0125)), rgba=rgba((255, 255, 255)),
                                              texture=paperback_texture(f"{name}_cover", cover)),), position, yaw, mass=0.25)


def hardback(name: str, position, rng: np.random.Generator, *, height: float, thickness: float) -> ObjectSpec:
    """A hardback book standing upright, spine towards -x (the robot), cloth cover with gilt bands."""
    cover = tuple(int(c) for c in rng.integers(30, 180, 3))
    return _obj(name, "hardback", (Part("box", (0.2, thickness, height), Pose((0, 0, height / 2)), rgba=rgba((255, 255, 255)),
                                        texture=book_texture(f"{name}_cover", cover)),), position, mass=0.5)


def folder(name: str, position, yaw: float = 0.0, *, rgb=(230, 190, 40)) -> ObjectSpec:
    """A document folder lying flat (24 x 31 cm) with a white label strip."""
    return _obj(name, "folder", (Part("box", (0.24, 0.31, 0.012), Pose((0, 0, 0.006)), rgba=rgba(rgb)),
                                 Part("box", (0.04, 0.2, 0.0125), Pose((-0.08, 0, 0.00625)), rgba=rgba((250, 250, 250)),
                                      collide=False)), position, yaw, mass=0.1)


def pencil_case(name: str, position, yaw: float = 0.0, *, rgb=(40, 120, 200)) -> ObjectSpec:
    """A zipped pencil case (20 x 7 x 6 cm, long axis along the object's y) with a zip line."""
    return _obj(name, "pencil_case", (Part("capsule", (0.032, 0.14), Pose((0, 0, 0.032), _LYING), rgba=rgba(rgb)),
                                      Part("box", (0.004, 0.15, 0.004), Pose((0, 0, 0.064)), rgba=rgba((20, 20, 20)), collide=False)),
                position, yaw, mass=0.15)


def can_of_soda(name: str, position, *, rgb=(200, 20, 30)) -> ObjectSpec:
    """A 330 ml soda can (6.6 cm x 12.2 cm): printed label and silver top."""
    return _obj(name, "can_of_soda", (Part("cylinder", (0.033, 0.115), Pose((0, 0, 0.0575)), rgba=rgba((255, 255, 255)),
                                           texture=label_texture(f"{name}_label", "SODA", rgb, size=(64, 64))),
                                      Part("cylinder", (0.03, 0.007), Pose((0, 0, 0.1185)), rgba=rgba((200, 200, 205)))),
                position, mass=0.35)


def storage_box(name: str, size, position, yaw: float = 0.0, *, rgb=(190, 150, 100)) -> ObjectSpec:
    """A lidded storage box; ``size`` = (x, y, z) full extents."""
    lx, ly, lz = size
    return _obj(name, "storage_box", (Part("box", (lx, ly, lz * 0.9), Pose((0, 0, lz * 0.45)), rgba=rgba(rgb)),
                                      Part("box", (lx + 0.01, ly + 0.01, lz * 0.1), Pose((0, 0, lz * 0.95)),
                                           rgba=rgba(tuple(int(c * 0.75) for c in rgb))),
                                      Part("box", (0.005, ly * 0.3, lz * 0.08), Pose((-lx / 2 - 0.002, 0, lz * 0.7)),
                                           rgba=rgba((40, 40, 40)), collide=False)), position, yaw, mass=1.0)


# category -> builder of a tool lying along the object's x axis, returning parts for a given length.
TOOLS: dict[str, float] = {"hammer": 0.3, "screwdriver": 0.2, "spatula": 0.3, "tongs": 0.24, "mallet": 0.28,
                           "whisk": 0.27, "rolling_pin": 0.4, "wooden_spoon": 0.3}


def tool(name: str, category: str, position, yaw: float = 0.0) -> ObjectSpec:
    """A hand or kitchen tool lying flat, long axis along the object's x (pointing away from the robot)."""
    if category not in TOOLS:
        raise ValueError(f"tool category must be one of {sorted(TOOLS)}, got {category!r}")
    L = TOOLS[category]
    wood, steel, dark = rgba((170, 120, 70)), rgba((185, 190, 195)), rgba((30, 30, 35))
    handle = Part("capsule", (0.014, L * 0.55), Pose((-L * 0.18, 0, 0.014), _ALONG_X), rgba=wood)
    if category == "hammer":
        parts = [handle, Part("box", (0.04, 0.12, 0.03), Pose((L * 0.42, 0, 0.015)), rgba=dark)]
    elif category == "mallet":
        parts = [handle, Part("cylinder", (0.035, 0.12), Pose((L * 0.4, 0, 0.035), _LYING), rgba=rgba((200, 160, 110)))]
    elif category == "screwdriver":
        parts = [Part("capsule", (0.016, 0.08), Pose((-L * 0.25, 0, 0.016), _ALONG_X), rgba=rgba((210, 40, 40))),
                 Part("capsule", (0.004, L * 0.45), Pose((L * 0.2, 0, 0.016), _ALONG_X), rgba=steel)]
    elif category == "spatula":
        parts = [handle, Part("box", (0.1, 0.08, 0.004), Pose((L * 0.38, 0, 0.002)), rgba=dark)]
    elif category == "wooden_spoon":
        parts = [handle, Part("cylinder", (0.03, 0.012), Pose((L * 0.4, 0, 0.006)), rgba=wood)]
    elif category == "whisk":
        parts = [Part("capsule", (0.013, L * 0.4), Pose((-L * 0.25, 0, 0.013), _ALONG_X), rgba=dark),
                 Part("capsule", (0.03, L * 0.25), Pose((L * 0.25, 0, 0.03), _ALONG_X), rgba=steel)]
    elif category == "tongs":
        parts = [Part("box", (L, 0.012, 0.012), Pose((0, 0.018, 0.006)), rgba=steel),
                 Part("box", (L, 0.012, 0.012), Pose((0, -0.018, 0.006)), rgba=steel),
                 Part("box", (0.06, 0.05, 0.014), Pose((-L * 0.45, 0, 0.007)), rgba=dark)]
    else:  # rolling_pin
        parts = [Part("cylinder", (0.028, L * 0.65), Pose((0, 0, 0.028), _ALONG_X), rgba=wood),
                 Part("capsule", (0.014, L * 0.12), Pose((L * 0.4, 0, 0.028), _ALONG_X), rgba=wood),
                 Part("capsule", (0.014, L * 0.12), Pose((-L * 0.4, 0, 0.028), _ALONG_X), rgba=wood)]
    return _obj(name, category, parts, position, yaw, mass=0.3)


def closed_fridge(name: str, xy, yaw: float = 0.0) -> ObjectSpec:
    """A closed fridge (reference object): white box, freezer seam and two handles on its -x face."""
    white, grey = rgba((236, 238, 240)), rgba((160, 162, 165))
    return ObjectSpec(name=name, category="fridge", static=True, pose=Pose.from_xy_yaw(xy[0], xy[1], 0.0, yaw), parts=(
        Part("box", (0.7, 0.75, 1.8), Pose((0, 0, 0.9)), rgba=white),
        Part("box", (0.005, 0.74, 0.01), Pose((-0.351, 0, 1.25)), rgba=grey, collide=False),
        Part("box", (0.03, 0.03, 0.3), Pose((-0.37, -0.3, 1.45)), rgba=grey),
        Part("box", (0.03, 0.03, 0.45), Pose((-0.37, -0.3, 0.9)), rgba=grey)))


def closed_bottom_cabinet(name: str, xy, yaw: float = 0.0) -> ObjectSpec:
    """A closed kitchen bottom cabinet (reference object): wooden body, two doors with knobs on its -x face."""
    wood, knob = rgba((175, 135, 90)), rgba((60, 60, 60))
    return ObjectSpec(name=name, category="bottom_cabinet", static=True, pose=Pose.from_xy_yaw(xy[0], xy[1], 0.0, yaw), parts=(
        Part("box", (0.5, 0.8, 0.85), Pose((0, 0, 0.425)), rgba=wood),
        Part("box", (0.006, 0.005, 0.7), Pose((-0.252, 0, 0.45)), rgba=rgba((90, 65, 40)), collide=False),
        Part("sphere", (0.02,), Pose((-0.26, 0.06, 0.7)), rgba=knob, collide=False),
        Part("sphere", (0.02,), Pose((-0.26, -0.06, 0.7)), rgba=knob, collide=False)))
