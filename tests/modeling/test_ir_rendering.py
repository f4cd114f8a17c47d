import numpy as np
import pytest

from bspatial.modeling import ir_rendering as ir

K_448 = np.array([[224.0, 0, 224], [0, 224.0, 224], [0, 0, 1]])


def test_paper_constants():
    assert ir.IR_IMAGE_SIZE == 224 and ir.DOT_COLOR == (255, 51, 51) and ir.DOT_RADIUS == 4
    assert ir.JET_SAMPLE_MAX == 0.875 and ir.ATTN_BACKGROUND == (0, 0, 128)


def test_target_from_box_midpoint_scaled_to_224():
    # Box x in [0.5, 0.7] m at depth 2 m projects to u in [280, 302.4] (y centred at 224).
    corners = ir.box_corners([0.6, 0.0, 2.0], [0.1, 0.1, 0.0])
    # integer midpoint floor(291.2) = 291 -> 291 * 224 / 448 = 145.5 -> rounds half up to 146.
    assert ir.target_pixel(corners, K_448, np.eye(4), (448, 448)) == (146, 112)


def test_target_clips_to_the_image_and_uses_the_pose():
    # The box's right edge lies far outside a 448-pixel image: clipped to 447.
    corners = ir.box_corners([1.5, 0.0, 2.0], [1.0, 0.05, 0.0])
    # u from 224 + 112 * 0.5 = 280 to 224 + 112 * 2.5 = 504 -> clipped to 447; integer midpoint
    # floor(363.5) = 363 -> 363 * 224 / 448 = 181.5 -> 182.
    assert ir.target_pixel(corners, K_448, np.eye(4), (448, 448)) == (182, 112)
    # Same box seen from a camera moved +1.5 m along world x: centred.
    pose = np.eye(4)
    pose[0, 3] = 1.5
    # In the camera frame x spans [-1, 1]: u in [112, 336], midpoint 224 -> 112.
    assert ir.target_pixel(corners, K_448, pose, (448, 448)) == (112, 112)
    # A non-square source image scales each axis by its own size.
    K_640x480 = np.array([[240.0, 0, 320], [0, 240.0, 240], [0, 0, 1]])
    assert ir.target_pixel(ir.box_corners([0, 0, 2.0], [0.1] * 3), K_640x480, np.eye(4), (640, 480)) == (112, 112)


def test_no_valid_projection():
    behind = ir.box_corners([0.0, 0.0, -2.0], [0.1] * 3)
    assert ir.target_pixel(behind, K_448, np.eye(4), (448, 448)) is None
    off_image = ir.box_corners([10.0, 0.0, 2.0], [0.1] * 3)
    assert ir.target_pixel(off_image, K_448, np.eye(4), (448, 448)) is None


def test_dot_pixels_exact():
    head = np.full((224, 224, 3), 7, dtype=np.uint8)
    out = ir.render_dot_ir(head, (100, 60))
    red, white = (255, 51, 51), (255, 255, 255)
    assert out[60, 100].tolist() == list(red)
    assert out[60, 104].tolist() == list(red)  # distance 4: inside the radius
    assert out[63, 103].tolist() == list(white)  # distance sqrt(18) = 4.24: outline
    assert out[60, 105].tolist() == list(white)  # distance 5: outline
    assert out[60, 106].tolist() == [7, 7, 7]  # distance 6: untouched
    ys, xs = np.nonzero((out == red).all(-1))
    assert len(xs) == 49  # lattice points with x^2 + y^2 <= 16
    assert len(np.nonzero((out == white).all(-1))[0]) == 81 - 49  # lattice points with x^2 + y^2 <= 25, minus the disc
    assert (head == 7).all()  # the input is not modified


def test_dot_resizes_and_no_target_leaves_image_unmarked():
    head = np.zeros((448, 448, 3), dtype=np.uint8)
    assert ir.render_dot_ir(head, None).shape == (224, 224, 3)
    assert (ir.render_dot_ir(head, None) == 0).all()
    with pytest.raises(ValueError, match="uint8"):
        ir.render_dot_ir(head.astype(np.float32), (1, 1))


def test_jet_lut_endpoints_and_monotone_hue():
    lut = ir.jet_lut()
    assert lut.shape == (256, 3) and lut.dtype == np.uint8
    assert lut[0].tolist() == [0, 0, 128] and lut[255].tolist() == [255, 0, 0]
    # jet(0.4375) at the middle index 128: x = 0.875 * 128 / 255 = 0.43922
    x = 0.875 * 128 / 255
    expected = [np.floor(255 * min(max(1.5 - abs(4 * x - c), 0), 1) + 0.5) for c in (3, 2, 1)]
    assert lut[128].tolist() == expected


def test_attention_map_pixels_exact():
    out = ir.render_attention_map_ir((50, 80))
    assert out.shape == (224, 224, 3) and out.dtype == np.uint8
    assert out[80, 50].tolist() == [255, 0, 0]
    assert out[0, 223].tolist() == [0, 0, 128]
    # One pixel off centre: H = exp(-1 / (2 sigma^2)), q = round(255 H), colour = LUT[q].
    q = int(np.floor(255 * np.exp(-1 / (2 * ir.ATTN_SIGMA**2)) + 0.5))
    assert out[80, 51].tolist() == ir.jet_lut()[q].tolist()
    assert (out[80, 51] == out[80, 49]).all() and (out[81, 50] == out[79, 50]).all()


def test_attention_map_invalid_is_uniform_dark_blue():
    out = ir.render_attention_map_ir(None)
    assert out.shape == (224, 224, 3) and (out == np.array([0, 0, 128], np.uint8)).all()


def test_target_or_none_reads_dataset_targets():
    assert ir.target_or_none(np.array([100.0, 50.0], np.float32)) == (100, 50)
    assert ir.target_or_none([10.5, 3.49]) == (11, 3)  # half up, not numpy's half-to-even
    assert ir.target_or_none([np.nan, 5.0]) is None and ir.target_or_none(None) is None
    with pytest.raises(ValueError, match=r"an IR target must be \(x, y\), got shape \(3,\)"):
        ir.target_or_none([1.0, 2.0, 3.0])


def test_first_frame_anchor_is_the_dot_marked_first_frame():
    rng = np.random.default_rng(0)
    first = rng.integers(0, 200, (224, 224, 3), dtype=np.uint8)  # no pure white / red pixels by chance
    anchor = ir.render_first_frame_anchor(first, np.array([30.0, 60.0], np.float32))
    assert anchor.shape == (224, 224, 3) and anchor.dtype == np.uint8
    # Appendix 13.3 marker at (x=30, y=60): red disc of radius 4, white ring at distance 5.
    assert anchor[60, 30].tolist() == [255, 51, 51] and anchor[64, 30].tolist() == [255, 51, 51]
    assert anchor[65, 30].tolist() == [255, 255, 255] and anchor[60, 25].tolist() == [255, 255, 255]
    changed = np.any(anchor != first, axis=-1)
    # Only the marker (disc + ring: every pixel within distance 5) differs from the first frame.
    assert changed.sum() == sum(1 for y in range(224) for x in range(224) if (x - 30) ** 2 + (y - 60) ** 2 <= 25)
    # No valid projection on the first frame: the anchor is the unmarked first frame.
    assert np.array_equal(ir.render_first_frame_anchor(first, [np.nan, np.nan]), first)


def test_the_remote_code_projection_is_the_scoring_one_bit_for_bit():
    # ir_rendering ships inside checkpoints (remote code: no bspatial imports), so it carries its own copy of the
    # pinhole projection; it must stay the package's one rule (bspatial.scoring.geometry, which CameraFrame uses).
    from bspatial.scoring.geometry import intrinsics_from_fovy, project_points

    rng = np.random.default_rng(0)
    K = intrinsics_from_fovy(720, 720, 60.0)
    T = np.eye(4)
    T[:3, :3] = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    T[:3, 3] = rng.normal(size=3)
    points = rng.normal(size=(64, 3)) * 3
    ours, theirs = project_points(points, K, T), ir.project_points(points, K, T)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
