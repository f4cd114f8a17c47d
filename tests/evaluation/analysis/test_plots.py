"""The report's figures: valid PNG and SVG files whose plotted data are the inputs."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.quiver import Quiver
from PIL import Image

from bspatial.evaluation.analysis import plots
from bspatial.scoring.action import RateWithCI

_SVG = "{http://www.w3.org/2000/svg}"


def _svg_texts(path) -> list[str]:
    root = ET.parse(path).getroot()   # a parse error fails the test: the file is not valid XML
    assert root.tag == f"{_SVG}svg"
    return ["".join(t.itertext()) for t in root.iter(f"{_SVG}text")]


def _check_png(path) -> None:
    with Image.open(path) as image:
        image.verify()             # raises on a truncated or corrupt file
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width > 100 and image.height > 100


def test_scatter_points_labels_and_fit_are_the_inputs(tmp_path):
    # Points on y = 2x + 1 (plus one off the line for the second panel): the fit is known without polyfit.
    line = plots.ScatterSeries("on a line", ("reach_dice", "reach_tool", "reach_plate"), (10.0, 20.0, 40.0),
                               (21.0, 41.0, 81.0), "rho = 1.000")
    flat = plots.ScatterSeries("constant x", ("a", "b", "c"), (50.0, 50.0, 50.0), (10.0, 20.0, 30.0))
    fig = plots.scatter_figure([line, flat], "VQA accuracy (%)", "soft success (%)", "Figure S9")
    first, second = fig.axes[:2]
    (points,) = [c for c in first.collections if isinstance(c, PathCollection)]
    assert points.get_offsets().tolist() == [[10.0, 21.0], [20.0, 41.0], [40.0, 81.0]]
    assert [t.get_text() for t in first.texts] == ["reach_dice", "reach_tool", "reach_plate"]
    (fit,) = first.lines
    np.testing.assert_allclose(fit.get_xydata(), [[10.0, 21.0], [40.0, 81.0]], atol=1e-9)
    assert len(second.lines) == 0      # x constant: no line can be fitted, none is drawn
    written = plots.save_figure(fig, tmp_path / "s9")
    _check_png(written["png"])
    texts = _svg_texts(written["svg"])
    assert {"reach_dice", "reach_tool", "reach_plate", "Figure S9"} <= set(texts)
    assert any("rho = 1.000" in t for t in texts)


def test_scatter_refuses_ragged_series():
    with pytest.raises(ValueError, match="'p': tasks, x and y differ in length"):
        plots.ScatterSeries("p", ("a", "b"), (1.0,), (1.0, 2.0))


def test_rate_bars_heights_and_wilson_error_bars(tmp_path):
    # Wilson 95% intervals of 2/3 and 1/2 (published values: [20.8, 93.9] and [9.5, 90.5] percent).
    a, b = RateWithCI.from_counts(2, 3), RateWithCI.from_counts(1, 2)
    fig = plots.rate_bars_figure(["reach_dice", "reach_tool"], {"policy A": [a, None], "policy B": [b, b]},
                                 "Table S9: +Soft per task", "soft (%)")
    ax = fig.axes[0]
    heights = [round(p.get_height(), 6) for p in ax.patches]
    assert heights == [round(200 / 3, 6), 50.0, 50.0]     # A has no reach_tool bar
    caps = sorted(round(y, 1) for line in ax.lines for y in line.get_ydata())
    assert caps == sorted([20.8, 93.9, 9.5, 90.5, 9.5, 90.5])
    written = plots.save_figure(fig, tmp_path / "bars")
    _check_png(written["png"])
    assert {"reach_dice", "reach_tool", "policy A", "policy B"} <= set(_svg_texts(written["svg"]))


def test_failure_stack_shares_are_the_counts(tmp_path):
    counts = {"scripted · held_out": {"success": 3, "no_action": 1}, "random · held_out": {"wrong_object": 2}}
    fig = plots.failure_stack_figure(counts, ("success", "no_action", "wrong_object"), "Failure modes")
    widths = [(round(p.get_y(), 2), round(p.get_x(), 6), round(p.get_width(), 6)) for p in fig.axes[0].patches]
    # Bars in mode order; rows at y = 0 (scripted) and 1 (random), drawn centred (y - 0.4).
    assert widths == [(-0.4, 0.0, 75.0), (0.6, 0.0, 0.0), (-0.4, 75.0, 25.0), (0.6, 0.0, 0.0), (-0.4, 100.0, 0.0),
                      (0.6, 0.0, 100.0)]
    written = plots.save_figure(fig, tmp_path / "fm")
    _check_png(written["png"])
    assert {"3", "1", "2", "scripted · held_out"} <= set(_svg_texts(written["svg"]))


def test_a_failure_label_outside_the_drawn_modes_is_refused():
    # It used to vanish from its bar (the leaderboard drew the old five labels of a nine-mode taxonomy).
    with pytest.raises(ValueError, match=r"failure modes \['navigation_failure'\] are not among"):
        plots.failure_stack_figure({"random · navigation": {"navigation_failure": 2}}, ("success", "no_action"), "x")


def test_the_leaderboard_draws_every_label_of_the_taxonomy():
    from bspatial.evaluation.analysis.site import _failure_figure
    from bspatial.scoring.failure_modes import PRIMARY_FAILURE_MODES

    records = [{"policy": "random", "split": "navigation", "failure_mode": "navigation_failure", "task": "move_to_bar",
                "index": 0, "outcome": "none", "status": "timeout", "soft_credit": False},
               {"policy": "random", "split": "held_out", "failure_mode": "missed_target", "task": "reach_plate",
                "index": 0, "outcome": "none", "status": "timeout", "soft_credit": False}]
    fig = _failure_figure(records)
    drawn = sorted(round(p.get_width(), 6) for p in fig.axes[0].patches if p.get_width() > 0)
    assert drawn == [100.0, 100.0] and "navigation_failure" in PRIMARY_FAILURE_MODES


def test_navigation_map_marks_starts_and_destination(tmp_path):
    path = np.array([[-2.0, 0.0, 0.5], [0.0, -0.5, 0.0], [3.5, -1.0, 0.0]])
    starts = [plots.NavStart("move_to_bathroom", (-2.0, 0.0, 0.5), path, True),
              plots.NavStart("move_to_bathroom", (-1.0, 1.5, -1.0), path[:1], False)]
    fig = plots.navigation_map_figure("single_floor_house_bedroom", starts)
    ax = fig.axes[0]
    arrows = [c for c in ax.collections if isinstance(c, Quiver)]
    # Failures are drawn first, successes on top.
    assert [q.get_offsets().tolist()[0] for q in arrows] == [[-1.0, 1.5], [-2.0, 0.0]]
    np.testing.assert_allclose([(q.U[0], q.V[0]) for q in arrows], [(np.cos(-1.0), np.sin(-1.0)), (np.cos(0.5), np.sin(0.5))])
    starts_drawn = [l for l in ax.lines if l.get_marker() == "o"]
    assert [(l.get_xdata()[0], l.get_ydata()[0], l.get_markerfacecolor()) for l in starts_drawn] == [
        (-1.0, 1.5, "white"), (-2.0, 0.0, "#1f77b4")]
    (path_line,) = [l for l in ax.lines if len(l.get_xdata()) == 3]
    np.testing.assert_allclose(path_line.get_xydata(), path[:, :2])
    written = plots.save_figure(fig, tmp_path / "nav")
    _check_png(written["png"])
    texts = _svg_texts(written["svg"])
    assert {"bedroom", "bathroom", "hallway"} <= set(texts)
    assert any("2 start poses (1 reached the goal" in t for t in texts)


def test_navigation_map_refuses_a_task_of_another_plan():
    start = plots.NavStart("move_to_oven", (0.0, 0.0, 0.0), np.zeros((1, 3)), False)
    with pytest.raises(ValueError, match=r"'single_floor_house_bedroom': episodes of tasks \['move_to_oven'\]"):
        plots.navigation_map_figure("single_floor_house_bedroom", [start])


def test_saved_svg_is_byte_stable(tmp_path):
    series = [plots.ScatterSeries("p", ("a", "b"), (1.0, 2.0), (3.0, 4.0))]
    first = plots.save_figure(plots.scatter_figure(series, "x", "y", "t"), tmp_path / "one")
    second = plots.save_figure(plots.scatter_figure(series, "x", "y", "t"), tmp_path / "two")
    assert first["svg"].read_bytes() == second["svg"].read_bytes()


def test_every_failure_label_has_its_own_colour():
    from bspatial.evaluation.analysis import plots
    from bspatial.scoring.failure_modes import FAILURE_MODES

    assert set(plots._FAILURE_COLOURS) == set(FAILURE_MODES)
    assert len(set(plots._FAILURE_COLOURS.values())) == len(FAILURE_MODES)
