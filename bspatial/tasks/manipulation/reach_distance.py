"""Distance reach tasks (Table S2): dice on a bed, paperback on a desk, pizza plate on a breakfast
table, soda can and storage box on the floor. The target is the candidate whose bounding-box centre
is closest to / farthest from the reference (its centre, or the wall's inner face); the decisive gap
to the runner-up is at least DISTANCE_MARGIN (15%) relative."""

from __future__ import annotations

import numpy as np

from bspatial.catalog.tasks import TaskSpec
from bspatial.world.furniture import Room, bed, bottom_cabinet, coffee_table, make_scene, rect_polygon, sofa, straight_chair, table
from bspatial.world.spec import ObjectSpec, Surface
from bspatial.tasks.base import Layout, LayoutRejected
from bspatial.catalog.thresholds import DISTANCE_MARGIN
from bspatial.world.relations import Reference, object_box, pick_by_rank, reference_distance
from bspatial.world import objects
from bspatial.tasks.manipulation.common import SPAWN, footprint_radius, relation_phrase, scatter, split_variant

N_DICE = 3
N_PAPERBACKS = 3
N_PIZZA_PLATES = 3
N_SODA_CANS = 3
N_STORAGE_BOXES = 3


def point_reference(obj: ObjectSpec) -> Reference:
    return Reference(obj.name, object_box(obj).center)


def _distance_layout(variant: str, scene_name: str, others, candidates: list[ObjectSpec], references: dict[str, Reference],
                     instruction_template: str, *, room: Room = Room(), surfaces=(), top_center=(1.0, 0.0)) -> Layout:
    relation, ref_key = split_variant(variant)
    reference = references[ref_key]
    distances = {o.name: reference_distance(o, reference) for o in candidates}
    target, margin = pick_by_rank(distances, relation)
    if margin < DISTANCE_MARGIN:
        raise LayoutRejected(f"distance gap {margin:.3f} < {DISTANCE_MARGIN}")
    scene = make_scene(scene_name, tuple(others) + tuple(candidates), room=room, surfaces=surfaces, robot=SPAWN,
                       top_center=top_center)
    return Layout(instruction=instruction_template.format(rel=relation_phrase(relation, ref_key)), scene=scene,
                  candidates=tuple(o.name for o in candidates), target=target, reference=reference.name,
                  measurements={"distance_to_reference": distances}, margin=margin)


def reach_dice(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    room = Room(x_max=2.15)
    the_bed = bed("bed_0", center_xy=(1.4, 0.0), size_xy=(1.4, 1.8),
                  blanket_rgb=tuple(int(c) for c in rng.integers(40, 200, 3)))
    h = the_bed.height
    x0, _, y0, y1 = the_bed.bounds
    area = (x0 + 0.05, 1.7, max(y0, -0.42), min(y1, 0.42))   # |y| > 0.45 hides behind the arms
    game_r = footprint_radius(objects.board_game("probe", (0, 0, 0), rng))
    size = float(rng.uniform(0.055, 0.07))
    xy = scatter(rng, [game_r] + [size * 0.75] * N_DICE, area, gap=0.06)
    game = objects.board_game("board_game_0", (*xy[0], h), rng, yaw=float(rng.uniform(-0.3, 0.3)))
    dice = [objects.dice(f"dice_{i}", size, (*xy[i + 1], h), yaw=float(rng.uniform(0, 1.5))) for i in range(N_DICE)]
    point, normal = room.wall_plane("back")
    refs = {"board game": point_reference(game), "wall": Reference("wall_back", point, normal)}
    return _distance_layout(variant, "reach_dice", (the_bed.obj, game), dice, refs,
                            "Reach the dice {rel} on the bed.", room=room, surfaces=(the_bed.surface,))


def reach_paperback_book(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    desk = table("desk_0", "desk", center_xy=(0.95, 0.0), size_xy=(0.72, 1.4), height=0.75, rgb=(95, 70, 50),
                 seed=int(rng.integers(100)))
    h = desk.height
    x0, x1, _, _ = desk.bounds
    yaws = rng.uniform(-0.5, 0.5, N_PAPERBACKS + 2)
    protos = [objects.folder("p", (0, 0, 0)), objects.pencil_case("p", (0, 0, 0))] + \
             [objects.paperback_book("p", (0, 0, 0), rng) for _ in range(N_PAPERBACKS)]
    xy = scatter(rng, [footprint_radius(p) for p in protos], (x0 + 0.02, x1 - 0.02, -0.56, 0.56), gap=0.02)
    folder = objects.folder("folder_0", (*xy[0], h), float(yaws[0]), rgb=tuple(int(c) for c in rng.integers(40, 240, 3)))
    case = objects.pencil_case("pencil_case_0", (*xy[1], h), float(yaws[1]), rgb=tuple(int(c) for c in rng.integers(40, 240, 3)))
    books = [objects.paperback_book(f"paperback_book_{i}", (*xy[i + 2], h), rng, float(yaws[i + 2])) for i in range(N_PAPERBACKS)]
    refs = {"folder": point_reference(folder), "pencil case": point_reference(case)}
    return _distance_layout(variant, "reach_paperback_book", (desk.obj, folder, case), books, refs,
                            "Reach the paperback book {rel} on the desk.", surfaces=(desk.surface,))


def reach_pizza_plate(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    tab = table("breakfast_table_0", "breakfast_table", center_xy=(1.05, 0.0), size_xy=(0.8, 1.1), height=0.75,
                rgb=(150, 110, 70), seed=int(rng.integers(100)))
    h = tab.height
    x0, x1, y0, y1 = tab.bounds
    diam = rng.uniform(0.2, 0.26, N_PIZZA_PLATES)
    xy = scatter(rng, [d / 2 for d in diam], (x0 + 0.02, x1 - 0.02, max(y0, -0.45) + 0.02, min(y1, 0.45) - 0.02), gap=0.03)
    plates = [objects.plate(f"pizza_plate_{i}", float(d), (*xy[i], h), pizza=True,
                            rim_rgb=tuple(int(c) for c in rng.integers(20, 200, 3))) for i, d in enumerate(diam)]
    # Chairs around the table (two of three sides, at random), the fridge against the left wall.
    seats = {"far": ((x1 + 0.35, float(rng.uniform(-0.3, 0.3))), 0.0),
             "left": ((float(rng.uniform(0.85, 1.25)), y1 + 0.35), np.pi / 2),
             "right": ((float(rng.uniform(0.85, 1.25)), y0 - 0.35), -np.pi / 2)}
    chosen = rng.choice(sorted(seats), size=2, replace=False)
    black = straight_chair("straight_chair_black", seats[chosen[0]][0], yaw=seats[chosen[0]][1], rgb=(25, 25, 28))
    white = straight_chair("straight_chair_white", seats[chosen[1]][0], yaw=seats[chosen[1]][1], rgb=(240, 240, 236))
    fridge = objects.closed_fridge("fridge_0", (float(rng.uniform(1.9, 2.3)), 1.55 * float(rng.choice([-1, 1]))))
    refs = {"fridge": point_reference(fridge), "black chair": point_reference(black), "white chair": point_reference(white)}
    return _distance_layout(variant, "reach_pizza_plate", (tab.obj, black, white, fridge), plates, refs,
                            "Reach the pizza plate {rel} on the breakfast table.", surfaces=(tab.surface,),
                            top_center=(1.3, 0.0))


def _living_room(rng: np.random.Generator, with_sofa: bool) -> tuple[list[ObjectSpec], dict[str, Reference], Room]:
    room = Room(x_max=3.2, y_min=-2.2, y_max=2.2)
    side = float(rng.choice([-1, 1]))
    table_obj = coffee_table("coffee_table_0", (float(rng.uniform(1.3, 1.9)), side * float(rng.uniform(1.05, 1.3))),
                             size=(0.6, 0.9))
    cab = bottom_cabinet("bottom_cabinet_0", front_x=float(rng.uniform(1.2, 1.8)), y_center=-side * 1.75).obj
    cab = ObjectSpec(name=cab.name, category=cab.category, parts=cab.parts, pose=cab.pose, static=True)
    others = [table_obj, cab]
    refs = {"coffee table": point_reference(table_obj), "bottom cabinet": point_reference(cab)}
    if with_sofa:
        so = sofa("sofa_0", (2.7, float(rng.uniform(-0.4, 0.4))), rgb=tuple(int(c) for c in rng.integers(50, 170, 3)))
        others.append(so)
        refs["sofa"] = point_reference(so)
    return others, refs, room


FLOOR_AROUND_M = 1.0
"""The floor surface of a floor task reaches this far beyond the area its candidates are scattered in."""


def _floor_around(room: Room, x0: float, x1: float, y0: float, y1: float) -> Surface:
    """The floor around a floor task's candidate area, inside ``room``'s walls, as a surface (owner ``""``):
    where its clutter stands (:mod:`bspatial.tasks.clutter`) and a decoy copy may stand
    (:mod:`bspatial.construction.questions.decoys`)."""
    m = FLOOR_AROUND_M
    return Surface("floor", "", 0.0, rect_polygon(max(x0 - m, room.x_min), min(x1 + m, room.x_max),
                                                   max(y0 - m, room.y_min), min(y1 + m, room.y_max)))


def reach_soda_can(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    others, refs, room = _living_room(rng, with_sofa=True)
    colours = [(200, 20, 30), (30, 90, 200), (30, 150, 60), (240, 200, 30)]
    xy = scatter(rng, [0.05] * N_SODA_CANS, (0.9, 1.9, -0.5, 0.5), gap=0.12)
    cans = [objects.can_of_soda(f"can_of_soda_{i}", (*xy[i], 0.0), rgb=colours[int(rng.integers(len(colours)))])
            for i in range(N_SODA_CANS)]
    return _distance_layout(variant, "reach_soda_can", others, cans, refs, "Reach the can of soda {rel} on the floor.",
                            room=room, top_center=(1.5, 0.0), surfaces=(_floor_around(room, 0.9, 1.9, -0.5, 0.5),))


def reach_storage_box(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    others, refs, room = _living_room(rng, with_sofa=False)
    sizes = [tuple(rng.uniform((0.3, 0.35, 0.22), (0.38, 0.48, 0.3))) for _ in range(N_STORAGE_BOXES)]
    xy = scatter(rng, [0.5 * float(np.hypot(s[0], s[1])) for s in sizes], (1.0, 2.4, -0.9, 0.9), gap=0.08,
                 avoid=[(o.pose.position[:2], footprint_radius(o)) for o in others])
    boxes = [objects.storage_box(f"storage_box_{i}", s, (*xy[i], 0.0), float(rng.uniform(-0.3, 0.3)),
                                 rgb=tuple(int(c) for c in rng.integers(60, 230, 3))) for i, s in enumerate(sizes)]
    return _distance_layout(variant, "reach_storage_box", others, boxes, refs,
                            "Reach the storage box {rel} on the floor.", room=room, top_center=(1.5, 0.0),
                            surfaces=(_floor_around(room, 1.0, 2.4, -0.9, 0.9),))
