"""Append-only JSONL logs that survive a hard kill: one reader and one writer for every log of the package.

A row is appended with one write of whole lines, flushed and fsynced, so a kill leaves at most a cut-off last line;
:func:`read_jsonl` ignores it and :func:`logged_keys` drops it before the next append.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The complete rows of an append-only log (a trailing line cut off by a kill is ignored)."""
    path = Path(path)
    if not path.exists():
        return []
    rows = []
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    for number, line in enumerate(lines[:-1], start=1):  # the last element follows the final newline
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number} is not valid JSON ({error}); the log is corrupt") from None
    return rows


def append_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    """Append ``rows`` to an append-only log in one write, flushed and fsynced; returns how many were written.

    One ``write`` of whole lines to a file opened for appending: a hard kill leaves at most a cut-off last line,
    which :func:`logged_keys` drops on the next run, so every row is either logged whole or redone.

    Example:
        >>> import tempfile
        >>> log = Path(tempfile.mkdtemp()) / "samples.jsonl"
        >>> append_jsonl(log, [{"id": "a"}]), append_jsonl(log, [{"id": "b"}]), sorted(logged_keys(log, "id"))
        (1, 1, ['a', 'b'])
    """
    text = "".join(json.dumps(row) + "\n" for row in rows)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    return text.count("\n")


def logged_keys(path: Path, field: str) -> set[str]:
    """Keys already logged; drops a partial last line (left by a hard kill) so appends stay clean."""
    if path.exists():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            logger.warning("%s: dropping an incomplete last line (%d bytes) left by an interrupted run", path, len(data) - keep)
            with open(path, "r+b") as handle:
                handle.truncate(keep)
    keys: set[str] = set()
    for row in read_jsonl(path):
        if row[field] in keys:
            raise ValueError(f"{path}: {field} {row[field]!r} is logged twice; the log is corrupt")
        keys.add(row[field])
    return keys
