"""One run per output folder: an exclusive lock that a second process meets at once, naming the holder.

Two runs writing one folder mix their records (measured: the same ``eval-vlm`` started twice on one
``--out`` logged 1,811 rows for 1,082 items, and both exited 0). Every command that owns an output folder
(``eval-vlm``, ``rollout``, ``train``, ``build``, ``demos``) holds this lock for its whole run, so its
resume, fingerprint and manifest checks cannot interleave with another process's.

The lock is ``fcntl.flock`` on a small file: the kernel drops it when the holder exits, however it
exits (a ``kill -9`` included), so a crashed run never leaves a folder locked. A run that ends removes the
file; one that was killed leaves it, unlocked, for the next run to take over.

Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with run_folder_lock(folder, "demo"):
    ...     pass
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from bspatial.common.distributed import Launch

LOCK_FILE = ".lock"


def process_lock_name() -> str:
    """The lock file of this process: one per rank when a launcher started several (see
    :class:`bspatial.common.distributed.Launch`; the ranks share the run folder), else :data:`LOCK_FILE`."""
    launch = Launch.of_environment()
    return f"{LOCK_FILE}.rank{launch.rank}" if launch.world > 1 else LOCK_FILE


class RunFolderLocked(ValueError):
    """Another live process holds the run folder; the message names it (pid, command, start time)."""


@contextlib.contextmanager
def run_folder_lock(folder: str | os.PathLike, command: str, *, name: str = LOCK_FILE) -> Iterator[Path]:
    """Hold ``folder``'s exclusive lock (creating the folder) for the ``with`` block; yields the folder.

    Args:
        folder: the run folder (or, for a folder published by a rename, its parent).
        command: what holds it, for the message another process gets (e.g. ``"rollout scripted held_out"``).
        name: the lock file's name inside ``folder`` (one per output, or per rank of a sharded run).

    Raises:
        RunFolderLocked: another live process holds the lock.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    handle = _acquire(path)
    try:
        started = datetime.datetime.now().isoformat(timespec="seconds")
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                                 "started": started}))
        handle.flush()
        yield folder
    finally:
        # Unlinked while still held: a process that opened the old file meanwhile sees the path change
        # and retries (see _acquire), so two holders can never coexist.
        path.unlink(missing_ok=True)
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()


def _acquire(path: Path):
    while True:
        handle = open(path, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise RunFolderLocked(f"{path.parent} is in use by {holder}; wait for it to finish or use another "
                                  "output folder") from None
        try:
            same = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return handle
        handle.close()   # the previous holder removed the file between our open and our lock: start over
