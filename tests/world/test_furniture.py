"""Room shell and furniture builders."""

import numpy as np
import pytest

from bspatial.world import furniture

pytestmark = [pytest.mark.sim]


def test_room_walls_enclose_the_room_and_are_behaviour_walls():
    room = furniture.Room(x_max=2.0)
    walls = room.wall_objects()
    assert {w.category for w in walls} == {"walls"} and len(walls) == 4
    point, normal = room.wall_plane("back")
    assert point[0] == 2.0 and normal[0] == -1.0
    with pytest.raises(ValueError, match="side must be one of"):
        room.wall_plane("up")


def test_countertop_surface_matches_its_top():
    c = furniture.countertop("countertop_0", front_x=0.5, depth=0.6, width=1.0, y_center=0.2)
    assert c.surface.height == pytest.approx(furniture.COUNTERTOP_HEIGHT)
    assert np.allclose(c.surface.polygon.min(0), [0.5, -0.3]) and np.allclose(c.surface.polygon.max(0), [1.1, 0.7])


@pytest.mark.parametrize("builder,layers", [(furniture.fridge, 6), (furniture.bottom_cabinet, 5)])
def test_shelving_layers_are_ordered_and_open(builder, layers):
    shelf = builder("s_0", front_x=1.0)
    assert len(shelf.layer_tops) == layers
    assert all(a < b for a, b in zip(shelf.layer_tops, shelf.layer_tops[1:]))
    assert all(top < ceiling for top, ceiling in zip(shelf.layer_tops, shelf.layer_ceilings))
    x0, x1, y0, y1 = shelf.interior
    assert x0 == 1.0 and x1 > x0 and y1 > y0


def test_bookcase_grid_columns_run_left_to_right():
    case = furniture.bookcase("bookcase_0", front_x=1.4, rows=3, columns=2)
    assert len(case.layer_tops) == 3 and len(case.column_edges) == 3
    assert case.column_edges[0] > case.column_edges[1] > case.column_edges[2]   # robot's left (+y) first


def test_scene_loads_and_holds(tmp_path):
    from bspatial.sim.mujoco_backend import MujocoBackend

    counter = furniture.countertop("countertop_0", front_x=0.55, depth=0.7, width=1.6)
    scene = furniture.make_scene("shell", (counter.obj, furniture.sofa("sofa_0", (2.5, 0.0)),
                                        furniture.straight_chair("straight_chair_0", (2.0, 1.0))), surfaces=(counter.surface,))
    with MujocoBackend() as sim:
        sim.load(scene)
        assert sim.step(sim.hold_action()).status == "ok"
        top = sim.render(furniture.TOP_CAMERA)
        assert "countertop_0" in set(top.id_to_name[i] for i in np.unique(top.segmentation) if i >= 0)
