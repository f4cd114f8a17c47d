"""`evaluate.load("<bare name>")` works in a fresh offline process after `bspatial hub install`, and fails before."""

import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

LOAD_AND_COMPUTE = """
import json, evaluate
out = {}
vqa = evaluate.load("bspatial_vqa")
out["vqa"] = vqa.compute(predictions=["B", "(c)"], references=["B", "D"])["accuracy"]
action = evaluate.load("bspatial_action")
out["action"] = action.compute(predictions=["correct", "wrong"], references=["reach_dice"] * 2)["strict"]
ir = evaluate.load("bspatial_ir")
out["ir"] = type(ir).__name__
print("RESULT", json.dumps(out))
"""


def _run(env: dict, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture()
def offline_env(tmp_path):
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_EVALUATE_OFFLINE="1", HF_HUB_OFFLINE="1")
    env.pop("HF_MODULES_CACHE", None)
    return env


def test_bare_names_fail_before_seeding(offline_env):
    proc = _run(offline_env, 'import evaluate; evaluate.load("bspatial_ir")')
    assert proc.returncode != 0
    assert "bspatial_ir" in proc.stderr


def test_bare_names_load_after_hub_install(offline_env):
    install = subprocess.run(
        [sys.executable, "-m", "bspatial.cli", "hub", "install"], capture_output=True, text=True, env=offline_env, timeout=300
    )
    assert install.returncode == 0, install.stderr
    proc = _run(offline_env, LOAD_AND_COMPUTE)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.split("RESULT", 1)[1])
    assert result == {"vqa": 50.0, "action": 50.0, "ir": "BspatialIR"}
