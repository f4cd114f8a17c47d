"""Typed records at the producer: every VQA question and IR query is built as one of these, then written.

The suite builders (task-grounded, general and navigation VQA, IR labels) and the harness's fixture
suites all make their rows through :meth:`VQARecord.to_row` / :meth:`IRRecord.to_row`, so a row that
breaks the schema fails where it is made, naming the field and the value, not later in a reader.
The row keys are the columns of the ``datasets/`` builders' features (``tests/construction/items/test_records.py``
checks them against ``vqa_features()`` / ``ir_features()``); the harness's own reader
(:mod:`bspatial.evaluation.vlm.records`) validates what it loads independently.

Images are references: a path relative to the records folder (what ``bspatial build`` writes) or the
encoded bytes themselves (the fixtures, written straight to parquet).

Example:
    >>> row = VQARecord("gs-x-00", "single_frame", "size", "object_relative", ("images/x.png",),
    ...                 "Which object is the largest?", ("mug", "bowl", "pot", "cup"), "C").to_row()
    >>> row["answer"], row["task"], row["metadata"]
    ('C', None, '{}')
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Union

import numpy as np

from bspatial.scoring.choice import LETTERS
from bspatial.scoring.vqa import CATEGORIES, SETTINGS, SUBTYPES

ImageRef = Union[str, bytes]
SINGLE_FRAME_SETTINGS = ("single_frame", "task_manipulation")
"""Settings whose questions show exactly one frame (Table 1 single-frame, Table 2)."""


def json_default(value: Any) -> Any:
    """``json.dumps(default=...)`` for the numpy values in record metadata (arrays, numpy scalars)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """The ``metadata`` column: sorted-key JSON of what a re-scorer or an audit needs."""
    return json.dumps(dict(metadata), sort_keys=True, default=json_default)


def _fail(kind: str, item_id: str, name: str, problem: str, value: Any) -> ValueError:
    return ValueError(f"{kind} {item_id!r}: {name} {problem}, got {value!r}")


def _check_images(kind: str, item_id: str, name: str, images: tuple) -> None:
    if not images or not all(isinstance(i, (str, bytes)) and i for i in images):
        raise _fail(kind, item_id, name, "must be non-empty image paths or encoded bytes", images)


@dataclass(frozen=True)
class VQARecord:
    """One four-option question.

    Attributes:
        id: unique within the suite.
        setting / category / subtype: the scoring vocabulary (:mod:`bspatial.scoring.vqa`).
        frames: the images, oldest first, current view last; one for single-frame settings.
        question: the question text; options: the four option texts in letter order; answer: A-D.
        task / variant: Table S2 task and instruction variant (task-grounded items), else None.
        metadata: what re-scoring and the data-quality audit need (JSON-serialisable, numpy allowed).
    """

    id: str
    setting: str
    category: str
    subtype: str
    frames: tuple[ImageRef, ...]
    question: str
    options: tuple[str, ...]
    answer: str
    task: str | None = None
    variant: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kind, rid = "VQA record", self.id
        if not isinstance(rid, str) or not rid:
            raise _fail(kind, str(rid), "id", "must be a non-empty string", rid)
        for name, allowed in (("setting", SETTINGS), ("category", CATEGORIES), ("subtype", SUBTYPES)):
            if getattr(self, name) not in allowed:
                raise _fail(kind, rid, name, f"must be one of {list(allowed)}", getattr(self, name))
        object.__setattr__(self, "frames", tuple(self.frames))
        object.__setattr__(self, "options", tuple(self.options))
        _check_images(kind, rid, "frames", self.frames)
        if self.setting in SINGLE_FRAME_SETTINGS and len(self.frames) != 1:
            raise _fail(kind, rid, "frames", f"must hold exactly one image for setting {self.setting!r}", len(self.frames))
        if len(self.options) != len(LETTERS) or len(set(self.options)) != len(self.options) \
                or not all(isinstance(o, str) and o for o in self.options):
            raise _fail(kind, rid, "options", f"must be {len(LETTERS)} distinct non-empty strings", self.options)
        if self.answer not in LETTERS:
            raise _fail(kind, rid, "answer", f"must be one of {list(LETTERS)}", self.answer)
        if not isinstance(self.question, str) or not self.question.strip():
            raise _fail(kind, rid, "question", "must be a non-empty string", self.question)
        if self.setting.startswith("task_") and not self.task:
            raise _fail(kind, rid, "task", f"must name the task of a {self.setting!r} item", self.task)

    def to_row(self) -> dict[str, Any]:
        """The row as the ``datasets/bspatial_vqa`` builder reads it (``metadata`` as JSON text)."""
        return {"id": self.id, "suite": "vqa", "setting": self.setting, "category": self.category,
                "subtype": self.subtype, "task": self.task, "variant": self.variant, "frames": list(self.frames),
                "question": self.question, "options": list(self.options), "answer": self.answer,
                "metadata": metadata_json(self.metadata)}


@dataclass(frozen=True)
class IRRecord:
    """One point-grounding query.

    Attributes:
        id: unique within the suite.
        task / variant: Table S2 task and instruction variant.
        instruction: the instruction whose target (or placement region) the point must hit.
        image: the head-camera frame the point refers to.
        region: the region spec of :mod:`bspatial.scoring.ir` (a dict; written as JSON).
        metadata: provenance for audits (seed, candidates, camera, target centre).
    """

    id: str
    task: str
    instruction: str
    image: ImageRef
    region: Mapping[str, Any]
    variant: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kind, rid = "IR record", self.id
        if not isinstance(rid, str) or not rid:
            raise _fail(kind, str(rid), "id", "must be a non-empty string", rid)
        if not isinstance(self.task, str) or not self.task:
            raise _fail(kind, rid, "task", "must be a task name", self.task)
        if not isinstance(self.instruction, str) or not self.instruction.strip():
            raise _fail(kind, rid, "instruction", "must be a non-empty string", self.instruction)
        _check_images(kind, rid, "image", (self.image,))
        if not isinstance(self.region, Mapping) or "kind" not in self.region:
            raise _fail(kind, rid, "region", "must be a region spec dict with a 'kind'", self.region)

    def to_row(self) -> dict[str, Any]:
        """The row as the ``datasets/bspatial_ir`` builder reads it (``region`` and ``metadata`` as JSON text)."""
        return {"id": self.id, "suite": "ir", "task": self.task, "variant": self.variant,
                "instruction": self.instruction, "image": self.image, "region": json.dumps(dict(self.region)),
                "metadata": metadata_json(self.metadata)}
