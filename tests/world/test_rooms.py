"""Furnished rooms (issue 15 item 2): every room type holds the furniture that defines it."""

import numpy as np
import pytest

from bspatial.world import rooms
from bspatial.world.floorplans import RoomRegion

# Written from the issue text, not from bspatial.world.rooms: "bathroom: toilet, sink, bathtub or shower;
# kitchen: counters, sink, fridge, oven; bedroom: bed, wardrobe, nightstand; child's room: small bed, toys;
# office: desk, chair, computer, shelves; living room: sofa, TV, coffee table; dining room: table with chairs;
# garage: car or workbench, shelves, garage door; utility room: washer, shelves". Each set is one requirement,
# met by any of its BEHAVIOR categories.
ISSUE_FURNITURE = {
    "bathroom": [{"toilet"}, {"pedestal_sink", "drop_in_sink", "wall_mounted_sink"}, {"bathtub", "shower_stall", "shower"}],
    "kitchen": [{"countertop"}, {"drop_in_sink", "commercial_kitchen_sink"}, {"fridge"}, {"oven"}],
    "bedroom": [{"bed"}, {"wardrobe"}, {"nightstand"}],
    "childs_room": [{"bed"}, {"toy_box", "toy_train", "toy_car", "toy_figure"}],
    "private_office": [{"desk"}, {"swivel_chair", "straight_chair"}, {"monitor", "desktop_computer", "laptop"},
                       {"shelf", "bookcase"}],
    "living_room": [{"sofa"}, {"standing_tv", "wall_mounted_tv"}, {"coffee_table"}],
    "dining_room": [{"breakfast_table"}, {"straight_chair"}],
    "garage": [{"car", "toolbox"}, {"shelf"}, {"garage_door"}],
    "utility_room": [{"washer"}, {"shelf"}],
}
ROOM_SIZES = ((3.6, 3.4), (4.4, 3.1), (3.2, 5.0))


def _room(kind: str, size) -> tuple[RoomRegion, list]:
    room = RoomRegion(kind, kind, (0.0, size[0], 0.0, size[1]))
    doors = [((size[0] / 2, 0.0), 1.2, "x"), ((size[0], size[1] / 2), 1.2, "y")]   # two doorways
    return room, doors


def test_the_issue_table_covers_every_room_type():
    assert set(ISSUE_FURNITURE) == set(rooms.ROOM_TYPES)


@pytest.mark.parametrize("kind", sorted(ISSUE_FURNITURE))
def test_every_room_type_holds_its_defining_furniture(kind):
    furnished = 0
    for seed in range(3):
        for size in ROOM_SIZES:
            room, doors = _room(kind, size)
            try:
                objects = rooms.furnish(room, np.random.default_rng(seed), doors=doors, exterior=("x0", "y1"))
            except rooms.FurnishingError:
                continue       # a room too small for its furniture: the apartment draws another plan
            furnished += 1
            categories = {o.category for o in objects}
            missing = [sorted(need) for need in ISSUE_FURNITURE[kind] if not need & categories]
            assert not missing, (kind, seed, size, missing)
            x0, x1, y0, y1 = room.bounds
            for bx0, bx1, by0, by1 in rooms.footprint(objects):
                assert x0 <= bx0 and bx1 <= x1 and y0 <= by0 and by1 <= y1, (kind, seed, size)
    assert furnished >= 6, (kind, furnished)   # most draws fit


def test_childs_bed_is_smaller_than_a_bedroom_bed():
    def bed_area(kind):
        room, doors = _room(kind, (4.4, 4.0))
        bed = next(o for o in rooms.furnish(room, np.random.default_rng(0), doors=doors) if o.category == "bed")
        x0, x1, y0, y1 = np.array(rooms.footprint([bed]))[:, :4].T
        return (x1.max() - x0.min()) * (y1.max() - y0.min())
    assert bed_area("childs_room") < 0.7 * bed_area("bedroom")


def test_furnishing_is_deterministic_in_the_seed():
    room, doors = _room("living_room", (4.4, 3.6))
    a = rooms.furnish(room, np.random.default_rng(5), doors=doors)
    b = rooms.furnish(room, np.random.default_rng(5), doors=doors)
    assert [(o.name, o.pose) for o in a] == [(o.name, o.pose) for o in b]


def test_nothing_stands_in_front_of_a_doorway():
    room, doors = _room("bedroom", (4.4, 3.6))
    objects = rooms.furnish(room, np.random.default_rng(2), doors=doors)
    for bx0, bx1, by0, by1 in rooms.footprint(objects):
        assert not (bx0 < 2.2 + 0.6 and bx1 > 2.2 - 0.6 and by0 < 0.9), "furniture in front of the y0 doorway"


@pytest.mark.parametrize("kind", sorted(ISSUE_FURNITURE))
def test_two_rooms_of_one_type_get_different_finishes(kind):
    for pick in range(6):
        first, second = rooms.room_materials(kind, 0, pick), rooms.room_materials(kind, 1, pick)
        assert first[0] != second[0] and first[1] != second[1]


def test_finishes_vary_by_room_type():
    floors = {kind: {m.base for m in t.floors} for kind, t in rooms.ROOM_TYPES.items()}
    for a in floors:
        for b in floors:
            if a < b:
                assert not floors[a] & floors[b], (a, b)
    walls = {kind: {m.base for m in t.walls} for kind, t in rooms.ROOM_TYPES.items()}
    assert len(set().union(*walls.values())) == sum(len(v) for v in walls.values())


def test_lighting_has_a_light_per_room_and_one_shadow():
    regions = [RoomRegion(f"r{i}", "bedroom", (i * 3.0, i * 3.0 + 3.0, 0.0, 3.0)) for i in range(6)]
    lights = rooms.room_lights(regions)
    assert len(lights) == 7 and sum(light.cast_shadow for light in lights) == 1
    assert {(light.position[0], light.position[1]) for light in lights if not light.directional} == \
        {r.center for r in regions}


def test_unknown_room_kind_raises_naming_it():
    with pytest.raises(ValueError, match="room kind must be one of .* got 'attic'"):
        rooms.room_type("attic")
