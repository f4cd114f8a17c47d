"""Run an agent program's ``run(api)`` in a confined child process, serving the API over a pipe.

The child (:mod:`bspatial.evaluation.agents.child`) runs ``python -I`` in its own session and temp
folder, under resource limits (:class:`SandboxLimits`: CPU seconds, address space, file size, open files)
and kernel confinement (:mod:`bspatial.evaluation.agents.confine`: Landlock for files, TCP and signals,
seccomp for processes, sockets and the like), with a guarded import list (Appendix 16.5: numpy, math, re,
cv2, PIL, scipy and the standard library). It dies with the host.

The host answers each request by calling :meth:`AgentAPI.call` and watches the child:

* no robot command (:data:`~bspatial.evaluation.agents.api.ROBOT_METHODS`) for ``inactivity_s`` of wall
  time (Appendix 16.5: 900 s) -> stopped; the caller then holds the robot still until the episode ends
  (:func:`bspatial.evaluation.agents.episode.run_agent_episode`);
* total wall time over ``wall_s``, or the temp folder over ``disk_bytes`` -> stopped;
* the episode ended (budget or decided outcome) -> stopped once the call that ended it has its reply;
* a malformed or oversized request -> stopped (protocol violation); an unknown method or bad arguments
  -> the call is refused (the program gets the error and may go on).

The host never unpickles or executes anything the child sends: requests are JSON, checked against the API.
"""

from __future__ import annotations

import json
import logging
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bspatial.evaluation.agents import child as child_module
from bspatial.evaluation.agents import confine
from bspatial.evaluation.agents.api import ROBOT_METHODS, AgentAPI

logger = logging.getLogger(__name__)

INACTIVITY_S = 900.0
"""Appendix 16.5: a program that issues no robot command for 900 s of wall time is stopped."""
POLL_S = 0.1
"""How often (s) the host checks the watchdog, the wall limit and the temp folder while it waits."""
MAX_REQUEST_BYTES = 1 << 20
"""Largest request the host reads (1 MiB): API arguments are numbers and short strings."""
EXIT_GRACE_S = 1.0
"""How long a child that reported its end may take to exit (flushing its output) before SIGKILL."""
OUTPUT_TAIL_BYTES = 64 << 10
"""The program's stdout / stderr kept in :class:`ProgramRun` (the last 64 KiB of each)."""

Outcome = Literal["finished", "raised", "stopped", "crashed"]


@dataclass(frozen=True)
class SandboxLimits:
    """What the child may use. Defaults are for evaluation; tests pass tiny ones.

    Attributes:
        inactivity_s: wall seconds without a robot command before the program is stopped (paper: 900).
        wall_s: wall seconds for the whole program.
        cpu_s: CPU seconds (RLIMIT_CPU; the kernel stops the child at the limit).
        memory_bytes: address space (RLIMIT_AS): a larger allocation raises MemoryError in the program.
        file_bytes: largest file the child may write (RLIMIT_FSIZE), its stdout / stderr included.
        disk_bytes: the temp folder's total size.
        open_files: file descriptors (RLIMIT_NOFILE).
        call_idle_s: wall seconds without any API call before the program is stopped (None: no such limit;
            development screening uses 20 s, Appendix 16.5).
    """

    inactivity_s: float = INACTIVITY_S
    wall_s: float = 3600.0
    cpu_s: float = 1800.0
    memory_bytes: int = 4 << 30
    file_bytes: int = 64 << 20
    disk_bytes: int = 256 << 20
    open_files: int = 256
    call_idle_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("inactivity_s", "wall_s", "cpu_s", "call_idle_s"):
            value = getattr(self, name)
            if value is None and name == "call_idle_s":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        for name in ("memory_bytes", "file_bytes", "disk_bytes", "open_files"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")


@dataclass
class ProgramRun:
    """How a program's run ended.

    Attributes:
        outcome: "finished" (``run`` returned), "raised" (the program raised; refusals by the sandbox
            arrive this way: ImportError, PermissionError, MemoryError...), "stopped" (the host or the kernel
            ended it) or "crashed" (the child died without saying why).
        reason: one sentence: the exception, or why it was stopped.
        traceback: the program's traceback when it raised.
        stdout / stderr: the tails of what it printed.
        calls: API requests served; robot_commands: those that were robot commands; refused: requests the
            host refused (unknown method, bad arguments).
        wall_s: seconds from the child's start to its end.
        protections: the confinements in force (``landlock``, ``seccomp``, ``rlimits``, ``import_guard``).
    """

    outcome: Outcome
    reason: str
    traceback: str = ""
    stdout: str = ""
    stderr: str = ""
    calls: int = 0
    robot_commands: int = 0
    refused: int = 0
    wall_s: float = 0.0
    protections: tuple[str, ...] = field(default_factory=tuple)


class _Stop(Exception):
    """The host ends the child: outcome and reason."""

    def __init__(self, outcome: Outcome, reason: str) -> None:
        super().__init__(reason)
        self.outcome, self.reason = outcome, reason


def check_confinement(require: bool) -> dict[str, bool]:
    """The kernel confinements to apply; with ``require`` a missing one is an error saying what to do."""
    have = confine.available()
    if require and not all(have.values()):
        missing = [name for name, ok in have.items() if not ok]
        raise RuntimeError(f"the agent sandbox needs {' and '.join(missing)} on this machine (Linux >= 5.13 with "
                           f"Landlock enabled, libseccomp2 installed); pass require_confinement=False to run with "
                           f"resource limits and the import guard only")
    return have


def run_program(source: str, api: AgentAPI, *, limits: SandboxLimits = SandboxLimits(),
                require_confinement: bool = True, workdir_parent: str | os.PathLike | None = None) -> ProgramRun:
    """Run ``source`` (a module defining ``run(api)``) in the sandbox against ``api``; never raises for
    anything the program does.

    Args:
        source: the program's text.
        api: the host-side API of the running episode.
        limits: the child's limits.
        require_confinement: refuse to run when Landlock or seccomp is missing (see :func:`check_confinement`).
        workdir_parent: where the child's temp folder is made (default: the system temp folder).
    """
    if not isinstance(source, str):
        raise ValueError(f"source must be the program's text (str), got {type(source).__name__}")
    have = check_confinement(require_confinement)
    if not all(have.values()):
        logger.warning("agent sandbox without %s: resource limits and the import guard only",
                       [name for name, ok in have.items() if not ok])
    workdir = Path(tempfile.mkdtemp(prefix="bspatial-agent-", dir=workdir_parent))
    protections = tuple(name for name, ok in have.items() if ok) + ("rlimits", "import_guard")
    try:
        return _Host(source, api, limits, workdir, have, protections).run()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


class _Host:
    """One child's lifetime: start, serve, stop, report."""

    def __init__(self, source: str, api: AgentAPI, limits: SandboxLimits, workdir: Path, have: dict[str, bool],
                 protections: tuple[str, ...]) -> None:
        self.source, self.api, self.limits, self.workdir = source, api, limits, workdir
        self.have, self.protections = have, protections
        self.calls = self.robot_commands = self.refused = 0
        self.reported = False
        self.disk_checked = 0.0

    def run(self) -> ProgramRun:
        program = self.workdir / "program.py"
        program.write_text(self.source, encoding="utf-8")
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        config = {"host_pid": os.getpid(), "workdir": str(self.workdir), "program_path": str(program),
                  "request_fd": request_w, "reply_fd": reply_r, "confine_path": confine.__file__,
                  "landlock": self.have["landlock"], "seccomp": self.have["seccomp"], "cpu_s": self.limits.cpu_s,
                  "memory_bytes": self.limits.memory_bytes, "file_bytes": self.limits.file_bytes,
                  "open_files": self.limits.open_files, "hidden_roots": _source_roots()}
        started = time.monotonic()
        # The host reads the program's output through the handles it opened, never by name again: the
        # program may replace stdout.txt with a link to a file only the host can read.
        with open(self.workdir / "stdout.txt", "w+b") as stdout, open(self.workdir / "stderr.txt", "w+b") as stderr:
            try:
                process = subprocess.Popen(
                    # -u: unbuffered, so what the program printed is in the file even when it is stopped mid-call
                    [sys.executable, "-I", "-u", child_module.__file__, json.dumps(config)], stdin=subprocess.DEVNULL,
                    stdout=stdout, stderr=stderr, cwd=self.workdir, env=self._env(),
                    pass_fds=(request_w, reply_r), close_fds=True, start_new_session=True)
            finally:
                os.close(request_w)
                os.close(reply_r)
            self.process, self.request_fd, self.reply_fd = process, request_r, reply_w
            self.started = started
            try:
                outcome, reason, trace = self._serve()
            except _Stop as stop:
                outcome, reason, trace = stop.outcome, stop.reason, ""
            finally:
                self._kill()
                os.close(request_r)
                os.close(reply_w)
            if outcome == "crashed":
                outcome, reason = self._exit_reason(process.returncode, reason)
            run = ProgramRun(outcome, reason, trace, _tail(stdout), _tail(stderr), self.calls, self.robot_commands,
                             self.refused, round(time.monotonic() - started, 3), self.protections)
        logger.info("agent program %s: %s (%d calls, %.1f s)", run.outcome, run.reason, run.calls, run.wall_s)
        return run

    def _env(self) -> dict[str, str]:
        # Nothing of the host's environment (keys, proxies, HOME) reaches the program; one thread per library.
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.workdir), "TMPDIR": str(self.workdir), "LANG": "C.UTF-8",
                "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1"}

    # ------------------------------------------------------------------ serving

    def _serve(self) -> tuple[Outcome, str, str]:
        ready = self._receive(deadline=time.monotonic() + 60.0, waiting_for="start")
        if ready is None:
            return "crashed", "the child exited before it was ready", ""
        if ready.get("type") != "ready":
            raise _Stop("stopped", f"protocol violation: expected the child's ready message, got {ready!r:.200}")
        self.last_command = time.monotonic()   # the watchdog starts when the program does
        self._reply({"instruction": self.api.instruction})
        while True:
            message = self._receive(deadline=None, waiting_for="request")
            if message is None:
                return "crashed", "the child exited without reporting", ""
            kind = message.get("type")
            self.reported = kind in ("done", "error")
            if kind == "done":
                return "finished", "run(api) returned", ""
            if kind == "error":
                return "raised", str(message.get("error"))[:2000], str(message.get("traceback", ""))[-8000:]
            if kind != "call":
                raise _Stop("stopped", f"protocol violation: unknown message type {kind!r:.80}")
            self._answer(message)
            if self.api.run.done:
                raise _Stop("stopped", f"the episode ended ({self.api.run.status}) at step {self.api.run.steps}")

    def _answer(self, message: dict) -> None:
        method, args, kwargs = message.get("method"), message.get("args", []), message.get("kwargs", {})
        self.calls += 1
        if not isinstance(method, str) or not isinstance(args, list) or not isinstance(kwargs, dict):
            self.refused += 1
            self._reply({"error": ("ValueError", f"a call needs a method name, an argument list and a keyword "
                                                 f"dict, got {message!r:.200}")})
            return
        steps_before = self.api.run.steps
        try:
            value = self.api.call(method, args, kwargs)
        except (ValueError, TypeError, RuntimeError) as error:
            self.refused += 1
            self._reply({"error": (type(error).__name__, f"{method}: {error}")})
            return
        if method in ROBOT_METHODS:
            self.robot_commands += 1
            if self.api.run.steps > steps_before:
                # Only a command that moved the world resets the watchdog (a loop of wait(0) does not); its own
                # duration is the host's, not the program's.
                self.last_command = time.monotonic()
        self._reply({"ok": value})

    def _deadline(self) -> tuple[float, str]:
        inactivity = self.last_command + self.limits.inactivity_s
        wall = self.started + self.limits.wall_s
        limits = [(inactivity, f"no robot command for {self.limits.inactivity_s:g} s (wall time)"),
                  (wall, f"the wall-clock limit of {self.limits.wall_s:g} s was reached")]
        if self.limits.call_idle_s is not None:
            limits.append((self.last_call + self.limits.call_idle_s,
                           f"no API call for {self.limits.call_idle_s:g} s (wall time)"))
        return min(limits, key=lambda limit: limit[0])

    def _check_disk(self) -> None:
        self.disk_checked = time.monotonic()
        used = 0
        for folder, _, files in os.walk(self.workdir):        # links are counted as links, never followed
            for name in files:
                try:
                    used += os.lstat(os.path.join(folder, name)).st_size
                except FileNotFoundError:                   # removed while we looked
                    pass
        if used > self.limits.disk_bytes:
            raise _Stop("stopped", f"the temp folder holds {used} bytes, over the {self.limits.disk_bytes}-byte limit")

    def _receive(self, deadline: float | None, waiting_for: str) -> dict | None:
        """The next message, None at end of file; stops the child at its deadlines."""
        header = self._read(child_module.HEADER.size, deadline, waiting_for)
        if header is None:
            return None
        (size,) = child_module.HEADER.unpack(header)
        if size > MAX_REQUEST_BYTES:
            raise _Stop("stopped", f"protocol violation: a {size}-byte request (limit {MAX_REQUEST_BYTES})")
        body = self._read(size, deadline, waiting_for)
        if body is None:
            return None
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as error:   # not JSON, not UTF-8, nested too deep, a 5000-digit int
            raise _Stop("stopped", f"protocol violation: a request that is not readable JSON "
                                   f"({type(error).__name__}: {str(error)[:120]})") from None
        if not isinstance(message, dict):
            raise _Stop("stopped", f"protocol violation: a request that is not an object: {message!r:.80}")
        return message

    def _read(self, n: int, deadline: float | None, waiting_for: str) -> bytes | None:
        chunks, left = [], n
        while left:
            limit, why = (deadline, f"the child did not {waiting_for} in time") if deadline else self._deadline()
            wait = min(POLL_S, limit - time.monotonic())
            if wait <= 0:
                raise _Stop("stopped", why)
            readable, _, _ = select.select([self.request_fd], [], [], wait)
            if time.monotonic() - self.disk_checked >= POLL_S:   # also while the program keeps calling
                self._check_disk()
            if not readable:
                continue
            chunk = os.read(self.request_fd, min(left, 1 << 20))
            if not chunk:
                return None
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _reply(self, value: dict) -> None:
        import pickle

        self.last_call = time.monotonic()   # the program's idle time starts when its call is answered
        body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(child_module.HEADER.pack(len(body)) + body)
        while view:
            limit, why = self._deadline()
            wait = limit - time.monotonic()
            if wait <= 0:
                raise _Stop("stopped", why)
            _, writable, _ = select.select([], [self.reply_fd], [], min(POLL_S, wait))
            if writable:
                try:
                    view = view[os.write(self.reply_fd, view[:1 << 16]):]
                except BrokenPipeError:
                    return   # the child is gone; its exit is read next

    # ------------------------------------------------------------------ ending

    def _kill(self) -> None:
        if self.reported:
            try:
                self.process.wait(timeout=EXIT_GRACE_S)   # a child that reported its end exits by itself
            except subprocess.TimeoutExpired:
                pass
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()

    def _exit_reason(self, code: int | None, reason: str) -> tuple[Outcome, str]:
        """Name the limit a child died of (the kernel's signals), else keep it a crash."""
        by_signal = {int(signal.SIGXCPU): f"the CPU limit of {self.limits.cpu_s:g} s was reached",
                     int(signal.SIGKILL): f"killed (the CPU hard limit of {self.limits.cpu_s:g} s + 1 s, or out of memory)",
                     int(signal.SIGXFSZ): f"a file grew past the {self.limits.file_bytes}-byte limit"}
        if code is not None and code < 0 and -code in by_signal:
            return "stopped", by_signal[-code]
        return "crashed", f"{reason} (exit status {code})"


def _source_roots() -> list[str]:
    """The folders holding bspatial's sources (and the repository above them): the child must not read them,
    even when an editable install puts them on ``sys.path``."""
    import bspatial
    import bspatial.evaluation

    roots = {Path(bspatial.__file__).resolve().parent, Path(bspatial.evaluation.__file__).resolve().parent}
    return sorted({str(root) for root in roots} | {str(root.parent) for root in roots})


def _tail(handle) -> str:
    """The last :data:`OUTPUT_TAIL_BYTES` of an output file, read through the host's own handle."""
    size = os.fstat(handle.fileno()).st_size
    handle.seek(max(0, size - OUTPUT_TAIL_BYTES))
    return handle.read().decode("utf-8", errors="replace")
