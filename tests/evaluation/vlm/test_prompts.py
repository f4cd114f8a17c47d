"""Prompt snapshots: every assembled variant equals the file written from the paper's Appendix 15 text."""

from __future__ import annotations

from pathlib import Path

import pytest

from bspatial.evaluation.vlm import prompts
from bspatial.evaluation.vlm.prompts import build_ir_prompt, build_vqa_prompt, format_options, needs_layer_hint, vqa_blocks

SNAPSHOTS = Path(__file__).parent / "snapshots"
SIDES = ["left", "right", "above", "behind"]
OBJECTS = ["mug", "bowl", "plate", "apple"]
GRID = ["1x1", "1x2", "2x1", "2x2"]
DIRECTIONS = ["front-left", "front-right", "back-left", "back-right"]

VQA_CASES = {
    "single_frame_direction": ("single_frame", "direction", "object_relative", "Where is the mug relative to the bowl?", SIDES),
    "single_frame_locate": ("single_frame", "direction", "locate", "Where is the book located on the bookcase?", GRID),
    "single_frame_distance_camera": ("single_frame", "distance", "camera_relative", "Which object is closest to the camera?", OBJECTS),
    "single_frame_distance_object": ("single_frame", "distance", "object_relative", "Which object is closest to the sink?", OBJECTS),
    "single_frame_size": ("single_frame", "size", "object_relative", "Which object is the largest?", OBJECTS),
    "multi_frame_rotation_direction": ("multi_frame_rotation", "direction", "object_relative", "Where is the fridge relative to the table?", SIDES),
    "multi_frame_rotation_distance_camera": ("multi_frame_rotation", "distance", "camera_relative", "Which object is closest to the camera in the last frame?", OBJECTS),
    "multi_frame_navigation_direction": ("multi_frame_navigation", "direction", "object_relative", "Where is the sofa relative to the lamp?", SIDES),
    "multi_frame_navigation_size": ("multi_frame_navigation", "size", "object_relative", "Which object is the largest?", OBJECTS),
    "task_manipulation_locate": ("task_manipulation", "direction", "locate", "Where is the hardback book located on the bookcase?", GRID),
    "task_manipulation_ordinal": ("task_manipulation", "direction", "ordinal", "Which tool is the second leftmost on the countertop?", ["hammer", "wrench", "pliers", "screwdriver"]),
    "task_navigation_direction": ("task_navigation", "direction", "camera_relative", "In which direction is the fridge relative to the robot?", DIRECTIONS),
}
IR_CASES = {
    "ir_reach": ("Reach the dice closest to the board game on the bed.", "object"),
    "ir_directional_placement": ("Place the carving knife on the countertop and to the right of the cutting board.", "placement"),
    "ir_container_placement_layer": ("Place the tupperware in the layer 5 of the fridge.", "placement"),
}


def _snapshot(name: str) -> str:
    return (SNAPSHOTS / f"{name}.txt").read_text(encoding="utf-8").removesuffix("\n")


@pytest.mark.parametrize("name", sorted(VQA_CASES))
def test_vqa_prompt_snapshot(name):
    assert build_vqa_prompt(*VQA_CASES[name]) == _snapshot(name)


@pytest.mark.parametrize("name", sorted(IR_CASES))
def test_ir_prompt_snapshot(name):
    assert build_ir_prompt(*IR_CASES[name]) == _snapshot(name)


def test_every_snapshot_file_is_pinned_by_a_case():
    assert {p.stem for p in SNAPSHOTS.glob("*.txt")} == set(VQA_CASES) | set(IR_CASES)


@pytest.mark.parametrize(
    ("setting", "category", "subtype", "rules"),
    [
        ("single_frame", "direction", "object_relative", ["direction_rules"]),
        ("single_frame", "direction", "robot_arm_relative", ["direction_rules"]),
        ("single_frame", "direction", "locate", ["locate_rules"]),
        ("single_frame", "distance", "camera_relative", ["camera_distance_rules"]),
        ("single_frame", "distance", "robot_arm_relative", []),
        ("single_frame", "size", "object_relative", []),
        ("multi_frame_navigation", "direction", "object_relative", ["direction_rules"]),
        ("task_manipulation", "direction", "ordinal", ["direction_rules"]),
        ("task_navigation", "direction", "camera_relative", []),  # its preamble replaces the direction rules
    ],
)
def test_which_rule_blocks_apply(setting, category, subtype, rules):
    names = vqa_blocks(setting, category, subtype)
    assert names[-len(rules) - 1] == "answer_format"
    assert [n for n in names if n.endswith("_rules")] == rules


def test_preambles_per_setting():
    first = {s: vqa_blocks(s, "size", "object_relative")[0] for s in prompts._PREAMBLES}
    assert first == {
        "single_frame": "single_frame_preamble",
        "task_manipulation": "single_frame_preamble",
        "multi_frame_rotation": "multi_frame_preamble",
        "multi_frame_navigation": "multi_frame_preamble",
        "task_navigation": "task_navigation_preamble",
    }
    with pytest.raises(ValueError, match="setting must be one of"):
        vqa_blocks("multi_frame", "size", "object_relative")


def test_layer_hint_only_for_placement_instructions_with_the_word():
    assert needs_layer_hint("Place the bowl in the Layer 3 of the bottom cabinet.", "placement")
    assert not needs_layer_hint("Place the bowl in the layers of the cabinet.", "placement")
    assert not needs_layer_hint("Reach the item on the layer 2 shelf.", "object")
    assert prompts.IR_LAYER_HINT not in build_ir_prompt("Place the saucer to the left of the kettle.", "placement")
    with pytest.raises(ValueError, match="target must be one of"):
        build_ir_prompt("Reach it.", "region")


def test_options_need_four_texts():
    with pytest.raises(ValueError, match="must hold 4 texts"):
        format_options(["a", "b", "c"])


def test_prompts_fingerprint_follows_the_text(monkeypatch):
    before = prompts.prompts_fingerprint()
    assert before == prompts.prompts_fingerprint()
    monkeypatch.setattr(prompts, "IR_LAYER_HINT", prompts.IR_LAYER_HINT + " ")
    assert prompts.prompts_fingerprint() != before
