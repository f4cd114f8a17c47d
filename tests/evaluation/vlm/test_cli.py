"""The typer command functions, wired into a throwaway app the way bspatial.cli will wire them."""

from __future__ import annotations

import json
import subprocess
import sys

import typer
from typer.testing import CliRunner

import pytest

from bspatial.evaluation.analysis.cli import report
from bspatial.evaluation.vlm.cli import eval_vlm

pytestmark = [pytest.mark.subprocess]

app = typer.Typer()
app.command("eval-vlm")(eval_vlm)
app.command("report")(report)


def test_eval_then_report(repos, tmp_path):
    runner = CliRunner()
    for suite, config in (("vqa", "general"), ("vqa", "task_manipulation"), ("ir", "all")):
        result = runner.invoke(
            app,
            ["eval-vlm", "--model", "chance", "--suite", suite, "--config", config, "--data", str(repos[suite]),
             "--out", str(tmp_path / "runs" / "chance"), "--no-progress"],
        )
        assert result.exit_code == 0, result.output
        assert f"{suite}-{config}:" in result.output
    result = runner.invoke(app, ["report", str(tmp_path / "runs" / "chance"), "--out", str(tmp_path / "reports")])
    assert result.exit_code == 0, result.output
    assert "Table 1" in result.output and "| chance | chance:0 |" in result.output
    assert (tmp_path / "reports" / "table2.csv").exists()


def test_bad_model_and_mismatch_exit_with_the_reason(repos, tmp_path):
    runner = CliRunner()
    args = ["eval-vlm", "--suite", "vqa", "--config", "task_navigation", "--data", str(repos["vqa"]), "--out", str(tmp_path), "--no-progress"]
    result = runner.invoke(app, [*args, "--model", "nonsense:1"])
    assert result.exit_code == 2 and "known kinds: chance" in result.output
    assert runner.invoke(app, [*args, "--model", "chance"]).exit_code == 0
    result = runner.invoke(app, [*args, "--model", "chance:1"])
    assert result.exit_code == 2 and "refusing to mix" in result.output


def test_a_malformed_item_fails_the_run_unless_allowed(malformed_repos, tmp_path):
    runner = CliRunner()
    args = ["eval-vlm", "--model", "chance", "--suite", "vqa", "--config", "general", "--data", str(malformed_repos["vqa"]),
            "--out", str(tmp_path), "--no-progress"]
    failed = runner.invoke(app, args)
    assert failed.exit_code == 1, failed.output
    assert "1 of 34 items are malformed" in failed.output and "--allow-errors" in failed.output
    summary = json.loads((tmp_path / "vqa-general" / "summary.json").read_text())
    assert summary["n_scored"] == 33 and summary["n_errors"] == 1 and summary["complete"] is False
    accepted = runner.invoke(app, [*args, "--allow-errors"])
    assert accepted.exit_code == 0, accepted.output
    assert "33 scored, 1 malformed" in accepted.output


def test_a_parquet_file_damaged_mid_file_is_named_without_a_traceback(repos, tmp_path):
    import shutil

    repo = tmp_path / "vqa"
    shutil.copytree(repos["vqa"], repo)
    damaged = next((repo / "task_manipulation").glob("*.parquet"))
    data = bytearray(damaged.read_bytes())
    data[len(data) // 3 : len(data) // 3 + 2000] = bytes(2000)
    damaged.write_bytes(bytes(data))
    result = CliRunner().invoke(app, ["eval-vlm", "--model", "chance", "--config", "task_manipulation",
                                      "--data", str(repo), "--out", str(tmp_path / "run"), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert f"{damaged} is unreadable" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run" / "vqa-task_manipulation" / "samples.jsonl").exists()


def test_cli_module_imports_nothing_heavy():
    code = (
        "import sys\n"
        "import bspatial.evaluation.vlm.cli\n"
        "print(sorted(m for m in ('datasets', 'torch', 'transformers', 'PIL', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_model_args_reach_the_backend_and_bad_ones_are_rejected(tmp_path):
    from typer.testing import CliRunner

    from bspatial.cli import app

    runner = CliRunner()
    bad = runner.invoke(app, ["eval-vlm", "--model", "chance", "--model-args", "no_such_option=1", "--out", str(tmp_path)])
    assert bad.exit_code == 2
    assert "no_such_option" in bad.output
    malformed = runner.invoke(app, ["eval-vlm", "--model", "chance", "--model-args", "dtype", "--out", str(tmp_path)])
    assert malformed.exit_code == 2 and "must look like key=value" in malformed.output
