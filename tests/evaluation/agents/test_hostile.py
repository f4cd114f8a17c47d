"""Every hostile program of evaluation/agents/hostile/ is refused or stopped for the reason its header names;
the host process lives on, nothing is written outside the temp folder, and no process is left behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from bspatial.common.processes import live_descendants
from bspatial.evaluation.agents.api import AgentAPI
from bspatial.evaluation.agents.hostile_suite import HOSTILE_LIMITS, hostile_programs
from bspatial.evaluation.agents.sandbox import run_program
from bspatial.tasks.episode import EpisodeRun

pytestmark = [pytest.mark.slow, pytest.mark.sim]

PROGRAMS = hostile_programs()
ESCAPE_MARKERS = (Path("/tmp/bspatial-hostile-escaped"), Path(tempfile.gettempdir()) / "bspatial-hostile-escaped")


def test_the_suite_covers_the_issue_list():
    names = {p.name for p in PROGRAMS}
    assert {"import_os", "import_subprocess", "import_socket", "escape_fork_bomb", "infinite_loop",
            "huge_allocation", "read_files", "monkey_patch_api"} <= names
    assert all(p.outcome in ("raised", "stopped") for p in PROGRAMS)


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_hostile_program_is_refused_or_stopped(sim, instance, program, tmp_path):
    host_pid = os.getpid()
    before = live_descendants(host_pid)             # other tests of the session may keep workers
    api = AgentAPI(EpisodeRun(sim, instance, max_steps=30))
    run = run_program(program.source, api, limits=HOSTILE_LIMITS, workdir_parent=tmp_path)
    assert program.matches(run), (run.outcome, run.reason, run.stderr[-500:])
    assert os.getpid() == host_pid and api.run.backend.robot_state() is not None   # the host lives on
    assert not any(marker.exists() for marker in ESCAPE_MARKERS)
    assert list(tmp_path.iterdir()) == []            # the temp folder is gone, nothing was written beside it
    assert live_descendants(host_pid) - before == set()   # no child, no fork left behind
