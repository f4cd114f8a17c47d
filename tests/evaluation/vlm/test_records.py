"""Row validation: malformed rows raise RecordError naming the id, the field and the value."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bspatial.evaluation.vlm.fixtures import _general_rows, _ir_rows
from bspatial.evaluation.vlm.records import RecordError, check_columns, ir_item, vqa_item


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    return _general_rows(rng), _ir_rows(rng)


def test_valid_rows_parse(rows):
    vqa, ir = rows
    item = vqa_item(vqa[0])
    assert item.answer in "ABCD" and len(item.options) == 4 and item.frames[0].size == (64, 64)
    assert {ir_item(r).target for r in ir} == {"object", "placement"}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"options": ["a", "b", "c"]}, "options"),
        ({"options": ["a", "a", "b", "c"]}, "options"),
        ({"answer": "E"}, "answer"),
        ({"setting": "multi_frame"}, "setting"),
        ({"frames": []}, "frames"),
        ({"frames": [{"bytes": b"not an image", "path": None}]}, "frames[0]"),
        ({"question": ""}, "question"),
        ({"setting": "task_manipulation"}, "task"),
        ({"suite": "ir"}, "suite"),
    ],
)
def test_malformed_vqa_rows(rows, change, field):
    row = dict(rows[0][0], **change)
    with pytest.raises(RecordError, match=rf"item {row['id']}: {field.replace('[', '.').replace(']', '.')}") as info:
        vqa_item(row)
    assert info.value.field == field and info.value.item_id == row["id"]


def test_single_frame_items_need_exactly_one_frame(rows):
    row = dict(rows[0][0], frames=rows[0][0]["frames"] * 2)
    with pytest.raises(RecordError, match="exactly 1 image"):
        vqa_item(row)


def test_ir_region_must_match_the_image(rows):
    row = rows[1][0]
    region = json.loads(row["region"])
    region["image_size"] = [32, 32]
    with pytest.raises(RecordError, match="region"):
        ir_item(dict(row, region=json.dumps(region)))
    with pytest.raises(RecordError, match="region is not a valid region spec"):
        ir_item(dict(row, region=json.dumps({"kind": "reach"})))


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match=r"lacks columns \['region'\]"):
        check_columns("ir", ["id", "suite", "task", "variant", "instruction", "image"])
