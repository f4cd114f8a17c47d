"""Input checks shared by the scoring functions: errors name the field and the offending value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages about large values."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_same_length(**fields: Sequence[Any]) -> int:
    """Raise ValueError unless every named sequence has the same length; return that length.

    Example:
        >>> check_same_length(predictions=[1, 2], references=["A", "B"])
        2
        >>> check_same_length(predictions=[1, 2], references=["A"])
        Traceback (most recent call last):
        ...
        ValueError: predictions has 2 entries but references has 1
    """
    (first, first_values), *rest = fields.items()
    for name, values in rest:
        if len(values) != len(first_values):
            raise ValueError(f"{first} has {len(first_values)} entries but {name} has {len(values)}")
    return len(first_values)


def check_not_empty(field: str, values: Sequence[Any]) -> int:
    """Raise ValueError when ``values`` is empty; return its length.

    An accuracy or rate over no items is undefined: reporting 0.0 would pass off a run that lost its
    outputs as a run that got everything wrong. Only top-level scoring calls check this; an empty
    group inside a breakdown is reported as absent.

    Example:
        >>> check_not_empty("predictions", [])
        Traceback (most recent call last):
        ...
        ValueError: predictions is empty: there is nothing to score
    """
    if len(values) == 0:
        raise ValueError(f"{field} is empty: there is nothing to score")
    return len(values)


def check_vocabulary(field: str, values: Sequence[Any], vocabulary: Sequence[str]) -> None:
    """Raise ValueError naming the first entry of ``values`` outside ``vocabulary``.

    Example:
        >>> check_vocabulary("categories", ["size", "colour"], ["direction", "distance", "size"])
        Traceback (most recent call last):
        ...
        ValueError: categories[1] must be one of ['direction', 'distance', 'size'], got 'colour'
    """
    allowed = set(vocabulary)
    try:
        if allowed.issuperset(values):  # one C-level pass over 100k labels; the loop only finds the culprit
            return
    except TypeError:  # an unhashable entry: the loop below names it
        pass
    for i, value in enumerate(values):
        if not _hashable(value) or value not in allowed:
            raise ValueError(f"{field}[{i}] must be one of {list(vocabulary)}, got {value!r}")


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
