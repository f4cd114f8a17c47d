"""Activity apartments (issue 15 item 2): real floor plans, doorways that connect every room; (issue 29 item 4) room
types sized like homes' rooms, with the typical-area ranking right in about half of the apartments only."""

import collections
import itertools

import numpy as np
import pytest

from bspatial.catalog.thresholds import SIZE_MARGIN
from bspatial.world import apartments
from bspatial.world.floorplans import RoomRegion
from bspatial.world.rooms import AREA_RANGE_M2, ROOM_TYPES

KINDS = [["kitchen", "bedroom", "garage", "bathroom", "living_room", "private_office"],
         ["childs_room", "bathroom", "dining_room", "utility_room", "bedroom", "garage"],
         ["living_room", "kitchen", "bedroom", "private_office", "childs_room", "dining_room"]]


@pytest.fixture(scope="module")
def apts():
    return [apartments.apartment(k, np.random.default_rng(seed), home=1) for seed, k in enumerate(KINDS)]


def _area(r: RoomRegion) -> float:
    x0, x1, y0, y1 = r.bounds
    return (x1 - x0) * (y1 - y0)


def test_room_areas_differ_clearly_within_and_between_apartments(apts):
    for apt in apts:
        areas = sorted(_area(r) for r in apt.rooms)
        # Any two rooms differ by more than the size margin multi-frame area questions need (Appendix 11).
        assert all(b >= a * (1 + SIZE_MARGIN) for a, b in zip(areas, areas[1:])), areas
    assert len({tuple(round(_area(r), 3) for r in apt.rooms) for apt in apts}) == len(apts)


def test_rooms_tile_the_outline_but_are_not_grid_cells(apts):
    for apt in apts:
        b = np.array([r.bounds for r in apt.rooms])
        outline = (b[:, 1].max() - b[:, 0].min()) * (b[:, 3].max() - b[:, 2].min())
        assert sum(_area(r) for r in apt.rooms) == pytest.approx(outline)
        for r1, r2 in itertools.combinations(apt.rooms, 2):   # no overlaps
            ox = min(r1.bounds[1], r2.bounds[1]) - max(r1.bounds[0], r2.bounds[0])
            oy = min(r1.bounds[3], r2.bounds[3]) - max(r1.bounds[2], r2.bounds[2])
            assert ox <= 1e-9 or oy <= 1e-9
        cuts = [sorted({round(v, 6) for r in apt.rooms[k * 3:(k + 1) * 3] for v in r.bounds[2:]}) for k in range(2)]
        assert cuts[0][1:-1] != cuts[1][1:-1]           # the bands' interior walls do not line up
        depths = {round(r.bounds[1] - r.bounds[0], 6) for r in apt.rooms}
        assert len(depths) == 2


def _reachable(grid, start) -> np.ndarray:
    free = ~grid.blocked
    seen = np.zeros_like(free)
    queue = collections.deque([grid.cell(start)])
    seen[queue[0]] = True
    while queue:
        i, j = queue.popleft()
        for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            n = (i + di, j + dj)
            if grid.in_bounds(n) and free[n] and not seen[n]:
                seen[n] = True
                queue.append(n)
    return seen


def test_doorways_connect_every_room_on_the_occupancy_grid(apts):
    for apt in apts:
        grid = apt.occupancy()          # the navigation suite's grid: colliding geometry, robot radius
        doorway = apt.doorways[0]
        inside = next(r for r in apt.rooms if r.name == doorway.rooms[0])
        start = np.array(doorway.center) + 0.5 * np.sign(np.subtract(inside.center, doorway.center)) * (
            (0, 1) if doorway.along == "x" else (1, 0))
        assert grid.is_free(start)
        seen = _reachable(grid, start)
        xs, ys = grid.centers()
        for room in apt.rooms:
            x0, x1, y0, y1 = room.bounds
            cells = (xs > x0) & (xs < x1) & (ys > y0) & (ys < y1)
            assert (seen & cells).sum() > 0.2 * cells.sum(), room.name   # a good part of every room is reachable


def test_neighbours_by_index_share_a_doorway_on_the_line_between_their_centres(apts):
    for apt in apts:
        names = [r.name for r in apt.rooms]
        for i, room in enumerate(apt.rooms):
            assert apt.neighbours(i) == apartments.grid_neighbours(i)
        for d in apt.doorways:
            a, b = (np.array(apt.rooms[names.index(n)].center) for n in d.rooms)
            # Where the straight walk between the centres crosses the wall line, it is inside the gap.
            k = 1 if d.along == "x" else 0
            t = (d.center[k] - a[k]) / (b[k] - a[k])
            crossing = a + t * (b - a)
            assert abs(crossing[1 - k] - d.center[1 - k]) < d.width / 2 - 0.3
        wide = [d for d in apt.doorways if names[1] in d.rooms]
        assert len(wide) == 3 and all(d.width == apartments.WIDE_OPENING_M for d in wide)


def test_door_leaves_and_per_room_walls(apts):
    for apt in apts:
        cats = collections.Counter(o.category for o in apt.objects)
        assert cats["walls"] == 6 and cats["floors"] == 6
        assert cats["door"] == 4         # the doors between the rooms other than the activity room
        textures = {p.texture.name for o in apt.objects if o.category == "walls" for p in o.parts if p.texture}
        assert len(textures) == 6


def test_same_seed_same_apartment():
    a = apartments.apartment(KINDS[0], np.random.default_rng(11))
    b = apartments.apartment(KINDS[0], np.random.default_rng(11))
    assert [r.bounds for r in a.rooms] == [r.bounds for r in b.rooms]
    assert [(o.name, o.pose, len(o.parts)) for o in a.objects] == [(o.name, o.pose, len(o.parts)) for o in b.objects]


def test_bad_kinds_raise_naming_them():
    with pytest.raises(ValueError, match="kinds must be 6 distinct room kinds, got"):
        apartments.apartment(["kitchen"] * 6, np.random.default_rng(0))


TYPICAL_M2 = {"garage": 37, "living_room": 28, "kitchen": 15, "dining_room": 15, "bedroom": 14, "childs_room": 11,
              "private_office": 10, "utility_room": 6, "bathroom": 5}
"""What a blind baseline knows (construction.quality.priors.TYPICAL_ROOM_AREA_M2, by bddl room type)."""


@pytest.fixture(scope="module")
def many():
    """36 apartments as the activities draw them: each of the nine types the activity room 4 times, the other five
    rooms five of the other eight types."""
    out = []
    kinds = sorted(ROOM_TYPES)
    for seed in range(36):
        rng = np.random.default_rng(seed)
        home = kinds[seed % len(kinds)]
        others = [k for k in kinds if k != home]
        chosen = [others[i] for i in rng.permutation(len(others))[:5]]
        out.append((home, apartments.apartment([chosen[0], home, *chosen[1:]], rng, home=1)))
    return out


def test_activity_room_keeps_its_type_and_place_and_every_type_is_used_once(many):
    for home, apt in many:
        assert apt.rooms[1].kind == home
        assert len({r.kind for r in apt.rooms}) == 6


def test_room_types_are_sized_like_homes_rooms(many):
    areas: dict[str, list[float]] = collections.defaultdict(list)
    for _, apt in many:
        for r in apt.rooms:
            areas[r.kind].append(_area(r))
        # Six areas 12% apart from at least 9 m^2 (3 m sides) put the largest at 9 x 1.12^5 = 15.9 m^2 or more; a
        # bathroom there is 3.9 m^2 above its range (4-12) and fits by exp(-3.9) = 0.02, against 1 for an assignment
        # giving that room to a large type: never drawn in these 36.
        largest = max(apt.rooms, key=_area)
        assert largest.kind not in ("bathroom", "utility_room"), [(r.kind, round(_area(r), 1)) for r in apt.rooms]
    mean = {kind: float(np.mean(v)) for kind, v in areas.items()}
    assert mean["bathroom"] < mean["bedroom"] < mean["living_room"], mean
    assert max(mean["bathroom"], mean["utility_room"]) < min(mean[k] for k in ("kitchen", "dining_room", "living_room",
                                                                               "garage", "bedroom"))
    # Soft ranges (1 m^2 slack): a room is at most a few m^2 outside its type's range.
    for kind, values in areas.items():
        low, high = AREA_RANGE_M2[kind]
        assert max(0, low - min(values)) < 6 and max(0, max(values) - high) < 6, (kind, min(values), max(values))


def test_typical_areas_name_the_largest_room_in_about_half_of_the_apartments(many):
    hits = 0.0
    for _, apt in many:
        top = max(TYPICAL_M2[r.kind] for r in apt.rooms)
        tied = [r.kind for r in apt.rooms if TYPICAL_M2[r.kind] == top]
        hits += (max(apt.rooms, key=_area).kind in tied) / len(tied)
    # The large types' ranges overlap (kitchen, dining room 12-30, living room 14-35, garage 14-40): the largest
    # rectangle goes to any of them present. Before ranges (types dealt to rectangles at random) it was 25% here (14%
    # over the 100 activity apartments of benchmarks/apartments.py).
    assert 0.3 <= hits / len(many) <= 0.7, hits / len(many)
