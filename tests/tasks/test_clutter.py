"""Task-scene clutter (issue 15, item 4): household objects besides the candidates, while the task rules hold.

Checked from the sampled scenes with the tests' own geometry (boxes from the objects' parts) and renders:
clutter never shares a category with anything the instruction or the candidates name, stands on a furniture
top clear of every other object, hides no candidate from the head camera (pixel counts with and without it),
shows up in the head view, and leaves the candidates of every seed where they were."""

import dataclasses

import numpy as np
import pytest

from bspatial.tasks import get_task, sample_instance
from bspatial.tasks.base import LayoutRejected, candidate_pixels
from bspatial.world.relations import object_box

pytestmark = [pytest.mark.slow, pytest.mark.sim]

CLUTTERED = ["reach_food_item", "reach_plate", "reach_toys", "reach_tool", "reach_pizza_plate", "reach_dice",
             "reach_paperback_book", "place_carving_knife", "place_saucer", "place_tupperware_in_fridge",
             "place_bowl_in_cabinet", "reach_soda_can", "reach_storage_box"]
FLOOR_TASKS = ["reach_soda_can", "reach_storage_box"]
SEEDS = range(4)
INSTRUCTION_WORDS = {"food", "toy", "plate", "dice", "book", "tool", "knife", "saucer", "kettle", "board", "bowl",
                     "tupperware", "soda", "box", "game", "folder", "pencil", "fridge", "chair", "cabinet", "item",
                     "apple", "banana", "lemon", "lime", "orange", "cereal", "hammer", "spatula", "screwdriver"}


def _clutter(scene):
    return [o for o in scene.objects if "_clutter_" in o.name]


def _without_clutter(scene):
    return dataclasses.replace(scene, objects=tuple(o for o in scene.objects if "_clutter_" not in o.name))


def _poses(scene):
    return [(o.name, o.category, tuple(np.round(o.pose.position, 9)), tuple(np.round(o.pose.quat, 9)))
            for o in scene.objects]


def _xy_box(obj):
    lo, hi = object_box(obj).aabb()
    return lo, hi


@pytest.mark.parametrize("task", CLUTTERED)
def test_clutter_names_nothing_the_task_asks_about_and_stands_clear(task):
    for seed in SEEDS:
        variant = get_task(task).variants[seed % len(get_task(task).variants)]
        inst = sample_instance(task, variant, seed)
        asked = {o.category for o in inst.scene.objects if o.name in (*inst.candidates, inst.reference)}
        surfaces = {s.owner: s for s in inst.scene.surfaces}
        for c in _clutter(inst.scene):
            assert c.category not in asked, (task, seed, c.name)
            assert not set(c.category.split("_")) & INSTRUCTION_WORDS, (task, seed, c.category)
            lo, hi = _xy_box(c)
            # On some furniture top: its bottom at a surface's height, its footprint inside the top's bounds.
            tops = [s for s in surfaces.values() if abs(lo[2] - s.height) < 0.02
                    and np.all(lo[:2] >= s.polygon.min(0) - 1e-6) and np.all(hi[:2] <= s.polygon.max(0) + 1e-6)]
            assert tops, (task, seed, c.name, lo, hi)
            # Clear of every other object standing on that top (boxes apart by a few centimetres at least).
            for o in inst.scene.objects:
                if o.name == c.name or o.name == tops[0].owner:
                    continue
                olo, ohi = _xy_box(o)
                if abs(olo[2] - tops[0].height) > 0.02:
                    continue
                gap = np.maximum(np.maximum(olo[:2] - hi[:2], lo[:2] - ohi[:2]), 0.0)
                assert np.linalg.norm(gap) > 0.02, (task, seed, c.name, o.name)


@pytest.mark.parametrize("task", FLOOR_TASKS)
def test_floor_tasks_get_low_clutter_on_the_floor(task):
    # Candidates on the floor: clutter stands on the floor around them, low enough (<= 0.5 m, measured from the
    # built parts) that the furniture a question names (sofa, coffee table, cabinet) does not hide behind it.
    counts = []
    for seed in range(12):
        inst = sample_instance(task, get_task(task).variants[seed % len(get_task(task).variants)], seed)
        clutter = _clutter(inst.scene)
        counts.append(len(clutter))
        for c in clutter:
            lo, hi = _xy_box(c)
            assert abs(lo[2]) < 0.02 and hi[2] - lo[2] <= 0.5, (task, seed, c.name, lo, hi)
    assert sum(n >= 1 for n in counts) >= 9 and sum(counts) >= 1.2 * len(counts), counts   # measured 1.3, 2.2 (60 seeds)


def test_reach_item_has_no_clutter_on_its_countertop():
    # "Reach the largest item from the countertop": every object there would be an item.
    for seed in SEEDS:
        assert not _clutter(sample_instance("reach_item", "largest", seed).scene)


@pytest.mark.parametrize("task", CLUTTERED)
def test_clutter_keeps_the_layout_and_is_deterministic(task):
    spec = get_task(task)
    variant = spec.variants[0]
    a, b = sample_instance(task, variant, 3), sample_instance(task, variant, 3)
    assert _poses(a.scene) == _poses(b.scene)
    # The task's own generator on the same seed's stream draws the same layout, without the clutter.
    rng = np.random.default_rng(3)
    while True:
        try:
            layout = spec.generator(spec.spec, variant, rng)
            break
        except LayoutRejected:
            continue
    assert _poses(_without_clutter(a.scene)) == _poses(layout.scene)
    # Clutter does not depend on the variant: where another variant draws the same layout (a prompt probe),
    # it gets the same clutter (else the clutter would tell which reference or side is instructed).
    for other in spec.variants[1:]:
        o = sample_instance(task, other, 3)
        if _poses(_without_clutter(o.scene)) == _poses(_without_clutter(a.scene)):
            assert _poses(o.scene) == _poses(a.scene), (task, other)


def test_clutter_hides_no_candidate_and_is_seen(sim):
    seen = 0
    scenes = 0
    for task in CLUTTERED:
        for seed in (0, 1):
            inst = sample_instance(task, get_task(task).variants[0], seed)
            names = tuple(dict.fromkeys((*inst.candidates, *((inst.manipulated,) if inst.manipulated else ()))))
            counts = {}
            for label, scene in (("with", inst.scene), ("without", _without_clutter(inst.scene))):
                sim.load(scene)
                frame = sim.render("head")
                counts[label] = candidate_pixels(frame, names)
                if label == "with":
                    clutter_px = candidate_pixels(frame, [c.name for c in _clutter(scene)])
            for n in names:
                assert counts["with"][n] >= 0.9 * counts["without"][n], (task, seed, n, counts)
            scenes += 1
            seen += any(px >= 50 for px in clutter_px.values())
    # Clutter stands where the head camera looks: most scenes show some.
    assert seen >= 0.6 * scenes, (seen, scenes)


def test_the_footprint_clutter_tries_is_the_footprint_of_the_object_it_builds():
    # Clutter tries positions with a footprint computed from the kind alone and builds only the accepted
    # object; here each clutter kind is built and its box taken from its parts (relations.object_box).
    from bspatial.tasks.clutter import CLUTTER_KINDS, _kind_footprint
    from bspatial.world.household import kind_of, make_object

    rng = np.random.default_rng(0)
    for category in sorted({c for cs in CLUTTER_KINDS.values() for c in cs}):
        kind = kind_of(category)
        for _ in range(6):
            length, yaw, xy = float(rng.uniform(*kind.length)), float(rng.uniform(-np.pi, np.pi)), rng.uniform(-1, 1, 2)
            lo, hi = object_box(make_object(kind, "probe", length, (xy[0], xy[1], 0.9), yaw, rng)).aabb()
            centre, radius = _kind_footprint(kind, length, yaw, xy)
            np.testing.assert_allclose(centre, (lo[:2] + hi[:2]) / 2, atol=1e-9, err_msg=category)
            assert radius == pytest.approx(float(np.linalg.norm(hi[:2] - lo[:2]) / 2), abs=1e-9), category
