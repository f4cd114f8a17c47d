"""Nothing half-written: atomic file writes and folder publishing, one implementation.

A reader (or a resumed run) sees either the old file or the complete new one, never a prefix: the
bytes go to a temporary file in the same folder (same file system, so the rename is atomic), are
flushed to disk, and the temporary file is renamed over the target. A folder is built under a staging
name and renamed into place the same way.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> atomic_write_text(folder / "a.json", "{}").read_text()
    '{}'
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, fsync, rename); returns the path."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically; returns the path."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def staging_folder(out: str | os.PathLike, purpose: str = "building") -> Path:
    """A fresh empty folder beside ``out`` to build it in (same file system, so publishing is a rename)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.{purpose}-", dir=out.parent))


def publish_folder(stage: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Rename the finished folder ``stage`` onto ``out``; an existing ``out`` is removed only after the new
    one is in place, so an interruption leaves the old folder or the new one, never neither."""
    stage, out = Path(stage), Path(out)
    if out.exists():
        trash = out.with_name(f".{out.name}.old-{os.getpid()}")
        shutil.rmtree(trash, ignore_errors=True)
        os.replace(out, trash)
        os.replace(stage, out)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(stage, out)
    return out
