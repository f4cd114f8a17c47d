"""The `bspatial sim view` / `bspatial sim tasks` command functions."""

import json

import pytest

from bspatial.tasks.cli import sim_tasks, sim_view

pytestmark = [pytest.mark.slow]


def test_sim_view_writes_the_expected_pngs(tmp_path):
    from PIL import Image

    written = sim_view(task="reach_plate", variant="largest", seed=3, out=tmp_path / "v", backend=None)
    names = sorted(p.name for p in written)
    assert names == ["head.png", "head_segmentation.png", "instance.json", "left_wrist.png", "right_wrist.png", "top.png"]
    assert Image.open(tmp_path / "v" / "head.png").size == (224, 224)
    info = json.loads((tmp_path / "v" / "instance.json").read_text())
    assert info["instruction"] == "Reach the largest plate from the countertop."
    assert info["target"] in info["candidates"]


def test_sim_tasks_lists_tasks_variants_and_budgets(capsys):
    sim_tasks()
    out = capsys.readouterr().out
    assert "reach_hardback" in out and "1x1, 1x2, 2x1" in out and "budget=" in out and "place_saucer" in out
    assert "move_to_corner_booth  [navigation" in out  # the ten navigation tasks are listed too


def _one_variant_per_task():
    from bspatial.catalog.tasks import MANIPULATION_TASKS, NAVIGATION_TASKS
    from bspatial.tasks.registry import get_task

    # Cycle through the variants so the 25 cases touch many kinds (size ranks, reference objects,
    # grid cells, layers, sides); every variant's target is checked in test_targets.py.
    for i, name in enumerate((*MANIPULATION_TASKS, *NAVIGATION_TASKS)):
        variants = get_task(name).variants
        yield name, variants[i % len(variants)]


@pytest.mark.parametrize("task,variant", list(_one_variant_per_task()))
def test_sim_view_shows_every_task(tmp_path, task, variant):
    import numpy as np
    from PIL import Image

    sim_view(task=task, variant=variant, seed=1, out=tmp_path, backend=None)
    info = json.loads((tmp_path / "instance.json").read_text())
    assert info["step_budget"] > 0
    head = np.asarray(Image.open(tmp_path / "head.png"))
    assert head.shape == (224, 224, 3) and head.std() > 10        # a scene, not a blank frame
    if not task.startswith("move_to_"):
        # The instructed target (or the manipulated object) is visible from the head camera; a
        # navigation destination need not be visible from the spawn.
        assert info["head_pixels"].get(info["target"], 0) > 0, info["head_pixels"]
