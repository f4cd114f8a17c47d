"""Spa-Bench's cross-task-object condition: other tasks' objects carry the same concept to the same target."""

import numpy as np
import pytest

from bspatial.catalog.tasks import MANIPULATION_TASKS, TASKS
from bspatial.tasks.conditions import CONDITIONS, NotApplicable, apply_condition
from bspatial.tasks.cross_task import CROSS_TASK_OBJECTS, admits_cross_task, cross_task_instance
from bspatial.tasks.registry import get_task, sample_instance
from bspatial.world.relations import object_box

pytestmark = [pytest.mark.slow, pytest.mark.sim]

SEEDS = range(8)


def _applicable(task):
    spec = get_task(task)
    for seed in SEEDS:
        instance = sample_instance(task, spec.variants[seed % len(spec.variants)], seed)
        try:
            yield instance, cross_task_instance(instance)
        except NotApplicable:
            continue


def test_every_reach_task_admits_it_and_no_placement_task_does():
    reach = {t for t in MANIPULATION_TASKS if TASKS[t].family in ("reach", "reach_base_proximity")}
    assert set(CROSS_TASK_OBJECTS) == reach and len(reach) == 11
    assert "cross_task" in CONDITIONS
    for task in sorted(set(MANIPULATION_TASKS) - reach):
        assert not admits_cross_task(task)
        with pytest.raises(NotApplicable, match="admits no cross-task objects"):
            apply_condition(sample_instance(task, get_task(task).variants[0], 0), "cross_task")


@pytest.mark.parametrize("task", sorted(CROSS_TASK_OBJECTS))
def test_the_replacements_are_another_tasks_objects_and_keep_the_target(task):
    spec = CROSS_TASK_OBJECTS[task]
    pairs = list(_applicable(task))
    assert len(pairs) >= len(SEEDS) // 2, f"{task}: only {len(pairs)} of {len(SEEDS)} scenes admit replacements"
    for before, after in pairs:
        old = {before.scene.object(n).category for n in before.candidates}
        new = {after.scene.object(n).category for n in after.candidates}
        assert not old & new, f"{task}: a candidate kept its category {old & new}"
        assert spec.noun not in after.instruction.replace(spec.replacement, "") and spec.replacement in after.instruction
        # Same slots: the i-th replacement stands over the i-th original (x, y within a millimetre).
        for a, b in zip(before.candidates, after.candidates):
            ca, cb = object_box(before.scene.object(a)).center, object_box(after.scene.object(b)).center
            assert np.allclose(ca[:2], cb[:2], atol=1e-3)
        assert after.candidates.index(after.target) == before.candidates.index(before.target)
        # The rest of the scene is untouched.
        others = lambda inst: {o.name: o for o in inst.scene.objects if o.name not in inst.candidates}
        assert others(before).keys() == others(after).keys()
        assert all(others(before)[n] is others(after)[n] for n in others(before))


def test_a_size_rank_survives_exactly():
    # Scaled to the replaced candidates' longest dimension: the instructed rank is still the target's,
    # read here straight from the new objects' boxes.
    for before, after in _applicable("reach_plate"):
        sizes = sorted((object_box(after.scene.object(n)).longest, n) for n in after.candidates)
        rank = {"largest": -1, "smallest": 0, "second largest": -2, "second smallest": 1}
        wanted = next(k for k in rank if f"the {k} saucer" in after.instruction)
        assert sizes[rank[wanted]][1] == after.target


def test_a_distance_rank_is_rechecked_with_the_new_heights():
    # Pizza plates -> plates: the reference is a chair or the fridge; the farthest / closest replacement
    # by 3D centre distance must be the target, by the 15% margin.
    for _, after in _applicable("reach_pizza_plate"):
        ref = object_box(after.scene.object(after.reference)).center
        d = {n: np.linalg.norm(object_box(after.scene.object(n)).center - ref) for n in after.candidates}
        ordered = sorted(d, key=d.get)
        pick = ordered[-1] if "farthest" in after.instruction else ordered[0]
        assert pick == after.target


def _box_overlap(a, b):
    (alo, ahi), (blo, bhi) = object_box(a).aabb(), object_box(b).aabb()
    return float(np.prod(np.clip(np.minimum(ahi, bhi) - np.maximum(alo, blo), 0, None)))


def test_replacements_crowd_nothing_more_than_the_originals():
    for task in CROSS_TASK_OBJECTS:
        for before, after in _applicable(task):
            old_to_new = dict(zip(before.candidates, after.candidates))
            free = [o.name for o in before.scene.objects if not o.static]
            for a in before.candidates:
                for b in free:
                    if b != a:
                        then = _box_overlap(before.scene.object(a), before.scene.object(b))
                        now = _box_overlap(after.scene.object(old_to_new[a]), after.scene.object(old_to_new.get(b, b)))
                        assert now <= then + 1e-6, f"{task}: {old_to_new[a]} crowds {b}"


def test_same_seed_same_replacements():
    a = cross_task_instance(sample_instance("reach_toys", "largest", 5))
    b = cross_task_instance(sample_instance("reach_toys", "largest", 5))
    assert [o.category for o in a.scene.objects] == [o.category for o in b.scene.objects]
    assert [object_box(o).center.tolist() for o in a.scene.objects] == [object_box(o).center.tolist() for o in b.scene.objects]
