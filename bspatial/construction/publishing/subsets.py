"""The ``tiny`` config of each suite: a stratified ~10% subset for API models and people.

Peers ship one beside their full benchmark (VSI-Bench tiny, SPAR-Bench-Tiny, MindCube-Tiny). Ours is one
rule: items are grouped into strata (VQA: config x setting x category x subtype x task, the setting
splitting ``general_multi_frame`` into rotation and navigation sequences; IR: task, the only grouping
field IR records carry), each stratum keeps ``max(1, round(TINY_PERCENT% of its size))`` items, and which
ones is decided by ranking the stratum's ids by ``sha256(f"{seed}:{id}")``. So the subset depends only on
the seed and the ids, never on the order the items arrive in, and every stratum is represented.

The config ``tiny`` of a dataset is not the build preset ``tiny`` (``bspatial build --preset tiny``, the
small build the tests use): every build, of any preset, exports its own ``tiny`` config next to the others,
holding rows copied unchanged from them (:func:`bspatial.construction.publishing.export.export_repos`).

Example:
    >>> items = [(f"q{i}", ("direction",)) for i in range(25)] + [("s0", ("size",))]
    >>> picked = stratified_ids(items, seed=0)
    >>> len(picked), "s0" in picked   # round(2.5) = 3 of 25, and the one-item stratum keeps its item
    (4, True)
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

from bspatial.common.tables import markdown_table

TINY_CONFIG = "tiny"
"""Name of the subset config in every suite repo (``load_dataset(..., "tiny")``, ``eval-vlm --config tiny``)."""
TINY_PERCENT = 10
"""Share of each stratum the subset keeps, in percent (about 10%, like the peers' tiny sets)."""
VQA_STRATA = ("setting", "category", "subtype", "task")
"""VQA columns that, with the config, form a stratum."""
IR_STRATA = ("task",)
"""IR columns that form a stratum (IR records have no category or subtype)."""


@dataclass(frozen=True)
class Stratum:
    """One stratum of a subset: its key, how many items it has and how many the subset keeps."""

    key: tuple
    size: int
    kept: int


def stratum_quota(size: int, percent: int = TINY_PERCENT) -> int:
    """Items a stratum of ``size`` keeps: ``percent``% rounded half up, at least one.

    Integer arithmetic, so 25 at 10% is exactly 2.5 -> 3 (no float or banker's rounding).

    Example:
        >>> [stratum_quota(n) for n in (1, 4, 5, 14, 15, 150)]
        [1, 1, 1, 1, 2, 15]
    """
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    if not 0 < percent <= 100:
        raise ValueError(f"percent must be in (0, 100], got {percent}")
    return max(1, (size * percent + 50) // 100)


def rank(seed: int, item_id: str) -> str:
    """The item's place in its stratum's draw: a hash of the seed and the id alone."""
    return hashlib.sha256(f"{seed}:{item_id}".encode()).hexdigest()


def strata_of(items: Iterable[tuple[str, Hashable]]) -> dict[Hashable, list[str]]:
    """``{stratum key: ids}`` of ``(id, key)`` pairs; raises ValueError on a repeated id."""
    groups: dict[Hashable, list[str]] = {}
    seen: set[str] = set()
    for item_id, key in items:
        if item_id in seen:
            raise ValueError(f"item ids must be unique, got {item_id!r} twice")
        seen.add(item_id)
        groups.setdefault(key, []).append(item_id)
    return groups


def stratified_ids(items: Iterable[tuple[str, Hashable]], *, seed: int, percent: int = TINY_PERCENT) -> set[str]:
    """The ids of the stratified subset of ``(id, stratum key)`` pairs (the module docstring's rule)."""
    picked: set[str] = set()
    for ids in strata_of(items).values():
        picked.update(sorted(ids, key=lambda i: rank(seed, i))[: stratum_quota(len(ids), percent)])
    return picked


def composition(items: Iterable[tuple[str, Hashable]], picked: set[str]) -> list[Stratum]:
    """Each stratum's size and kept count, strata sorted by key (for the card)."""
    groups = strata_of(items)
    return [Stratum(key, len(ids), sum(i in picked for i in ids))
            for key, ids in sorted(groups.items(), key=lambda kv: tuple(str(p) for p in kv[0]))]


def row_key(config: str, row: Mapping, columns: tuple[str, ...]) -> tuple[str, ...]:
    """A row's stratum: its config, then ``columns`` (a missing or None value counts as "-")."""
    return (config, *(row.get(c) or "-" for c in columns))


def composition_markdown(strata: list[Stratum], columns: tuple[str, ...]) -> str:
    """The composition table the card carries: one line per stratum, then the totals."""
    header = ("config", *columns, "items", TINY_CONFIG)
    size, kept = sum(s.size for s in strata), sum(s.kept for s in strata)
    rows = [(*s.key, s.size, s.kept) for s in strata] + [("**all**", *([""] * len(columns)), size, kept)]
    return markdown_table(header, rows)
