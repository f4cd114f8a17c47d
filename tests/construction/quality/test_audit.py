"""The answerability audit (issue 16, item 2) on hand-made records whose geometry is written out here, so each
expected verdict follows from the numbers in the test, not from the generator or the audit."""

import json

import numpy as np
import pytest

from bspatial.construction.quality.audit import AuditFailure, audit, check, item_checks

CAMERA = {"K": [[600, 0, 360], [0, 600, 360], [0, 0, 1]],
          # OpenCV convention: camera x = world -y (image right), camera z = world +x (looking along +x).
          "T_world_cam": [[0, 0, 1, 0], [-1, 0, 0, 0], [0, -1, 0, 1.0], [0, 0, 0, 1]]}


def _obj(category, center, extents=(0.1, 0.1, 0.1), pixels=2000):
    return {"category": category, "center": list(center), "extents": list(extents), "pixels": pixels}


def _row(setting, category, subtype, question, options, answer_text, meta, task=None, rid="x"):
    return {"id": rid, "setting": setting, "category": category, "subtype": subtype, "task": task,
            "question": question, "options": list(options), "answer": "ABCD"[list(options).index(answer_text)],
            "metadata": json.dumps(meta)}


def _direction(options, lemon_center, answer="above"):
    meta = {"object": "lemon_0", "reference": "bowl_0", "camera": CAMERA,
            "objects": {"lemon_0": _obj("lemon", lemon_center), "bowl_0": _obj("bowl", (2.0, 0.0, 0.9))}}
    return _row("single_frame", "direction", "object_relative",
                "From the viewpoint of the image, where is the lemon relative to the bowl?", options, answer, meta)


def test_a_distractor_that_also_holds_breaks_one_true():
    # The lemon is 0.30 m above the bowl and 0.18 m to its left (world +y is image left here): "left" holds too.
    both = _direction(["above", "left", "below", "front"], (2.0, 0.18, 1.2))
    assert item_checks(both)["one_true"] is False
    # Offering "right" instead (the lemon is not right of the bowl at all) keeps exactly one option true.
    one = _direction(["above", "right", "below", "front"], (2.0, 0.18, 1.2))
    assert item_checks(one) == {"named_visible": True, "one_true": True}
    # A small sideways offset (0.05 m, a sixth of the 0.30 m rise) leaves "left" false by the margin.
    assert item_checks(_direction(["above", "left", "below", "front"], (2.0, 0.05, 1.2)))["one_true"] is True


def _dice(options, option_objects, marks, reference_pixels=5000):
    objects = {"dice_0": _obj("dice", (1.0, 0.0, 0.5), pixels=1500), "dice_1": _obj("dice", (1.3, 0.0, 0.5)),
               "dice_2": _obj("dice", (1.6, 0.0, 0.5)), "pillow_0": _obj("pillow", (2.2, 0.0, 0.5)),
               "board_game_0": _obj("board_game", (0.9, 0.0, 0.5), pixels=reference_pixels)}
    meta = {"option_objects": option_objects, "marks": [[m, [10.0 * i, 10.0]] for i, m in enumerate(marks)],
            "reference": "board_game_0", "objects": objects, "camera": CAMERA}
    return _row("task_manipulation", "distance", "object_relative",
                "Measuring from the center of each object, which object is the closest to the board game?",
                options, options[0], meta, task="reach_dice")


def test_an_option_naming_a_mark_that_is_not_drawn_breaks_options_real():
    # Distances to the board game: 0.1, 0.4, 0.7 (the dice) and 1.3 (the pillow): "object 1" wins by 75%.
    fine = _dice(["object 1", "object 2", "object 3", "object 4"],
                 {"object 1": "dice_0", "object 2": "dice_1", "object 3": "dice_2", "object 4": "pillow_0"},
                 ["1", "2", "3", "4"])
    assert item_checks(fine) == {"options_real": True, "named_visible": True, "one_true": True}
    # The old three-candidate form: "dice 1" is offered, but only marks 2-4 are drawn and it names nothing.
    absent = _dice(["dice 2", "dice 3", "dice 4", "dice 1"],
                   {"dice 2": "dice_0", "dice 3": "dice_1", "dice 4": "dice_2", "dice 1": None}, ["2", "3", "4"])
    assert item_checks(absent)["options_real"] is False


def test_a_landmark_too_small_to_find_breaks_named_visible():
    row = _dice(["object 1", "object 2", "object 3", "object 4"],
                {"object 1": "dice_0", "object 2": "dice_1", "object 3": "dice_2", "object 4": "pillow_0"},
                ["1", "2", "3", "4"], reference_pixels=250)
    assert item_checks(row)["named_visible"] is False


def test_a_wrong_answer_label_breaks_one_true():
    # "object 2" (0.4 m from the board game) labelled the closest, although "object 1" is at 0.1 m.
    row = _dice(["object 2", "object 1", "object 3", "object 4"],
                {"object 1": "dice_0", "object 2": "dice_1", "object 3": "dice_2", "object 4": "pillow_0"},
                ["1", "2", "3", "4"])
    assert item_checks(row)["one_true"] is False


def _size(categories, lengths):
    names = [f"o{i}" for i in range(4)]
    options = [f"thing {i + 1}" for i in range(4)]
    meta = {"option_objects": dict(zip(options, names)), "marks": [[str(i + 1), [0.0, 0.0]] for i in range(4)],
            "objects": {n: _obj(c, (1, 0, 1), (L, 0.02, 0.02)) for n, c, L in zip(names, categories, lengths)}}
    return _row("single_frame", "size", "object_relative",
                "Measuring from the length of the longest dimension (length, width, or height), which object is "
                "the longest?", options, options[0], meta)


def test_general_size_must_compare_one_category_and_clear_the_margin():
    assert item_checks(_size(["mug"] * 4, [0.20, 0.17, 0.15, 0.12])) == {
        "options_real": True, "one_true": True, "same_category": True}
    assert item_checks(_size(["pillow", "mug", "lime", "pen"], [0.5, 0.1, 0.06, 0.14]))["same_category"] is False
    # 0.20 against 0.19 is a 5% gap, under the 10% size margin.
    assert item_checks(_size(["mug"] * 4, [0.20, 0.19, 0.15, 0.12]))["one_true"] is False


def _rooms(option_pixels, wall_share):
    names = ["kitchen_0", "bedroom_0", "office_0", "garage_0"]
    labels = ["kitchen", "bedroom", "office", "garage"]
    centers = {"kitchen_0": [1, 0], "bedroom_0": [4, 0], "office_0": [0, 5], "garage_0": [-6, -3]}
    meta = {"robot_xy": [0, 0], "last_yaw": 0.0, "room_centers": centers, "option_rooms": dict(zip(labels, names)),
            "room_pixels": dict(zip(names, option_pixels)), "last_frame_wall_share": wall_share}
    return _row("multi_frame_rotation", "distance", "object_relative",
                "Based on the given frames, measuring from room centers, which room is the closest to the robot's "
                "position at the last frame?", labels, "kitchen", meta)


def test_multi_frame_rooms_must_be_seen_and_the_last_frame_not_a_wall():
    assert item_checks(_rooms([90000, 40000, 12000, 8000], 0.45)) == {
        "last_frame_scene": True, "options_real": True, "one_true": True}
    checks = item_checks(_rooms([90000, 40000, 12000, 3000], 0.85))   # the garage's floor: 3,000 px in all
    assert checks["options_real"] is False and checks["last_frame_scene"] is False


def test_the_gate_fails_above_one_percent_and_names_the_rule():
    good = [_size(["mug"] * 4, [0.20, 0.17, 0.15, 0.12]) for _ in range(199)]
    bad = _size(["pillow", "mug", "lime", "pen"], [0.5, 0.1, 0.06, 0.14])
    check(audit(good + [dict(bad, id="one-bad")]))        # 1 of 200 = 0.5%: passes
    report = audit(good[:99] + [dict(bad, id="one-bad")])  # 1 of 100 = 1.0%: still passes
    assert report.ok
    report = audit(good[:49] + [dict(bad, id="the-bad-one")], config_of=lambda r: "general_single_frame")
    with pytest.raises(AuditFailure, match=r"general_single_frame / same_category: 1 of 50 \(2\.0%\), e\.g\. the-bad-one"):
        check(report)
    assert "| general_single_frame | same_category | 50 | 1 | 2.0 | FAIL |" in report.to_markdown()


def test_audit_geometry_matches_the_image_columns():
    # Independent of both implementations: project the two centres with K and compare image columns.
    row = _direction(["above", "right", "below", "front"], (2.0, 0.18, 1.2))
    meta = json.loads(row["metadata"])
    T, K = np.array(CAMERA["T_world_cam"]), np.array(CAMERA["K"])
    u = {n: (K @ (T[:3, :3].T @ (np.array(meta["objects"][n]["center"]) - T[:3, 3])))
         for n in ("lemon_0", "bowl_0")}
    assert u["lemon_0"][0] / u["lemon_0"][2] < u["bowl_0"][0] / u["bowl_0"][2]   # the lemon is left in the image
    # Labelling "left" the answer while the lemon rises 0.30 m: "above" is a true distractor.
    assert item_checks(_direction(["left", "above", "below", "right"], (2.0, 0.18, 1.2), "left"))["one_true"] is False


def test_a_task_rank_counts_every_candidate_not_only_the_options():
    # Five toys on the desk, 0.30 / 0.25 / 0.20 / 0.16 / 0.12 m long; the options leave out the 0.25 m one. The
    # third largest toy on the desk is the 0.20 m one, although it is the second largest of the options.
    lengths = {"t0": 0.30, "t1": 0.25, "t2": 0.20, "t3": 0.16, "t4": 0.12}
    cats = {"t0": "teddy_bear", "t1": "doll", "t2": "toy_train", "t3": "toy_car", "t4": "toy_figure"}
    objects = {n: _obj(cats[n], (1, 0, 1), (L, 0.02, 0.02)) for n, L in lengths.items()}
    options = ["teddy bear", "toy train", "toy car", "toy figure"]
    meta = {"option_objects": dict(zip(options, ["t0", "t2", "t3", "t4"])), "marks": [], "objects": objects,
            "candidates": sorted(lengths)}
    question = ("Measuring from the length of the longest dimension (length, width, or height), which toy on the "
                "desk is the third largest?")
    right = _row("task_manipulation", "size", "object_relative", question, options, "toy train", meta, task="reach_toys")
    assert item_checks(right) == {"options_real": True, "one_true": True}
    wrong = _row("task_manipulation", "size", "object_relative", question, options, "toy car", meta, task="reach_toys")
    assert item_checks(wrong)["one_true"] is False


def _fourth(fourth: str, movable: bool, fourth_center=(2.2, 0.0, 0.5), fourth_extents=(0.1, 0.1, 0.1)):
    """The dice item with its candidates named and every object's ``movable`` flag, the fourth option ``fourth``."""
    row = _dice(["object 1", "object 2", "object 3", "object 4"],
                {"object 1": "dice_0", "object 2": "dice_1", "object 3": "dice_2", "object 4": fourth},
                ["1", "2", "3", "4"])
    meta = json.loads(row["metadata"])
    meta["candidates"] = ["dice_0", "dice_1", "dice_2"]
    meta["objects"][fourth] = _obj("x", fourth_center, fourth_extents)
    for name, state in meta["objects"].items():
        state["movable"] = movable if name == fourth else True
    return {**row, "metadata": json.dumps(meta)}


def test_the_fourth_option_must_be_a_movable_object_that_holds_no_candidate():
    assert item_checks(_fourth("pillow_0", movable=True))["fourth_option_movable"] is True
    # A bed (fixed to the world) as the fourth option: the issue-29 case of a mark floating over furniture.
    assert item_checks(_fourth("bed_0", movable=False))["fourth_option_movable"] is False
    # The reference itself as an option.
    assert item_checks(_fourth("board_game_0", movable=True, fourth_center=(0.9, 0.0, 0.5)))[
        "fourth_option_movable"] is False
    # A movable tray the dice stand on: dice_1's bottom (z 0.45) lies on the tray's top (0.40 + 0.05), its centre
    # 0.0 m from the tray's, within the tray's footprint radius (hypot(0.6, 0.4) / 2 = 0.36 m).
    tray = _fourth("tray_0", movable=True, fourth_center=(1.3, 0.0, 0.40), fourth_extents=(0.6, 0.4, 0.1))
    assert item_checks(tray)["fourth_option_movable"] is False
    # The same tray 1 m away holds nothing.
    far = _fourth("tray_0", movable=True, fourth_center=(2.3, 0.0, 0.40), fourth_extents=(0.6, 0.4, 0.1))
    assert item_checks(far)["fourth_option_movable"] is True


def test_records_without_the_movable_flag_are_not_checked():
    row = _fourth("pillow_0", movable=True)
    meta = json.loads(row["metadata"])
    for state in meta["objects"].values():
        del state["movable"]
    assert "fourth_option_movable" not in item_checks({**row, "metadata": json.dumps(meta)})


def test_front_is_measured_along_the_optical_axis_of_a_camera_looking_down():
    """The bowl below the sponge seen by a camera pitched 30 degrees down: along the optical axis a lower object is
    also deeper, so "front" holds too and offering it breaks one_true. The second case tells the rules apart: the
    horizontal depth (the generator's old rule) is 0.05 m, under tan 15 deg of the 0.86 m drop."""
    c, s = np.cos(np.radians(30)), np.sin(np.radians(30))
    x, z = np.array([0.0, -1.0, 0.0]), np.array([c, 0.0, -s])
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = x, np.cross(z, x), z, (0.0, 0.0, 1.5)
    meta = {"object": "bowl_0", "reference": "sponge_0", "camera": {"K": CAMERA["K"], "T_world_cam": T.tolist()},
            "objects": {"bowl_0": _obj("bowl", (1.49, 0.0, 0.34)), "sponge_0": _obj("sponge", (1.0, 0.0, 1.2))}}
    question = "From the viewpoint of the image, where is the bowl relative to the sponge?"
    offered = _row("single_frame", "direction", "object_relative", question, ["below", "front", "left", "above"],
                   "below", meta)
    assert item_checks(offered)["one_true"] is False
    # The bowl 0.05 m farther horizontally only: front = 0.05 cos 30 + 0.86 sin 30 = 0.473 m along the optical axis,
    # more than 0.268 x 0.86 = 0.230: broken (the horizontal rule saw 0.05 m and kept it)...
    meta["objects"]["bowl_0"] = _obj("bowl", (1.05, 0.0, 0.34))
    assert item_checks({**offered, "metadata": json.dumps(meta)})["one_true"] is False
    # ...while "back" (negative depth) is false: offering back, right and above keeps exactly one true.
    fine = _row("single_frame", "direction", "object_relative", question, ["below", "back", "right", "above"],
                "below", meta)
    assert item_checks(fine)["one_true"] is True


def _marked(marks):
    """A general size item of four mugs whose marks are the given ``[label, at, anchor, name, hidden]`` entries."""
    objects = {f"mug_{k}": {**_obj("mug", (1.0, 0.1 * k, 0.9), extents=(0.05 + 0.05 * k, 0.1, 0.1), pixels=900),
                            "box2d": [100 * k, 100, 100 * k + 30, 130]} for k in range(1, 5)}
    meta = {"option_objects": {f"mug {k}": f"mug_{k}" for k in range(1, 5)}, "marks": marks, "objects": objects}
    return _row("single_frame", "size", "object_relative", "Which object is the longest?",
                [f"mug {k}" for k in range(1, 5)], "mug 4", meta)


def _mark(k, anchor, hidden=0.1):
    return [str(k), [100.0 * k + 15, 60.0], list(anchor), f"mug_{k}", hidden]


def test_marks_must_sit_on_their_object_and_hide_at_most_a_quarter():
    # Each mug's visible box is u in [100k, 100k + 30), v in [100, 130): anchors at its middle are on it.
    on = [_mark(k, (100 * k + 15, 115)) for k in range(1, 5)]
    assert item_checks(_marked(on))["marks_on_objects"] is True
    # Mug 2's leader ends 40 px above its box (v = 60): the mark labels empty space.
    off = on[:1] + [_mark(2, (215, 60))] + on[2:]
    assert item_checks(_marked(off))["marks_on_objects"] is False
    # Mug 3's marks hide 30% of it.
    hiding = on[:2] + [_mark(3, (315, 115), hidden=0.3)] + on[3:]
    assert item_checks(_marked(hiding))["marks_on_objects"] is False
    # Exactly a quarter is allowed.
    assert item_checks(_marked(on[:2] + [_mark(3, (315, 115), hidden=0.25)] + on[3:]))["marks_on_objects"] is True


def test_marks_from_before_the_rule_are_not_checked():
    old = [[str(k), [100.0 * k + 15, 115.0]] for k in range(1, 5)]
    assert "marks_on_objects" not in item_checks(_marked(old))


def _landmark(center_y, pixels, yaw=0.0):
    """A reach_dice-style distance item whose landmark, a 0.4 m cube 2 m ahead of the camera (``CAMERA``: fx 600,
    principal point 360, looking along +x), stands ``center_y`` to the side: at y = -1.1 its image spans
    u = 600 * [0.9, 1.3] / 2 + 360 = [630, 750] at its centre's depth, so three quarters of it lie inside
    the 720 px frame; at y = -1.3, [690, 810]: a quarter."""
    row = _dice(["object 1", "object 2", "object 3", "object 4"],
                {"object 1": "dice_0", "object 2": "dice_1", "object 3": "dice_2", "object 4": "pillow_0"},
                ["1", "2", "3", "4"])
    meta = json.loads(row["metadata"])
    meta["objects"]["board_game_0"] = {**_obj("board_game", (2.0, center_y, 1.0), extents=(0.4, 0.4, 0.4),
                                              pixels=pixels), "yaw": yaw}
    return item_checks({**row, "metadata": json.dumps(meta)})


def test_a_landmark_cut_by_the_frame_edge_or_hidden_breaks_named_visible():
    # Its projected box is about 120 x 120 px (14,400 px; 0.4 m at 2 m, fx 600): 0.18 of it is about 2,600 px.
    assert _landmark(-1.1, pixels=8000)["named_visible"] is True
    assert _landmark(-1.3, pixels=8000)["named_visible"] is False       # a quarter in the frame: a sliver
    assert _landmark(-1.1, pixels=1000)["named_visible"] is False       # in the frame, but mostly hidden
    assert _landmark(0.0, pixels=3500)["named_visible"] is True         # all in, a quarter of its box visible


def _navigation(walls, content):
    meta = {"current_view_wall_share": walls, "current_view_content_share": content}
    return _row("task_navigation", "direction", "robot_relative", "Where is the bar relative to the robot?",
                ["front-left", "front-right", "back-left", "back-right"], "front-left", meta, task="move_to_bar")


def test_a_navigation_view_of_walls_and_floor_alone_breaks_current_view_scene():
    assert item_checks(_navigation(0.40, 0.12)) == {"current_view_scene": True}
    assert item_checks(_navigation(0.34, 0.0)) == {"current_view_scene": False}    # a bare corner
    assert item_checks(_navigation(0.75, 0.10)) == {"current_view_scene": False}   # a wall up close
    assert item_checks(_row("task_navigation", "direction", "robot_relative", "Where is the bar?",
                            ["front-left", "front-right", "back-left", "back-right"], "front-left", {})) == {}


def _spots(spot_ys, answer="spot 1", side="left"):
    """A goal-spot item: spots on a counter 2 m ahead (x = 2, z = 0.9), the reference at y = 0, robot-right = -y."""
    spots = {f"spot {k}": [2.0, y, 0.9] for k, y in enumerate(spot_ys, start=1)}
    marks = []
    for label, point in spots.items():
        u, v = 360 + 600 * -point[1] / 2.0, 360 + 600 * 0.1 / 2.0
        marks.append([label[-1], [u, v], [u, v], label, None])
    meta = {"spots": spots, "marks": marks, "reference": "board_0", "reference_center": [2.0, 0.0],
            "right_axis": [0.0, -1.0], "side": side, "camera": CAMERA,
            "objects": {"board_0": {**_obj("cutting_board", (2.0, 0.0, 0.9), extents=(0.3, 0.4, 0.02), pixels=9000),
                                    "yaw": 0.0}}}
    return _row("task_manipulation", "direction", "locate", "Which marked spot is where the knife should be placed?",
                list(spots), answer, meta, task="place_carving_knife")


def test_a_goal_spot_item_needs_its_answer_alone_on_the_instructed_side():
    # Left is +y here: spot 1 at y = 0.3 is left, spot 2 at -0.3 right, spots 3 and 4 on the reference's line.
    fine = item_checks(_spots([0.3, -0.3, 0.0, 0.0]))
    assert fine == {"marks_on_objects": True, "options_real": True, "named_visible": True, "one_true": True}
    assert item_checks(_spots([0.3, 0.25, 0.0, 0.0]))["one_true"] is False      # spot 2 is left too
    assert item_checks(_spots([0.3, -0.3, 0.0, 0.0], side="right"))["one_true"] is False   # the answer is not right
    assert item_checks(_spots([0.02, -0.3, 0.0, 0.0]))["one_true"] is False     # 2 cm: on neither side
