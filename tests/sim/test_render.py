"""Camera contract: segmentation ids, K / T_world_cam reprojection, 2-pass vs mujoco.Renderer, resources."""

import numpy as np
import pytest

from bspatial.world.spec import Part, Pose, ObjectSpec, SceneSpec, Texture, CameraSpec

pytestmark = [pytest.mark.sim]


def test_frame_shapes_and_types(table_sim):
    for cam in table_sim.cameras:
        f = table_sim.render(cam)
        assert f.rgb.shape == (224, 224, 3) and f.rgb.dtype == np.uint8
        assert f.depth.shape == (224, 224) and f.depth.dtype == np.float32
        assert f.segmentation.dtype == np.int32
        assert set(np.unique(f.segmentation)) - {-1} <= set(f.id_to_name)
    big = table_sim.render("head", width=720, height=720)
    assert big.rgb.shape == (720, 720, 3) and big.K[0, 2] == 360


@pytest.mark.parametrize("camera", ["head", "top"])
def test_projected_centres_land_on_own_ids(table_sim, camera):
    frame = table_sim.render(camera)
    checked = 0
    for name in ("block_0", "cereal_0", "cereal_1"):
        box = table_sim.object_bbox(name)
        top_centre = box.center + [0, 0, box.aabb_max[2] - box.center[2] - 0.005]   # visible from above
        (u, v), = frame.project(top_centre[None])[0]
        if not (0 <= u < 224 and 0 <= v < 224):
            continue
        instance = frame.segmentation[int(v), int(u)]
        assert frame.id_to_name[instance] == name, (camera, name)
        checked += 1
    assert checked >= 1


def test_depth_reprojects_to_known_surfaces_within_1mm(table_sim, table_geometry):
    TABLE_HEIGHT, BLOCK_SIZE, BLOCK_XY = (table_geometry[k] for k in ("table_height", "block_size", "block_xy"))
    top = table_sim.render("top")
    points = top.unproject()
    block = top.mask("block_0")
    assert block.sum() > 500
    # Straight above the block only its top face is visible.
    assert np.max(np.abs(points[block][:, 2] - (TABLE_HEIGHT + BLOCK_SIZE[2]))) < 1e-3
    assert np.max(np.abs(points[block][:, :2] - BLOCK_XY), axis=0).max() < BLOCK_SIZE[0] / 2 + 1e-3
    head = table_sim.render("head")
    floor = head.mask("floor")
    assert floor.sum() > 200
    assert np.max(np.abs(head.unproject()[floor][:, 2])) < 1e-3


def test_two_pass_matches_mujoco_renderer(table_sim):
    import mujoco

    frame = table_sim.render("top")
    with mujoco.Renderer(table_sim.model, 224, 224) as ref:
        ref.update_scene(table_sim.data, "top")
        ref.enable_depth_rendering()
        depth = ref.render()
    hit = frame.depth > 0
    np.testing.assert_allclose(frame.depth[hit], depth[hit], atol=1e-4)


def test_texture_and_camera_errors():
    from bspatial.sim.mujoco_backend import MujocoBackend

    image = np.zeros((32, 32, 3), np.uint8)
    image[:, :16] = (255, 0, 0)
    image[:, 16:] = (0, 0, 255)
    label = ObjectSpec("label_box", "box_of_cereal", (Part("box", (0.4, 0.4, 0.1), rgba=(1, 1, 1, 1),
                                                            texture=Texture("label", image)),),
                       Pose((0, 0, 0.05)), static=True)
    scene = SceneSpec("tex", objects=(label,), robot=None, cameras=(CameraSpec("top", (0, 0, 1.5), (0, 0, 0)),))
    with MujocoBackend() as sim:
        sim.load(scene)
        frame = sim.render("top")
        rgb = frame.rgb[frame.mask("label_box")].astype(int)
        assert (rgb[:, 0] - rgb[:, 2] > 80).any() and (rgb[:, 2] - rgb[:, 0] > 80).any()
        with pytest.raises(ValueError, match=r"camera must be one of \['top'\], got 'head'"):
            sim.render("head")
        with pytest.raises(ValueError, match="width must be in 1..720, got 1000"):
            sim.render("top", width=1000)
        assert sim.renderer_open
    assert not sim.renderer_open


def test_renderer_close_is_idempotent_and_final():
    from bspatial.sim.mujoco_backend import MujocoBackend

    sim = MujocoBackend()
    sim.load(SceneSpec("s", cameras=(CameraSpec("c", (2, 0, 1), (0, 0, 0.5)),)))
    sim.render("c")
    renderer = sim._renderer
    sim.close()
    sim.close()
    assert renderer.closed and not sim.renderer_open
    with pytest.raises(RuntimeError, match="after close"):
        renderer.render(None, 0, 8, 8)


def test_a_scene_renders_the_same_after_other_scenes_in_one_backend():
    # The backend keeps one GL context for every scene it loads (a fresh context's first MjrContext compiles
    # Mesa's shaders): nothing of an earlier scene (textures, meshes, ids) may reach a later one's pixels.
    from bspatial.sim.mujoco_backend import MujocoBackend

    def scene(name, rgb, stripe):
        image = np.zeros((64, 64, 3), np.uint8)
        image[:, :] = rgb
        image[::stripe] = (20, 20, 20)
        wood = Texture(f"{name}_wood", image)
        obj = ObjectSpec(name, "shoe_box", (Part("box", (0.1, 0.2, 0.1), rgba=(1, 1, 1, 1), texture=wood),),
                         Pose((0, 0, 0.05)), static=True)
        return SceneSpec(name, objects=(obj,), cameras=(CameraSpec("c", (0.8, 0.3, 0.6), (0, 0, 0.05)),))

    first, second = scene("first", (200, 40, 40), 4), scene("second", (40, 40, 200), 7)
    alone = MujocoBackend()
    alone.load(first)
    expected = alone.render("c", width=96, height=96)
    alone.close()
    sim = MujocoBackend()
    for spec in (second, first, second, first):
        sim.load(spec)
        frame = sim.render("c", width=96, height=96)
    sim.close()
    assert np.array_equal(frame.rgb, expected.rgb) and np.array_equal(frame.depth, expected.depth)
    assert np.array_equal(frame.segmentation, expected.segmentation)
    assert frame.id_to_name == expected.id_to_name
