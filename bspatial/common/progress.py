"""Progress of long work: a bar on a terminal, periodic log lines in a log file, one implementation.

A carriage-return bar is what a person at a terminal wants; in a batch log (stderr redirected to a file, a CI
job, ``nohup``) it turns into hundreds of partial lines, or nothing at all where the bar disables itself
(``tqdm(disable=None)``). :func:`progress_bar` gives a tqdm bar when stderr is a terminal and otherwise a
:class:`LogProgress` that logs one line per :data:`LOG_INTERVAL_S` seconds (``BSPATIAL_PROGRESS_SECONDS``
overrides it) and one when it closes. :func:`quiet_library_progress` keeps the libraries' own bars (datasets,
huggingface_hub) out of such logs; the ``bspatial`` command line calls it when stderr is not a terminal.

Example:
    >>> with progress_bar(3, "episodes", enabled=False) as bar:
    ...     bar.update()
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

logger = logging.getLogger("bspatial.progress")
T = TypeVar("T")

LOG_INTERVAL_S = 30.0
INTERVAL_ENV = "BSPATIAL_PROGRESS_SECONDS"
# Read by datasets and huggingface_hub when they are imported (here and in every child process).
LIBRARY_PROGRESS_ENV = ("HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS")
# The SVT-AV1 video encoder (lerobot's default codec) writes its own warnings to stderr for every episode
# ("Svt[warn]: Preset M12 is mapped to M10."); its log level comes from this variable (1 = errors only).
VIDEO_ENCODER_LOG_ENV = ("SVT_LOG", "1")


def stderr_is_terminal() -> bool:
    return bool(getattr(sys.stderr, "isatty", None)) and sys.stderr.isatty()


def log_interval() -> float:
    """Seconds between progress lines: ``$BSPATIAL_PROGRESS_SECONDS`` (a positive number) or 30."""
    raw = os.environ.get(INTERVAL_ENV)
    if raw is None:
        return LOG_INTERVAL_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"{INTERVAL_ENV} must be a positive number of seconds, got {raw!r}")
    return value


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class LogProgress:
    """A progress bar's interface (``update``, ``close``, a context manager) that logs lines instead.

    Logs ``<desc>: <done>/<total> <unit> (<pct>%), <elapsed> elapsed, ~<left> left`` when ``update`` runs at
    least ``interval`` seconds after the previous line, and once more on ``close``. ``clock`` is injectable so
    tests need not sleep.
    """

    def __init__(self, total: int | None, desc: str, unit: str = "it", interval: float | None = None,
                 clock=time.monotonic, initial: int = 0) -> None:
        self.total, self.desc, self.unit = total, desc, unit
        self.interval = log_interval() if interval is None else float(interval)
        self.clock = clock
        self.initial = self.n = initial
        self.start = self.last = clock()
        self.closed = False

    def line(self) -> str:
        elapsed = self.clock() - self.start
        if self.total:
            done = self.n - self.initial   # a resumed run's rate counts only this run's work
            left = elapsed / done * (self.total - self.n) if done else None
            return (f"{self.desc}: {self.n}/{self.total} {self.unit} ({100 * self.n / self.total:.0f}%), "
                    f"{_duration(elapsed)} elapsed, ~{_duration(left) if left is not None else '?'} left")
        return f"{self.desc}: {self.n} {self.unit}, {_duration(elapsed)} elapsed"

    def update(self, n: int = 1) -> None:
        self.n += n
        now = self.clock()
        if now - self.last >= self.interval:
            self.last = now
            logger.info("%s", self.line())

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:  # tqdm's interface; nothing to log
        pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            logger.info("%s", self.line())

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _NoProgress:
    n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(total: int | None, desc: str, unit: str = "it", enabled: bool = True, leave: bool = True,
                 initial: int = 0):
    """A tqdm bar on a terminal, a :class:`LogProgress` otherwise, nothing when ``enabled`` is False;
    ``initial`` counts work done before (a resumed run)."""
    if not enabled:
        return _NoProgress()
    if stderr_is_terminal():
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, unit=unit, leave=leave, initial=initial)
    return LogProgress(total, desc, unit, initial=initial)


def track(items: Iterable[T], desc: str, unit: str = "it", total: int | None = None, enabled: bool = True,
          leave: bool = True) -> Iterator[T]:
    """Iterate ``items`` under :func:`progress_bar` (``total`` defaults to ``len(items)`` where it has one)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with progress_bar(total, desc, unit, enabled, leave) as bar:
        for item in items:
            yield item
            bar.update()


def quiet_library_progress() -> None:
    """Keep the libraries' progress bars (and the video encoder's per-episode warnings) out of logs: set their
    switches for this process and its children (unless the user set them), and turn them off in the libraries
    already imported."""
    for name in LIBRARY_PROGRESS_ENV:
        os.environ.setdefault(name, "1")
    os.environ.setdefault(*VIDEO_ENCODER_LOG_ENV)
    if "datasets" in sys.modules:
        sys.modules["datasets"].disable_progress_bars()
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()


__all__ = ["LOG_INTERVAL_S", "LogProgress", "log_interval", "progress_bar", "quiet_library_progress",
           "stderr_is_terminal", "track"]
