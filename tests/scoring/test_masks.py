"""Mask encodings: RLE / PNG round trips, the row-major convention, lookups and every error path."""

import base64
import io

import numpy as np
import pytest
from PIL import Image

from bspatial.scoring.masks import Mask, png_decode, png_encode, rle_decode, rle_encode


def random_masks(rng: np.random.Generator, n: int = 30):
    for _ in range(n):
        h, w = rng.integers(1, 25, size=2)
        density = rng.uniform(0, 1)
        yield rng.uniform(size=(h, w)) < density
    yield np.zeros((3, 4), bool)
    yield np.ones((3, 4), bool)
    yield np.ones((1, 1), bool)


def test_rle_is_row_major_and_starts_with_zeros():
    mask = np.array([[1, 1, 0], [0, 0, 1]], dtype=bool)
    # row-major flattening 1 1 0 0 0 1 -> zero-run 0, one-run 2, zero-run 3, one-run 1
    assert rle_encode(mask) == {"size": [2, 3], "counts": [0, 2, 3, 1]}
    # a column-major (COCO) reading of the same counts would differ
    assert not (rle_decode({"size": [2, 3], "counts": [0, 2, 3, 1]}) != mask).any()


@pytest.mark.parametrize("encoding", ["rle", "png"])
def test_round_trips(encoding):
    rng = np.random.default_rng(0)
    for mask in random_masks(rng):
        m = Mask.from_array(mask, encoding=encoding)
        np.testing.assert_array_equal(m.to_array(), mask)
        again = Mask.from_json(m.to_json())
        assert again == m
        np.testing.assert_array_equal(again.to_array(), mask)


def test_rle_and_png_functions_round_trip():
    rng = np.random.default_rng(1)
    for mask in random_masks(rng):
        np.testing.assert_array_equal(rle_decode(rle_encode(mask)), mask)
        np.testing.assert_array_equal(png_decode(png_encode(mask)), mask)


def test_png_grayscale_nonzero_is_in():
    buf = io.BytesIO()
    Image.fromarray(np.array([[0, 255], [7, 0]], dtype=np.uint8), mode="L").save(buf, format="PNG")
    np.testing.assert_array_equal(png_decode(buf.getvalue()), [[False, True], [True, False]])


def test_from_json_accepts_every_form():
    mask = np.array([[0, 1, 1], [1, 0, 0]], dtype=bool)
    png = png_encode(mask)
    b64 = base64.b64encode(png).decode()
    forms = [
        {"size": [2, 3], "counts": [1, 3, 2]},
        {"size": [2, 3], "png": b64},
        {"size": (2, 3), "png": png},
        png,
        b64,
        mask,
        Mask.from_array(mask),
    ]
    for form in forms:
        np.testing.assert_array_equal(Mask.from_json(form).to_array(), mask)


def test_contains_matches_decoded_array_and_handles_zero_length_runs():
    rng = np.random.default_rng(2)
    for mask in random_masks(rng):
        m = Mask.from_array(mask)
        rows, cols = np.indices(mask.shape).reshape(2, -1)
        np.testing.assert_array_equal(m.contains(rows, cols), mask[rows, cols])
    # runs: 1 zero, 0 ones, 0 zeros, 2 ones, 2 zeros (zero-length runs in the middle)
    m = Mask(size=(1, 5), counts=(1, 0, 0, 2, 2))
    np.testing.assert_array_equal(m.contains(np.zeros(5, int), np.arange(5)), [0, 1, 1, 0, 0])
    np.testing.assert_array_equal(m.to_array()[0], [0, 1, 1, 0, 0])


def test_row_segments_rebuild_the_mask():
    rng = np.random.default_rng(3)
    for mask in random_masks(rng):
        for encoding in ("rle", "png"):
            rows, first, last = Mask.from_array(mask, encoding=encoding).row_segments()
            rebuilt = np.zeros_like(mask)
            for r, a, b in zip(rows, first, last):
                assert a <= b
                rebuilt[r, a : b + 1] = True
            np.testing.assert_array_equal(rebuilt, mask)


def test_runs_spanning_rows_are_split():
    rows, first, last = Mask(size=(3, 4), counts=(2, 7, 3)).row_segments()
    assert rows.tolist() == [0, 1, 2] and first.tolist() == [2, 0, 0] and last.tolist() == [3, 3, 0]


def _png_rgb() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (2, 2)).save(buf, format="PNG")
    return buf.getvalue()


def _jpeg() -> bytes:
    buf = io.BytesIO()
    Image.new("L", (2, 2)).save(buf, format="JPEG")
    return buf.getvalue()


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ({"size": [0, 3], "counts": [0]}, r"size: expected two positive ints.*\[0, 3\]"),
        ({"size": [2], "counts": [2]}, r"size: .*\[2\]"),
        ({"size": "2x3", "counts": [6]}, r"size: .*'2x3'"),
        ({"size": [2, True], "counts": [2]}, r"size: .*True"),
        ({"size": [2, 3], "counts": [1, 2]}, r"counts: run lengths must sum to height\*width = 6, got sum 3"),
        ({"size": [2, 3], "counts": [7, -1]}, r"counts: run lengths must be >= 0, got \[7, -1\]"),
        ({"size": [2, 3], "counts": [3.0, 3.0]}, r"counts: expected a non-empty list of ints, got \[3.0, 3.0\]"),
        ({"size": [2, 3], "counts": []}, r"counts: expected a non-empty list of ints"),
        ({"size": [2, 3], "counts": "ab12"}, r"counts: .*compressed COCO.*'ab12'"),
        ({"size": [2, 3]}, r"missing key 'counts'"),
        ({"counts": [6]}, r"missing key 'size'"),
        ({"size": [2, 3], "counts": [6], "order": "F"}, r"unknown keys \['order'\]"),
        ({"size": [2, 3], "counts": [6], "png": "AAAA"}, r"exactly one of 'counts'"),
        ({"size": [2, 3], "png": "not base64!"}, r"png: expected base64 text, got 'not base64!'"),
        ({"size": [2, 3], "png": 12}, r"png: expected bytes or base64 str, got int"),
        (b"not a png", r"png: cannot decode 9 bytes as PNG"),
        (_png_rgb(), r"png: expected a single-channel PNG .* got mode 'RGB'"),
        (_jpeg(), r"png: expected PNG data, got format 'JPEG'"),
        ({"size": [3, 3], "png": png_encode(np.ones((2, 3), bool))}, r"png: decoded shape .*\(2, 3\) != size \(3, 3\)"),
        (np.zeros((2, 2, 3), bool), r"mask: expected a 2-D bool or integer array, got dtype bool shape \(2, 2, 3\)"),
        (np.zeros((2, 2), float), r"expected a 2-D bool or integer array, got dtype float64"),
        (12, r"expected an RLE dict, a PNG dict, PNG bytes or an array, got int"),
    ],
)
def test_errors_name_field_and_value(value, match):
    with pytest.raises(ValueError, match=match) as info:
        Mask.from_json(value, "targets[3]")
    assert str(info.value).startswith("targets[3]: ")


def test_constructor_and_encoding_errors():
    with pytest.raises(ValueError, match=r"exactly one of 'counts' \(RLE\) and 'png'"):
        Mask(size=(2, 2))
    with pytest.raises(ValueError, match=r"encoding: expected 'rle' or 'png', got 'jpeg'"):
        Mask.from_array(np.ones((2, 2), bool), encoding="jpeg")
    with pytest.raises(ValueError, match=r"mask: must have at least one pixel"):
        rle_encode(np.zeros((0, 3), bool))
    with pytest.raises(ValueError, match=r"rle: missing key 'counts'"):
        rle_decode({"size": [1, 1]})


def test_masks_are_hashable_and_compare_by_content():
    a = Mask.from_array(np.eye(3, dtype=bool))
    b = Mask.from_json({"size": [3, 3], "counts": [0, 1, 3, 1, 3, 1]})
    assert a == b and hash(a) == hash(b)
    a.contains(np.array([0]), np.array([0]))  # caches run ends; equality must not change
    assert a == b
