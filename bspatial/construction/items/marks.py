"""Numbered marks on a frame that sit on their own object and hide at most a quarter of it.

Options that share a category are told apart by numbered discs drawn on the frame ("dice 2"). The earlier
marks sat at each object's mask centroid: the centroid of a ring or an L-shaped segmentation lies off the
object, and a 15 px disc (707 px) covered a third or more of a small object (issue 29: 246 of 556 marked
options of general single-frame items were under 1,500 px; a careful viewer "had to estimate size from
slivers"). The rule now, stated in the dataset card:

* every mark is **anchored on its object's visible pixels**: the anchor is the mask pixel deepest inside the
  segmentation (farthest from its edge; ties to the one nearest the centroid);
* a disc centred on the anchor is used when all the marks together hide at most :data:`MAX_HIDDEN_SHARE` of
  the object's pixels (**inline**);
* otherwise the disc goes **beside** the object, joined to the anchor by a leader line ending in a dot, at the
  nearest position (of :data:`LEADER_ANGLES` directions x :data:`LEADER_GAPS_PX`) inside the frame, clear of the
  other discs, hiding at most a quarter of every marked object and as few pixels of other objects as it can.

The share each mark hides is **measured on the drawn image** (the pixels the marks layer paints, intersected
with the object's segmentation) and recorded per mark; an item whose marks hide more than a quarter of a
marked object anyway is rejected (:class:`~bspatial.construction.items.frames.Rejected`), and the build draws
another. The answerability audit checks the record (``marks_on_objects``).

Example: a 20 x 20 px object (400 px) cannot take a 15 px disc (707 px), so its mark goes beside it: straight
up (the first direction tried), its disc's edge 6 px above the object's top row (50) and 16 px to its centre.

    >>> import numpy as np
    >>> masks = {"die": np.zeros((120, 120), bool)}
    >>> masks["die"][50:70, 50:70] = True
    >>> (mark,) = place_marks(masks, [("1", "die")])
    >>> mark.anchor, mark.at
    ((59, 59), (59, 28))
    >>> 0 < hidden_shares([mark], masks)["1"] <= MAX_HIDDEN_SHARE
    True
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:
    from bspatial.construction.items.frames import FrameRecord

MARK_RADIUS_PX = 15
"""Radius of a numbered disc at the 720 px construction frame (legible digits: font size 24 px)."""
MAX_HIDDEN_SHARE = 0.25
"""The marks may hide at most this share of a marked object's visible pixels (issue 29)."""
ANCHOR_DOT_RADIUS_PX = 3
"""A leader line ends in a dot of this radius on the anchor, so the viewer sees which pixels it points at."""
LEADER_WIDTH_PX = 3
"""Leader lines: a black line this wide with a one-pixel white core (visible on light and dark surfaces)."""
LEADER_ANGLES = 16
"""Directions tried for a disc beside its object, from straight up, clockwise."""
LEADER_GAPS_PX = (6, 14, 26, 42, 64, 96)
"""Gaps tried between the disc's edge and the nearest pixel of its object's mask, nearest first."""
DISC_CLEARANCE_PX = 4
"""Two discs keep at least this much between their edges."""


@dataclass(frozen=True)
class Mark:
    """One numbered mark: ``label`` drawn in a disc at ``at``, labelling object ``name`` whose visible pixels
    include ``anchor`` (equal to ``at`` for an inline mark; otherwise a leader line joins them)."""

    label: str
    name: str
    at: tuple[int, int]
    anchor: tuple[int, int]
    hidden: float | None = None
    """The share of the object's pixels all the frame's marks paint over (measured: :func:`hidden_shares`)."""

    @property
    def leader(self) -> bool:
        return self.at != self.anchor

    def record(self) -> list:
        """The metadata entry: ``[label, [u, v], [anchor u, anchor v], object name, hidden share]`` (the first two
        as before leader lines existed: the disc's centre)."""
        return [self.label, [float(self.at[0]), float(self.at[1])], [float(self.anchor[0]), float(self.anchor[1])],
                self.name, None if self.hidden is None else round(float(self.hidden), 4)]

    @classmethod
    def from_record(cls, entry: Sequence) -> "Mark":
        """The mark a :meth:`record` entry describes."""
        label, at, anchor, name, hidden = entry
        return cls(str(label), str(name), (int(at[0]), int(at[1])), (int(anchor[0]), int(anchor[1])), hidden)


def anchor_point(mask: np.ndarray) -> tuple[int, int]:
    """The (u, v) pixel of ``mask`` deepest inside it (repeated 4-neighbour erosion; the last pixels left, the
    one nearest the mask's centroid). Pixel centres: ``u`` is the column, ``v`` the row.

    Raises:
        ValueError: the mask is empty.
    """
    rows, cols = np.nonzero(mask)
    if rows.size == 0:
        raise ValueError("mask is empty: the object has no visible pixels to mark")
    r0, c0 = rows.min(), cols.min()
    inside = np.pad(mask[r0:rows.max() + 1, c0:cols.max() + 1], 1)
    while True:
        eroded = inside.copy()
        eroded[1:-1, 1:-1] &= inside[:-2, 1:-1] & inside[2:, 1:-1] & inside[1:-1, :-2] & inside[1:-1, 2:]
        eroded[0, :] = eroded[-1, :] = False
        eroded[:, 0] = eroded[:, -1] = False
        if not eroded.any():
            break
        inside = eroded
    deep_r, deep_c = np.nonzero(inside)
    k = int(np.argmin((deep_r - (rows.mean() - r0 + 1)) ** 2 + (deep_c - (cols.mean() - c0 + 1)) ** 2))
    return int(deep_c[k] - 1 + c0), int(deep_r[k] - 1 + r0)


def _disc(radius: float) -> tuple[np.ndarray, np.ndarray]:
    r = int(math.ceil(radius))
    dv, du = np.mgrid[-r:r + 1, -r:r + 1]
    keep = du ** 2 + dv ** 2 <= radius ** 2
    return dv[keep], du[keep]


_DISC = _disc(MARK_RADIUS_PX + 1)   # the outline included


def _covered(at: tuple[int, int], labels: np.ndarray) -> np.ndarray | None:
    """The label values under a disc centred at ``at``; None when the disc leaves the frame."""
    h, w = labels.shape
    v, u = _DISC[0] + at[1], _DISC[1] + at[0]
    if v.min() < 0 or u.min() < 0 or v.max() >= h or u.max() >= w:
        return None
    return labels[v, u]


def place_marks(masks: Mapping[str, np.ndarray], wanted: Sequence[tuple[str, str]],
                others: np.ndarray | None = None) -> tuple[Mark, ...]:
    """Marks for ``wanted`` ((label, object name) pairs; ``masks[name]`` its segmentation), placed by the module's
    rule. ``others``: pixels of objects the discs should avoid covering (a tie-breaker after the marked objects).

    Raises:
        ValueError: an object has no visible pixels.
    """
    names = [name for _, name in wanted]
    shape = next(iter(masks.values())).shape
    labels = np.full(shape, -1, np.int32)                 # which marked object each pixel shows (-1: none)
    for k, name in enumerate(names):
        labels[masks[name] & (labels < 0)] = k
    sizes = np.array([int(masks[n].sum()) for n in names])
    avoid = np.zeros(shape, bool) if others is None else np.asarray(others, bool)
    anchors = [anchor_point(masks[n]) for n in names]
    budget = MAX_HIDDEN_SHARE * sizes
    # Inline discs first: their pixels count against every object's budget before any disc goes beside one.
    hidden = np.zeros(len(names))
    placed: dict[int, tuple[int, int]] = {}
    for k, at in enumerate(anchors):
        under = _covered(at, labels)
        if under is None:
            continue
        add = np.bincount(under[under >= 0], minlength=len(names))
        if np.all(hidden + add <= budget) and all(math.dist(at, p) >= 2 * MARK_RADIUS_PX + DISC_CLEARANCE_PX
                                                  for p in placed.values()):
            placed[k], hidden = at, hidden + add
    for k in range(len(names)):
        if k not in placed:
            placed[k] = _beside(k, anchors[k], masks[names[k]], labels, avoid, hidden, budget, list(placed.values()))
            under = _covered(placed[k], labels)
            hidden = hidden + np.bincount(under[under >= 0], minlength=len(names))
    return tuple(Mark(label, name, placed[k], anchors[k]) for k, (label, name) in enumerate(wanted))


def _beside(k: int, anchor: tuple[int, int], mask: np.ndarray, labels: np.ndarray, avoid: np.ndarray,
            hidden: np.ndarray, budget: np.ndarray, discs: list[tuple[int, int]]) -> tuple[int, int]:
    """The centre of object ``k``'s disc beside it: the first gap (nearest first) with a direction whose disc fits
    (inside the frame, clear of ``discs``, within every budget), the one covering the fewest other pixels;
    the anchor itself when none fits (the drawn share then decides: :func:`draw_marks`)."""
    rows, cols = np.nonzero(mask)
    for gap in LEADER_GAPS_PX:
        best: tuple[float, tuple[int, int]] | None = None
        for i in range(LEADER_ANGLES):
            angle = 2 * math.pi * i / LEADER_ANGLES
            du, dv = math.sin(angle), -math.cos(angle)
            # The object's extent along this direction from the anchor, then the gap, then the radius.
            reach = float(np.max((cols - anchor[0]) * du + (rows - anchor[1]) * dv))
            step = reach + gap + MARK_RADIUS_PX + 1
            at = (int(round(anchor[0] + du * step)), int(round(anchor[1] + dv * step)))
            under = _covered(at, labels)
            if under is None or any(math.dist(at, p) < 2 * MARK_RADIUS_PX + DISC_CLEARANCE_PX for p in discs):
                continue
            add = np.bincount(under[under >= 0], minlength=len(hidden))
            if np.any(hidden + add > budget):
                continue
            cost = float(add.sum()) * 4 + float(avoid[_DISC[0] + at[1], _DISC[1] + at[0]].sum())
            if best is None or cost < best[0]:
                best = (cost, at)
        if best is not None:
            return best[1]
    return anchor


def _paint(image, marks: Sequence[Mark], black, white) -> None:
    from PIL import ImageDraw, ImageFont

    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=2 * MARK_RADIUS_PX - 6)
    for mark in marks:
        (u, v), (au, av), r, d = mark.at, mark.anchor, MARK_RADIUS_PX, ANCHOR_DOT_RADIUS_PX
        if mark.leader:
            draw.line((au, av, u, v), fill=black, width=LEADER_WIDTH_PX)
            draw.line((au, av, u, v), fill=white, width=1)
            draw.ellipse((au - d, av - d, au + d, av + d), fill=white, outline=black, width=1)
        draw.ellipse((u - r, v - r, u + r, v + r), fill=black, outline=white, width=2)
        draw.text((u, v), mark.label, fill=white, font=font, anchor="mm")


def draw_marks(rgb: np.ndarray, marks: Sequence[Mark]) -> np.ndarray:
    """``rgb`` with ``marks`` drawn: white digits on black discs with a white outline; leader lines (black with a
    white core) ending in a white dot on the anchor."""
    from PIL import Image

    image = Image.fromarray(np.ascontiguousarray(rgb).copy())
    _paint(image, marks, (0, 0, 0), (255, 255, 255))
    return np.asarray(image)


def hidden_shares(marks: Sequence[Mark], masks: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Per mark label, the share of its object's pixels (``masks[name]``) that the drawn marks paint over: the
    marks drawn as :func:`draw_marks` draws them, on a blank layer, intersected with the segmentation."""
    from PIL import Image

    h, w = next(iter(masks.values())).shape
    layer = Image.new("L", (w, h), 0)
    _paint(layer, marks, 255, 255)
    painted = np.asarray(layer) > 0
    return {m.label: float((painted & masks[m.name]).sum()) / max(int(masks[m.name].sum()), 1) for m in marks}


def mark_frame(record: "FrameRecord", wanted: Sequence[tuple[str, str]]) -> tuple[Mark, ...]:
    """:func:`place_marks` on a captured frame (the discs avoid the frame's other movable objects too), each mark
    with its measured hidden share.

    Raises:
        Rejected: the marks hide more than :data:`MAX_HIDDEN_SHARE` of a marked object (too crowded a frame).
    """
    from bspatial.construction.items.frames import STRUCTURAL_CATEGORIES, Rejected

    marked = {name for _, name in wanted}
    masks = {name: record.mask(name) for name in marked}
    avoid = {name for name, state in record.objects.items()
             if name not in marked and state.pixels and state.movable and state.category not in STRUCTURAL_CATEGORIES}
    # One pass over the segmentation for all of them (a mask per object cost 2-3 ms each, per question drafted).
    others = np.isin(record.frame.segmentation, [i for i, name in record.frame.id_to_name.items() if name in avoid])
    marks = place_marks(masks, wanted, others)
    shares = hidden_shares(marks, masks)
    worst = max(marks, key=lambda m: shares[m.label])
    if shares[worst.label] > MAX_HIDDEN_SHARE:
        raise Rejected(f"marks hide {100 * shares[worst.label]:.0f}% of {worst.name} (mark {worst.label}), more than "
                       f"{100 * MAX_HIDDEN_SHARE:.0f}%")
    return tuple(dataclasses.replace(m, hidden=shares[m.label]) for m in marks)
