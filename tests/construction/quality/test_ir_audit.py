"""The IR answerability audit (issue 29) on hand-made records whose geometry is written out here."""

import numpy as np

from bspatial.construction.quality.ir_audit import ir_audit, ir_item_checks
from bspatial.scoring.masks import rle_encode

# OpenCV camera at (0, 0, 1) looking along world +x: image right is world -y, image down is world -z.
K = [[600, 0, 360], [0, 600, 360], [0, 0, 1]]
T = [[0, 0, 1, 0], [-1, 0, 0, 0], [0, -1, 0, 1.0], [0, 0, 0, 1]]


def _square(v0, u0, side, size=(720, 720)):
    mask = np.zeros(size, bool)
    mask[v0:v0 + side, u0:u0 + side] = True
    return {"size": list(size), "counts": list(rle_encode(mask)["counts"])}


def _reach(targets, distractors, task="reach_dice", metadata=None):
    return {"id": f"ir-{task}", "task": task, "metadata": metadata or {},
            "region": {"kind": "reach", "image_size": [720, 720], "targets": targets, "distractors": distractors}}


def test_a_reach_target_must_be_one_region_big_enough_to_point_at():
    die, other = _square(100, 100, 30), _square(100, 200, 30)          # 900 px each, apart
    assert ir_item_checks(_reach([die], [other])) == {"one_target_region": True, "target_visible": True}
    small = _square(100, 100, 25)                                       # 625 px < 800
    assert ir_item_checks(_reach([small], [other]))["target_visible"] is False
    overlapping = _square(110, 110, 30)                                 # shares 20 x 20 px with the die
    assert ir_item_checks(_reach([die], [overlapping]))["one_target_region"] is False
    assert ir_item_checks(_reach([die, other], []))["one_target_region"] is False


def test_a_placement_goal_must_project_into_the_frame():
    def directional(goal):
        return {"id": "ir-place", "task": "place_carving_knife", "metadata": {"goal_point": goal},
                "region": {"kind": "directional_placement", "image_size": [720, 720], "K": K, "T_world_cam": T,
                           "countertop": {"height": 0.9, "polygon": [[1, -1], [3, -1], [3, 1], [1, 1]]},
                           "reference_center": [2, 0, 0.9], "robot_right": [0, -1], "side": "left"}}
    # (2, 0.3, 0.9): u = 360 + 600 * -0.3 / 2 = 270, v = 360 + 600 * 0.1 / 2 = 390: in the frame.
    assert ir_item_checks(directional([2.0, 0.3, 0.9])) == {"goal_in_frame": True}
    # (2, 1.5, 0.9): u = 360 - 450 = -90: left of the frame.
    assert ir_item_checks(directional([2.0, 1.5, 0.9])) == {"goal_in_frame": False}
    # (-1, 0, 0.9): behind the camera.
    assert ir_item_checks(directional([-1.0, 0.0, 0.9])) == {"goal_in_frame": False}


def test_a_container_compartment_must_face_the_camera_in_the_frame():
    def container(center_y):
        return {"id": "ir-fridge", "task": "place_tupperware_in_fridge", "metadata": {},
                "region": {"kind": "container_placement", "image_size": [720, 720], "K": K, "T_world_cam": T,
                           "container": {"center": [2.5, center_y, 1.0], "half_extents": [0.3, 0.4, 0.8],
                                         "rotation": np.eye(3).tolist()},
                           "compartments": [[0.2, 0.6], [0.6, 1.0], [1.0, 1.4]], "instructed_compartment": 1}}
    # The front face's middle is (2.2, y, 0.8): y = 0 gives u = 360, v = 360 + 600 * 0.2 / 2.2 = 415.
    assert ir_item_checks(container(0.0)) == {"goal_in_frame": True}
    # y = 1.6: u = 360 - 600 * 1.6 / 2.2 = -76: outside.
    assert ir_item_checks(container(1.6)) == {"goal_in_frame": False}


def test_the_named_reference_must_be_findable_and_the_report_has_per_task_lines():
    camera = {"K": K, "T_world_cam": T}

    def with_reference(center_y, pixels):
        cabinet = {"category": "bottom_cabinet", "center": [2.0, center_y, 1.0], "extents": [0.4, 0.4, 0.4],
                   "yaw": 0.0, "pixels": pixels}
        return _reach([_square(100, 100, 30)], [], task="reach_soda_can",
                      metadata={"reference": "bottom_cabinet_0", "objects": {"bottom_cabinet_0": cabinet},
                                "camera": camera})
    # As in the VQA audit's test: at y = -1.1 three quarters of the cube are in the frame, at -1.3 a quarter.
    assert ir_item_checks(with_reference(-1.1, 8000))["reference_findable"] is True
    assert ir_item_checks(with_reference(-1.3, 8000))["reference_findable"] is False
    report = ir_audit([with_reference(-1.1, 8000), with_reference(-1.3, 8000),
                       _reach([_square(100, 100, 30)], [])])
    line = {r.rule: (r.applies, r.breaks) for r in report.results}
    assert line == {"one_target_region": (3, 0), "target_visible": (3, 0), "reference_findable": (2, 1)}
    assert ("all", "reach", "reach_soda_can", "reference_findable", 2, 1) in report.parts
    assert not report.ok   # 1 of 2 is above 1%
