"""``bspatial build --workers 2`` killed with SIGKILL: no worker outlives it, nothing is written after it,
the rerun removes the killed run's staging folder and builds the whole preset; and an
``--out`` that is a file is refused by name (build and demos).
"""

import subprocess
import sys
from pathlib import Path

import pytest

from bspatial.construction.publishing.presets import get_preset

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


def command(out: Path) -> list[str]:
    return [sys.executable, "-m", "bspatial.cli", "build", "--preset", "tiny", "--workers", "2", "--out", str(out)]


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")
def test_a_killed_build_takes_its_workers_along_and_the_rerun_cleans_up(tmp_path, sigkilled_run):
    out = tmp_path / "out"
    with sigkilled_run(command(out), tmp_path, lambda: any(tmp_path.glob(".out.building-*/records/images/*")),
                       "wrote a first image"):
        stale = [name for name in leftovers(out) if ".building-" in name]
        assert len(stale) == 1 and not out.exists()    # what the kill left: a staging folder, no output

    rerun = subprocess.run(command(out), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"removed stale {tmp_path / stale[0]}" in rerun.stderr
    assert leftovers(out) == []                        # no staging folder, no lock file
    assert_complete(out)


def assert_complete(out: Path) -> None:
    """``out`` holds every repo, config and row the tiny preset makes (byte equality with a clean build is
    test_build's determinism check; a second build here would double this test's time)."""
    import pyarrow.parquet as pq

    from bspatial.catalog.tasks import NAVIGATION_TASKS

    tiny = get_preset("tiny")

    def rows(suite: str, config: str) -> int:
        return sum(pq.read_metadata(p).num_rows for p in (out / suite / config).glob("*.parquet"))

    assert (out / "vqa" / "README.md").is_file() and (out / "ir" / "README.md").is_file()
    assert sorted(p.name for p in (out / "ir").iterdir() if p.is_dir()) == sorted(["all", "tiny", *tiny.tasks])
    assert rows("ir", "all") == sum(tiny.count("ir_per_task", t) for t in tiny.tasks)
    assert rows("vqa", "task_manipulation") == sum(tiny.count("vqa_per_task", t) for t in tiny.tasks)
    assert rows("vqa", "task_navigation") == sum(tiny.count("navigation_per_task", t) for t in NAVIGATION_TASKS)
    assert rows("vqa", "general_single_frame") > 0 and rows("vqa", "general_multi_frame") > 0


@pytest.mark.parametrize("args", [["build", "--preset", "tiny"], ["build", "--preset", "tiny", "--overwrite"],
                                  ["demos", "--task", "reach_plate"],
                                  ["demos", "--task", "reach_plate", "--overwrite"]])
def test_an_out_that_is_a_file_is_refused_by_name(tmp_path, args):
    import typer
    from typer.testing import CliRunner

    from bspatial.construction.publishing.cli import build_command
    from bspatial.construction.demonstrations.cli import demos_command

    app = typer.Typer()
    app.command("build")(build_command)
    app.command("demos")(demos_command)
    taken = tmp_path / "taken"
    taken.write_text("not a dataset")
    for out in (taken, taken / "sub"):
        result = CliRunner().invoke(app, [*args, "--out", str(out)])
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output   # no traceback
        assert f"error: {taken}" in result.output and "is a file" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"] and taken.read_text() == "not a dataset"
