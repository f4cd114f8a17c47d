"""Test-session set-up that must happen before the libraries are imported (pytest loads this first).

* No network, and every Hugging Face cache under a throwaway folder: evaluate / datasets /
  huggingface_hub read these variables at import time.
* Headless MuJoCo: MUJOCO_GL is fixed when mujoco is first imported. EGL (Mesa llvmpipe) first,
  OSMesa as the fallback (DESIGN §3); each candidate is probed in a subprocess, because a failed
  probe in this process could not be undone.
"""

import os
import subprocess
import sys
import tempfile

_GL_PROBE = "import mujoco; c = mujoco.GLContext(8, 8); c.make_current(); c.free()"


def _gl_works(platform: str) -> bool:
    env = {**os.environ, "MUJOCO_GL": platform}
    try:
        return subprocess.run([sys.executable, "-c", _GL_PROBE], env=env, capture_output=True, timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False


if "MUJOCO_GL" not in os.environ and "mujoco" not in sys.modules:
    for _platform in ("egl", "osmesa"):
        if _gl_works(_platform):
            os.environ["MUJOCO_GL"] = _platform
            break

_HF_HOME = tempfile.mkdtemp(prefix="bspatial-test-hf-")
os.environ["HF_HOME"] = _HF_HOME
os.environ.pop("HF_MODULES_CACHE", None)
os.environ.pop("HF_DATASETS_CACHE", None)
for _flag in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_flag] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
