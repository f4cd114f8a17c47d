"""Read the target point out of a model's answer to an IR point-grounding prompt (Appendix 15.2).

The prompt asks for ``{"results": {"target": {"x": <int>, "y": <int>}}}`` with integer
coordinates on a 0-1000 scale (x to the right, y down). Models also answer in their native
pointing formats; this module reads each into the prompt's 0-1000 scale, or says why it cannot.

Forms read, best first (a better form anywhere in the reply wins over a worse one):

====  =============================================================  ==================
rank  form                                                           reason
====  =============================================================  ==================
0     the prompt's ``{"results": {"target": {"x": .., "y": ..}}}``   ``results_json``
1     Qwen ``[{"point_2d": [x, y], "label": ..}]``                   ``point_2d``
1     ``{"x": .., "y": ..}`` (no "results" wrapper)                  ``xy_json``
1     Gemini ``{"point": [y, x]}`` (its documented order, 0-1000)    ``gemini_point``
2     Molmo ``<point x=".." y="..">`` / ``<points x1=.. y1=..>``     ``molmo``
3     ``[x, y]`` / ``(x, y)`` (JSON or Python literals, in prose)    ``list`` / ``tuple``
4     ``(50%, 40%)``                                                 ``percent``
5     ``x=512, y=300`` / ``x: 512 and y: 300``                       ``xy_text``
6     the whole reply is ``512, 300``                                ``bare_pair``
====  =============================================================  ==================

JSON is read with ``json`` first and Python's literal syntax second (single quotes, tuples,
trailing commas); fenced code blocks need no special case. Text inside ``<think>...</think>`` is
dropped first (coordinates mentioned while reasoning are not the answer).

Any reply is read in time linear in its length, with no cap on what is read (earlier, repeated
``<point`` tags were quadratic); ``tests/scoring/test_parser_work_bounds.py`` bounds the work on
adversarial 1 MB replies.

Policies:

- Several points of the best form (a list of points, several tuples) -> the first, with reason
  ``first_of_many``: the prompt asks for one point, but a list still names a first choice.
- Molmo writes percentages (0-100): multiplied by 10. ``raw_xy`` keeps the percentages.
- Normalised floats: a point whose coordinates are both in [0, 1] with at least one written with a
  decimal point (RoboPoint ``(0.45, 0.62)``, ``{"x": 0.5, "y": 0.3}``) is read as fractions of the
  image and multiplied by 1000, with reason ``normalized_float``. On the prompt's integer 0-1000
  grid such a point would sit within one unit of the top-left corner, which no model means.
  Integers are always read on the 0-1000 grid, so ``(1, 1)`` stays ``(1, 1)``; ``raw_xy`` keeps
  the fractions, so a stricter reading can be applied from the logs.
- Integers are never read as pixels (VLMEvalKit and RoboPoint do): the prompt fixes the 0-1000
  scale, and pixel size is unknown to a model that sees a resized image.
- Coordinates outside [0, 1000] (after the conversions above), NaN or infinite are
  ``OUT_OF_RANGE``, never clamped; ``raw_xy`` says what was read.
- Boxes (``bbox_2d``, four numbers), three numbers, ``x`` / ``y`` given as lists (the prompt
  forbids lists) and nulls are unparseable: a box is not a point and its centre would be a guess.
"""

from __future__ import annotations

import ast
import enum
import json
import math
import numbers
import re
import warnings
from dataclasses import dataclass
from typing import Any

from bspatial.scoring.choice import strip_reasoning

POINT_SCALE = 1000  # Appendix 15.2: "integer coordinates normalized to a 0-1000 scale"
MOLMO_SCALE = 100  # Molmo's <point x=".." y=".."> attributes are percentages of the image


class PointStatus(str, enum.Enum):
    """Whether a reply yielded a point inside the 0-1000 frame."""

    PARSED = "parsed"
    OUT_OF_RANGE = "out_of_range"
    UNPARSEABLE = "unparseable"


@dataclass(frozen=True)
class PointParse:
    """The point read from one reply.

    Attributes:
        xy: ``(x, y)`` on the prompt's 0-1000 scale (x right, y down); None unless ``PARSED``.
        status: ``PARSED``, ``OUT_OF_RANGE`` or ``UNPARSEABLE``.
        reason: the form read (``results_json``, ``point_2d``, ``xy_json``, ``gemini_point``,
            ``molmo``, ``list``, ``tuple``, ``percent``, ``xy_text``, ``bare_pair``,
            ``first_of_many``, ``normalized_float``) or why nothing was (``empty``,
            ``unfinished_reasoning``, ``refusal``, ``box``, ``malformed``, ``no_point``,
            ``out_of_range``).
        raw_xy: ``(x, y)`` as written, in the form's own units (percent for Molmo, fractions for
            normalised floats), before conversion and range checks; also set for
            ``OUT_OF_RANGE``.
    """

    xy: tuple[float, float] | None
    status: PointStatus
    reason: str
    raw_xy: tuple[float, float] | None

    def to_pixels(self, width: int, height: int) -> tuple[float, float] | None:
        """The point in pixels of a ``width`` x ``height`` image (None unless ``PARSED``).

        Example:
            >>> parse_point('{"results": {"target": {"x": 500, "y": 250}}}').to_pixels(224, 224)
            (112.0, 56.0)
        """
        for name, value in (("width", width), ("height", height)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
                raise ValueError(f"{name} must be a positive number of pixels, got {value!r}")
        if self.xy is None:
            return None
        return self.xy[0] * width / POINT_SCALE, self.xy[1] * height / POINT_SCALE


# Form ranks (lower wins) and the reasons they report.
_RANK_RESULTS, _RANK_KEYED, _RANK_MOLMO, _RANK_BARE, _RANK_PERCENT, _RANK_XY_TEXT, _RANK_PAIR = range(7)

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_STRING = re.compile(rf"\s*{_NUMBER}\s*")
# Linear work on any reply (tests/scoring/test_parser_work_bounds.py): no two quantifiers may share
# a run of characters (``\s*\.?\s*`` splits a run of n spaces n^2 ways before failing; written
# ``\s*(?:\.\s*)?`` it matches the same texts in one way), and tags are searched only up to the
# last ">" (an unclosed "<point" otherwise rescans the rest of the reply from every "<point").
_MOLMO_POINT = re.compile(r"<point\b([^>]*)>", re.IGNORECASE)
_MOLMO_POINTS = re.compile(r"<points\b([^>]*)>", re.IGNORECASE)
# The value is stripped in Python: ``\s*([^"']*?)\s*`` rescans trailing spaces at every length.
_MOLMO_ATTR = re.compile(r"\b(x|y)(\d*)\s*=\s*[\"']([^\"']*)[\"']", re.IGNORECASE)
_PERCENT_PAIR = re.compile(rf"[(\[]\s*({_NUMBER})\s*%\s*,\s*({_NUMBER})\s*%\s*[)\]]")
_XY_TEXT = re.compile(
    rf"(?<![A-Za-z])x\s*[:=]\s*({_NUMBER})\s*(?:(?:,|;|\band\b)\s*)?(?<![A-Za-z])y\s*[:=]\s*({_NUMBER})",
    re.IGNORECASE,
)
_BARE_PAIR = re.compile(rf"\s*({_NUMBER})\s*,\s*({_NUMBER})\s*(?:\.\s*)?")
_BOX_KEYS = ("bbox_2d", "bbox", "box_2d", "box")
_REFUSAL = re.compile(
    r"\b(?:cannot|can't|can not|unable to|not able to|impossible to|sorry|not visible|no such|"
    r"does not exist|doesn't exist|not present|not found)\b",
    re.IGNORECASE,
)
_MAX_LITERAL_CHARS = 5000  # longer bracketed spans are prose, not a point; bounds ast cost
_MAX_BRACKET_STARTS = 200  # bounds the scan on pathological inputs ("[[[[..." )


@dataclass(frozen=True)
class _Found:
    raw: tuple[float, float]  # (x, y) in the form's units
    rank: int
    reason: str
    decimal: bool  # at least one coordinate was written with a decimal point
    scale: float = 1.0  # multiply to reach 0-1000 (10 for Molmo / percent)


def parse_point(text: str | None) -> PointParse:
    """Parse one reply to the IR prompt into a point on the 0-1000 scale.

    Args:
        text: the model's raw reply; None and any string are accepted and never raise.

    Returns:
        A :class:`PointParse`.

    Raises:
        TypeError: ``text`` is neither a string nor None.

    Examples:
        >>> parse_point('{"results": {"target": {"x": 512, "y": 300}}}').xy
        (512.0, 300.0)
        >>> p = parse_point('```json\\n[{"point_2d": [120, 80]}, {"point_2d": [600, 320]}]\\n```')
        >>> p.xy, p.reason
        ((120.0, 80.0), 'first_of_many')
        >>> parse_point('<point x="50.5" y="40.2" alt="cup">cup</point>').xy
        (505.0, 402.0)
        >>> parse_point("The cup is at (0.45, 0.62).").xy
        (450.0, 620.0)
        >>> p = parse_point('{"results": {"target": {"x": 1200, "y": 300}}}')
        >>> p.status.value, p.xy, p.raw_xy
        ('out_of_range', None, (1200.0, 300.0))
    """
    if text is None:
        return _failure("empty")
    if not isinstance(text, str):
        raise TypeError(f"text must be a string or None, got {type(text).__name__}: {text!r:.80}")
    body, unfinished = strip_reasoning(text)
    if not body.strip():
        return _failure("unfinished_reasoning" if unfinished else "empty")
    found, problems = _collect(body)
    if not found:
        if _REFUSAL.search(body):
            return _failure("refusal")
        return _failure(problems[0] if problems else "no_point")
    return _judge(found)


def _failure(reason: str) -> PointParse:
    return PointParse(None, PointStatus.UNPARSEABLE, reason, None)


def parse_points(text: str | None) -> list[PointParse]:
    """Every point of the best-ranked form in a reply, in text order (a pointing model's "every {text}").

    The same forms and conversions as :func:`parse_point`, which keeps only the first of these; an
    answer with no point gives ``[]``. Out-of-range points are kept with status ``OUT_OF_RANGE`` so the
    caller decides (never clamped).

    Examples:
        >>> [p.xy for p in parse_points('<points x1="10" y1="20" x2="30.5" y2="40">cups</points>')]
        [(100.0, 200.0), (305.0, 400.0)]
        >>> parse_points("There is no cup.")
        []
    """
    if text is None:
        return []
    if not isinstance(text, str):
        raise TypeError(f"text must be a string or None, got {type(text).__name__}: {text!r:.80}")
    body, _ = strip_reasoning(text)
    found, _ = _collect(body) if body.strip() else ([], [])
    if not found:
        return []
    best = min(item.rank for item in found)
    seen, out = set(), []
    for item in found:
        if item.rank == best and item.raw not in seen:
            seen.add(item.raw)
            out.append(_convert(item, item.reason))
    return out


def _judge(found: list[_Found]) -> PointParse:
    """The first point of the best-ranked form, converted to 0-1000 and range-checked."""
    best = min(item.rank for item in found)
    top = [item for item in found if item.rank == best]
    return _convert(top[0], "first_of_many" if len({item.raw for item in top}) > 1 else top[0].reason)


def _convert(item: _Found, reason: str) -> PointParse:
    """One found point on the 0-1000 scale (normalised floats read as fractions), range-checked."""
    x, y = item.raw
    scale = item.scale
    if item.scale == 1.0 and item.decimal and 0.0 <= x <= 1.0 and 0.0 <= y <= 1.0:
        scale = float(POINT_SCALE)
        if reason == item.reason:
            reason = "normalized_float"
    xy = (x * scale, y * scale)
    if not all(math.isfinite(v) and 0.0 <= v <= POINT_SCALE for v in xy):
        return PointParse(None, PointStatus.OUT_OF_RANGE, "out_of_range", item.raw)
    return PointParse(xy, PointStatus.PARSED, reason, item.raw)


# ---------------------------------------------------------------------------------------------
# Collecting candidates
# ---------------------------------------------------------------------------------------------


def _collect(body: str) -> tuple[list[_Found], list[str]]:
    """Every point in the reply, in text order, and the problems met (box, malformed, null)."""
    found: list[_Found] = []
    problems: list[str] = []
    for value in _bracketed_values(body):
        try:
            _walk(value, found, problems, in_results=False)
        except RecursionError:  # JSON nested hundreds deep: not a point answer
            problems.append("malformed")
    found.extend(_molmo_points(body))
    for m in _PERCENT_PAIR.finditer(body):
        found.append(_Found((_to_float(m.group(1)), _to_float(m.group(2))), _RANK_PERCENT, "percent", True, 10.0))
    for m in _XY_TEXT.finditer(body):
        found.append(_number_pair(m.group(1), m.group(2), _RANK_XY_TEXT, "xy_text"))
    m = _BARE_PAIR.fullmatch(body)
    if m:
        found.append(_number_pair(m.group(1), m.group(2), _RANK_PAIR, "bare_pair"))
    return found, problems


def _bracketed_values(body: str) -> list[Any]:
    """JSON or Python-literal values that start at a bracket, left to right, not overlapping."""
    values: list[Any] = []
    decoder = json.JSONDecoder()
    pos, starts = 0, 0
    while starts < _MAX_BRACKET_STARTS:
        start = _next_bracket(body, pos)
        if start < 0:
            break
        starts += 1
        value, end = _decode_at(body, start, decoder)
        if end is None:
            pos = start + 1
            continue
        values.append(value)
        pos = end
    return values


def _next_bracket(body: str, pos: int) -> int:
    hits = [i for i in (body.find("{", pos), body.find("[", pos), body.find("(", pos)) if i >= 0]
    return min(hits) if hits else -1


def _decode_at(body: str, start: int, decoder: json.JSONDecoder) -> tuple[Any, int | None]:
    """The value starting at ``start`` and its end, or ``(None, None)``; never raises."""
    if body[start] != "(":
        try:
            return decoder.raw_decode(body, start)
        except (ValueError, RecursionError):
            pass
    end = _matching_bracket(body, start)
    if end is None:
        return None, None
    try:
        with warnings.catch_warnings():
            # Model text like "(\\d)" is an invalid escape to Python's parser: its SyntaxWarning would
            # be printed on stderr for every such reply, and the value is refused or kept all the same.
            warnings.simplefilter("ignore", SyntaxWarning)
            return ast.literal_eval(body[start:end]), end
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None, None


def _matching_bracket(body: str, start: int) -> int | None:
    """End (exclusive) of the bracketed span opening at ``start``; quotes are not tracked."""
    depth = 0
    stop = min(len(body), start + _MAX_LITERAL_CHARS)
    for i in range(start, stop):
        char = body[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _walk(value: Any, found: list[_Found], problems: list[str], in_results: bool) -> None:
    """Find points in a decoded JSON / literal value (depth-first, in order)."""
    if isinstance(value, dict):
        keys = {str(k).lower(): v for k, v in value.items()}
        if "x" in keys or "y" in keys:
            rank, reason = (_RANK_RESULTS, "results_json") if in_results else (_RANK_KEYED, "xy_json")
            _keyed_xy(keys.get("x"), keys.get("y"), rank, reason, found, problems)
        elif "point_2d" in keys:
            _keyed_pair(keys["point_2d"], False, "point_2d", found, problems)
        elif "point" in keys:
            _keyed_pair(keys["point"], True, "gemini_point", found, problems)
        elif any(k in keys for k in _BOX_KEYS):
            problems.append("box")
        else:
            for key, item in keys.items():
                _walk(item, found, problems, in_results or key == "results")
    elif isinstance(value, (list, tuple)):
        numbers = [_as_number(v, strings=False) for v in value]
        if value and all(n is not None for n in numbers):
            if len(value) == 2:
                reason = "tuple" if isinstance(value, tuple) else "list"
                found.append(_Found((numbers[0][0], numbers[1][0]), _RANK_BARE, reason, numbers[0][1] or numbers[1][1]))
            elif len(value) in (3, 4):  # [x, y, ?] is malformed, [x0, y0, x1, y1] a box
                problems.append("box" if len(value) == 4 else "malformed")
            return
        for item in value:
            _walk(item, found, problems, in_results)


def _keyed_xy(x: Any, y: Any, rank: int, reason: str, found: list[_Found], problems: list[str]) -> None:
    nx, ny = _as_number(x), _as_number(y)
    if nx is None or ny is None:
        problems.append("no_point" if x is None or y is None else "malformed")
        return
    found.append(_Found((nx[0], ny[0]), rank, reason, nx[1] or ny[1]))


def _keyed_pair(pair: Any, y_first: bool, reason: str, found: list[_Found], problems: list[str]) -> None:
    numbers = [_as_number(v) for v in pair] if isinstance(pair, (list, tuple)) else []
    if len(numbers) != 2 or None in numbers:
        problems.append("malformed" if pair is not None else "no_point")
        return
    (a, a_dec), (b, b_dec) = numbers
    found.append(_Found((b, a) if y_first else (a, b), _RANK_KEYED, reason, a_dec or b_dec))


def _molmo_points(body: str) -> list[_Found]:
    """Molmo's XML points (percent); ``<points x1 y1 x2 y2 ...>`` gives several."""
    out: list[_Found] = []
    if "<point" not in body.lower():
        return out
    # No tag closes after the last ">": searching beyond it finds nothing, one rescan per "<point".
    end = body.rfind(">") + 1
    for pattern in (_MOLMO_POINT, _MOLMO_POINTS):
        for tag in pattern.finditer(body, 0, end):
            coords: dict[str, dict[str, str]] = {}
            for attr in _MOLMO_ATTR.finditer(tag.group(1)):
                # str.strip and the regex \s agree on what whitespace is (str.isspace).
                coords.setdefault(attr.group(2), {})[attr.group(1).lower()] = attr.group(3).strip()
            for index in sorted(coords, key=lambda k: int(k) if k else 0):
                pair = coords[index]
                nx, ny = _as_number(pair.get("x")), _as_number(pair.get("y"))
                if nx is not None and ny is not None:
                    out.append(_Found((nx[0], ny[0]), _RANK_MOLMO, "molmo", True, POINT_SCALE / MOLMO_SCALE))
    return out


def _number_pair(x: str, y: str, rank: int, reason: str) -> _Found:
    return _Found((_to_float(x), _to_float(y)), rank, reason, any(c in x + y for c in ".eE"))


def _as_number(value: Any, strings: bool = True) -> tuple[float, bool] | None:
    """``(value, written_with_decimal_point)`` for a JSON number or numeric string, else None."""
    if isinstance(value, bool):  # JSON true/false are ints in Python, not coordinates
        return None
    if isinstance(value, int):
        return _to_float(value), False
    if isinstance(value, float):
        return value, True
    if strings and isinstance(value, str) and _NUMBER_STRING.fullmatch(value):
        return _to_float(value), any(c in value for c in ".eE")
    return None


def _to_float(value: int | str) -> float:
    """float() that maps overflow (a 400-digit integer) to infinity instead of raising."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if not str(value).lstrip().startswith("-") else -math.inf
