import numpy as np
import pytest

from bspatial.world import relations as calc


def test_pick_by_rank_ranks_and_margin():
    sizes = {"a": 0.30, "b": 0.20, "c": 0.10, "d": 0.05}
    assert calc.pick_by_rank(sizes, "largest")[0] == "a"
    assert calc.pick_by_rank(sizes, "2nd smallest")[0] == "c"
    name, margin = calc.pick_by_rank(sizes, "2nd largest")
    assert name == "b" and margin == pytest.approx(1 / 3)  # min(gap to 0.30, gap to 0.10)
    with pytest.raises(ValueError, match="relation"):
        calc.pick_by_rank(sizes, "biggest")


def test_camera_direction_follows_the_prompt_rules():
    # OpenCV camera at the origin looking along world +x (x right = world -y, y down = world -z).
    T = np.eye(4)
    T[:3, :3] = np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], float)
    b = np.array([2.0, 0.0, 1.0])
    assert calc.camera_direction(b + [0, -0.5, 0], b, T) == "right"
    assert calc.camera_direction(b + [0, 0.5, 0], b, T) == "left"
    assert calc.camera_direction(b + [0.5, 0, 0], b, T) == "front"  # farther from the camera is "front"
    assert calc.camera_direction(b + [-0.5, 0, 0], b, T) == "back"
    assert calc.camera_direction(b + [0, 0, 0.5], b, T) == "above"
    assert calc.camera_direction(b + [0.3, 0.3, 0], b, T) is None  # no dominant axis


def test_robot_direction_and_distances():
    assert calc.robot_direction([1, 1, 0], [1, 0, 0], 0.0) == "left"
    assert calc.robot_direction([2, 0, 0], [1, 0, 0], np.pi) == "back"
    assert calc.box_distance([0, 0, 0], [2, 0, 0], [0.2, 4, 3], np.eye(3)) == pytest.approx(1.9)
    T = np.eye(4)
    T[:3, 3] = [0, 0, 1]
    assert calc.camera_distance([3, 4, 1], T) == pytest.approx(5.0)


def test_locate_counts_rows_from_the_bottom_and_columns_from_the_left():
    cells = calc.grid_cells_bottom_up([(0.0, 0.4), (0.4, 0.8)], [0.5, 0.0, -0.5], (1.0, 1.3))
    assert calc.locate_cell([1.1, 0.3, 0.1], cells) == "1x1"  # bottom row, robot-left column
    assert calc.locate_cell([1.1, -0.3, 0.6], cells) == "2x2"
    assert calc.locate_band(0.5, [(0.0, 0.3), (0.45, 0.7)]) == 1
    assert calc.order_left_to_right({"r": [1, -0.2], "l": [1, 0.3]}, calc.robot_right_axis(0.0)) == ["l", "r"]


def test_robot_frame_quadrant_and_axis_margin_by_hand():
    # Heading +y (yaw 90 deg): world +y is forward, world -x is left.
    assert calc.robot_frame_offset((-2.0, 1.0), np.pi / 2) == pytest.approx((1.0, 2.0))
    assert calc.quadrant((-2.0, 1.0), np.pi / 2) == "front-left"
    # Heading -x (yaw 180 deg): world (+1, +1) is behind and to the right.
    assert calc.quadrant((1.0, 1.0), np.pi) == "back-right"
    # atan2(2, 1) = 63.43 deg from the forward axis, so 26.57 deg from the left axis.
    assert calc.axis_margin_deg((1.0, 2.0), 0.0) == pytest.approx(26.565, abs=1e-3)
    assert calc.axis_margin_deg((-2.0, 1.0), np.pi / 2) == pytest.approx(26.565, abs=1e-3)   # the same, turned
    assert calc.axis_margin_deg((-3.0, 3.0), 0.0) == pytest.approx(45.0)
    assert calc.axis_margin_deg((0.0, -1.0), 0.0) == pytest.approx(0.0, abs=1e-9)
    # The 15-degree margin: tan(15 deg) = 0.268, so lateral 0.2 per metre forward is too close to the axis, 0.3 is not.
    assert calc.clear_quadrant((1.0, 0.2), 0.0) is None
    assert calc.clear_quadrant((1.0, 0.3), 0.0) == "front-left"
    assert calc.clear_quadrant((-0.3, -1.0), 0.0) == "back-right"
    assert calc.clear_quadrant((0.0, 0.0), 0.0) is None


def test_front_is_depth_along_the_optical_axis_of_a_camera_looking_down():
    """Issue 29's item: the bowl 0.86 m below the sponge and 0.49 m farther (horizontally), seen by a head camera
    pitched 30 degrees down. Along the optical axis (cos 30, 0, -sin 30) the bowl is 0.49 cos 30 + 0.86 sin 30 =
    0.854 m deeper: "front" holds almost as much as "below", so no answer dominates and "front" is no distractor."""
    import math

    from bspatial.world import relations

    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    # OpenCV camera axes in the world: x = image right = world -y, z = optical axis, y = z x x (image down).
    T = np.eye(4)
    T[:3, 0], T[:3, 2] = (0.0, -1.0, 0.0), (c, 0.0, -s)
    T[:3, 1] = np.cross(T[:3, 2], T[:3, 0])
    sponge, bowl = np.array([1.0, 0.0, 1.2]), np.array([1.49, 0.0, 0.34])
    offsets = relations.camera_offsets(bowl, sponge, T)
    assert offsets["front"] == pytest.approx(0.49 * c + 0.86 * s) and offsets["below"] == pytest.approx(0.86)
    assert calc.camera_direction(bowl, sponge, T) is None
    assert "front" not in relations.false_directions(offsets, "below")
    # Level camera (looking along +x): depth is the horizontal offset, 0.49 m, and "below" dominates.
    level = np.eye(4)
    level[:3, 0], level[:3, 1], level[:3, 2] = (0.0, -1.0, 0.0), (0.0, 0.0, -1.0), (1.0, 0.0, 0.0)
    assert calc.camera_offsets(bowl, sponge, level)["front"] == pytest.approx(0.49)


def test_camera_plane_direction_leaves_depth_out():
    # Camera at the origin looking along world +x (OpenCV: camera x = world -y, camera z = world +x).
    T = np.array([[0, 0, 1, 0], [-1, 0, 0, 0], [0, -1, 0, 0], [0, 0, 0, 1.0]])
    hand = np.array([1.0, 0.0, 0.0])
    # 0.5 m deeper and 0.2 m to the image's right (world -y): in 3D "front" wins, across the image "right".
    assert calc.camera_direction(hand + [0.5, -0.2, 0.0], hand, T) == "front"
    assert calc.camera_plane_direction(hand + [0.5, -0.2, 0.0], hand, T) == "right"
    assert calc.camera_plane_direction(hand + [0.5, 0.0, -0.3], hand, T) == "below"
    assert calc.camera_plane_direction(hand + [0.5, 0.2, 0.19], hand, T) is None   # neither dominates
