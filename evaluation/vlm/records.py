"""The item schema the harness reads, and row validation.

Two suites, each a Hub-shaped parquet repo loaded with ``datasets.load_dataset(<repo>, <config>)``:

``vqa`` (configs e.g. ``general``, ``task_manipulation``, ``task_navigation``):

=========  ======================  ==========================================================
column     type                    meaning
=========  ======================  ==========================================================
id         string                  unique within the suite
suite      string                  ``"vqa"``
setting    string                  one of ``bspatial.scoring.vqa.SETTINGS``
category   string                  ``direction`` / ``distance`` / ``size``
subtype    string                  one of ``bspatial.scoring.vqa.SUBTYPES`` (locate is a direction subtype)
task       string or null          task name for task-grounded items (Table S2); null for general VQA
variant    string or null          instruction variant (Table S2), e.g. ``"closest x board game"``
frames     list of Image           1 for single-frame settings; >= 2 (oldest first, current last) otherwise
question   string                  the question text
options    list of 4 strings       option texts in letter order A-D
answer     string                  the correct letter, A-D
=========  ======================  ==========================================================

``ir`` (config ``all``, or one per task): ``id``, ``suite`` (``"ir"``), ``task``, ``variant``, ``instruction``,
``image`` (Image: the head-camera frame the point refers to), ``region`` (string: the region spec
JSON of ``bspatial.scoring.ir``; its ``image_size`` must equal the image's size). The target
kind of the prompt (object / placement) follows from the region kind.

A row that breaks these rules raises :class:`RecordError` naming the id, the field and the value;
the runner writes it to ``errors.jsonl`` and counts it. A dataset missing a column fails before the
first sample (:func:`check_columns`).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bspatial.evaluation.vlm.prompts import TargetKind
from bspatial.scoring.choice import LETTERS
from bspatial.scoring.ir_regions import ReachRegion, Region, region_from_dict
from bspatial.scoring.validation import short_repr
from bspatial.scoring.vqa import CATEGORIES, SETTINGS, SUBTYPES

SUITES = ("vqa", "ir")
VQA_COLUMNS = ("id", "suite", "setting", "category", "subtype", "task", "variant", "frames", "question", "options", "answer")
IR_COLUMNS = ("id", "suite", "task", "variant", "instruction", "image", "region")
_SINGLE_FRAME_SETTINGS = ("single_frame", "task_manipulation")
_TASK_SETTINGS = ("task_manipulation", "task_navigation")


class RecordError(ValueError):
    """A malformed row: names the item id, the field and the offending value."""

    def __init__(self, item_id: Any, field: str, problem: str, value: Any = ...) -> None:
        self.item_id = item_id if isinstance(item_id, str) else repr(item_id)
        self.field = field
        got = "" if value is ... else f", got {short_repr(value)}"
        super().__init__(f"item {self.item_id}: {field} {problem}{got}")


@dataclass(frozen=True)
class ImageData:
    """An encoded image as stored in the dataset (PNG / JPEG bytes); ``size`` read from its header."""

    data: bytes
    size: tuple[int, int]  # (width, height)

    def open(self):
        """A lazily decoded ``PIL.Image`` (pixels are read on first access)."""
        from PIL import Image

        return Image.open(io.BytesIO(self.data))


@dataclass(frozen=True)
class VQAItem:
    id: str
    setting: str
    category: str
    subtype: str
    task: str | None
    variant: str | None
    frames: tuple[ImageData, ...]
    question: str
    options: tuple[str, ...]
    answer: str


@dataclass(frozen=True)
class IRItem:
    id: str
    task: str
    variant: str | None
    instruction: str
    image: ImageData
    region: Region
    target: TargetKind


def features(suite: str):
    """The ``datasets.Features`` of a suite's parquet repo (the builders and the fixture use these)."""
    import datasets

    text = datasets.Value("string")
    if suite == "vqa":
        return datasets.Features(
            {
                **{c: text for c in ("id", "suite", "setting", "category", "subtype", "task", "variant")},
                "frames": datasets.Sequence(datasets.Image()),
                "question": text,
                "options": datasets.Sequence(text),
                "answer": text,
            }
        )
    if suite == "ir":
        return datasets.Features(
            {
                **{c: text for c in ("id", "suite", "task", "variant", "instruction")},
                "image": datasets.Image(),
                "region": text,
            }
        )
    raise ValueError(f"suite must be one of {list(SUITES)}, got {suite!r}")


def check_columns(suite: str, column_names: list[str]) -> None:
    """Fail before the first sample when the dataset lacks a column of the suite's schema."""
    if suite not in SUITES:
        raise ValueError(f"suite must be one of {list(SUITES)}, got {suite!r}")
    expected = VQA_COLUMNS if suite == "vqa" else IR_COLUMNS
    missing = [c for c in expected if c not in column_names]
    if missing:
        raise ValueError(
            f"the {suite} dataset lacks columns {missing} (it has {sorted(column_names)}); "
            f"see bspatial.evaluation.vlm.records for the schema"
        )


def vqa_item(row: Mapping[str, Any]) -> VQAItem:
    """Validate one raw VQA row (images undecoded: ``{"bytes", "path"}``) into a :class:`VQAItem`."""
    item_id = _id(row)
    _suite(row, item_id, "vqa")
    setting = _choice(row, item_id, "setting", SETTINGS)
    category = _choice(row, item_id, "category", CATEGORIES)
    subtype = _choice(row, item_id, "subtype", SUBTYPES)
    task = _optional_text(row, item_id, "task")
    if setting in _TASK_SETTINGS and task is None:
        raise RecordError(item_id, "task", f"must name the task for setting {setting!r}", row.get("task"))
    frames_raw = row.get("frames")
    if not isinstance(frames_raw, list | tuple) or not frames_raw:
        raise RecordError(item_id, "frames", "must be a non-empty list of images", frames_raw)
    frames = tuple(_image(f, item_id, f"frames[{i}]") for i, f in enumerate(frames_raw))
    if setting in _SINGLE_FRAME_SETTINGS and len(frames) != 1:
        raise RecordError(item_id, "frames", f"must hold exactly 1 image for setting {setting!r}", f"{len(frames)} images")
    if setting not in _SINGLE_FRAME_SETTINGS and len(frames) < 2:
        raise RecordError(item_id, "frames", f"must hold at least 2 images for setting {setting!r}", f"{len(frames)} image")
    options = row.get("options")
    if (
        not isinstance(options, list | tuple)
        or len(options) != len(LETTERS)
        or not all(isinstance(o, str) and o.strip() for o in options)
        or len(set(options)) != len(options)
    ):
        raise RecordError(item_id, "options", f"must be {len(LETTERS)} distinct non-empty strings", options)
    return VQAItem(
        id=item_id,
        setting=setting,
        category=category,
        subtype=subtype,
        task=task,
        variant=_optional_text(row, item_id, "variant"),
        frames=frames,
        question=_text(row, item_id, "question"),
        options=tuple(options),
        answer=_choice(row, item_id, "answer", LETTERS),
    )


def ir_item(row: Mapping[str, Any]) -> IRItem:
    """Validate one raw IR row into an :class:`IRItem` (the region spec parsed and checked)."""
    item_id = _id(row)
    _suite(row, item_id, "ir")
    image = _image(row.get("image"), item_id, "image")
    raw_region = row.get("region")
    try:
        region = region_from_dict(raw_region if isinstance(raw_region, str | Mapping) else json.dumps(raw_region))
    except (ValueError, TypeError) as error:
        raise RecordError(item_id, "region", f"is not a valid region spec: {error}") from None
    if tuple(region.image_size) != image.size:
        raise RecordError(
            item_id, "region.image_size", f"must equal the image size {list(image.size)}", list(region.image_size)
        )
    return IRItem(
        id=item_id,
        task=_text(row, item_id, "task"),
        variant=_optional_text(row, item_id, "variant"),
        instruction=_text(row, item_id, "instruction"),
        image=image,
        region=region,
        target=ir_target_kind(region),
    )


def ir_target_kind(region: Region) -> TargetKind:
    """The prompt's target kind of a region: ``"object"`` for reach, ``"placement"`` for either placement."""
    return "object" if isinstance(region, ReachRegion) else "placement"


def row_id(row: Mapping[str, Any]) -> str:
    """The row's id as written to the logs (repr of a non-string id, so it is never lost)."""
    value = row.get("id")
    return value if isinstance(value, str) else repr(value)


# --------------------------------------------------------------------------- field checks


def _id(row: Mapping[str, Any]) -> str:
    value = row.get("id")
    if not isinstance(value, str) or not value.strip():
        raise RecordError(value, "id", "must be a non-empty string", value)
    return value


def _suite(row: Mapping[str, Any], item_id: str, expected: str) -> None:
    if row.get("suite") != expected:
        raise RecordError(item_id, "suite", f"must be {expected!r}", row.get("suite"))


def _text(row: Mapping[str, Any], item_id: str, field: str) -> str:
    value = row.get(field)
    if not isinstance(value, str) or not value.strip():
        raise RecordError(item_id, field, "must be a non-empty string", value)
    return value


def _optional_text(row: Mapping[str, Any], item_id: str, field: str) -> str | None:
    value = row.get(field)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RecordError(item_id, field, "must be a string or null", value)
    return value


def _choice(row: Mapping[str, Any], item_id: str, field: str, allowed: tuple[str, ...]) -> str:
    value = row.get(field)
    if value not in allowed:
        raise RecordError(item_id, field, f"must be one of {list(allowed)}", value)
    return value


def _image(value: Any, item_id: str, field: str) -> ImageData:
    """Bytes of an undecoded ``datasets.Image`` cell (embedded bytes, or a local path)."""
    data = None
    if isinstance(value, Mapping):
        data = value.get("bytes")
        if data is None and isinstance(value.get("path"), str):
            try:
                with open(value["path"], "rb") as handle:
                    data = handle.read()
            except OSError as error:
                raise RecordError(item_id, field, f"names an unreadable file ({error})", value["path"]) from None
    elif isinstance(value, bytes):
        data = value
    if not data:
        raise RecordError(item_id, field, "must be an image (datasets.Image bytes or path)", value)
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:  # header only: pixels are decoded by the backend
            size = image.size
    except (UnidentifiedImageError, OSError, ValueError) as error:
        raise RecordError(item_id, field, f"is not a readable image ({error})", data[:32]) from None
    return ImageData(data=bytes(data), size=(int(size[0]), int(size[1])))
