"""Shortcut controls of an eval-vlm run (two that peers now expect): blind and circular.

* **Blind** (``--blind grey``, the mode a bare ``--blind`` means; ``--blind none``): the same items and prompts
  with the pictures taken away, so the run measures what a model gets from the text alone (language priors,
  option statistics). ``grey`` sends, in place of each frame, a uniform grey image of that frame's own size
  (:data:`GREY_LEVEL`); ``none`` sends no image at all, for backends that accept text-only requests
  (``accepts_text_only``; others are refused by name before anything is written).
* **Circular** (``--circular``, VQA only): every item asked once per rotation of its options
  (:mod:`bspatial.scoring.circular`), one log row per item that keeps each rotation's record and the item's
  circular verdict. IR (pointing) items have no options and are refused.

Either control changes what the model is asked, so it enters the run fingerprint
(:meth:`Controls.fingerprint_components`): a run folder refuses to mix a blind or circular run with a plain
one. A seeing, plain run adds nothing, so its fingerprint is the one it had before controls existed.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from bspatial.evaluation.vlm.records import ImageData, VQAItem
from bspatial.scoring.circular import ROTATIONS, circular_verdict, rotate_choice

BLIND_MODES = ("grey", "none")
DEFAULT_BLIND_MODE = "grey"  # what a bare --blind means: it keeps prompts and image-token counts comparable

# The middle of the 8-bit range. A uniform frame carries no scene content, and a mid-grey one carries no
# brightness cue either (black or white could read as "a dark room" / "an overexposed view"); encoders
# normalised with mean 0.5 (SigLIP, Qwen3-VL) see it as ~0 input. The image keeps its frame's size, so
# dynamic-resolution processors (Qwen-VL) spend the same number of image tokens as in the seeing run:
# only the pixels differ between the two runs.
GREY_LEVEL = 128

BLIND_LABELS = {"grey": "blind", "none": "blind, no image"}
"""How a blind run's model is labelled in reports: ``<model> (blind)``."""

ROTATION_FIELDS = ("options", "answer", "raw_output", "output", "parsed", "parse_status", "parse_reason", "correct",
                   "latency_s")
"""The per-rotation fields a circular log row keeps under ``rotations`` (each rotation re-scores on its own)."""


@dataclass(frozen=True)
class View:
    """One question put to the model: an item as shown (options possibly rotated) and the request's id."""

    request_id: str
    item: VQAItem


@dataclass(frozen=True)
class Controls:
    """The controls of one run.

    Args:
        blind: ``None`` (the model sees the frames), ``"grey"`` or ``"none"``.
        circular: ask every VQA item in each rotation of its options.
    """

    blind: str | None = None
    circular: bool = False

    def __post_init__(self) -> None:
        if self.blind is not None and self.blind not in BLIND_MODES:
            raise ValueError(f"--blind must be one of {list(BLIND_MODES)} (bare --blind means "
                             f"{DEFAULT_BLIND_MODE!r}), got {self.blind!r}")
        if not isinstance(self.circular, bool):
            raise ValueError(f"circular must be True or False, got {self.circular!r}")

    def check(self, suite: str, backend: Any) -> None:
        """Refuse a control the suite or the backend cannot take, before anything is loaded or written."""
        if self.circular and suite != "vqa":
            raise ValueError(f"--circular rotates the four options of VQA items; {suite} items (pointing) have no "
                             f"options: run --suite {suite} without --circular")
        if self.blind == "none" and not getattr(backend, "accepts_text_only", False):
            raise ValueError(f"--blind none sends requests without images, which backend {backend.spec!r} "
                             f"({type(backend).__name__}) does not accept; use --blind grey (a grey image in place "
                             f"of each frame)")

    def fingerprint_components(self) -> dict[str, Any]:
        """What the controls add to the run fingerprint (nothing for a seeing, plain run)."""
        components: dict[str, Any] = {}
        if self.blind is not None:
            components["blind"] = {"mode": self.blind, **({"grey_level": GREY_LEVEL} if self.blind == "grey" else {})}
        if self.circular:
            components["circular"] = {"rotations": ROTATIONS, "direction": "left"}
        return components

    @property
    def folder_suffix(self) -> str:
        """Added to the default run folder name, so a controlled run never lands in the plain run's folder."""
        blind = {None: "", "grey": "-blind", "none": "-blind-none"}[self.blind]
        return blind + ("-circular" if self.circular else "")

    @property
    def flags(self) -> str:
        """The command-line flags that give these controls (for logs and the run-folder lock)."""
        return (f" --blind {self.blind}" if self.blind else "") + (" --circular" if self.circular else "")

    def images(self, frames: Sequence[ImageData]) -> tuple[bytes, ...]:
        """What the model receives for an item's frames."""
        if self.blind is None:
            return tuple(frame.data for frame in frames)
        if self.blind == "none":
            return ()
        return tuple(grey_png(frame.size) for frame in frames)

    def views(self, item: VQAItem) -> list[View]:
        """The questions asked for a VQA item: the item, or each rotation of its options (rotation 0 first)."""
        if not self.circular:
            return [View(item.id, item)]
        views = []
        for k in range(ROTATIONS):
            options, answer = rotate_choice(item.options, item.answer, k)
            # Rotation 0 keeps the item's id, so a backend keyed by it (chance) answers it as in a plain run.
            views.append(View(item.id if k == 0 else f"{item.id}#rotation{k}", replace(item, options=options, answer=answer)))
        return views

    def fold(self, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Scored rows of :meth:`views` (in order) back into one log row per item."""
        return list(rows) if not self.circular else fold_rotations(rows)


def fold_rotations(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Group every :data:`ROTATIONS` consecutive scored rows (one item's rotations, 0 first) into its log row.

    The row is rotation 0's (the item as written: plain accuracy and every reader of plain rows work on it
    unchanged) plus ``rotations`` (each rotation's :data:`ROTATION_FIELDS` and its ``rotation`` index) and
    ``circular_correct``; its ``latency_s`` is the item's total over its rotations.
    """
    if len(rows) % ROTATIONS:
        raise ValueError(f"circular rows come in groups of {ROTATIONS}, got {len(rows)} rows")
    folded = []
    for start in range(0, len(rows), ROTATIONS):
        group = rows[start : start + ROTATIONS]
        if len({row["id"] for row in group}) != 1:
            raise ValueError(f"rows {start}..{start + ROTATIONS - 1} are not one item's rotations: "
                             f"{[row['id'] for row in group]}")
        records = [{"rotation": k, **{f: row[f] for f in ROTATION_FIELDS}} for k, row in enumerate(group)]
        folded.append({**group[0], "latency_s": sum(row["latency_s"] for row in group),
                       "circular_correct": circular_verdict([row["correct"] for row in group]), "rotations": records})
    return folded


@functools.lru_cache(maxsize=64)
def grey_png(size: tuple[int, int]) -> bytes:
    """A uniform :data:`GREY_LEVEL` RGB PNG of ``size`` (width, height); cached, frames share a few sizes."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", tuple(size), (GREY_LEVEL,) * 3).save(buffer, format="PNG")
    return buffer.getvalue()


def model_label(model: str, blind: str | None) -> str:
    """A run's model as reports show it: the spec, with ``(blind)`` for a blind run.

    Example:
        >>> model_label("chance:0", None), model_label("chance:0", "grey"), model_label("chance:0", "none")
        ('chance:0', 'chance:0 (blind)', 'chance:0 (blind, no image)')
    """
    return model if blind is None else f"{model} ({BLIND_LABELS.get(blind, 'blind: ' + blind)})"
