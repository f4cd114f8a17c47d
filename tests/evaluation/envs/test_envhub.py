"""LeRobot's EnvHub loads our env.py offline after ``bspatial hub install`` (and not before), through LeRobot's own
``make_env("behavior-spatial/envhub", trust_remote_code=True)``, and its vector envs play the one-env episodes."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from bspatial.evaluation.envs import BSpatialEnv

from .conftest import TASK
from .fixed_actions import fixed_action

pytestmark = [pytest.mark.slow, pytest.mark.sim, pytest.mark.subprocess]

STEPS = 4
PLAY = """
import hashlib, json, sys
import numpy as np
from lerobot.envs.factory import make_env
sys.path.insert(0, {tests!r})
from fixed_actions import fixed_action

envs = make_env("behavior-spatial/envhub", n_envs=2, use_async_envs={use_async}, trust_remote_code=True)
vec = envs[{task!r}][0]
obs, info = vec.reset(seed=[0, 1])
for step in range({steps}):
    obs, *_ = vec.step(np.stack([fixed_action(int(e), step) for e in info["episode_index"]]))
print(json.dumps({{"tasks": sorted(envs), "num_envs": vec.num_envs, "episodes": info["episode_index"].tolist(),
                  "state": obs["agent_pos"].tolist(),
                  "head": [hashlib.sha256(np.ascontiguousarray(im).tobytes()).hexdigest()
                           for im in obs["pixels"]["head"]]}}))
vec.close()
"""


def _python(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def one_env():
    """Entries 0 and 1 of TASK after STEPS fixed actions: (84-dim states, head-frame hashes)."""
    import hashlib

    states, heads = [], []
    env = BSpatialEnv(TASK)
    try:
        for entry in (0, 1):
            env.reset(options={"episode_index": entry})
            for step in range(STEPS):
                obs, *_ = env.step(fixed_action(entry, step))
            states.append(obs["agent_pos"].tolist())
            heads.append(hashlib.sha256(np.ascontiguousarray(obs["pixels"]["head"]).tobytes()).hexdigest())
    finally:
        env.close()
    return states, heads


@pytest.mark.parametrize("use_async", [False, True])
def test_envhub_env_loads_offline_after_install_and_plays_the_one_env_episodes(tmp_path, one_env, use_async):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    env.pop("HF_HUB_CACHE", None)
    code = PLAY.format(tests=os.path.dirname(__file__), use_async=use_async, task=TASK, steps=STEPS)
    before = _python(code, env)
    assert before.returncode != 0 and "behavior-spatial/envhub" in before.stderr   # nothing cached yet
    installed = subprocess.run([sys.executable, "-m", "bspatial.cli", "hub", "install"], env=env, capture_output=True,
                               text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    played = _python(code, env)
    assert played.returncode == 0, played.stderr[-3000:]
    result = json.loads(played.stdout.strip().splitlines()[-1])
    assert len(result["tasks"]) == 14 and result["num_envs"] == 2   # Table S2: 14 tasks with held-out episodes and result["episodes"] == [0, 1]
    states, heads = one_env
    assert result["state"] == states and result["head"] == heads   # float32 states and pixels exactly
