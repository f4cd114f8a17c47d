"""IR region specs and scoring (paper Appendix 14, Table S4)."""

import json
import math

import numpy as np
import pytest

from bspatial.scoring.geometry import intrinsics_from_fovy, project_points
from bspatial.catalog.thresholds import COMPARTMENT_BAND_MARGIN_M, ON_REF_RADIUS_M, TOLERANCE_DIAGONAL_FRACTION
from bspatial.scoring.ir import score_ir, score_ir_item
from bspatial.scoring.ir_regions import (DETAIL_LABELS, ContainerPlacementRegion, Countertop, DirectionalPlacementRegion,
                                         OrientedBox, ReachRegion, region_from_dict, regions_from_json, tolerance_px)
from bspatial.scoring.masks import Mask

W = H = 720
K = intrinsics_from_fovy(W, H, 90.0)


def down_camera(height: float = 2.0, x: float = 0.0, y: float = 0.0) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])  # looking straight down, image up = world +y
    T[:3, 3] = (x, y, height)
    return T


def forward_camera(eye=(0.0, -2.0, 1.0)) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])  # looking along +y
    T[:3, 3] = eye
    return T


def look_at(eye, target) -> np.ndarray:
    z = np.asarray(target, float) - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, (0.0, 0.0, 1.0))
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    T[:3, 3] = eye
    return T


def pixel_of(world, T, K=K) -> tuple[float, float]:
    uv, depth = project_points(np.asarray([world], float), K, T)
    assert depth[0] > 0
    return float(uv[0, 0]), float(uv[0, 1])


def score_one(point, region):
    s = score_ir(np.array([point if point is not None else (np.nan, np.nan)], float), [region])
    fast = (bool(s.strict[0]), bool(s.tolerant[0]), str(s.label[0]), str(s.detail[0]))
    assert fast == score_ir_item(point, region)
    return fast


def box_mask(x0, y0, x1, y1, w=W, h=H) -> np.ndarray:
    """Pixels with columns x0..x1-1 and rows y0..y1-1."""
    m = np.zeros((h, w), bool)
    m[y0:y1, x0:x1] = True
    return m


# --------------------------------------------------------------------------- reach


def test_tolerance_is_two_percent_of_the_diagonal():
    assert TOLERANCE_DIAGONAL_FRACTION == 0.02
    assert tolerance_px((720, 720)) == pytest.approx(20.36, abs=0.005)  # paper: "approximately 20 pixels"


def test_reach_labels():
    target, other_target = box_mask(100, 100, 200, 200), box_mask(600, 600, 650, 650)
    distractor = box_mask(300, 100, 400, 200)
    region = ReachRegion(image_size=(W, H), targets=[target, other_target], distractors=[distractor], task="dice")
    assert score_one((150.0, 150.0), region) == (True, True, "correct", "target")
    assert score_one((625.5, 610.0), region) == (True, True, "correct", "target")  # second accepted target
    assert score_one((350.0, 150.0), region) == (False, False, "wrong", "distractor")
    assert score_one((500.0, 500.0), region) == (False, False, "none", "background")
    assert score_one(None, region) == (False, False, "none", "no_point")
    assert score_one((np.nan, 3.0), region) == (False, False, "none", "no_point")
    assert score_one((np.inf, 3.0), region) == (False, False, "none", "no_point")


def test_reach_tolerance_19_vs_21_px_at_720():
    # Target columns 100..199 -> the nearest pixel centre to the right is x = 199.5.
    region = ReachRegion(image_size=(W, H), targets=[box_mask(100, 100, 200, 200)])
    assert score_one((199.5 + 19, 150.5), region) == (False, True, "none", "near_target")
    assert score_one((199.5 + 21, 150.5), region) == (False, False, "none", "background")
    # diagonal distance: 14 px right and 14 px down of the corner centre (199.5, 199.5) = 19.8 px
    assert score_one((213.5, 213.5), region)[1] is True
    assert score_one((215.0, 215.0), region)[1] is False  # 21.9 px


def test_tolerance_never_applies_to_distractors_and_strict_stays_correct():
    target, distractor = box_mask(100, 100, 200, 200), box_mask(205, 100, 300, 200)
    region = ReachRegion(image_size=(W, H), targets=[target], distractors=[distractor])
    # 10 px from the target but inside the distractor: still wrong, not tolerant-correct
    assert score_one((210.0, 150.0), region) == (False, False, "wrong", "distractor")
    # background gap between them: within tolerance of the target -> tolerant
    assert score_one((202.0, 150.0), region) == (False, True, "none", "near_target")
    # every strict-correct point is tolerant-correct
    s = score_ir(np.random.default_rng(0).uniform(0, 720, (2000, 2)), [region] * 2000)
    assert (s.tolerant[s.strict]).all()


def test_overlapping_target_and_distractor_counts_as_target():
    region = ReachRegion(image_size=(W, H), targets=[box_mask(0, 0, 10, 10)], distractors=[box_mask(5, 5, 20, 20)])
    assert score_one((7.0, 7.0), region)[3] == "target"
    assert score_one((15.0, 15.0), region)[3] == "distractor"


def test_image_borders_and_outside():
    # target = the last column and last row of a 20 x 10 image
    mask = np.zeros((10, 20), bool)
    mask[:, -1] = True
    mask[-1, :] = True
    region = ReachRegion(image_size=(20, 10), targets=[mask])
    assert score_one((20.0, 5.0), region)[3] == "target"  # u == W: far border, last column
    assert score_one((3.0, 10.0), region)[3] == "target"  # v == H
    # (0, 0) is the near corner: inside the image, 9.5 px from the nearest target pixel centre (0.5, 9.5),
    # far beyond the 0.45 px tolerance of a 20 x 10 image -> plain background.
    assert score_one((0.0, 0.0), region) == (False, False, "none", "background")
    assert score_one((20.0001, 5.0), region) == (False, False, "none", "outside_image")
    assert score_one((-0.0001, 5.0), region)[3] == "outside_image"
    assert score_one((5.0, -3.0), region)[3] == "outside_image"
    assert score_one((1e9, 1e9), region)[3] == "outside_image"


def test_reach_tolerance_is_per_image_size():
    # 100 x 100: tolerance 2.83 px
    region = ReachRegion(image_size=(100, 100), targets=[box_mask(10, 10, 20, 20, 100, 100)])
    assert score_one((19.5 + 2.8, 15.5), region)[1] is True
    assert score_one((19.5 + 2.9, 15.5), region)[1] is False


# --------------------------------------------------------------------------- directional placement


def directional(side="right", right=(1.0, 0.0), **overrides) -> DirectionalPlacementRegion:
    spec = dict(
        image_size=(W, H),
        K=K,
        T_world_cam=down_camera(2.0),
        countertop=Countertop(height=0.9, polygon=((-1.0, -0.5), (1.0, -0.5), (1.0, 0.5), (-1.0, 0.5))),
        reference_center=(0.0, 0.0, 0.95),
        robot_right=right,
        side=side,
        task="carving",
    )
    spec.update(overrides)
    return DirectionalPlacementRegion(**spec)


def test_on_ref_radius_016_vs_018():
    assert ON_REF_RADIUS_M == 0.17
    region = directional()
    T = region.T_world_cam
    assert score_one(pixel_of((0.16, 0.0, 0.9), np.array(T)), region) == (False, False, "none", "on_ref")
    assert score_one(pixel_of((0.18, 0.0, 0.9), np.array(T)), region) == (True, True, "correct", "instructed_side")
    assert score_one(pixel_of((-0.18, 0.0, 0.9), np.array(T)), region) == (False, False, "wrong", "opposite_side")
    # radius measured in the plane, both axes: (0.12, 0.12) is 0.1697 m away, (0.13, 0.13) 0.184 m
    assert score_one(pixel_of((0.12, 0.12, 0.9), np.array(T)), region)[3] == "on_ref"
    assert score_one(pixel_of((0.13, 0.13, 0.9), np.array(T)), region)[3] == "instructed_side"


def test_reference_height_is_ignored():
    low = directional(reference_center=(0.0, 0.0, 0.0))
    flat = directional(reference_center=(0.0, 0.0))
    px = pixel_of((0.16, 0.0, 0.9), down_camera(2.0))
    assert score_one(px, low)[3] == score_one(px, flat)[3] == "on_ref"


def test_side_flips_with_robot_right_axis_and_instruction():
    px = pixel_of((0.3, 0.0, 0.9), down_camera(2.0))
    assert score_one(px, directional("right", (1.0, 0.0)))[3] == "instructed_side"
    assert score_one(px, directional("right", (-1.0, 0.0)))[3] == "opposite_side"
    assert score_one(px, directional("left", (-1.0, 0.0)))[3] == "instructed_side"
    assert score_one(px, directional("left", (1.0, 0.0)))[3] == "opposite_side"
    # robot right along world -y (robot facing +x): a point at y = -0.3 is on its right
    px_y = pixel_of((0.0, -0.3, 0.9), down_camera(2.0))
    assert score_one(px_y, directional("right", (0.0, -2.0, 0.5)))[3] == "instructed_side"
    # only the side matters, not the distance along the robot's forward axis
    px_far = pixel_of((0.05, 0.45, 0.9), down_camera(2.0))
    assert score_one(px_far, directional("right"))[3] == "instructed_side"


def test_off_surface_misses_and_rays_pointing_away():
    region = directional()
    assert score_one(pixel_of((1.05, 0.0, 0.9), down_camera(2.0)), region) == (False, False, "none", "off_surface")
    assert score_one(pixel_of((0.5, 0.6, 0.9), down_camera(2.0)), region)[3] == "off_surface"
    side = directional(T_world_cam=forward_camera((0.0, -2.0, 1.2)))
    assert score_one((360.0, 360.0), side)[3] == "off_surface"  # horizontal ray: parallel to the plane
    assert score_one((360.0, 10.0), side)[3] == "off_surface"  # above the horizon: points away
    assert score_one(pixel_of((0.5, 0.0, 0.9), forward_camera((0.0, -2.0, 1.2))), side)[3] == "instructed_side"


def test_rectangle_countertop_form():
    rect = Countertop.from_json({"height": 0.9, "center": [0.0, 0.0], "half_extents": [1.0, 0.5], "yaw": 0.0})
    np.testing.assert_allclose(rect.polygon, [(-1, -0.5), (1, -0.5), (1, 0.5), (-1, 0.5)])
    spec = {"height": 0.9, "center": [0.0, 0.0], "half_extents": [1.0, 0.1], "yaw": math.pi / 2}
    rotated = Countertop.from_json(spec)
    region = directional(countertop=rotated, right=(0.0, 1.0))
    assert score_one(pixel_of((0.0, 0.5, 0.9), down_camera(2.0)), region)[3] == "instructed_side"
    assert score_one(pixel_of((0.5, 0.0, 0.9), down_camera(2.0)), region)[3] == "off_surface"


# --------------------------------------------------------------------------- container placement


def container(instructed=0, bands=((0.55, 0.75), (1.1, 1.4)), **overrides) -> ContainerPlacementRegion:
    spec = dict(
        image_size=(W, H),
        K=K,
        T_world_cam=forward_camera((0.0, -2.0, 1.0)),
        container=OrientedBox(center=(0.0, 0.0, 1.0), half_extents=(0.5, 0.5, 0.7)),  # z in [0.3, 1.7]
        compartments=bands,
        instructed_compartment=instructed,
        task="tupperware",
    )
    spec.update(overrides)
    return ContainerPlacementRegion(**spec)


def front_pixel(z: float) -> tuple[float, float]:
    """The pixel whose ray enters the box's front face (y = -0.5) at height z."""
    return pixel_of((0.0, -0.5, z), forward_camera((0.0, -2.0, 1.0)))


def test_band_edges_plus_minus_005():
    assert COMPARTMENT_BAND_MARGIN_M == 0.05
    region = container(instructed=0)
    assert score_one(front_pixel(0.75 + 0.049), region) == (True, True, "correct", "instructed_compartment")
    assert score_one(front_pixel(0.75 + 0.051), region) == (False, False, "none", "outside_bands")
    assert score_one(front_pixel(0.55 - 0.049), region)[3] == "instructed_compartment"
    assert score_one(front_pixel(0.55 - 0.051), region)[3] == "outside_bands"
    assert score_one(front_pixel(0.65), region)[3] == "instructed_compartment"
    assert score_one(front_pixel(1.1 - 0.049), region) == (False, False, "wrong", "other_compartment")
    assert score_one(front_pixel(1.4 + 0.049), region)[3] == "other_compartment"
    assert score_one(front_pixel(1.4 + 0.051), region)[3] == "outside_bands"


def test_missed_container():
    region = container()
    assert score_one(pixel_of((0.9, 0.0, 1.0), forward_camera((0.0, -2.0, 1.0))), region) == (
        False,
        False,
        "none",
        "missed_container",
    )


def test_entry_point_not_exit_point():
    # Looking down at the box top (z = 1.7): the entry height is 1.7 whatever lies below.
    T = down_camera(3.0)
    top = container(bands=((0.3, 0.8), (1.6, 1.7)), instructed=0, T_world_cam=T)
    assert score_one((360.0, 360.0), top)[3] == "other_compartment"
    assert score_one((360.0, 360.0), container(bands=((0.3, 0.8), (1.6, 1.7)), instructed=1, T_world_cam=T))[3] == (
        "instructed_compartment"
    )


def test_overlapping_widened_bands_nearest_band_wins_ties_to_instructed():
    bands = ((0.5, 0.8), (0.85, 1.2))  # widened bands overlap on [0.8, 0.85]
    assert score_one(front_pixel(0.82), container(0, bands))[3] == "instructed_compartment"  # 0.02 vs 0.03
    assert score_one(front_pixel(0.83), container(0, bands))[3] == "other_compartment"  # 0.03 vs 0.02
    assert score_one(front_pixel(0.83), container(1, bands))[3] == "instructed_compartment"
    # Exact tie: the top face z = 1.7 is exact for the central downward ray; bands share z = 1.7.
    shared = ((1.4, 1.7), (1.7, 2.0))
    for instructed in (0, 1):
        region = container(instructed, shared, T_world_cam=down_camera(3.0))
        assert score_one((360.0, 360.0), region)[3] == "instructed_compartment"


# --------------------------------------------------------------------------- randomized: fast == reference


def random_blob(rng, h, w) -> np.ndarray:
    cy, cx = rng.uniform(0, h), rng.uniform(0, w)
    ry, rx = rng.uniform(1, h / 3), rng.uniform(1, w / 3)
    yy, xx = np.mgrid[:h, :w]
    blob = ((yy + 0.5 - cy) / ry) ** 2 + ((xx + 0.5 - cx) / rx) ** 2 <= 1
    blob |= rng.uniform(size=(h, w)) < 0.01  # a few stray pixels
    if not blob.any():
        blob[int(cy) % h, int(cx) % w] = True
    return blob


def random_points(rng, n, w, h) -> np.ndarray:
    pts = np.column_stack([rng.uniform(-4, w + 4, n), rng.uniform(-4, h + 4, n)])
    kinds = rng.integers(0, 6, n)
    pts[kinds == 0] = np.nan
    pts[kinds == 1] = np.round(pts[kinds == 1])  # pixel corners and integer borders
    pts[kinds == 2, 0] = w  # far border
    pts[kinds == 3, 1] = h
    return pts


def random_reach(rng) -> ReachRegion:
    w, h = rng.integers(8, 60, size=2)
    encoding = ["rle", "png"][rng.integers(2)]
    targets = [Mask.from_array(random_blob(rng, h, w), encoding) for _ in range(rng.integers(1, 3))]
    distractors = [Mask.from_array(random_blob(rng, h, w), encoding) for _ in range(rng.integers(0, 3))]
    return ReachRegion(image_size=(int(w), int(h)), targets=targets, distractors=distractors)


def random_directional(rng) -> DirectionalPlacementRegion:
    eye = np.array([rng.uniform(-0.5, 0.5), rng.uniform(-1.5, -0.5), rng.uniform(1.3, 2.0)])
    angle = rng.uniform(0, 2 * math.pi)
    return DirectionalPlacementRegion(
        image_size=(64, 48),
        K=intrinsics_from_fovy(64, 48, rng.uniform(45, 100)),
        T_world_cam=look_at(eye, (rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), 0.9)),
        countertop=Countertop(height=0.9, polygon=((-0.8, -0.6), (0.8, -0.6), (0.8, 0.6), (0.0, 0.2), (-0.8, 0.6))),
        reference_center=(rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3), 0.95),
        robot_right=(math.cos(angle), math.sin(angle)),
        side=["left", "right"][rng.integers(2)],
    )


def random_container(rng) -> ContainerPlacementRegion:
    eye = np.array([rng.uniform(-0.5, 0.5), -2.0, rng.uniform(0.8, 1.6)])
    yaw = rng.uniform(-0.5, 0.5)
    R = [[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]]
    lows = np.sort(rng.uniform(0.3, 1.5, size=rng.integers(1, 4)))
    bands = [(float(lo), float(lo + rng.uniform(0, 0.3))) for lo in lows]
    return ContainerPlacementRegion(
        image_size=(64, 48),
        K=intrinsics_from_fovy(64, 48, 70.0),
        T_world_cam=look_at(eye, (0.0, 0.0, 1.0)),
        container=OrientedBox(center=(0.0, 0.0, 1.0), half_extents=(0.4, 0.3, 0.7), rotation=R),
        compartments=bands,
        instructed_compartment=int(rng.integers(len(bands))),
    )


@pytest.mark.parametrize("seed", range(4))
def test_score_ir_equals_score_ir_item_on_random_inputs(seed):
    rng = np.random.default_rng(seed)
    makers = [random_reach, random_directional, random_container]
    regions = [makers[i % 3](rng) for i in range(24)]
    chosen = [regions[i] for i in rng.integers(len(regions), size=1500)]
    points = np.concatenate([random_points(rng, 1, *r.image_size) for r in chosen])
    scores = score_ir(points, chosen)
    for i, (point, region) in enumerate(zip(points, chosen)):
        expected = score_ir_item(None if np.isnan(point).any() else tuple(point), region)
        got = (bool(scores.strict[i]), bool(scores.tolerant[i]), str(scores.label[i]), str(scores.detail[i]))
        assert got == expected, (i, point, region.kind)
    assert set(scores.detail) >= {"target", "distractor", "background", "near_target", "no_point", "outside_image"}
    assert set(scores.detail) >= {"instructed_side", "opposite_side", "on_ref", "off_surface"}
    assert set(scores.detail) >= {"instructed_compartment", "missed_container"}


# Detail -> label, written out by hand from Appendix 14 / Table S4 (not read from DETAIL_LABELS): a hit
# on the instructed target, side or compartment is correct, a hit on a distractor, the opposite side or
# another compartment is wrong, everything else (near misses included) is no answer.
HAND_LABELS = {
    "target": "correct", "instructed_side": "correct", "instructed_compartment": "correct",
    "distractor": "wrong", "opposite_side": "wrong", "other_compartment": "wrong",
    "near_target": "none", "background": "none", "no_point": "none", "outside_image": "none",
    "on_ref": "none", "on_axis": "none", "off_surface": "none", "outside_bands": "none", "missed_container": "none",
}


def test_scores_are_consistent_with_detail():
    assert set(HAND_LABELS) == set(DETAIL_LABELS)   # the table above covers every detail the scorer knows
    rng = np.random.default_rng(9)
    makers = [random_reach, random_directional, random_container]
    regions = [makers[i % 3](rng) for i in range(24)]
    chosen = [regions[i] for i in rng.integers(len(regions), size=1500)]
    points = np.concatenate([random_points(rng, 1, *r.image_size) for r in chosen])
    s = score_ir(points, chosen)
    assert s.label.tolist() == [HAND_LABELS[d] for d in s.detail]
    np.testing.assert_array_equal(s.strict, s.label == "correct")
    np.testing.assert_array_equal(s.tolerant, s.strict | (s.detail == "near_target"))
    # Not vacuous: all three labels, and the tolerant-only near misses, occur among the points.
    assert set(s.label.tolist()) == {"correct", "wrong", "none"} and (s.detail == "near_target").any()


def test_tolerance_only_for_reach():
    rng = np.random.default_rng(5)
    regions = [random_directional(rng) for _ in range(5)] + [random_container(rng) for _ in range(5)]
    chosen = [regions[i % 10] for i in range(2000)]
    s = score_ir(random_points(rng, 2000, 64, 48), chosen)
    np.testing.assert_array_equal(s.strict, s.tolerant)


def test_equal_but_distinct_region_objects_score_the_same():
    rng = np.random.default_rng(3)
    region = random_reach(rng)
    twin = region_from_dict(json.loads(json.dumps(region.to_dict())))
    pts = random_points(rng, 300, *region.image_size)
    a, b = score_ir(pts, [region] * 300), score_ir(pts, [region if i % 2 else twin for i in range(300)])
    np.testing.assert_array_equal(a.detail, b.detail)


def test_score_ir_input_errors_and_empty():
    region = ReachRegion(image_size=(4, 4), targets=[np.eye(4, dtype=bool)])
    empty = score_ir(np.zeros((0, 2)), [])
    assert empty.strict.shape == empty.label.shape == (0,)
    with pytest.raises(ValueError, match=r"points_px: expected shape \[N, 2\], got \(3,\)"):
        score_ir(np.zeros(3), [region] * 3)
    with pytest.raises(ValueError, match=r"regions: expected one region per point \(2\), got 1"):
        score_ir(np.zeros((2, 2)), [region])
    with pytest.raises(TypeError, match=r"regions\[1\]: expected a region object .* got dict"):
        score_ir(np.zeros((2, 2)), [region, region.to_dict()])
    with pytest.raises(ValueError, match=r"point_px: expected None or two numbers \(u, v\), got \(1.0,\)"):
        score_ir_item((1.0,), region)


# --------------------------------------------------------------------------- specs: JSON and validation


def example_regions():
    png_target = Mask.from_array(box_mask(2, 2, 5, 5, 8, 6), "png")
    return [
        ReachRegion(image_size=(8, 6), targets=[box_mask(0, 0, 2, 2, 8, 6), png_target],
                    distractors=[box_mask(6, 0, 8, 6, 8, 6)], task="dice"),
        directional(),
        container(),
    ]


def test_json_round_trip_every_kind():
    for region in example_regions():
        d = region.to_dict()
        assert d["kind"] == region.kind
        text = json.dumps(d)  # must be JSON-safe
        again = region_from_dict(json.loads(text))
        assert again == region and type(again) is type(region)
        assert region_from_dict(text) == region
        assert hash(again) == hash(region)


def test_regions_from_json_reuses_objects_per_string():
    texts = [json.dumps(r.to_dict()) for r in example_regions()]
    column = [texts[i % 3] for i in range(9)]
    regions = regions_from_json(column)
    assert regions[0] is regions[3] is regions[6] and regions[1] is not regions[0]
    assert regions_from_json([regions[0], example_regions()[1].to_dict()])[0] is regions[0]


def reach_dict(**overrides):
    d = {"kind": "reach", "image_size": [3, 2], "targets": [{"size": [2, 3], "counts": [1, 3, 2]}]}
    d.update(overrides)
    return d


def placement_dict(kind, **overrides):
    region = directional() if kind == "directional_placement" else container()
    d = region.to_dict()
    d.update(overrides)
    return d


def dp(**overrides):
    return placement_dict("directional_placement", **overrides)


def cp(**overrides):
    return placement_dict("container_placement", **overrides)


NAN_K = [[np.nan, 0, 1], [0, 1, 1], [0, 0, 1]]
INF_T = np.eye(4).tolist()
INF_T[0][3] = np.inf
FLIP = [[1, 0, 0], [0, 1, 0], [0, 0, -1]]
SQUARE = [[0, 0], [1, 0], [0, 1]]
ROT_T = np.eye(4).tolist()
ROT_T[0][0] = 2.0


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (
            {"kind": "grasp"},
            r"kind must be one of \['container_placement', 'directional_placement', 'reach'\], got 'grasp'",
        ),
        ({"image_size": [3, 2]}, r"kind must be one of .* got None"),
        ([1, 2], r"region: expected a dict, got list"),
        ("{not json", r"region: not valid JSON"),
        (reach_dict(extra=1), r"reach region: unknown keys \['extra'\]"),
        ({"kind": "reach", "image_size": [3, 2]}, r"reach region: missing keys \['targets'\]"),
        (
            reach_dict(image_size=[3]),
            r"reach region: image_size must be two positive ints \[width, height\], got \[3\]",
        ),
        (reach_dict(image_size=[-3, 2]), r"image_size .* got \[-3, 2\]"),
        (
            reach_dict(image_size=[2, 3]),
            r"reach region: targets\[0\].size must be \[height, width\] = \[3, 2\] \(image_size\), got \[2, 3\]",
        ),
        (
            reach_dict(targets=[]),
            r"reach region: targets must hold at least one accepted target mask, got \[\]",
        ),
        (
            reach_dict(targets={"size": [2, 3], "counts": [6]}),
            r"reach region: targets must be a list of masks, got \{'size'",
        ),
        (
            reach_dict(targets=[{"size": [2, 3], "counts": [6]}]),
            r"reach region: targets\[0\] must not be an empty mask",
        ),
        (
            reach_dict(targets=[{"size": [2, 3], "counts": [1, 2]}]),
            r"reach region: targets\[0\]: counts: run lengths must sum to height\*width = 6, got sum 3",
        ),
        (
            reach_dict(distractors=[{"size": [2, 2], "counts": [4]}]),
            r"distractors\[0\].size must be \[height, width\] = \[2, 3\]",
        ),
        (reach_dict(task=3), r"reach region: task must be a string or null, got 3"),
        (dp(side="up"), r"directional_placement region: side must be 'left' or 'right', got 'up'"),
        (dp(K=NAN_K), r"directional_placement region: K must be finite, got \[\[nan"),
        (dp(K=[[1, 0], [0, 1]]), r"K must have shape \(3, 3\) \(found \(2, 2\)\)"),
        (dp(K=[[-1, 0, 1], [0, 1, 1], [0, 0, 1]]), r"K must be intrinsics with fx, fy > 0"),
        (dp(K="abc"), r"K must be numbers of shape \(3, 3\), got 'abc'"),
        (dp(T_world_cam=[[1, 0, 0, 0]] * 4), r"T_world_cam must have last row \[0, 0, 0, 1\]"),
        (dp(T_world_cam=ROT_T), r"T_world_cam rotation block must be a proper rotation"),
        (dp(T_world_cam=INF_T), r"T_world_cam must be finite, got .*inf"),
        (
            dp(countertop={"height": 0.9, "polygon": []}),
            r"countertop: polygon must list at least 3 \[x, y\] vertices \(empty countertop\), got \[\]",
        ),
        (
            dp(countertop={"height": 0.9, "polygon": [[0, 0], [1, 1], [2, 2]]}),
            r"countertop: polygon must enclose a non-zero area \(empty countertop\)",
        ),
        (
            dp(countertop={"height": "high", "polygon": SQUARE}),
            r"countertop: height must be numbers of shape \(\), got 'high'",
        ),
        (dp(countertop={"height": 0.9}), r"countertop: missing keys \['center', 'half_extents'\]"),
        (
            dp(countertop={"height": 0.9, "center": [0, 0], "half_extents": [0, 1]}),
            r"countertop: half_extents must be > 0 \(empty countertop\), got \[0, 1\]",
        ),
        (dp(countertop=[1, 2]), r"countertop: value must be a dict"),
        (
            dp(robot_right=[0, 0, 1]),
            r"robot_right must have a non-zero horizontal \(xy\) part, got \[0, 0, 1\]",
        ),
        (dp(robot_right=[1]), r"robot_right must be a list of 2 or 3 numbers, got \[1\]"),
        (dp(reference_center=[0, np.nan]), r"reference_center must be finite"),
        (dp(reference_center=None), r"reference_center must be a list of 2 or 3 numbers, got None"),
        (
            cp(compartments=[[0.9, 0.5]]),
            r"container_placement region: compartments\[0\] must have low <= high, got \[0.9, 0.5\]",
        ),
        (cp(compartments=[]), r"compartments must list at least one \[low, high\] band, got \[\]"),
        (cp(compartments=[[0.1, 0.2, 0.3]]), r"compartments must have shape \(1, 2\)"),
        (cp(instructed_compartment=2), r"instructed_compartment must be an int index in \[0, 2\), got 2"),
        (cp(instructed_compartment=-1), r"instructed_compartment .* got -1"),
        (cp(instructed_compartment=True), r"instructed_compartment .* got True"),
        (cp(instructed_compartment="0"), r"instructed_compartment .* got '0'"),
        (
            cp(container={"center": [0, 0, 1], "half_extents": [0.5, 0, 0.5]}),
            r"container: half_extents must all be > 0, got \[0.5, 0, 0.5\]",
        ),
        (
            cp(container={"center": [0, 0, 1], "half_extents": [1, 1, 1], "rotation": FLIP}),
            r"container: rotation must be a proper rotation \(orthonormal, det \+1\)",
        ),
        (cp(container={"center": [0, 0]}), r"container: missing keys \['half_extents'\]"),
        (
            cp(container={"center": [0, 0, 1], "half_extents": [1, 1, 1], "size": 2}),
            r"container: unknown keys \['size'\]",
        ),
        (cp(side="left"), r"container_placement region: unknown keys \['side'\]"),
    ],
)
def test_validation_errors_name_field_and_value(spec, match):
    with pytest.raises(ValueError, match=match):
        region_from_dict(spec)
