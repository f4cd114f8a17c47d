"""World-knowledge priors for the blind baseline: typical sizes, heights and room areas.

A frontier language model given the prompts without the images answered 67% of general size items right
from typical sizes alone (a box of cereal is the largest, a lime the smallest), and the text-only baseline of
:mod:`~bspatial.construction.quality.report`, which knew no typical sizes, passed the build. These tables give it
that knowledge, so a set whose answer follows from typical sizes, heights or areas fails the data-quality
gate (and the prior-balanced pick of :mod:`~bspatial.construction.quality.debias`, which balances the same features,
steers away from such sets).

Keys are the option texts' nouns (display names, lower case, a mark number stripped: "mug 2" -> "mug").
Each value carries its source. The sources are public reference points where one exists (produce size
grades, sports-ball rules, kitchen-counter and furniture standards); otherwise the value is a typical retail
dimension, marked "estimate". They are deliberately *not* read from this project's asset library: the
baseline models what a reader of the prompt knows about the world, not what the generator draws.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Prior:
    value: float
    source: str


_RETAIL = "typical retail dimension (estimate)"
_PRODUCE = "typical produce size (USDA grade standards list diameters of 2-3.5 in for apples, citrus; estimate)"

TYPICAL_LENGTH_M: dict[str, Prior] = {
    # Produce (longest dimension).
    "apple": Prior(0.08, _PRODUCE), "orange": Prior(0.08, _PRODUCE), "lemon": Prior(0.085, _PRODUCE),
    "lime": Prior(0.055, _PRODUCE), "banana": Prior(0.19, "a 'medium' banana is 7-8 in long (USDA FoodData Central)"),
    "carrot": Prior(0.18, "a 'medium' carrot is 6-7 in long (USDA FoodData Central)"),
    "cucumber": Prior(0.21, "a 'medium' cucumber is about 8 in long (USDA FoodData Central)"),
    "bell pepper": Prior(0.1, _PRODUCE), "potato": Prior(0.1, _PRODUCE), "eggplant": Prior(0.2, _PRODUCE),
    "mango": Prior(0.13, _PRODUCE), "vidalia onion": Prior(0.085, _PRODUCE), "beefsteak tomato": Prior(0.1, _PRODUCE),
    # Packaged food (standing height).
    "box of cereal": Prior(0.3, "a family-size cereal box stands about 12 in (estimate)"),
    "box of oatmeal": Prior(0.18, "an 18 oz oat canister stands about 7 in (estimate)"),
    "bag of chips": Prior(0.25, _RETAIL), "box of crackers": Prior(0.2, _RETAIL),
    # Toys.
    "teddy bear": Prior(0.3, _RETAIL), "toy car": Prior(0.12, "a 1:24-1:32 scale model car (estimate)"),
    "toy figure": Prior(0.12, _RETAIL), "toy train": Prior(0.16, _RETAIL), "doll": Prior(0.3, _RETAIL),
    "toy dice": Prior(0.016, "a standard die is 16 mm (estimate)"),
    "softball": Prior(0.097, "a 12 in circumference ball (ASA / NCAA softball rules): 9.7 cm across"),
    # Household objects of the general scenes.
    "mug": Prior(0.1, _RETAIL), "bowl": Prior(0.15, _RETAIL), "plate": Prior(0.27, "a dinner plate is 10-11 in (estimate)"),
    "pillow": Prior(0.66, "a standard bed pillow is 20 x 26 in"), "tray": Prior(0.45, _RETAIL),
    "laptop": Prior(0.35, "a 14-15 in laptop is 32-36 cm wide (estimate)"), "pen": Prior(0.14, _RETAIL),
    "sponge": Prior(0.11, _RETAIL), "frying pan": Prior(0.45, "a 10-12 in pan with its handle (estimate)"),
    "newspaper": Prior(0.38, "a folded broadsheet (estimate)"), "notebook": Prior(0.28, "US letter, 11 in"),
    "wine bottle": Prior(0.3, "a 750 ml wine bottle is about 30 cm tall"), "water glass": Prior(0.12, _RETAIL),
    "salt shaker": Prior(0.09, _RETAIL), "chopping board": Prior(0.4, _RETAIL), "hammer": Prior(0.3, _RETAIL),
    "screwdriver": Prior(0.2, _RETAIL), "spatula": Prior(0.3, _RETAIL), "carving knife": Prior(0.33, _RETAIL),
    "bucket": Prior(0.3, "a 10 l bucket (estimate)"), "backpack": Prior(0.45, _RETAIL), "hamper": Prior(0.6, _RETAIL),
    "trash can": Prior(0.5, _RETAIL), "pot plant": Prior(0.45, _RETAIL), "board game": Prior(0.3, _RETAIL),
}
"""Typical longest dimension (m) per option noun."""

COUNTER_HEIGHT_M = 0.91
"""Standard kitchen counter height, 36 in (the usual reference for table-top objects)."""
_FLOOR = "stands on the floor (estimate: half its typical height)"
_TOP = "on a counter or table: standard counter height 36 in (0.91 m)"

TYPICAL_HEIGHT_M: dict[str, Prior] = {
    **{noun: Prior(COUNTER_HEIGHT_M, _TOP) for noun in TYPICAL_LENGTH_M},
    "bucket": Prior(0.15, _FLOOR), "wicker basket": Prior(0.15, _FLOOR), "backpack": Prior(0.22, _FLOOR),
    "pot plant": Prior(0.22, _FLOOR), "watering can": Prior(0.15, _FLOOR), "hamper": Prior(0.3, _FLOOR),
    "trash can": Prior(0.25, _FLOOR), "recycling bin": Prior(0.25, _FLOOR), "pillow": Prior(0.6, "on a bed or sofa seat"),
    "hardback": Prior(1.2, "on a bookcase shelf (estimate)"), "wall": Prior(1.3, "a wall's middle (estimate)"),
}
"""Typical height (m) above the floor at which a thing of this noun is found in a home."""

TYPICAL_ROOM_AREA_M2: dict[str, Prior] = {
    "garage": Prior(37.0, "a two-car garage is about 20 x 20 ft (estimate)"),
    "living room": Prior(28.0, "typical US new-home living room, about 300 sq ft (estimate)"),
    "kitchen": Prior(15.0, "typical US kitchen, about 160 sq ft (estimate)"),
    "dining room": Prior(15.0, "typical US dining room, about 160 sq ft (estimate)"),
    "bedroom": Prior(14.0, "typical US secondary bedroom, about 150 sq ft (estimate)"),
    "child's room": Prior(11.0, "typical US secondary bedroom, about 120 sq ft (estimate)"),
    "office": Prior(10.0, "typical home office, about 110 sq ft (estimate)"),
    "utility room": Prior(6.0, "typical laundry room, about 65 sq ft (estimate)"),
    "bathroom": Prior(5.0, "a full bathroom is about 5 x 8 ft to 8 x 10 ft (estimate)"),
}
"""Typical floor area (m^2) per room name."""

_MARK = re.compile(r"^(?:the )?(.*?)(?: \d+)?$")


def noun(option: str) -> str:
    """The noun of an option text: lower case, "the" and a mark number stripped ("Mug 2" -> "mug")."""
    return _MARK.match(" ".join(option.lower().split())).group(1)


def ranks(options, table: dict[str, Prior], descending: bool) -> list[int] | None:
    """Each option's rank (0 = first) by the table's typical value; None when an option is not in the table or
    two options share a noun (numbered marks of one category: the prior says nothing)."""
    nouns = [noun(o) for o in options]
    if len(set(nouns)) < len(nouns) or not all(n in table for n in nouns):
        return None
    order = sorted(range(len(nouns)), key=lambda i: (-table[nouns[i]].value if descending else table[nouns[i]].value, i))
    return [order.index(i) for i in range(len(nouns))]
