"""Cluster keys read from item ids, checked against the builders' own naming (scene_id, id f-strings)."""

from __future__ import annotations

import logging

import pytest

from bspatial.construction.questions.activities import GENERAL_ACTIVITIES
from bspatial.construction.questions.general import scene_id
from bspatial.evaluation.vlm.clusters import cluster_key, cluster_keys, known_cluster_key
from bspatial.tasks.navigation import NAV_TASKS


@pytest.mark.parametrize("activity", GENERAL_ACTIVITIES[:5] + GENERAL_ACTIVITIES[-2:])
@pytest.mark.parametrize("view", ["v0", "v5", "s1", "r0", "n0"])
def test_general_items_cluster_by_the_scene_the_builder_records(activity, view):
    # write_general_records: id f"{gs|gm}-{frame_id}-{k:02d}", frame_id f"{activity}-l{layout}-{view}",
    # metadata["scene"] = scene_id(frame_id).
    frame_id = f"{activity}-l2-{view}"
    prefix = "gs" if view[0] in "vs" else "gm"
    keys = {cluster_key(f"{prefix}-{frame_id}-{k:02d}") for k in range(3)}
    assert keys == {scene_id(frame_id)}
    assert cluster_key(f"{prefix}-{activity}-l1-{view}-00") != scene_id(frame_id)  # another layout, another scene


def test_navigation_items_cluster_by_spawn():
    task = next(iter(NAV_TASKS))
    # write_navigation: id f"tn-{task}-{draw:08x}-{n:03d}", n running over the task's questions.
    same_spawn = {cluster_key(f"tn-{task}-{0x0a1b2c3d:08x}-{n:03d}") for n in (0, 1, 5)}
    assert same_spawn == {f"{task}-0a1b2c3d"}
    assert cluster_key(f"tn-{task}-{0x0000ffff:08x}-006") == f"{task}-0000ffff"


@pytest.mark.parametrize("item_id", ["tm-reach_plate-2nd_largest-19cecd25", "ir-place_tupperware_in_fridge-5-61f59a24",
                                     "tm-reach_dice-farthest_board_game-e4c6dce9"])
def test_task_manipulation_and_ir_items_are_their_own_clusters(item_id):
    # One question / query per drawn layout (ids as in a real run's samples.jsonl).
    assert known_cluster_key(item_id) == item_id


def test_unknown_ids_are_their_own_clusters_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="bspatial.evaluation.vlm.clusters"):
        keys = cluster_keys(["single_frame-locate-direction-0", "gs-cook_oysters-l0-v1-00", "reach_dice-3"])
    assert keys == ["single_frame-locate-direction-0", "cook_oysters-l0", "reach_dice-3"]
    assert "2 of 3 item ids" in caplog.text
    assert known_cluster_key("gs-cook_oysters-v1-00") is None  # no layout part: not a builder id
