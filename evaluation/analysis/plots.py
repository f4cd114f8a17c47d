"""The report's figures with matplotlib: Figure S9 scatters, per-task rate bars with Wilson intervals,
failure-mode stacks (Spa-Bench style) and navigation maps (Figure S6 style), saved as PNG and SVG.

Every figure is a :class:`matplotlib.figure.Figure` attached to an explicit Agg canvas: servers and CI
have no display, and attaching the canvas here (rather than ``matplotlib.use("Agg")``, a process-wide
switch) leaves the backend of a notebook or script that imports this module alone. pyplot is never
imported, so no figure is kept in a global registry (nothing leaks across a long report).

The functions take plain data (labels, numbers, :class:`~bspatial.scoring.action.RateWithCI`) and
return the Figure, so a caller (or a test) can read back what was plotted before saving it with
:func:`save_figure`. Rates and intervals are computed by the scoring layer (Wilson, one implementation);
the plots only draw them.

Example:
    >>> fig = scatter_figure([ScatterSeries("p", ("a", "b", "c"), (10.0, 20.0, 30.0), (5.0, 15.0, 20.0))],
    ...                      "VQA accuracy (%)", "soft success (%)", "Figure S9")
    >>> fig.axes[0].collections[0].get_offsets().tolist()
    [[10.0, 5.0], [20.0, 15.0], [30.0, 20.0]]
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from bspatial.common.files import atomic_write_bytes
from bspatial.scoring.action import RateWithCI

FORMATS = ("png", "svg")
"""Every figure is written in both: PNG for quick viewing, SVG for papers (text kept as text)."""
DPI = 120
"""PNG resolution: legible task labels at the page's image width (about 900 px)."""
_SVG_RC = {"svg.fonttype": "none", "svg.hashsalt": "bspatial"}
# svg.fonttype "none" keeps labels as <text> (searchable, selectable, readable by tests); the hash
# salt makes element ids repeatable, so one report rebuilt gives byte-equal SVG files.
_COLUMNS_MAX = 3   # scatter panels per row
_FAILURE_COLOURS = {"success": "#4c9f38", "no_action": "#9e9e9e", "acted_unnecessarily": "#6a4c93",
                    "wrong_object": "#d1495b", "wrong_instance": "#f08080", "wrong_relation": "#edae49",
                    "missed_target": "#00798c", "grasp_failure": "#30638e", "transport_failure": "#8fb8de",
                    "navigation_failure": "#5c4033"}
"""One colour per label of :data:`bspatial.scoring.failure_modes.FAILURE_MODES` (a test checks they match)."""
_OTHER_COLOUR = "#6a4c93"


def new_figure(width: float, height: float) -> Figure:
    """A Figure on its own Agg canvas (see the module docstring for why not pyplot)."""
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: Figure, stem: str | Path) -> dict[str, Path]:
    """Write ``fig`` to ``<stem>.png`` and ``<stem>.svg`` atomically; returns format -> path."""
    stem = Path(stem)
    written = {}
    for fmt in FORMATS:
        buffer = io.BytesIO()
        with rc_context(_SVG_RC):
            # No creation date in the metadata: a rebuilt report gives the same bytes.
            fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
        written[fmt] = atomic_write_bytes(stem.with_name(f"{stem.name}.{fmt}"), buffer.getvalue())
    return written


# ----------------------------------------------------------------------------- Figure S9


@dataclass(frozen=True)
class ScatterSeries:
    """One panel of Figure S9: a policy's per-task (perception, success) points.

    Attributes:
        label: The panel title (the policy).
        tasks: Task names, one per point (the point labels).
        x: Perception scores (percent).
        y: Success rates (percent).
        note: Appended to the title (e.g. Spearman's rho).
    """

    label: str
    tasks: tuple[str, ...]
    x: tuple[float, ...]
    y: tuple[float, ...]
    note: str = ""

    def __post_init__(self) -> None:
        if not len(self.tasks) == len(self.x) == len(self.y):
            raise ValueError(f"series {self.label!r}: tasks, x and y differ in length "
                             f"({len(self.tasks)}, {len(self.x)}, {len(self.y)})")


def linear_fit(x: Sequence[float], y: Sequence[float]) -> tuple[float, float] | None:
    """Least-squares (slope, intercept), or None when x has fewer than two distinct values (no line)."""
    if len(set(x)) < 2:
        return None
    slope, intercept = np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)
    return float(slope), float(intercept)


def scatter_figure(series: Sequence[ScatterSeries], x_label: str, y_label: str, title: str) -> Figure:
    """Figure S9: one panel per policy, one labelled point per task, and the descriptive linear fit."""
    if not series:
        raise ValueError("scatter_figure needs at least one series")
    cols = min(_COLUMNS_MAX, len(series))
    rows = math.ceil(len(series) / cols)
    fig = new_figure(4.2 * cols, 3.6 * rows)
    fig.suptitle(title)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, s in zip(axes, series):
        ax.scatter(s.x, s.y, s=28, color="#1f77b4", zorder=3)
        for task, x, y in zip(s.tasks, s.x, s.y):
            ax.annotate(task, (x, y), xytext=(3, 3), textcoords="offset points", fontsize=7)
        fit = linear_fit(s.x, s.y)
        if fit is not None:
            xs = np.array([min(s.x), max(s.x)])
            ax.plot(xs, fit[0] * xs + fit[1], color="#d62728", linewidth=1.2, label=f"fit: y = {fit[0]:.2f}x + {fit[1]:.1f}")
            ax.legend(loc="lower right", fontsize=7)
        ax.set_title(s.label + (f"\n{s.note}" if s.note else ""), fontsize=9)
        ax.set_xlabel(x_label, fontsize=8)
        ax.set_ylabel(y_label, fontsize=8)
        ax.set_xlim(-5, 105)
        ax.set_ylim(-5, 105)
        ax.grid(alpha=0.3)
    for ax in axes[len(series):]:
        ax.set_visible(False)
    return fig


# ----------------------------------------------------------------------------- rate bars


def rate_bars_figure(tasks: Sequence[str], series: Mapping[str, Sequence[RateWithCI | None]], title: str,
                     y_label: str) -> Figure:
    """Grouped bars: one group per task, one bar per series (policy), each with its Wilson 95% interval.

    ``series`` maps a label to one rate per task (None where the policy has no episode of that task).
    """
    for label, rates in series.items():
        if len(rates) != len(tasks):
            raise ValueError(f"series {label!r} has {len(rates)} rates for {len(tasks)} tasks")
    if not series:
        raise ValueError("rate_bars_figure needs at least one series")
    fig = new_figure(max(6.0, 0.55 * len(tasks) * max(1, len(series)) + 2.0), 4.2)
    ax = fig.subplots()
    width = 0.8 / len(series)
    positions = np.arange(len(tasks), dtype=float)
    for i, (label, rates) in enumerate(series.items()):
        present = [(p, r) for p, r in zip(positions, rates) if r is not None]
        if not present:
            continue
        xs = np.array([p for p, _ in present]) + (i - (len(series) - 1) / 2) * width
        values = np.array([r.rate for _, r in present])
        errors = np.array([[r.rate - r.low for _, r in present], [r.high - r.rate for _, r in present]])
        ax.bar(xs, values, width, label=label)
        # Error bars drawn apart from bar(): its yerr mishandles a (2, 1) array (one bar) in matplotlib 3.10.
        ax.errorbar(xs, values, yerr=errors, fmt="none", ecolor="black", capsize=2, linewidth=0.8)
    ax.set_xticks(positions, list(tasks), rotation=35, ha="right", fontsize=8)
    ax.set_ylabel(y_label)
    ax.set_ylim(0, 105)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper right")
    ax.grid(axis="y", alpha=0.3)
    return fig


# ----------------------------------------------------------------------------- failure modes


def failure_stack_figure(counts: Mapping[str, Mapping[str, int]], modes: Sequence[str], title: str) -> Figure:
    """Horizontal stacked bars (Spa-Bench style): one bar per row label, segments = each mode's share (%)
    of that row's labelled episodes, annotated with the count."""
    if not counts:
        raise ValueError("failure_stack_figure needs at least one row")
    unknown = sorted({mode for row in counts.values() for mode in row} - set(modes))
    if unknown:   # a label outside `modes` would vanish from its bar, which would then stop short of 100%
        raise ValueError(f"failure modes {unknown} are not among the modes to draw {list(modes)} (episodes recorded "
                         f"before the nine-mode taxonomy carry the old labels: rerun their rollout)")
    labels = list(counts)
    fig = new_figure(8.0, 1.0 + 0.45 * len(labels))
    ax = fig.subplots()
    left = np.zeros(len(labels))
    totals = np.array([sum(counts[label].values()) for label in labels], float)
    for mode in modes:
        n = np.array([counts[label].get(mode, 0) for label in labels], float)
        share = np.divide(100.0 * n, totals, out=np.zeros_like(n), where=totals > 0)
        bars = ax.barh(labels, share, left=left, label=mode, color=_FAILURE_COLOURS.get(mode, _OTHER_COLOUR))
        ax.bar_label(bars, labels=[str(int(v)) if v else "" for v in n], label_type="center", fontsize=7)
        left += share
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of episodes (%)")
    ax.invert_yaxis()   # first row on top, as in the tables
    ax.set_title(title, fontsize=10)
    # At most five legend columns: the ten labels of the taxonomy in one row would run off the canvas.
    ax.legend(fontsize=7, ncols=min(len(modes), 5), loc="upper center",
              bbox_to_anchor=(0.5, -0.35 if len(labels) < 3 else -0.15))
    return fig


# ----------------------------------------------------------------------------- navigation maps


@dataclass(frozen=True)
class NavStart:
    """One navigation episode on a map: its task, start pose (x, y, yaw), base path and success."""

    task: str
    start: tuple[float, float, float]
    path: np.ndarray
    success: bool
    label: str = ""


def navigation_map_figure(plan_name: str, starts: Sequence[NavStart], tasks: Sequence[str] = ()) -> Figure:
    """Figure S6 style: the floor plan's furniture footprints (gray), rooms and doorways, each task's
    destination (yellow area, star), and every episode's start pose (blue arrow; filled when the episode
    succeeded, hollow when not) with the path its base took."""
    from bspatial.tasks.navigation import NAV_TASKS, destination_area, destination_xy
    from bspatial.world.floorplans import get_floorplan

    plan = get_floorplan(plan_name)
    wrong = sorted({s.task for s in starts if NAV_TASKS.get(s.task) is None or NAV_TASKS[s.task].plan != plan_name})
    if wrong:
        raise ValueError(f"floor plan {plan_name!r}: episodes of tasks {wrong} are not in it")
    x0, x1, y0, y1 = plan.bounds
    fig = new_figure(7.0, 7.0 * (y1 - y0 + 1) / (x1 - x0 + 1) + 0.6)
    ax = fig.subplots()
    grid = plan.occupancy()
    extent = (grid.origin[0], grid.origin[0] + grid.shape[0] * grid.resolution,
              grid.origin[1], grid.origin[1] + grid.shape[1] * grid.resolution)
    ax.imshow(grid.obstacle.T, origin="lower", extent=extent, cmap="Greys", vmin=0, vmax=2.5, interpolation="nearest")
    for room in plan.rooms:
        rx0, rx1, ry0, ry1 = room.bounds
        ax.add_patch(Rectangle((rx0, ry0), rx1 - rx0, ry1 - ry0, fill=False, edgecolor="#444444", linewidth=1.0))
        ax.text(*room.center, room.name.replace("_", " "), ha="center", va="center", fontsize=7, color="#555555")
    for door in plan.doorways:
        dx, dy = (door.width / 2, 0.0) if door.along == "x" else (0.0, door.width / 2)
        ax.plot([door.center[0] - dx, door.center[0] + dx], [door.center[1] - dy, door.center[1] + dy],
                color="white", linewidth=3)
    for task in dict.fromkeys([*tasks, *(s.task for s in starts)]):
        ax0, ax1, ay0, ay1 = destination_area(task)
        ax.add_patch(Rectangle((ax0, ay0), ax1 - ax0, ay1 - ay0, color="#f2c14e", alpha=0.45, linewidth=0))
        px, py = destination_xy(task)
        ax.plot([px], [py], marker="*", markersize=14, color="#e07a00", markeredgecolor="black", linestyle="none")
        ax.annotate(NAV_TASKS[task].destination, (px, py), xytext=(6, -10), textcoords="offset points", fontsize=8)
    for s in sorted(starts, key=lambda s: s.success):   # successes drawn last: a shared spawn shows filled
        if len(s.path) > 1:
            ax.plot(s.path[:, 0], s.path[:, 1], color="#1f77b4", alpha=0.5, linewidth=0.8)
        x, y, yaw = s.start
        ax.quiver([x], [y], [math.cos(yaw)], [math.sin(yaw)], color="#1f77b4", scale=18, width=0.006)
        ax.plot([x], [y], marker="o", markersize=6, linestyle="none", markeredgecolor="#1f77b4",
                markerfacecolor="#1f77b4" if s.success else "white")
    ax.set_xlim(x0 - 0.5, x1 + 0.5)
    ax.set_ylim(y0 - 0.5, y1 + 0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ok = sum(s.success for s in starts)
    ax.set_title(f"{plan.title}: {len(starts)} start poses ({ok} reached the goal; filled = success)", fontsize=9)
    return fig


__all__ = ["DPI", "FORMATS", "NavStart", "ScatterSeries", "failure_stack_figure", "linear_fit", "navigation_map_figure",
           "new_figure", "rate_bars_figure", "save_figure", "scatter_figure"]
