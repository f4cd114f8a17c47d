"""Ceilings (issue 29 item 4): every room of every scene type has one, with a light fixture; a camera below it sees it
(no black sky above the walls), a camera above it (the top views) sees the rooms as before; it collides with
nothing, casts no shadow, darkens nothing and changes no physics."""

import dataclasses
import math

import mujoco
import numpy as np
import pytest

from bspatial.sim.mujoco_backend import CEILING_BODY, MujocoBackend
from bspatial.sim.render import BACKGROUND, CEILING_GROUP
from bspatial.world.apartments import apartment
from bspatial.world.floorplans import FLOORPLANS, get_floorplan
from bspatial.world.furniture import WALL_HEIGHT, Room, countertop, make_scene
from bspatial.world.spec import CameraSpec, RobotSpawn, box_object

pytestmark = [pytest.mark.sim]

BLACK_MAX = 8
"""The clear colour where nothing is drawn is (0, 0, 0); no lit surface of these scenes is this dark."""
SIZE = 160

# Hand-worked: the camera stands 1.5 m up over the robot's spawn (above its head: no robot pixel in view), 3.0 m
# from the back wall (x = 3.0), and looks 29 degrees up (atan(1.1 / 2.0)) with a 75 degree field of view: its frame
# reaches 66.5 degrees up, the back wall's top (0.9 m above the camera, 3.0 m away) is 16.7 degrees up, so the rows
# above tan(-12.3 deg) / tan(37.5 deg) = -0.28 of the half-height (64% of the frame; the side walls' tops are lower
# still) see only what is over the walls: the black sky before ceilings. The room's light fixture (over the middle,
# (0.75, 0), 0.87 m above the camera) is 49 degrees up, inside that part.
LOOK_UP = CameraSpec("look_up", (0.0, 0.0, 1.5), (2.0, 0.0, 2.6), fovy_deg=75.0)
OVER = CameraSpec("over", (-1.0, 0.0, WALL_HEIGHT + 0.6), (1.5, 0.0, 0.0), fovy_deg=75.0)
"""Above the walls (and the ceiling), looking down into the room at an angle."""


def _sky(frame) -> np.ndarray:
    """Where nothing is drawn: background in segmentation and black in RGB."""
    return (frame.segmentation == BACKGROUND) & (frame.rgb.max(axis=-1) <= BLACK_MAX)


def _scene():
    counter = countertop("countertop_0", front_x=1.2, depth=0.6, width=1.4)
    box = box_object("cereal_0", "box_of_cereal", (0.06, 0.18, 0.26), (1.45, 0.2, 0.9 + 0.13), mass=0.3)
    scene = make_scene("ceilings", (counter.obj, box), surfaces=(counter.surface,), robot=RobotSpawn())
    return dataclasses.replace(scene, cameras=scene.cameras + (LOOK_UP, OVER))


@pytest.fixture(scope="module")
def frames():
    """Every camera of the scene with its ceiling and without (the scenes before ceilings)."""
    scene = _scene()
    out = {}
    with MujocoBackend(camera_size=SIZE) as sim:
        for name, s in (("ceiling", scene), ("none", dataclasses.replace(scene, ceilings=()))):
            sim.load(s)
            out[name] = {c: sim.render(c) for c in ("head", "top", LOOK_UP.name, OVER.name)}
    return out


def test_every_scene_type_puts_a_ceiling_with_a_light_over_every_room():
    room = Room()
    (ceiling,) = make_scene("s", ()).ceilings
    assert ceiling.height == WALL_HEIGHT
    x0, x1, y0, y1 = ceiling.bounds
    assert x0 < room.x_min < room.x_max < x1 and y0 < room.y_min < room.y_max < y1
    assert ceiling.lights == ((0.75, 0.0),)                                  # over the room's middle
    for name in FLOORPLANS:                                                  # the whole walled plan is roofed
        plan = get_floorplan(name)
        px0, px1, py0, py1 = plan.bounds
        for x in np.linspace(px0 + 0.05, px1 - 0.05, 25):
            for y in np.linspace(py0 + 0.05, py1 - 0.05, 25):
                assert any(c.bounds[0] <= x <= c.bounds[1] and c.bounds[2] <= y <= c.bounds[3]
                           for c in plan.scene.ceilings), (name, x, y)
        lights = {xy for c in plan.scene.ceilings for xy in c.lights}
        assert lights == {r.center for r in plan.rooms}, name
    apt = apartment(["kitchen", "bedroom", "garage", "bathroom", "living_room", "private_office"],
                    np.random.default_rng(0))
    assert apt.plan.scene.ceilings == apt.ceilings and len(apt.ceilings) == len(apt.rooms)
    for room, c in zip(apt.rooms, apt.ceilings):
        assert c.lights == (room.center,)
        assert c.bounds[0] < room.bounds[0] and c.bounds[1] > room.bounds[1]
    light_xy = [light.position[:2] for light in apt.lights if not light.directional]
    assert light_xy == [c.lights[0] for c in apt.ceilings]                  # each fixture where its spot hangs


def test_ceiling_geoms_are_one_slab_and_one_fixture_per_room_and_touch_nothing():
    scene = _scene()
    with MujocoBackend() as sim:
        sim.load(scene)
        m = sim.model
        body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, CEILING_BODY)
        geoms = np.flatnonzero(m.geom_bodyid == body)
        assert len(geoms) == 2 * len(scene.ceilings)                        # slab + fixture
        assert set(m.geom_group[geoms]) == {CEILING_GROUP}
        assert not m.geom_contype[geoms].any() and not m.geom_conaffinity[geoms].any()
        assert not m.geom_castshadow[geoms].any()
        assert m.body_jntnum[body] == 0                                      # static: no joint, no mass that moves
        assert body == m.nbody - 1                                           # built last: every other id as before
        assert sim.id_to_name == {0: "floor", **{i + 1: o.name for i, o in enumerate(scene.objects)},
                                  len(scene.objects) + 1: "robot"}           # no object, no instance


def test_a_camera_looking_up_sees_the_ceiling_and_its_light_not_the_sky(frames):
    before, after = frames["none"][LOOK_UP.name], frames["ceiling"][LOOK_UP.name]
    assert _sky(before).mean() > 0.5                # the old scenes: black over the walls
    assert _sky(after).sum() == 0
    fixture = (after.rgb.min(axis=-1) >= 250) & (after.segmentation == BACKGROUND)
    assert fixture.sum() > 300                       # the light's glowing disc (0.36 m, 1.2 m away), over the middle


def test_cameras_above_the_ceiling_see_the_room_as_before(frames):
    for camera in ("top", OVER.name):
        before, after = frames["none"][camera], frames["ceiling"][camera]
        assert np.array_equal(before.rgb, after.rgb), camera
        assert np.array_equal(before.segmentation, after.segmentation), camera
    floor = frames["ceiling"]["top"].segmentation == 0
    assert floor.mean() > 0.3                        # the top view sees the floor, not a ceiling


def test_the_ceiling_darkens_nothing(frames):
    # The head camera looks down at the counter (no ceiling in view): the same pixels. The ceiling casts no shadow,
    # so the sun above it lights the room as it did.
    assert np.array_equal(frames["none"]["head"].rgb, frames["ceiling"]["head"].rgb)
    # Looking up, everything that was not sky is unchanged (only the sky turned into ceiling).
    before, after = frames["none"][LOOK_UP.name], frames["ceiling"][LOOK_UP.name]
    kept = ~_sky(before)
    assert np.array_equal(before.rgb[kept], after.rgb[kept])
    assert np.array_equal(before.depth[kept], after.depth[kept])
    # The ceiling is scenery: background in segmentation, no depth, like the sky it replaced.
    assert (after.segmentation[_sky(before)] == BACKGROUND).all() and (after.depth[_sky(before)] == 0).all()
    assert after.rgb[_sky(before)].mean() > 150     # and lit: a light grey (as bright as the walls), not a dark lid


def test_physics_and_pixels_are_the_same_each_time():
    scene = _scene()
    with MujocoBackend(camera_size=SIZE) as sim:
        runs = []
        for s in (scene, dataclasses.replace(scene, ceilings=()), scene):
            sim.load(s)
            hold = sim.hold_action()
            rng = np.random.default_rng(1)
            for _ in range(15):
                action = hold.copy()
                action[:3] = rng.uniform(-0.3, 0.3, 3)                       # drive the base about
                assert sim.step(action).status == "ok"
            runs.append((sim.data.qpos.copy(), sim.data.qvel.copy(), sim.render(LOOK_UP.name).rgb))
    (q1, v1, rgb1), (q0, v0, _), (q2, v2, rgb2) = runs
    assert np.array_equal(q1, q0) and np.array_equal(v1, v0)                # ceilings change no physics
    assert np.array_equal(q1, q2) and np.array_equal(rgb1, rgb2)             # deterministic


@pytest.mark.parametrize("which", ["floorplans", "apartment"])
def test_looking_up_in_every_room_shows_no_sky(which):
    if which == "floorplans":
        plans = [(get_floorplan(name).scene, get_floorplan(name).rooms) for name in FLOORPLANS]
    else:
        apt = apartment(["childs_room", "bathroom", "dining_room", "utility_room", "bedroom", "garage"],
                        np.random.default_rng(3))
        plans = [(apt.plan.scene, apt.rooms)]
    with MujocoBackend(camera_size=96) as sim:
        for scene, rooms in plans:
            cameras = []
            for room in rooms:                     # from each room's middle, up towards its four walls
                x, y = room.center
                cameras += [CameraSpec(f"{room.name}_{k}", (x, y, 1.5), (x + math.cos(k * math.pi / 2),
                                                                         y + math.sin(k * math.pi / 2), 2.2),
                                       fovy_deg=90.0) for k in range(4)]
            sim.load(dataclasses.replace(scene, cameras=tuple(cameras), robot=None))
            for camera in cameras:
                assert _sky(sim.render(camera.name)).sum() == 0, (scene.name, camera.name)
            sim.load(dataclasses.replace(scene, cameras=tuple(cameras), robot=None, ceilings=()))
            assert sum(_sky(sim.render(c.name)).sum() for c in cameras) > 0.2 * len(cameras) * 96 * 96, scene.name
