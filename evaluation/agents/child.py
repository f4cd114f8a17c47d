"""The sandbox's child process: confine itself, load the program, run ``run(api)`` over a pipe to the host.

Started by :mod:`bspatial.evaluation.agents.sandbox` as ``python -I child.py <config json>``; it imports
only the standard library and numpy (never the rest of bspatial, whose sources it cannot even read once
confined). In order:

1. die with the host (``PR_SET_PDEATHSIG``), work in the temp folder, import numpy;
2. resource limits: CPU seconds, address space, file size, open files, no core dumps;
3. kernel confinement (:mod:`bspatial.evaluation.agents.confine`, loaded by path): Landlock and seccomp;
4. the import guard: a program's own imports are limited to numpy, math, re, cv2, PIL, scipy and the
   standard library without the modules that reach the system (:data:`DENIED_MODULES`); imports made
   inside those libraries are theirs and pass. It gives clear messages; the kernel layer is the boundary;
5. ``run(api)``: ``api`` is an :class:`ApiProxy` whose methods send JSON requests to the host and read its
   replies. It is read-only (assigning to it raises); a forged request gets the host's refusal.

Wire format: each message is an 8-byte big-endian length and a body. Child -> host bodies are JSON (the
host never unpickles what a program could have written); host -> child bodies are pickles of plain
values and numpy arrays (the child trusts its host).
"""

from __future__ import annotations

import builtins
import ctypes
import importlib.util
import json
import math
import os
import pickle
import resource
import signal
import struct
import sys
import traceback
from types import SimpleNamespace

PROGRAM_MODULE = "agent_program"
ALLOWED_MODULES = frozenset({"numpy", "math", "re", "cv2", "PIL", "scipy"})
"""Appendix 16.5: besides the standard library, programs may import these."""
DENIED_MODULES = frozenset({
    "os", "posix", "nt", "sys", "subprocess", "_posixsubprocess", "socket", "_socket", "ssl", "select",
    "selectors", "asyncio", "http", "urllib", "ftplib", "smtplib", "poplib", "imaplib", "telnetlib", "xmlrpc",
    "socketserver", "webbrowser", "multiprocessing", "concurrent", "threading", "_thread", "ctypes", "_ctypes",
    "shutil", "signal", "pty", "tty", "termios", "fcntl", "resource", "mmap", "importlib", "imp", "runpy",
    "pkgutil", "zipimport", "builtins", "gc", "inspect", "sysconfig", "pathlib", "glob", "tempfile", "io",
    "_io", "code", "codeop", "pdb", "faulthandler", "marshal", "pickle", "shelve", "dbm", "sqlite3",
})
"""Standard-library modules a program may not import: processes, sockets, files and the interpreter's
internals (the API and numpy's own file functions stay, confined by the kernel to the temp folder)."""
HEADER = struct.Struct(">Q")
PR_SET_PDEATHSIG = 1


# ---------------------------------------------------------------------------------- wire


def _read_exact(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the host closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _json_default(value):
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} cannot be sent to the agent API: {value!r:.80}")


class Channel:
    """The child's end of the pipe pair."""

    def __init__(self, request_fd: int, reply_fd: int) -> None:
        self.request_fd, self.reply_fd = request_fd, reply_fd

    def send(self, message: dict) -> None:
        body = json.dumps(message, default=_json_default, allow_nan=False).encode()
        _write_all(self.request_fd, HEADER.pack(len(body)) + body)

    def receive(self):
        (size,) = HEADER.unpack(_read_exact(self.reply_fd, HEADER.size))
        return pickle.loads(_read_exact(self.reply_fd, size))


class MotionResult(SimpleNamespace):
    """A motion call's result: ``success``, ``reason``, ``detail``, ``steps`` (and ``point`` for approach);
    true when the motion succeeded."""

    def __bool__(self) -> bool:
        return bool(self.success)


class ApiProxy:
    """The ``api`` a program receives; each method is one request to the host (see the module docstring)."""

    __slots__ = ("_channel", "_instruction")

    def __init__(self, channel: Channel, instruction: str) -> None:
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_instruction", instruction)

    def __setattr__(self, name, value):
        raise AttributeError(f"the agent API is read-only: cannot set api.{name}")

    def __delattr__(self, name):
        raise AttributeError(f"the agent API is read-only: cannot delete api.{name}")

    @property
    def instruction(self) -> str:
        return self._instruction

    def _call(self, method: str, *args, **kwargs):
        self._channel.send({"type": "call", "method": method, "args": list(args), "kwargs": kwargs})
        reply = self._channel.receive()
        if "error" in reply:
            kind, message = reply["error"]
            raise (ValueError if kind == "ValueError" else RuntimeError)(message)
        value = reply["ok"]
        return MotionResult(**value) if isinstance(value, dict) and "success" in value else value

    def get_state(self):
        return self._call("get_state")

    def get_image(self, camera="head"):
        return self._call("get_image", camera)

    def get_depth(self, camera="head"):
        return self._call("get_depth", camera)

    def pixel_to_point(self, u, v, camera="head"):
        return self._call("pixel_to_point", u, v, camera)

    def point_to_pixel(self, p, camera="head"):
        return self._call("point_to_pixel", p, camera)

    def pixel_to_ray(self, u, v, camera="head"):
        return self._call("pixel_to_ray", u, v, camera)

    def point_at(self, text, camera="head"):
        return self._call("point_at", text, camera)

    def ask_vlm(self, question, cameras=("head",)):
        return self._call("ask_vlm", question, cameras)

    def approach(self, p, standoff=0.55, arm="auto"):
        return self._call("approach", p, standoff=standoff, arm=arm)

    def move_base(self, dx=0.0, dy=0.0, dyaw=0.0):
        return self._call("move_base", dx, dy, dyaw)

    def move_ee_to(self, p, arm="auto", speed=None, use_torso=False):
        return self._call("move_ee_to", p, arm=arm, speed=speed, use_torso=use_torso)

    def move_ee_by(self, d, arm="auto", speed=None, use_torso=False):
        return self._call("move_ee_by", d, arm=arm, speed=speed, use_torso=use_torso)

    def open_gripper(self, arm="auto"):
        return self._call("open_gripper", arm=arm)

    def close_gripper(self, arm="auto"):
        return self._call("close_gripper", arm=arm)

    def wait(self, seconds):
        return self._call("wait", seconds)

    def log(self, msg, **data):
        return self._call("log", str(msg), **data)


# ---------------------------------------------------------------------------------- confinement


def _limits(config: dict) -> None:
    cpu = int(math.ceil(config["cpu_s"]))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (config["memory_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (config["file_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (config["open_files"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _read_paths(hidden_roots: list[str]) -> list[str]:
    """What the program's libraries need to read: the interpreter, its site-packages, system libraries.

    A folder that holds one of ``hidden_roots`` (bspatial's sources) is left out: a rule on it would open
    the sources below (an editable install may put the repository on ``sys.path``). Folders inside a hidden
    root stay (a virtual environment inside the repository)."""
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    paths += [p for p in sys.path if p and os.path.isdir(p)]
    paths += ["/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/etc/ld.so.cache",
              "/usr/share/zoneinfo", "/dev/urandom", "/sys/devices/system/cpu", "/proc/self"]
    out = []
    for path in (os.path.realpath(p) for p in paths):
        if not any(root == path or root.startswith(path.rstrip("/") + "/") for root in hidden_roots):
            out.append(path)
    return out


def _confine(config: dict) -> None:
    spec = importlib.util.spec_from_file_location("_bspatial_confine", config["confine_path"])
    confine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(confine)
    if config["landlock"]:
        confine.apply_landlock(_read_paths(config["hidden_roots"]), [config["workdir"], "/dev/null"])
    if config["seccomp"]:
        confine.apply_seccomp()


def _guard_imports() -> None:
    original = builtins.__import__
    stdlib = sys.stdlib_module_names
    allowed_text = "numpy, math, re, cv2, PIL, scipy and the standard library without its system modules"

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        importer = (globals or {}).get("__name__")
        if importer is None or importer in (PROGRAM_MODULE, "__main__") or importer not in sys.modules:
            top = name.partition(".")[0]
            if level or top in DENIED_MODULES or (top not in ALLOWED_MODULES and top not in stdlib):
                raise ImportError(f"import of {name!r} is not allowed in agent programs (allowed: {allowed_text})")
        return original(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded


# ---------------------------------------------------------------------------------- main


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    if sys.platform.startswith("linux"):   # elsewhere the host's session kill is all there is
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != config["host_pid"]:
        return 1
    os.chdir(config["workdir"])
    channel = Channel(config["request_fd"], config["reply_fd"])
    import numpy  # noqa: F401  (the proxy's replies hold arrays; loaded before the limits)

    with open(config["program_path"], encoding="utf-8") as handle:
        source = handle.read()
    _limits(config)
    _confine(config)
    _guard_imports()
    channel.send({"type": "ready"})
    hello = channel.receive()
    api = ApiProxy(channel, hello["instruction"])
    namespace = {"__name__": PROGRAM_MODULE, "__builtins__": builtins}
    try:
        exec(compile(source, "program.py", "exec"), namespace)
        run = namespace.get("run")
        if not callable(run):
            raise TypeError("the program must define run(api)")
        run(api)
    except BaseException as error:   # the program's failure is the result: reported, not re-raised
        _flush()
        channel.send({"type": "error", "error": f"{type(error).__name__}: {error}"[:2000],
                      "traceback": "".join(traceback.format_exception(error))[-8000:]})
        return 0
    _flush()
    channel.send({"type": "done"})
    return 0


def _flush() -> None:
    """Flush what the program printed before the host learns it ended (it may stop the child at once)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:   # the file-size limit: what could be written is there
            pass


if __name__ == "__main__":
    code = main(sys.argv)
    _flush()
    os._exit(code)
