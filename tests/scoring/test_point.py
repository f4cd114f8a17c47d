"""Tests for bspatial.scoring.point: the IR point parser (paper Appendix 15.2, 0-1000 scale)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from bspatial.scoring.point import POINT_SCALE, PointParse, PointStatus, parse_point

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "peer_parser_cases.json"
PEER_CASES = json.loads(FIXTURE.read_text(encoding="utf-8"))["point"]
PIXEL_TOLERANCE = 1.0  # peers round or truncate pixels; we keep floats

PARSED, OUT, NONE = PointStatus.PARSED, PointStatus.OUT_OF_RANGE, PointStatus.UNPARSEABLE

# (reply, status, xy on 0-1000 or None, reason): hand-written, in the shapes real models emit.
REAL_WORLD = [
    # The prompt's format (Appendix 15.2) and its variants.
    ('{"results": {"target": {"x": 512, "y": 300}}}', PARSED, (512, 300), "results_json"),
    ('```json\n{"results": {"target": {"x": 615, "y": 405}}}\n```', PARSED, (615, 405), "results_json"),
    ('{"results":{"target":{"x":0,"y":1000}}}', PARSED, (0, 1000), "results_json"),
    ('{"results": {"target": {"x": "615", "y": "405"}}}', PARSED, (615, 405), "results_json"),
    ("{'results': {'target': {'x': 615, 'y': 405}}}", PARSED, (615, 405), "results_json"),
    ('{"Results": {"Target": {"X": 615, "Y": 405}}}', PARSED, (615, 405), "results_json"),
    ('{"results": {"target": {"x": 615.5, "y": 405.25}}}', PARSED, (615.5, 405.25), "results_json"),
    (
        'The bowl sits on the second shelf, left of the jar at about (300, 420).\n'
        '{"results": {"target": {"x": 315, "y": 433}}}',
        PARSED,
        (315, 433),
        "results_json",
    ),
    ('<think>The drawer handle is near (100, 200).</think>\n{"results": {"target": {"x": 480, "y": 610}}}',
     PARSED, (480, 610), "results_json"),
    ('{"results": {"target": {"x": 615, "y": 405}}', PARSED, (615, 405), "xy_json"),  # truncated: inner object
    ('{"x": 615, "y": 405}', PARSED, (615, 405), "xy_json"),
    # Native pointing formats.
    ('[{"point_2d": [512, 300], "label": "mug"}]', PARSED, (512, 300), "point_2d"),
    ('```json\n[\n  {"point_2d": [512, 300], "label": "point_1"}\n]\n```', PARSED, (512, 300), "point_2d"),
    ('[{"point_2d": [512, 300]}, {"point_2d": [600, 320]}]', PARSED, (512, 300), "first_of_many"),
    ('[{"point": [300, 512], "label": "mug"}]', PARSED, (512, 300), "gemini_point"),
    ('<point x="61.5" y="40.5" alt="bowl">bowl</point>', PARSED, (615, 405), "molmo"),
    ('<points x1="10" y1="20" x2="30" y2="40" alt="cups">cups</points>', PARSED, (100, 200), "first_of_many"),
    # Bare forms.
    ("(615, 405)", PARSED, (615, 405), "tuple"),
    ("The target is at (615, 405).", PARSED, (615, 405), "tuple"),
    ("[615, 405]", PARSED, (615, 405), "list"),
    ("[[615, 405]]", PARSED, (615, 405), "list"),
    ("[615.0, 405.0]", PARSED, (615, 405), "list"),
    ("x=615, y=405", PARSED, (615, 405), "xy_text"),
    ("x: 615 and y: 405", PARSED, (615, 405), "xy_text"),
    ("x = 615\ny = 405", PARSED, (615, 405), "xy_text"),
    ("615, 405", PARSED, (615, 405), "bare_pair"),
    ("(50%, 40%)", PARSED, (500, 400), "percent"),
    ("1. (300, 400)\n2. (500, 600)", PARSED, (300, 400), "first_of_many"),
    # Normalised floats: fractions of the image (documented policy).
    ("(0.45, 0.62)", PARSED, (450, 620), "normalized_float"),
    ("[(0.52, 0.61)]", PARSED, (520, 610), "normalized_float"),
    ('{"x": 0.5, "y": 0.3}', PARSED, (500, 300), "normalized_float"),
    ('{"results": {"target": {"x": 0.5, "y": 0.25}}}', PARSED, (500, 250), "normalized_float"),
    ("[(1.0, 0.5)]", PARSED, (1000, 500), "normalized_float"),
    ("(0, 0.5)", PARSED, (0, 500), "normalized_float"),
    ("(1, 1)", PARSED, (1, 1), "tuple"),  # integers stay on the 0-1000 grid
    ("(0.5, 300)", PARSED, (0.5, 300), "tuple"),  # one coordinate outside [0, 1]: literal
    # Out of the frame: never clamped.
    ('{"results": {"target": {"x": 1200, "y": 300}}}', OUT, None, "out_of_range"),
    ('[{"point_2d": [-10, 300]}]', OUT, None, "out_of_range"),
    ('<point x="120" y="40">', OUT, None, "out_of_range"),
    ("[1e999, 5]", OUT, None, "out_of_range"),
    ("[NaN, 5]", OUT, None, "out_of_range"),
    # Nothing to read.
    ("I cannot find the object in the image.", NONE, None, "refusal"),
    ("Sorry, the target is not visible.", NONE, None, "refusal"),
    ('[{"bbox_2d": [100, 100, 200, 200], "label": "mug"}]', NONE, None, "box"),
    ("(100, 100, 120, 110)", NONE, None, "box"),
    ('[{"point_2d": [512, 300, 1]}]', NONE, None, "malformed"),
    ('{"results": {"target": {"x": [500, 510], "y": [300, 320]}}}', NONE, None, "malformed"),
    ('{"results": {"target": null}}', NONE, None, "no_point"),
    ('{"results": {"target": {"x": null, "y": null}}}', NONE, None, "no_point"),
    ('{"results": {"target": {"x": <int>, "y": <int>}}}', NONE, None, "no_point"),
    ("The mug is on the left side of the counter.", NONE, None, "no_point"),
    ("The target is in row 3 of the shelf [1].", NONE, None, "no_point"),
    ("<think>The handle is at (100, 200) maybe", NONE, None, "unfinished_reasoning"),
    ("", NONE, None, "empty"),
    ("  \n", NONE, None, "empty"),
    (None, NONE, None, "empty"),
]


@pytest.mark.parametrize(("text", "status", "xy", "reason"), REAL_WORLD)
def test_real_world_replies(text, status, xy, reason):
    parse = parse_point(text)
    assert (parse.status, parse.reason) == (status, reason)
    if xy is None:
        assert parse.xy is None
    else:
        assert parse.xy == pytest.approx(xy)
    assert (parse.raw_xy is not None) == (status is not NONE)


@pytest.mark.parametrize("case", PEER_CASES, ids=[c["id"] for c in PEER_CASES])
def test_peer_cases(case):
    parse = parse_point(case["text"])
    if "our_expected" in case:
        expected = case["our_expected"]
        assert parse.status.value == expected["status"], case["why"]
        assert parse.reason == expected["reason"], case["why"]
        assert (parse.xy is None) == (expected["xy"] is None)
        if expected["xy"] is not None:
            assert parse.xy == pytest.approx(expected["xy"])
        return
    # Agreement with the peer: same first point in pixels (peers round), or both read nothing.
    pixels = parse.to_pixels(case["image_w"], case["image_h"])
    if case["peer_output"] == []:
        assert pixels is None, case["source"]
    else:
        assert pixels == pytest.approx(case["peer_output"][0], abs=PIXEL_TOLERANCE), case["source"]


def test_peer_differences_are_documented():
    differing = [c for c in PEER_CASES if "our_expected" in c]
    assert differing
    assert all(c["why"] and c["source"] for c in differing)


def test_out_of_range_keeps_what_was_read():
    parse = parse_point('{"results": {"target": {"x": 1200, "y": 300}}}')
    assert parse == PointParse(None, PointStatus.OUT_OF_RANGE, "out_of_range", (1200.0, 300.0))
    assert parse.to_pixels(640, 480) is None


def test_raw_xy_keeps_source_units():
    assert parse_point('<point x="61.5" y="40.5">').raw_xy == (61.5, 40.5)
    assert parse_point("(0.45, 0.62)").raw_xy == (0.45, 0.62)
    assert parse_point('[{"point": [300, 512]}]').raw_xy == (512.0, 300.0)  # already (x, y)


def test_to_pixels_scales_from_the_prompt_grid():
    parse = parse_point('{"results": {"target": {"x": 500, "y": 250}}}')
    assert parse.to_pixels(224, 224) == (112.0, 56.0)
    assert parse.to_pixels(640, 480) == (320.0, 120.0)
    assert parse.to_pixels(np.int64(200), np.int64(100)) == (100.0, 25.0)
    assert parse_point("(1000, 1000)").to_pixels(224, 224) == (224.0, 224.0)
    assert POINT_SCALE == 1000


BAD_SIZES = [(0, 224, "width"), (224, -1, "height"), ("224", 224, "width"), (True, 224, "width"),
             (224, float("nan"), "height")]  # fmt: skip


@pytest.mark.parametrize(("width", "height", "field"), BAD_SIZES)
def test_to_pixels_rejects_bad_sizes(width, height, field):
    with pytest.raises(ValueError, match=f"{field} must be a positive number of pixels"):
        parse_point("(500, 500)").to_pixels(width, height)


@pytest.mark.parametrize("bad", [3, b"(1, 2)", ["(1, 2)"]])
def test_non_string_text_is_a_type_error(bad):
    with pytest.raises(TypeError, match="text must be a string or None"):
        parse_point(bad)


def test_pathological_inputs_stay_unparseable():
    for text in ["[" * 900 + "]" * 900, '{"a":' * 400 + "1" + "}" * 400, "(" * 3000 + ")" * 3000,
                 "[1" + "0" * 5000 + ", 3]", "{[(" * 500]:  # fmt: skip
        assert parse_point(text).status is PointStatus.UNPARSEABLE


def test_invalid_escapes_in_model_text_do_not_warn():
    # "(\d, 3)" reaches Python's literal parser, which warns about the escape: nothing for the log.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert parse_point('("\\d", 3) and ("\\!", 4)').status is PointStatus.UNPARSEABLE
    assert not [w for w in caught if issubclass(w.category, SyntaxWarning)]
