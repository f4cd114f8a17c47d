"""Kernel confinement of the sandbox's child process: Landlock (files, TCP, signals) and seccomp (syscalls).

Python-level guards (the child's import hook) are easy to get around from inside Python (a class's
``__subclasses__`` reaches ``os``); these two Linux mechanisms are not, and they are what keeps a hostile
program from the host. Both apply to the calling process only, cannot be undone, and survive into every
thread. Used by :mod:`bspatial.evaluation.agents.child` before the program is loaded; it imports only the
standard library (the child runs it by path, without the rest of bspatial).

* Landlock (kernel 5.13+; ABI 4 adds TCP, ABI 6 signal scoping): reading and executing only below the
  given read-only folders (the Python installation and its site-packages, system libraries), writing only
  below the work folder; where the kernel has them, no TCP bind or connect and no signals to processes
  outside the sandbox (the host).
* seccomp (libseccomp through ``ctypes``): ``execve``, ``fork`` / ``vfork`` / a ``clone`` that is not a
  thread, sockets, ``ptrace``, namespaces, mounts, ``bpf``, ``io_uring`` and signals to other processes
  fail with EPERM (``clone3`` with ENOSYS, so the C library falls back to ``clone``, whose flags can be read).

:func:`available` says which of the two this machine has; the sandbox refuses to run without them unless
told otherwise (no silent fallback).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os

PR_SET_NO_NEW_PRIVS = 38
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH, LANDLOCK_RULE_NET_PORT = 1, 2

# <linux/landlock.h> filesystem rights, with the ABI that introduced them.
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_ABI1_ALL = (1 << 13) - 1                      # EXECUTE .. MAKE_SYM
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15   # ABI 2, 3, 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1   # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1   # ABI 6
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
"""Rights that apply to a single file (a rule on a file may carry only these)."""
READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_NE, SCMP_CMP_MASKED_EQ = 1, 7
CLONE_THREAD = 0x00010000
DENIED_SYSCALLS = (
    "execve", "execveat", "fork", "vfork", "socket", "socketpair", "ptrace", "process_vm_readv",
    "process_vm_writev", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "bpf",
    "perf_event_open", "keyctl", "add_key", "request_key", "io_uring_setup", "kexec_load", "init_module",
    "finit_module", "delete_module", "reboot", "swapon", "swapoff", "userfaultfd",
)
"""Syscalls the child may never make (EPERM)."""


class ConfinementError(RuntimeError):
    """A confinement step the caller asked for could not be applied."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0 when Landlock is absent or disabled)."""
    libc = _libc()
    version = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                           ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return max(0, int(version))


def _libseccomp() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def available() -> dict[str, bool]:
    """Which confinements this machine offers: ``landlock`` (any ABI: files) and ``seccomp``.

    Landlock's TCP rules (ABI 4) and signal scoping (ABI 6) are applied where the kernel has them; seccomp
    alone already refuses every socket and every signal to another process."""
    return {"landlock": landlock_abi() >= 1, "seccomp": _libseccomp() is not None}


def _no_new_privs(libc: ctypes.CDLL) -> None:
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise ConfinementError(f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(error)}")


def apply_landlock(read_paths: list[str], write_paths: list[str]) -> int:
    """Restrict this process: read / execute below ``read_paths``, everything below ``write_paths``, no TCP,
    no signals outside the sandbox. Missing paths are skipped. Returns the ABI used.

    Raises:
        ConfinementError: Landlock is missing (ABI < 4) or a step failed.
    """
    abi = landlock_abi()
    if abi < 1:
        raise ConfinementError("Landlock is not available in this kernel (Linux >= 5.13 with landlock in the LSM list)")
    # Each ABI handles more rights; an older kernel rejects a ruleset naming rights (or fields) it lacks.
    handled_fs = (FS_ABI1_ALL | (FS_REFER if abi >= 2 else 0) | (FS_TRUNCATE if abi >= 3 else 0)
                  | (FS_IOCTL_DEV if abi >= 5 else 0))
    attr = _RulesetAttr(handled_fs, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    libc = _libc()
    ruleset = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise ConfinementError(f"landlock_create_ruleset failed: {os.strerror(ctypes.get_errno())}")
    try:
        for paths, rights in ((read_paths, READ_RIGHTS), (write_paths, handled_fs)):
            for path in dict.fromkeys(paths):
                _add_path_rule(libc, ruleset, path, rights & handled_fs)
        _no_new_privs(libc)
        if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise ConfinementError(f"landlock_restrict_self failed: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    return abi


def _add_path_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = _PathBeneathAttr(rights, fd)
        if libc.syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                        ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            raise ConfinementError(f"landlock_add_rule({path!r}) failed: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)   # SCMP_ACT_ERRNO(code)


def apply_seccomp() -> None:
    """Install the syscall filter (see the module docstring) on this process.

    Raises:
        ConfinementError: libseccomp is missing or a step failed.
    """
    lib = _libseccomp()
    if lib is None:
        raise ConfinementError("libseccomp (libseccomp.so.2) is not installed")
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise ConfinementError("seccomp_init failed")
    pid = os.getpid()
    try:
        deny = _errno_action(errno.EPERM)
        rules: list[tuple[str, int, list[_ArgCmp]]] = [(name, deny, []) for name in DENIED_SYSCALLS]
        rules += [("clone3", _errno_action(errno.ENOSYS), []),
                  # a clone without CLONE_THREAD is a new process (fork); threads stay allowed
                  ("clone", deny, [_ArgCmp(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)]),
                  # signals only to this process (kill(0) / kill(-1) reach the host's group or everyone)
                  ("kill", deny, [_ArgCmp(0, SCMP_CMP_NE, pid, 0)]),
                  ("tgkill", deny, [_ArgCmp(0, SCMP_CMP_NE, pid, 0)]),
                  ("tkill", deny, [_ArgCmp(0, SCMP_CMP_NE, pid, 0)])]
        for name, action, args in rules:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number < 0:      # not a syscall on this architecture (fork on aarch64)
                continue
            array = (_ArgCmp * max(1, len(args)))(*args)
            if lib.seccomp_rule_add_array(ctx, action, number, len(args), array) != 0:
                raise ConfinementError(f"seccomp_rule_add({name}) failed")
        _no_new_privs(_libc())
        if lib.seccomp_load(ctx) != 0:
            raise ConfinementError("seccomp_load failed")
    finally:
        lib.seccomp_release(ctx)
