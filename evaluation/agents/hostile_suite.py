"""The hostile programs of ``hostile/`` and the run that records how the sandbox ended each one.

Each file in ``hostile/`` is an agent program (``run(api)``) that attacks the sandbox: imports of os /
subprocess / socket, escapes that reach ``os`` without an import (then fork bombs, exec, sockets, killing
the host), infinite loops, sleeping, huge allocations, output floods, reading or writing files outside
the temp folder, monkey-patching the API, forged requests. Its docstring says what it tries, and a header
line ``# expect: <outcome> | <regex>`` says how the sandbox must end it (the outcome of
:class:`~bspatial.evaluation.agents.sandbox.ProgramRun` and a pattern its reason must match); the tests and
``benchmarks/agent_sandbox.py`` (the README's table) run them all.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from bspatial.evaluation.agents.sandbox import ProgramRun, SandboxLimits

HOSTILE_DIR = Path(__file__).resolve().parent / "hostile"
EXPECT = re.compile(r"^# expect: (finished|raised|stopped|crashed) \| (.+)$", re.MULTILINE)
HOSTILE_LIMITS = SandboxLimits(inactivity_s=2.0, wall_s=30.0, cpu_s=10.0, memory_bytes=2 << 30,
                               file_bytes=8 << 20, disk_bytes=32 << 20)
"""Tiny limits for the suite: a 2 s watchdog instead of 900 s, so a stopped program costs seconds."""


@dataclass(frozen=True)
class HostileProgram:
    """One file of ``hostile/``: its name, what it tries, the expected outcome and reason pattern, its text."""

    name: str
    description: str
    outcome: str
    reason_pattern: str
    source: str

    def matches(self, run: ProgramRun) -> bool:
        """Whether the sandbox ended it as its header expects."""
        return run.outcome == self.outcome and re.search(self.reason_pattern, run.reason) is not None


def hostile_programs() -> list[HostileProgram]:
    """Every hostile program, by name."""
    paths = sorted(HOSTILE_DIR.glob("*.py"))
    if not paths:
        raise FileNotFoundError(f"no hostile programs in {HOSTILE_DIR} (an install without the package data "
                                f"'bspatial.evaluation.agents = hostile/*.py'?)")
    out = []
    for path in paths:
        source = path.read_text(encoding="utf-8")
        expect = EXPECT.search(source)
        if expect is None:
            raise ValueError(f"{path}: a hostile program needs a '# expect: <outcome> | <regex>' line")
        description = ast.get_docstring(ast.parse(source)) or ""
        out.append(HostileProgram(path.stem, description.splitlines()[0] if description else "",
                                  expect.group(1), expect.group(2).strip(), source))
    return out
