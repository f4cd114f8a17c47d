"""Named landmarks must be findable, not slivers (issue 29). Each case was looked at in the rendered 720 px
frame: the expectations are what a viewer sees, not what the rule computes."""

import pytest

from bspatial.catalog.schema import CONSTRUCTION_FRAME_SIZE
from bspatial.construction.items.frames import capture
from bspatial.sim.process import process_backend
from bspatial.tasks import sample_instance

pytestmark = [pytest.mark.sim]


@pytest.fixture(scope="module")
def sim():
    return process_backend(max_render_size=CONSTRUCTION_FRAME_SIZE)


@pytest.mark.parametrize("task, variant, seed, findable, seen", [
    ("reach_dice", "closest/board game", 9100, True, "the board game lies whole on the bed"),
    ("reach_paperback_book", "closest/folder", 9100, True, "the folder lies whole on the desk"),
    ("reach_storage_box", "closest/coffee table", 9100, True, "a table at the left, legs and top"),
    ("reach_pizza_plate", "closest/fridge", 9104, False, "a grey strip at the right edge (14,771 px)"),
    ("reach_soda_can", "farthest/bottom cabinet", 9104, False, "a wooden sliver at the left edge (3,596 px)"),
    ("reach_soda_can", "farthest/coffee table", 9104, False, "cut by the left edge and hidden by the arm"),
    ("reach_pizza_plate", "closest/white chair", 9103, False, "hidden behind the table but 3,597 px"),
])
def test_landmarks_are_findable_as_a_viewer_sees_them(sim, task, variant, seed, findable, seen):
    instance = sample_instance(task, variant, seed)
    record = capture(sim, instance.scene)
    assert (record.findable(instance.reference) is None) is findable, seen
