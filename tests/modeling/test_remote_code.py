"""A saved checkpoint carries its code and loads with trust_remote_code where bspatial is absent."""

import os
import subprocess
import sys
import sysconfig

import torch

import pytest

from bspatial.modeling import BSpatialVLAProcessor

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

# Runs under `python -S`: site is not imported, so neither the editable-install finder (.pth) nor the
# repository (cwd is a temp folder) is on the path; PYTHONPATH holds the bare site-packages folder.
CHILD = r"""
import sys
try:
    import bspatial
except ImportError:
    pass
else:
    raise SystemExit("bspatial is importable from " + str(bspatial.__file__))
import torch
from transformers import AutoModel

io = torch.load(sys.argv[1] + "/io.pt")
model = AutoModel.from_pretrained(sys.argv[1] + "/ckpt", trust_remote_code=True)
assert type(model).__module__.startswith("transformers_modules."), type(model).__module__
torch.testing.assert_close(model.sample_actions(io["batch"], noise=io["noise"]), io["expected"], rtol=0, atol=0)
from transformers import AutoProcessor
processor = AutoProcessor.from_pretrained(sys.argv[1] + "/ckpt", trust_remote_code=True)
assert type(processor).__module__.startswith("transformers_modules."), type(processor).__module__
assert processor.stats == io["stats"], processor.stats
print("REMOTE-OK")
"""


def test_remote_code_checkpoint_loads_without_the_package(tmp_path, model, batch, fixed_noise, processor):
    expected = model.eval().sample_actions(batch, noise=fixed_noise)
    model.save_pretrained(tmp_path / "ckpt")
    stats = {"observation.state": {"q01": [-1.0] * 8, "q99": [1.0] * 8}, "action": {"q01": [0.0] * 23, "q99": [2.0] * 23}}
    BSpatialVLAProcessor.from_model_config(model.config, processor.image_processor, processor.tokenizer,
                                           stats).save_pretrained(tmp_path / "ckpt")
    torch.save({"batch": batch, "noise": fixed_noise, "expected": expected, "stats": stats}, tmp_path / "io.pt")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    result = subprocess.run([sys.executable, "-S", "-c", CHILD, str(tmp_path)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and "REMOTE-OK" in result.stdout, result.stdout + result.stderr[-4000:]
