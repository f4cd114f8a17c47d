"""Builds on Ray actors (issue 20): the tiny preset built by two actors of the local 2-CPU cluster is the same
bytes as one built in this process (every file of both repos); without Ray, ``bspatial build --ray`` names the
flag and the extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bspatial.construction.publishing.build import build

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

SEED = 3


def repo_files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_ray_build_writes_the_bytes_of_a_local_one(ray_cluster, tmp_path):
    build("tiny", tmp_path / "local", SEED)
    build("tiny", tmp_path / "ray", SEED, workers=2, ray="auto")
    local, ray = repo_files(tmp_path / "local"), repo_files(tmp_path / "ray")
    assert any(name.endswith(".parquet") for name in local)
    assert sorted(ray) == sorted(local)
    assert [name for name in local if ray[name] != local[name]] == []


def test_without_ray_build_exits_1_naming_the_flag_and_the_extra(ray_hidden_env, tmp_path):
    done = subprocess.run([sys.executable, "-m", "bspatial.cli", "build", "--preset", "tiny", "--ray", "auto",
                           "--out", str(tmp_path / "out")], env=ray_hidden_env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "error: --ray needs Ray" in done.stderr and "pip install 'behavior-spatial[ray]'" in done.stderr
    assert not (tmp_path / "out").exists()
