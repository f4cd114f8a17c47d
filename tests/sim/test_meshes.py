"""Visual meshes in the MuJoCo backend: physics is exactly that of the primitives, meshes are shared
assets, and segmentation sees the visual mesh, not the hidden collider.

The "before meshes" scene is built here from the dressed spec by dropping its mesh parts and making
its primitives visible again (plain dataclasses.replace, not the library's own undressing).
"""

import dataclasses

import numpy as np

import pytest

from bspatial.sim.mujoco_backend import MujocoBackend
from bspatial.world.assets import dress, dressed_parts, materialised
from bspatial.world.objects import bowl, food_item, plate, tool
from bspatial.world.spec import CameraSpec, LightSpec, ObjectSpec, Part, Pose, SceneSpec, table_object

pytestmark = [pytest.mark.sim]

RED = (1.0, 0.0, 0.0, 1.0)
MIN_SILHOUETTE_IOU = 0.97
"""Segmentation of the meshed object vs the pixels its (pure red, unlit-ish) mesh covers in RGB: equal up to
a rim of anti-aliasing-free edge pixels where the shading darkens red below the hue test."""


def _without_meshes(obj: ObjectSpec) -> ObjectSpec:
    return dataclasses.replace(obj, look=None, parts=tuple(dataclasses.replace(p, visible=True) for p in obj.parts
                                                           if p.kind != "mesh"))


def _drop_scene(meshed: bool) -> SceneSpec:
    """A table and five free objects dropped from 10-30 cm, tilted, so they bounce and topple."""
    objects = [bowl("bowl_0", (1.0, -0.25, 1.0)), food_item("banana_0", "banana", 0.18, (1.0, 0.0, 1.05), 0.4),
               tool("hammer_0", "hammer", (1.05, 0.25, 0.95), 1.0),
               plate("plate_0", 0.26, (1.2, -0.3, 0.9), pizza=True),
               dress(ObjectSpec("teapot_0", "teapot", (Part("cylinder", (0.08, 0.12), Pose((0, 0, 0.06))),
                                                       Part("cylinder", (0.03, 0.05), Pose((0, 0, 0.145)))),
                                pose=Pose((0.8, 0.1, 1.1), (0.98, 0.1, 0.15, 0.0)), mass=0.5))]
    objects = [o if meshed else _without_meshes(o) for o in objects]
    assert all(any(p.kind == "mesh" for p in dressed_parts(o)) == meshed for o in objects)
    return SceneSpec("drop", objects=(table_object("table_0", "breakfast_table", (0.8, 1.2), 0.75, (1.0, 0.0)), *objects))


def _trajectory(scene: SceneSpec, steps: int = 40):
    sim = MujocoBackend()
    try:
        sim.load(scene)
        states, contacts = [], []
        for _ in range(steps):
            sim.step(sim.hold_action())
            states.append(sim.data.qpos.copy())
            contacts.append(sorted((c.body_a, c.body_b, c.position, c.normal, c.normal_force) for c in sim.contacts()))
        return np.array(states), contacts, sim.model.nmesh
    finally:
        sim.close()


def test_meshes_leave_contacts_and_trajectories_unchanged():
    meshed, meshed_contacts, n_mesh = _trajectory(_drop_scene(True))
    plain, plain_contacts, n_plain = _trajectory(_drop_scene(False))
    assert n_mesh > 0 and n_plain == 0
    assert not np.allclose(meshed[0], meshed[-1])          # things did fall and move
    assert any(meshed_contacts[-1])
    np.testing.assert_array_equal(meshed, plain)
    assert meshed_contacts == plain_contacts


def test_identical_meshes_are_one_asset():
    mug = dress(ObjectSpec("mug_0", "mug", (Part("cylinder", (0.045, 0.1), Pose((0, 0, 0.05))),), pose=Pose((1, 0, 0.8))))
    twins = [dataclasses.replace(mug, name=f"mug_{i}", pose=Pose((1, 0.2 * i, 0.8))) for i in range(3)]
    sim = MujocoBackend()
    try:
        sim.load(SceneSpec("mugs", objects=tuple(twins), robot=None))
        per_object = sum(p.kind == "mesh" for p in dressed_parts(mug))
        assert sim.model.nmesh == per_object           # three mugs, one set of mesh assets
    finally:
        sim.close()


def test_building_a_scene_does_not_change_its_pickle():
    import pickle

    scene = _drop_scene(True)
    before = pickle.dumps(scene, protocol=4)
    sim = MujocoBackend()
    try:
        sim.load(scene)
    finally:
        sim.close()
    assert pickle.dumps(scene, protocol=4) == before
    assert pickle.dumps(_drop_scene(True), protocol=4) == before      # and a fresh build pickles the same


def _can_pixels(textured: bool) -> np.ndarray:
    from bspatial.world.objects import can_of_soda

    can = can_of_soda("can_0", (0.0, 0.0, 0.0))
    if not textured:
        can = materialised(can)   # the label off the meshes too
        can = dataclasses.replace(can, parts=tuple(dataclasses.replace(p, texture=None) for p in can.parts))
    cams = (CameraSpec("side", (-0.35, 0.0, 0.08), (0.0, 0.0, 0.06), fovy_deg=30.0),)
    sim = MujocoBackend(camera_size=128)
    try:
        sim.load(SceneSpec("can", objects=(can,), cameras=cams, robot=None))
        frame = sim.render("side")
    finally:
        sim.close()
    instance = next(i for i, n in frame.id_to_name.items() if n == "can_0")
    return frame.rgb[frame.segmentation == instance].astype(float)


def test_printed_meshes_show_their_texture():
    printed, plain = _can_pixels(True), _can_pixels(False)
    assert len(printed) > 1000
    # The same white mesh without its texture is grey under the white lights (it only shades); printed, a
    # good share of it shows the label's red.
    chroma = lambda px: px[:, 0] - px[:, 1]
    assert np.abs(chroma(plain)).max() < 20
    assert (chroma(printed) > 60).mean() > 0.2


def _teapot_scene(meshed: bool) -> SceneSpec:
    """A red meshed teapot seen from above and the side, no shadows (so red pixels are the teapot)."""
    collider = (Part("cylinder", (0.08, 0.16), Pose((0, 0, 0.08)), rgba=RED),)
    teapot = materialised(dress(ObjectSpec("teapot_0", "teapot", collider, pose=Pose((0.0, 0.0, 0.0)), mass=0.5)))
    teapot = dataclasses.replace(teapot, parts=tuple(dataclasses.replace(p, rgba=RED) if p.kind == "mesh" else p
                                                     for p in teapot.parts))
    if not meshed:
        teapot = _without_meshes(teapot)
    cams = (CameraSpec("side", (-0.6, -0.15, 0.25), (0.0, 0.0, 0.08), fovy_deg=40.0),
            CameraSpec("top", (0.0, 0.0, 0.8), (0.0, 0.001, 0.0), fovy_deg=40.0))
    return SceneSpec("teapot", objects=(teapot,), cameras=cams, robot=None, floor_rgba=(0.5, 0.5, 0.5, 1),
                     lights=(LightSpec(position=(0, 0, 3), direction=(0, 0, -1), diffuse=0.6),))


def _masks(scene: SceneSpec, camera: str):
    sim = MujocoBackend(camera_size=160)
    try:
        sim.load(scene)
        frame = sim.render(camera)
        instance = next(i for i, n in frame.id_to_name.items() if n == "teapot_0")
        rgb = frame.rgb.astype(int)
        red = (rgb[..., 0] > 60) & (rgb[..., 0] > 2 * rgb[..., 1]) & (rgb[..., 0] > 2 * rgb[..., 2])
        return frame.segmentation == instance, red
    finally:
        sim.close()


def _iou(a, b) -> float:
    return float((a & b).sum() / max((a | b).sum(), 1))


def test_segmentation_sees_the_visual_mesh_not_the_collider():
    for camera in ("side", "top"):
        seg, red = _masks(_teapot_scene(True), camera)
        collider_seg, _ = _masks(_teapot_scene(False), camera)
        assert red.sum() > 200
        assert _iou(seg, red) >= MIN_SILHOUETTE_IOU, camera
        assert _iou(seg, collider_seg) < 0.9, camera    # spout and handle stick out of the cylinder


def test_printed_labels_read_upright_and_unmirrored():
    from bspatial.world.objects import packaged_food

    box = packaged_food("cereal_0", "box_of_cereal", 0.3, (0.0, 0.0, 0.0))
    cams = (CameraSpec("front", (-0.8, 0.0, 0.15), (0.0, 0.0, 0.15), fovy_deg=30.0),)   # facing its -x face
    sim = MujocoBackend(camera_size=320)
    try:
        sim.load(SceneSpec("cereal", objects=(box,), cameras=cams, robot=None))
        frame = sim.render("front")
    finally:
        sim.close()
    rgb = frame.rgb.astype(int)
    mask = frame.segmentation == next(i for i, n in frame.id_to_name.items() if n == "cereal_0")
    rows, cols = np.nonzero(mask)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    # label_texture draws, top to bottom: a cream band holding the red word (left-aligned), then a bowl
    # with tan cereal. Upright: the cereal is below the band; unmirrored: the word sits left in the band.
    cream = mask & (r > 190) & (g > 180) & (b > 150)
    tan = mask & (r > 170) & (g > 120) & (g < 190) & (b < 140)
    band_rows = np.nonzero(cream.any(1))[0]
    assert np.nonzero(tan)[0].mean() > np.nonzero(cream)[0].mean()
    top_band = cream[: band_rows.min() + (band_rows.max() - band_rows.min()) // 2]
    band_cols = np.nonzero(top_band.any(0))[0]
    word = mask & (r > 120) & (g < 90)
    word[: band_rows.min()] = False
    word[band_rows.min() + (band_rows.max() - band_rows.min()) // 2:] = False
    word[:, : band_cols.min()] = False
    word[:, band_cols.max() + 1:] = False
    assert word.sum() > 20 and np.nonzero(word)[1].mean() < (band_cols.min() + band_cols.max()) / 2
    assert rows.size and cols.size


def test_a_scene_renders_the_same_bytes_from_its_looks_as_from_meshes_spelled_out():
    """The backend resolves each object's look when it builds the scene: the same model and the same frame
    as a scene whose mesh parts are written out in the spec (what dressing at spec time gave)."""
    lazy = _drop_scene(True)
    lazy = dataclasses.replace(lazy, cameras=(CameraSpec("over", (0.2, -0.6, 1.6), (1.0, 0.0, 0.9)),), robot=None)
    spelled = dataclasses.replace(lazy, objects=tuple(materialised(o) for o in lazy.objects))
    assert any(o.look is not None for o in lazy.objects) and all(o.look is None for o in spelled.objects)
    frames, models = [], []
    for scene in (lazy, spelled):
        sim = MujocoBackend(camera_size=96)
        try:
            sim.load(scene)
            frames.append(sim.render("over"))
            m = sim.model
            models.append((m.ngeom, m.nmesh, m.geom_size.tobytes(), m.geom_rgba.tobytes(), m.geom_group.tobytes(),
                           m.mesh_vert.tobytes(), m.body_mass.tobytes()))
        finally:
            sim.close()
    assert models[0] == models[1]
    assert frames[0].rgb.tobytes() == frames[1].rgb.tobytes()
    assert frames[0].segmentation.tobytes() == frames[1].segmentation.tobytes()
