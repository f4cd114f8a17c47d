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
