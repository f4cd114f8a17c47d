"""`bspatial hub install --datasets` seeds the datasets cache: bare-id loads work offline in a fresh process."""

import json
import os
import subprocess
import sys

import pytest

from bspatial.evaluation.vlm.fixtures import write_fixture_repos

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

LOAD = """
import json
from datasets import load_dataset
vqa = load_dataset("behavior-spatial/vqa", "task_manipulation", split="test")
ir = load_dataset("behavior-spatial/ir", "all", split="test")
print("RESULT", json.dumps({"vqa": [vqa.num_rows, sorted(vqa.column_names)], "ir": ir.num_rows}))
"""


def test_bare_ids_load_offline_after_seeding(tmp_path):
    repos = write_fixture_repos(tmp_path / "build")  # the same Hub-shaped layout `bspatial build` writes
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env.pop("HF_DATASETS_CACHE", None)
    before = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True, env=env, timeout=300)
    assert before.returncode != 0  # nothing seeded yet: the bare id cannot resolve offline

    install = subprocess.run(
        [sys.executable, "-m", "bspatial.cli", "hub", "install", "--datasets", str(tmp_path / "build")],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert install.returncode == 0, install.stderr
    assert install.stdout.count("seeded ") == 4  # vqa: 3 configs, ir: 1

    after = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True, env=env, timeout=300)
    assert after.returncode == 0, after.stderr
    result = json.loads(after.stdout.split("RESULT", 1)[1])
    from datasets import load_dataset

    direct = load_dataset(str(repos["vqa"]), "task_manipulation", split="test")
    assert result["vqa"] == [direct.num_rows, sorted(direct.column_names)]
    assert result["ir"] == load_dataset(str(repos["ir"]), "all", split="test").num_rows


def test_install_without_a_build_is_a_clear_error(tmp_path):
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"))
    proc = subprocess.run(
        [sys.executable, "-m", "bspatial.cli", "hub", "install", "--datasets", str(tmp_path / "nothing")],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 2 and "run `bspatial build` first" in proc.stderr


LOAD_GENERAL = """
import json
from datasets import load_dataset
single = load_dataset("behavior-spatial/vqa", "general_single_frame", split="test")
multi = load_dataset("behavior-spatial/vqa", "general_multi_frame", split="test")
print("RESULT", json.dumps({"single": [len(r["frames"]) for r in single], "multi": [len(r["frames"]) for r in multi],
                            "type": type(single[0]["frames"][0]).__module__}))
"""


def test_general_configs_load_by_bare_id_after_seeding(tmp_path):
    """The general-VQA configs (single frame: 1 image, multi-frame: 4 rotation images) seed and load offline."""
    import numpy as np

    from bspatial.evaluation.vlm.fixtures import _png, write_parquet_config, write_readme

    rng = np.random.default_rng(0)
    repo = tmp_path / "build" / "vqa"

    def row(i, setting, n_frames):
        return {"id": f"{setting}-{i}", "suite": "vqa", "setting": setting, "category": "direction",
                "subtype": "object_relative", "task": None, "variant": None, "frames": [_png(rng) for _ in range(n_frames)],
                "question": "Where is the kitchen relative to the bedroom?",
                "options": ["front-left", "front-right", "back-left", "back-right"], "answer": "A"}

    write_parquet_config(repo, "vqa", "general_single_frame", [row(i, "single_frame", 1) for i in range(2)])
    write_parquet_config(repo, "vqa", "general_multi_frame", [row(i, "multi_frame_rotation", 4) for i in range(2)])
    write_readme(repo, ("general_single_frame", "general_multi_frame"))
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env.pop("HF_DATASETS_CACHE", None)
    install = subprocess.run(
        [sys.executable, "-m", "bspatial.cli", "hub", "install", "--datasets", str(tmp_path / "build")],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert install.returncode == 0, install.stderr
    after = subprocess.run([sys.executable, "-c", LOAD_GENERAL], capture_output=True, text=True, env=env, timeout=300)
    assert after.returncode == 0, after.stderr
    result = json.loads(after.stdout.split("RESULT", 1)[1])
    assert result == {"single": [1, 1], "multi": [4, 4], "type": "PIL.PngImagePlugin"}


def test_a_killed_seeding_leaves_nothing_after_the_next_install(tmp_path):
    from bspatial.hub import install_datasets

    write_fixture_repos(tmp_path / "build")
    targets = install_datasets(tmp_path / "build", cache_dir=tmp_path / "cache")
    stale = targets[0].parent / f".{targets[0].name}.seeding-k1lled00"   # what a kill mid-copy leaves
    stale.mkdir()
    (stale / "half.arrow").write_bytes(b"\0" * 10)
    again = install_datasets(tmp_path / "build", cache_dir=tmp_path / "cache")
    assert again == targets and not stale.exists()
    assert sorted(p.name for p in targets[0].parent.iterdir()) == [targets[0].name]   # no lock or staging left
