"""The `bspatial sim view` / `bspatial sim tasks` command functions."""

import json

from bspatial.sim.cli import sim_tasks, sim_view


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
