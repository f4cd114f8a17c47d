"""Binary masks of IR target regions: run-length (RLE) and PNG encodings, validated.

Conventions (shared by every mask in the IR region specs):

* **RLE** is ``{"size": [height, width], "counts": [c0, c1, ...]}``. The mask is flattened
  **row-major** (pixel ``(row, col)`` has linear index ``row * width + col``) and ``counts`` are the
  lengths of alternating runs, **starting with a run of zeros** (``c0`` may be 0). This differs
  from COCO/pycocotools RLE, which flattens column-major; a COCO ``counts`` list must be re-encoded
  (decode it, then ``rle_encode``). Row-major makes a point lookup one binary search over the run
  ends, with no decoding.
* **PNG** is a single-channel PNG (mode ``1``, ``L``, ``I`` or ``I;16``); every non-zero pixel is in
  the mask. In JSON it travels as ``{"size": [height, width], "png": "<base64>"}``.
* **Pixels**: a point ``(u, v)`` in continuous pixel coordinates (x right, y down, pixel column
  ``i`` spans ``[i, i + 1)`` with its centre at ``i + 0.5``) lies in pixel ``(floor(v), floor(u))``.
  The same convention places camera rays in :mod:`bspatial.scoring.geometry`.

Example:
    >>> m = np.array([[0, 1, 1], [1, 0, 0]], dtype=bool)
    >>> rle_encode(m)
    {'size': [2, 3], 'counts': [1, 3, 2]}
    >>> bool((rle_decode(rle_encode(m)) == m).all())
    True
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from bspatial.scoring.validation import short_repr

# PNG modes whose single channel reads directly as "non-zero = in the mask".
_PNG_MODES = ("1", "L", "I", "I;16")


def rle_encode(mask: np.ndarray) -> dict[str, list[int]]:
    """Encode a 2-D mask (non-zero = in) as a row-major RLE dict starting with a run of zeros.

    Example:
        >>> rle_encode(np.ones((2, 2), dtype=bool))
        {'size': [2, 2], 'counts': [0, 4]}
    """
    flat = _as_2d_bool(mask, "mask").ravel()  # C order = row-major
    if flat.size == 0:
        raise ValueError(f"mask: must have at least one pixel, got shape {np.shape(mask)}")
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    bounds = np.concatenate(([0], change, [flat.size]))
    counts = np.diff(bounds).tolist()
    if flat[0]:
        counts = [0] + counts  # the first run is always a run of zeros
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": counts}


def rle_decode(rle: Mapping[str, Any]) -> np.ndarray:
    """Decode a row-major RLE dict into a bool array of shape ``size``.

    Example:
        >>> rle_decode({"size": [2, 3], "counts": [1, 3, 2]}).astype(int)
        array([[0, 1, 1],
               [1, 0, 0]])
    """
    size = _validate_size(_require(rle, "size", "rle"), "rle.size")
    counts = _validate_counts(_require(rle, "counts", "rle"), size, "rle.counts")
    return _decode_counts(counts, size)


def png_encode(mask: np.ndarray) -> bytes:
    """Encode a 2-D mask as a 1-bit PNG (the compact form; any single-channel PNG decodes)."""
    from PIL import Image  # lazy: PIL is only needed for the PNG form

    buf = io.BytesIO()
    Image.fromarray(_as_2d_bool(mask, "mask")).save(buf, format="PNG")
    return buf.getvalue()


def png_decode(data: bytes) -> np.ndarray:
    """Decode single-channel PNG bytes into a bool mask (non-zero = in).

    Raises:
        ValueError: if the bytes are not a PNG or the PNG has more than one channel.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format != "PNG":
                raise ValueError(f"png: expected PNG data, got format {image.format!r}")
            if image.mode not in _PNG_MODES:
                raise ValueError(
                    f"png: expected a single-channel PNG (mode one of {_PNG_MODES}), got mode {image.mode!r}"
                )
            array = np.asarray(image)
    except (UnidentifiedImageError, OSError, SyntaxError) as error:
        raise ValueError(f"png: cannot decode {len(data)} bytes as PNG ({error})") from None
    return array != 0


@dataclass(frozen=True)
class Mask:
    """One binary mask, kept encoded (RLE or PNG) so that thousands of regions stay small.

    Exactly one of ``counts`` (row-major RLE) and ``png`` is set. Point lookups
    (:meth:`contains`) and row segments (:meth:`row_segments`) work from the run ends, computed
    once and cached on the instance; the full array is only built by :meth:`to_array`.

    Args:
        size: ``(height, width)``.
        counts: row-major run lengths starting with a run of zeros, summing to ``height * width``.
        png: single-channel PNG bytes of shape ``size``.

    Example:
        >>> m = Mask.from_array(np.array([[0, 1], [1, 1]], dtype=bool))
        >>> m.counts
        (1, 3)
        >>> m.contains(np.array([0, 1]), np.array([0, 0])).tolist()
        [False, True]
    """

    size: tuple[int, int]
    counts: tuple[int, ...] | None = None
    png: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        size = _validate_size(self.size, "size")
        object.__setattr__(self, "size", size)
        if (self.counts is None) == (self.png is None):
            raise ValueError(
                f"mask: exactly one of 'counts' (RLE) and 'png' must be given, got "
                f"counts={short_repr(self.counts)}, png={short_repr(self.png)}"
            )
        if self.counts is not None:
            counts = _validate_counts(self.counts, size, "counts")
            object.__setattr__(self, "counts", tuple(int(c) for c in counts))
        else:
            if not isinstance(self.png, bytes | bytearray):
                raise ValueError(f"png: expected bytes, got {type(self.png).__name__}")
            object.__setattr__(self, "png", bytes(self.png))
            array = png_decode(self.png)  # decode once now: validation and lookup data together
            if array.shape != size:
                raise ValueError(f"png: decoded shape (height, width) {array.shape} != size {size}")
            self.__dict__["_run_ends"] = _cumulative_ends(_counts_of(array))

    @classmethod
    def from_array(cls, array: np.ndarray, encoding: str = "rle") -> Mask:
        """Build a mask from a 2-D array (non-zero = in), stored as ``"rle"`` or ``"png"``."""
        mask = _as_2d_bool(array, "mask")
        if encoding == "rle":
            return cls(size=mask.shape, counts=tuple(rle_encode(mask)["counts"]))
        if encoding == "png":
            return cls(size=mask.shape, png=png_encode(mask))
        raise ValueError(f"encoding: expected 'rle' or 'png', got {encoding!r}")

    @classmethod
    def from_json(cls, value: Any, field_name: str = "mask") -> Mask:
        """Parse any accepted mask form; errors name ``field_name`` and the bad value.

        Accepted: a :class:`Mask`; an RLE dict ``{"size", "counts"}``; a PNG dict
        ``{"size", "png": base64 str | bytes}``; bare PNG ``bytes``; a bare base64 PNG string;
        a 2-D numpy array.
        """
        try:
            if isinstance(value, Mask):
                return value
            if isinstance(value, np.ndarray):
                return cls.from_array(value)
            if isinstance(value, bytes | bytearray | str):
                data = _png_bytes(value)
                return cls(size=png_decode(data).shape, png=data)
            if isinstance(value, Mapping):
                unknown = set(value) - {"size", "counts", "png"}
                if unknown:
                    raise ValueError(f"unknown keys {sorted(unknown)}; expected 'size' and 'counts' or 'png'")
                size = _require(value, "size", "mask")
                if "png" in value:
                    return cls(size=size, png=_png_bytes(value["png"]), counts=value.get("counts"))
                return cls(size=size, counts=_require(value, "counts", "mask"))
            raise ValueError(f"expected an RLE dict, a PNG dict, PNG bytes or an array, got {type(value).__name__}")
        except ValueError as error:
            raise ValueError(f"{field_name}: {error}") from None

    def to_json(self) -> dict[str, Any]:
        """The JSON-safe form: ``{"size", "counts"}`` or ``{"size", "png": base64}``."""
        size = [self.size[0], self.size[1]]
        if self.counts is not None:
            return {"size": size, "counts": list(self.counts)}
        return {"size": size, "png": base64.b64encode(self.png).decode("ascii")}

    def to_array(self) -> np.ndarray:
        """Decode the full bool array of shape ``size``."""
        if self.counts is not None:
            return _decode_counts(np.asarray(self.counts, dtype=np.int64), self.size)
        return png_decode(self.png)

    @cached_property
    def _run_ends(self) -> np.ndarray:
        return _cumulative_ends(np.asarray(self.counts, dtype=np.int64))

    def contains(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Vectorised membership of pixels ``(rows[k], cols[k])`` (integer, inside the image)."""
        linear = np.asarray(rows, dtype=np.int64) * self.size[1] + np.asarray(cols, dtype=np.int64)
        # Run k holds the pixels [ends[k-1], ends[k]); odd runs are ones. side="right" steps over
        # zero-length runs correctly.
        return np.searchsorted(self._run_ends, linear, side="right") % 2 == 1

    @cached_property
    def _segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ends = self._run_ends
        starts = np.concatenate(([0], ends[:-1]))
        ones = (np.arange(ends.size) % 2 == 1) & (ends > starts)
        return _split_rows(starts[ones], ends[ones], self.size[1])

    def row_segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The mask as horizontal segments: ``(row, first_col, last_col)`` int arrays, inclusive.

        Example:
            >>> rows, c0, c1 = Mask(size=(2, 3), counts=(2, 3, 1)).row_segments()
            >>> rows.tolist(), c0.tolist(), c1.tolist()
            ([0, 1], [2, 0], [2, 1])
        """
        return self._segments


def _split_rows(starts: np.ndarray, stops: np.ndarray, width: int) -> tuple[np.ndarray, ...]:
    """Cut runs ``[start, stop)`` of linear indices at row boundaries (a run may span rows)."""
    first_row = starts // width
    n_rows = (stops - 1) // width - first_row + 1
    offsets = np.arange(n_rows.sum()) - np.repeat(np.cumsum(n_rows) - n_rows, n_rows)
    rows = np.repeat(first_row, n_rows) + offsets
    row_start = rows * width
    first_col = np.maximum(np.repeat(starts, n_rows), row_start) - row_start
    last_col = np.minimum(np.repeat(stops, n_rows), row_start + width) - 1 - row_start
    return rows, first_col, last_col


def _cumulative_ends(counts: np.ndarray) -> np.ndarray:
    ends = np.cumsum(counts, dtype=np.int64)
    ends.flags.writeable = False  # cached and shared: guard against accidental edits
    return ends


def _counts_of(mask: np.ndarray) -> np.ndarray:
    return np.asarray(rle_encode(mask)["counts"], dtype=np.int64)


def _decode_counts(counts: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    values = np.arange(len(counts)) % 2 == 1
    return np.repeat(values, counts).reshape(size)


def _as_2d_bool(array: Any, field_name: str) -> np.ndarray:
    mask = np.asarray(array)
    if mask.ndim != 2 or mask.dtype.kind not in "biu":
        raise ValueError(
            f"{field_name}: expected a 2-D bool or integer array, got dtype {mask.dtype} shape {mask.shape}"
        )
    return mask != 0


def _require(mapping: Mapping[str, Any], key: str, owner: str) -> Any:
    if key not in mapping:
        raise ValueError(f"{owner}: missing key {key!r}, got keys {sorted(mapping)}")
    return mapping[key]


def _validate_size(size: Any, field_name: str) -> tuple[int, int]:
    ok = (
        isinstance(size, list | tuple)
        and len(size) == 2
        and all(isinstance(s, int | np.integer) and not isinstance(s, bool) and s > 0 for s in size)
    )
    if not ok:
        raise ValueError(f"{field_name}: expected two positive ints [height, width], got {short_repr(size)}")
    return int(size[0]), int(size[1])


def _validate_counts(counts: Any, size: tuple[int, int], field_name: str) -> np.ndarray:
    if isinstance(counts, str | bytes):
        raise ValueError(
            f"{field_name}: expected a list of run lengths (compressed COCO strings are not supported), "
            f"got {short_repr(counts)}"
        )
    array = np.asarray(counts)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu":
        raise ValueError(f"{field_name}: expected a non-empty list of ints, got {short_repr(counts)}")
    if (array < 0).any():
        raise ValueError(f"{field_name}: run lengths must be >= 0, got {short_repr(counts)}")
    total = int(array.sum())
    if total != size[0] * size[1]:
        raise ValueError(
            f"{field_name}: run lengths must sum to height*width = {size[0] * size[1]}, got sum {total} "
            f"for {short_repr(counts)}"
        )
    return array.astype(np.int64)


def _png_bytes(value: Any) -> bytes:
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"png: expected base64 text, got {short_repr(value)}") from None
    raise ValueError(f"png: expected bytes or base64 str, got {type(value).__name__}")
