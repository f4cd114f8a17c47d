"""Named registries: one lookup with a "did you mean" hint, and one duplicate-name check.

Presets, tasks and floor plans are chosen by name on the command line; a typo should name the closest known
entry (as openpi's config registry does), and two entries under one name should fail where they are declared,
not shadow each other silently.

Example:
    >>> lookup({"mini": 1, "paper": 2}, "mimi", "preset")
    Traceback (most recent call last):
    ...
    ValueError: unknown preset 'mimi' (did you mean 'mini'?); known presets: mini, paper
    >>> by_name(["a", "b", "a"], "preset", key=str)
    Traceback (most recent call last):
    ...
    ValueError: duplicate preset name 'a' (declared 2 times)
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Callable, Iterable, Mapping, TypeVar

T = TypeVar("T")


def unknown_name(kind: str, name: object, known: Iterable[str], *, listing: str | None = None,
                 scope: str = "") -> ValueError:
    """The error for a name no entry has: the closest known name as a hint, then every known one (or ``listing``);
    ``scope`` says where the known ones are known (" for split 'navigation'")."""
    known = list(known)
    close = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ValueError(f"unknown {kind} {name!r}{hint}; known {kind}s{scope}: {listing or ', '.join(known)}")


def lookup(table: Mapping[str, T], name: str, kind: str) -> T:
    """``table[name]``, or a ValueError naming the closest known names."""
    if name not in table:
        raise unknown_name(kind, name, table)
    return table[name]


def by_name(items: Iterable[T], kind: str, key: Callable[[T], str] = lambda item: item.name) -> dict[str, T]:
    """``{key(item): item}`` in order; a ValueError when two items share a name."""
    items = list(items)
    counts = Counter(map(key, items))
    for name, count in counts.items():
        if count > 1:
            raise ValueError(f"duplicate {kind} name {name!r} (declared {count} times)")
    return {key(item): item for item in items}
