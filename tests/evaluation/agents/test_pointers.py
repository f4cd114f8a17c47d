"""The oracle pointer (a privileged pointing model): its points through the API land on the instructed target."""

from __future__ import annotations

import numpy as np
import pytest

from bspatial.catalog.schema import CAMERAS
from bspatial.evaluation.agents.api import AgentAPI
from bspatial.evaluation.agents.pointers import OraclePointer, make_pointer, pointer_label
from bspatial.evaluation.vlm.backend_api import Request
from bspatial.tasks.episode import EpisodeRun

from .conftest import mujoco_project

pytestmark = [pytest.mark.sim]


def test_oracle_points_land_on_the_instructed_plate(sim, instance):
    api = AgentAPI(EpisodeRun(sim, instance, max_steps=30))
    api.pointer = make_pointer("oracle", instance, lambda: [sim.render(c) for c in CAMERAS])
    for camera in ("head", "left_wrist"):
        mask = sim.render(camera).mask(instance.target)
        points = api.point_at("the plate the instruction means", camera)
        if not mask.any():
            assert points == []                      # out of view: nothing found, as a pointing model would
            continue
        ((u, v),) = points
        assert mask[int(v), int(u)], (camera, u, v)


def test_oracle_answers_where_with_the_goal_of_a_placement(sim):
    from bspatial.tasks import sample_instance

    inst = sample_instance("place_carving_knife", "left/microwave", 0)
    sim.load(inst.scene)
    pointer = OraclePointer(inst, lambda: [sim.render(c) for c in CAMERAS])
    api = AgentAPI(EpisodeRun(sim, inst, max_steps=30), pointer=pointer)
    ((u, v),) = api.point_at("where does the instruction put the object: " + inst.instruction, "head")
    frame = sim.render("head")
    gu, gv, _, _, _ = mujoco_project(sim, "head", inst.placement.goal_point, frame.width, frame.height)
    assert abs(u - gu) < 1.0 and abs(v - gv) < 1.0          # the 0-1000 grid rounds to a quarter pixel here
    ((u, v),) = api.point_at(inst.instruction, "head")       # no "where": the knife itself
    assert frame.mask(inst.target)[int(v), int(u)]


def test_oracle_refuses_an_image_it_cannot_place(sim, instance):
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.zeros((224, 224, 3), np.uint8)).save(buffer, format="PNG")
    pointer = OraclePointer(instance, lambda: [sim.render(c) for c in CAMERAS])
    with pytest.raises(ValueError, match="cannot tell which camera request 'q' shows"):
        pointer.generate([Request("q", "Point to every plate in the image.", (buffer.getvalue(),), "point")])


def test_pointer_specs_and_row_names(instance):
    assert make_pointer("chance", instance, lambda: []).spec == "chance:0"
    assert "privileged" in pointer_label("oracle") and pointer_label("chance") == "chance pointer"
