"""Typed records: the producers' rows match the dataset builders' features, and bad fields fail where made."""

import io
import json

import numpy as np
import pytest
from PIL import Image

from bspatial.construction.publishing.export import builder_module
from bspatial.construction.items.records import IRRecord, VQARecord


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


def _vqa(**changes) -> VQARecord:
    fields = dict(id="tm-1", setting="task_manipulation", category="distance", subtype="object_relative",
                  frames=(_png(),), question="Which dice is closest to the board game?",
                  options=("dice 1", "dice 2", "dice 3", "dice 4"), answer="B", task="reach_dice",
                  variant="closest/board game", metadata={"seed": np.int64(3), "center": np.array([0.5, 1.0])})
    return VQARecord(**{**fields, **changes})


def _ir(**changes) -> IRRecord:
    fields = dict(id="ir-1", task="reach_dice", instruction="Reach the dice closest to the board game on the bed.",
                  image=_png(), region={"kind": "reach", "task": "reach_dice", "image_size": [8, 8]},
                  variant="closest/board game")
    return IRRecord(**{**fields, **changes})


@pytest.mark.parametrize("suite", ["vqa", "ir"])
def test_rows_have_exactly_the_builders_columns_and_encode(suite):
    import datasets

    builder = builder_module(suite)
    features = builder.vqa_features() if suite == "vqa" else builder.ir_features()
    row = (_vqa() if suite == "vqa" else _ir()).to_row()
    assert set(row) == set(features)
    image_columns = {"frames"} if suite == "vqa" else {"image"}
    embedded = {k: ([{"bytes": f, "path": None} for f in v] if k == "frames" else {"bytes": v, "path": None})
                if k in image_columns else v for k, v in row.items()}
    table = datasets.Dataset.from_list([embedded], features=features)
    assert table[0]["id"] == row["id"] and table.features == features


def test_metadata_and_region_are_json_with_numpy_values_converted():
    row = _vqa().to_row()
    assert json.loads(row["metadata"]) == {"center": [0.5, 1.0], "seed": 3}
    assert row["metadata"] == '{"center": [0.5, 1.0], "seed": 3}'     # sorted keys: stable bytes
    ir = _ir().to_row()
    assert json.loads(ir["region"])["kind"] == "reach" and ir["metadata"] == "{}"


@pytest.mark.parametrize("changes,field,value", [
    ({"setting": "single_frames"}, "setting", "'single_frames'"),
    ({"category": "colour"}, "category", "'colour'"),
    ({"subtype": "robot_arm"}, "subtype", "'robot_arm'"),
    ({"answer": "E"}, "answer", "'E'"),
    ({"options": ("a", "b", "c")}, "options", "('a', 'b', 'c')"),
    ({"options": ("a", "b", "a", "c")}, "options", "('a', 'b', 'a', 'c')"),
    ({"frames": ()}, "frames", "()"),
    ({"frames": (b"x", b"y")}, "frames", "2"),           # task_manipulation is single-frame
    ({"task": None}, "task", "None"),
    ({"question": "  "}, "question", "'  '"),
])
def test_bad_vqa_fields_name_the_field_and_the_value(changes, field, value):
    with pytest.raises(ValueError, match=rf"VQA record 'tm-1': {field} .*got {__import__('re').escape(value)}"):
        _vqa(**changes)


@pytest.mark.parametrize("changes,field", [({"task": ""}, "task"), ({"image": b""}, "image"),
                                           ({"region": {"task": "x"}}, "region"), ({"instruction": ""}, "instruction")])
def test_bad_ir_fields_name_the_field(changes, field):
    with pytest.raises(ValueError, match=f"IR record 'ir-1': {field} "):
        _ir(**changes)


def test_navigation_questions_use_a_subtype_the_scoring_rules_accept():
    # The navigation builder's subtype must be in the scoring vocabulary, or the harness and bspatial_vqa
    # would reject every task_navigation item (found once: 602 of 602 rejected as malformed).
    from bspatial.construction.questions.navigation_vqa import SUBTYPE
    from bspatial.scoring.vqa import vqa_accuracy

    record = _vqa(id="tn-1", setting="task_navigation", category="direction", subtype=SUBTYPE,
                  frames=(b"tour", b"now"), task="move_to_bar", variant="")
    result = vqa_accuracy(["B"], ["B"], settings=[record.setting], categories=[record.category],
                          subtypes=[record.subtype])
    assert result["accuracy"] == 100.0
