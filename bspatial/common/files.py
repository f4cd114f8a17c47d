"""Nothing half-written: atomic file writes and folder publishing, one implementation.

A reader (or a resumed run) sees either the old file or the complete new one, never a prefix: the
bytes go to a temporary file in the same folder (same file system, so the rename is atomic), are
flushed to disk, and the temporary file is renamed over the target. A folder is built under a staging
name and renamed into place the same way; a folder that already exists is swapped with the new one in one
step where the kernel can (Linux ``renameat2(RENAME_EXCHANGE)``), else moved aside first.

A killed run leaves its staging folder (and, at worst, the old folder moved aside) behind. Each command
holds its output's run lock (:mod:`bspatial.common.locks`) while it builds, so whatever staging or
moved-aside folder of the same output it finds while holding the lock belongs to a run that is gone:
:func:`remove_stale_staging` removes it (restoring the old folder if the new one never arrived), and
:func:`remove_stale_temp_files` removes the temporary files of writes cut short.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> atomic_write_text(folder / "a.json", "{}").read_text()
    '{}'
"""

from __future__ import annotations

import ctypes
import errno
import functools
import json
import logging
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

STAGING_PURPOSE = "building"
"""The default ``purpose`` of :func:`staging_folder`: the hidden sibling ``.<out>.building-<8 chars>``."""
ASIDE_PURPOSE = "old"
"""Where the kernel cannot swap two folders, :func:`publish_folder` moves the old one aside to
``.<out>.old-<pid>`` while it renames the new one in."""
_RANDOM_PART = r"[a-z0-9_]{8}"   # tempfile's names: 8 characters of lowercase letters, digits and "_"
# atomic_write_bytes' temporary files: mkstemp(prefix=".<name>.", suffix=".tmp")
_TEMP_FILE = re.compile(rf"^\..+\.{_RANDOM_PART}\.tmp$")
_AT_FDCWD = -100          # <fcntl.h>: paths relative to the working directory
_RENAME_EXCHANGE = 2      # <linux/fs.h>: renameat2 swaps the two paths atomically (Linux >= 3.15)


class NotAFolderError(ValueError):
    """An output that must be a folder is, or lies under, something that is not one; the message names it.
    A ``ValueError``, so the commands report it as a usage error (no traceback)."""


def require_folder_path(path: str | os.PathLike) -> Path:
    """``path`` as a Path if it is a folder or can be made one; else :class:`NotAFolderError` naming what is
    in the way (``path`` itself, or the first of its parents that exists and is not a folder).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> taken = Path(tempfile.mkdtemp()) / "taken"
        >>> _ = taken.write_text("x")
        >>> require_folder_path(taken / "out")
        Traceback (most recent call last):
        ...
        bspatial.common.files.NotAFolderError: ... is a file, so the folder .../taken/out cannot be made
    """
    path = Path(path)
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return path
        if candidate.exists() or candidate.is_symlink():   # a file, a socket, a dangling link, ...
            kind = "a file" if candidate.is_file() else "a dangling link or a special file"
            if candidate == path:
                raise NotAFolderError(f"{path} is {kind}, not a folder")
            raise NotAFolderError(f"{candidate} is {kind}, so the folder {path} cannot be made")
    return path


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, fsync, rename); returns the path."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes it 0600; give it the mode open() would have
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@functools.cache
def _umask() -> int:
    mask = os.umask(0)   # the only way to read it is to set it: put it straight back
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically; returns the path."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def staging_folder(out: str | os.PathLike, purpose: str = STAGING_PURPOSE) -> Path:
    """A fresh empty folder beside ``out`` to build it in (same file system, so publishing is a rename)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.{purpose}-", dir=out.parent))


def publish_folder(stage: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Rename the finished folder ``stage`` onto ``out``; returns ``out``.

    An existing ``out`` is replaced so that a kill at any moment leaves the old folder or the new one at
    ``out``: the two are swapped in one atomic step where the kernel can, and the old one (then at ``stage``)
    is deleted. Elsewhere the old folder is renamed aside to ``.<out>.old-<pid>``, the new one renamed in,
    the old one deleted; a kill between the two renames leaves ``out`` missing and the old folder aside,
    which :func:`remove_stale_staging` puts back on the next run.

    Raises:
        NotAFolderError: ``out`` exists and is not a folder (a file is never replaced by a folder).
    """
    stage, out = Path(stage), Path(out)
    if not (out.exists() or out.is_symlink()):
        os.replace(stage, out)
    elif not out.is_dir():
        raise NotAFolderError(f"{out} is a file; refusing to replace it with the folder {stage}")
    elif _exchange(stage, out):
        _remove_tree(stage)   # the old folder, now under the staging name
    else:
        aside = out.with_name(f".{out.name}.{ASIDE_PURPOSE}-{os.getpid()}")
        _remove_tree(aside)
        os.replace(out, aside)
        os.replace(stage, out)
        _remove_tree(aside)
    return out


def remove_stale_staging(out: str | os.PathLike, purpose: str = STAGING_PURPOSE) -> list[Path]:
    """Clear what killed runs of ``out`` left beside it; returns the paths removed. Call it only while
    holding ``out``'s run lock: any staging folder of ``out`` found then belongs to a run that is gone.

    * ``.<out>.<purpose>-*`` (a :func:`staging_folder`): removed;
    * ``.<out>.old-<pid>`` (the old folder :func:`publish_folder` moved aside): put back at ``out`` if ``out``
      is missing (the new folder never arrived), else removed.
    """
    out = Path(out)
    if not out.parent.is_dir():
        return []
    staging = re.compile(rf"^\.{re.escape(out.name)}\.{re.escape(purpose)}-{_RANDOM_PART}$")
    aside = re.compile(rf"^\.{re.escape(out.name)}\.{ASIDE_PURPOSE}-\d+$")
    removed = [p for p in sorted(out.parent.iterdir()) if staging.match(p.name) and p.is_dir()]
    asides = sorted((p for p in out.parent.iterdir() if aside.match(p.name) and p.is_dir()),
                    key=lambda p: p.stat().st_ctime)   # a rename sets ctime: the last one moved aside is newest
    if asides and not (out.exists() or out.is_symlink()):
        restored = asides.pop()
        os.replace(restored, out)
        logger.warning("restored %s from %s: an interrupted run had moved it aside and never put the new one in",
                       out, restored.name)
    removed += asides
    for path in removed:
        _remove_tree(path)
        logger.warning("removed stale %s (left by an interrupted run of %s)", path, out)
    return removed


def remove_stale_temp_files(folder: str | os.PathLike) -> list[Path]:
    """Remove the temporary files :func:`atomic_write_bytes` left in ``folder`` (not below it) when killed
    mid-write; returns them. Call it only while holding the lock of the run that writes ``folder``."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = [p for p in sorted(folder.iterdir()) if _TEMP_FILE.match(p.name) and p.is_file()]
    for path in removed:
        path.unlink(missing_ok=True)
        logger.warning("removed stale %s (a write cut short by an interrupted run)", path)
    return removed


def check_run_settings(path: str | os.PathLike, settings: dict, what: str = "a run") -> None:
    """A run folder's settings manifest: written (atomically) on the first run; on a rerun, settings that differ
    from the recorded ones are refused, naming each field (old, new), so one folder never mixes two runs."""
    path = Path(path)
    if not path.exists():
        atomic_write_text(path, json.dumps(settings, indent=2))
        return
    old = json.loads(path.read_text())
    diff = {k: (old.get(k), v) for k, v in settings.items() if old.get(k) != v}
    if diff:
        raise ValueError(f"{path.parent} holds {what} with other settings {diff} (old, new); use another --out")


def _exchange(a: Path, b: Path) -> bool:
    """Swap the paths ``a`` and ``b`` in one atomic step; False where the system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)   # glibc >= 2.28
    if renameat2 is None:
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):   # kernel or file system lacks it
        return False
    raise OSError(error, os.strerror(error), str(a), None, str(b))


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        logger.warning("could not remove %s; remove it by hand", path)
