"""The transformers backend on the tiny random Qwen3.5: end to end, batching, loading errors, sharding."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bspatial.evaluation.vlm.backend_transformers import CheckpointError, TransformersBackend
from bspatial.evaluation.vlm.backend_api import VLMBackend
from bspatial.evaluation.vlm.backends import load_backend
from bspatial.evaluation.vlm.runner import SAMPLES_FILE, part_dir, read_jsonl, run_suite
from bspatial.evaluation.vlm.tiny_checkpoint import write_tiny_checkpoint
from bspatial.scoring import PointStatus

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

MAX_NEW_TOKENS = 8  # enough to exercise decoding; keeps the suite fast on 2 cores


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny-qwen3.5", seed=0)


@pytest.fixture(scope="module")
def backend(checkpoint) -> TransformersBackend:
    return load_backend(str(checkpoint), max_new_tokens=MAX_NEW_TOKENS)


def test_tiny_checkpoint_is_deterministic(checkpoint, tmp_path):
    again = write_tiny_checkpoint(tmp_path / "again", seed=0)
    other = write_tiny_checkpoint(tmp_path / "other", seed=1)
    weights = (checkpoint / "model.safetensors").read_bytes()
    assert (again / "model.safetensors").read_bytes() == weights
    assert (other / "model.safetensors").read_bytes() != weights
    assert write_tiny_checkpoint(again, seed=0) == again  # an existing checkpoint is kept
    with pytest.raises(FileExistsError):
        write_tiny_checkpoint(tmp_path, seed=0)  # a folder that is not a checkpoint is never replaced


def test_backend_reports_identity_and_settings(backend, checkpoint):
    assert isinstance(backend, VLMBackend)
    assert backend.spec == f"transformers:{checkpoint}"
    identity = backend.identity()
    assert identity["kind"] == "transformers" and identity["path"] == str(checkpoint.resolve())
    assert identity["dtype"] == "float32" and identity["class"] == "Qwen3_5ForConditionalGeneration"
    assert backend.generation_settings() == {"do_sample": False, "max_new_tokens": MAX_NEW_TOKENS}
    assert load_backend(f"transformers:{checkpoint}", max_new_tokens=3).spec == f"transformers:{checkpoint}"


def test_end_to_end_vqa_and_ir_unparseable_outputs_are_counted(backend, repos, tmp_path):
    vqa = run_suite(backend, "vqa", "general", tmp_path, data=str(repos["vqa"]), progress=False)
    assert vqa["complete"] and vqa["n_scored"] == vqa["n_items"] == 33 and vqa["n_errors"] == 0
    rows = read_jsonl(part_dir(tmp_path, "vqa", "general") / SAMPLES_FILE)
    assert all(r["latency_s"] > 0 and isinstance(r["raw_output"], str) for r in rows)
    unparsed = [r for r in rows if r["parsed"] is None]
    # The random model rarely says a letter; whatever it says is counted, never guessed.
    assert vqa["metrics"]["unparseable"] == len(unparsed) > 0
    assert all(not r["correct"] and r["parse_status"] != "parsed" for r in unparsed)
    assert all(r["correct"] == (r["parsed"] == r["answer"]) for r in rows)

    ir = run_suite(backend, "ir", "all", tmp_path, data=str(repos["ir"]), progress=False)
    assert ir["complete"] and ir["n_scored"] == 8
    ir_rows = read_jsonl(part_dir(tmp_path, "ir", "all") / SAMPLES_FILE)
    assert ir["metrics"]["unparseable"] == sum(r["parse_status"] != PointStatus.PARSED.value for r in ir_rows)
    assert all(r["label"] == "none" for r in ir_rows if r["parsed"] is None)


def test_batched_generation_equals_unbatched(backend, repos, tmp_path):
    runs = {}
    for batch_size in (1, 8):
        summary = run_suite(backend, "vqa", "task_manipulation", tmp_path / f"b{batch_size}", data=str(repos["vqa"]),
                            batch_size=batch_size, progress=False)
        rows = read_jsonl(part_dir(tmp_path / f"b{batch_size}", "vqa", "task_manipulation") / SAMPLES_FILE)
        runs[batch_size] = (summary["fingerprint"], [(r["id"], r["raw_output"]) for r in rows])
    assert runs[1] == runs[8]  # same greedy outputs, and the batch size stays out of the fingerprint
    assert len({text for _, text in runs[8][1]}) > 1  # the outputs do depend on the input


def test_multi_image_items_put_every_frame_before_the_prompt(backend, repos):
    from bspatial.evaluation.vlm.backend_transformers import _user_turn
    from bspatial.evaluation.vlm.backend_api import Request

    frames = tuple(_png(k) for k in range(3))
    request = Request("m", "Question: where?", frames, "choice", ("a", "b", "c", "d"))
    assert [p["type"] for p in _user_turn(request)["content"]] == ["image", "image", "image", "text"]
    inputs = backend._encode([request, Request("s", "one", frames[:1], "choice")])
    assert inputs["image_grid_thw"].shape[0] == 4  # 3 + 1 images, in request order
    assert inputs["attention_mask"][1, 0] == 0 and inputs["attention_mask"][:, -1].all()  # left padding
    text = backend._processor.apply_chat_template([_user_turn(request)], add_generation_prompt=True, tokenize=False)
    assert text.index("<|vision_start|>") < text.rindex("<|vision_end|>") < text.index("Question: where?")
    assert text.count("<|vision_start|>") == 3


def test_missing_checkpoint_fails_before_the_first_sample(repos, tmp_path, checkpoint, monkeypatch):
    out = tmp_path / "run"
    with pytest.raises(CheckpointError, match="does not exist"):
        run_suite(str(tmp_path / "nope"), "vqa", "general", out, data=str(repos["vqa"]), progress=False)
    assert not out.exists()

    no_weights = tmp_path / "no-weights"
    shutil.copytree(checkpoint, no_weights)
    (no_weights / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="cannot load the model"):
        load_backend(str(no_weights))
    with pytest.raises(CheckpointError, match="without config.json"):
        load_backend(str(tmp_path))

    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(CheckpointError, match="HF_HUB_OFFLINE is set and it is not in the HF cache"):
        load_backend("behavior-spatial/no-such-model")
    with pytest.raises(ValueError, match="dtype must be one of"):
        load_backend(str(checkpoint), dtype="float8")


def test_hub_id_resolves_from_the_cache_offline(checkpoint, tmp_path, monkeypatch):
    import huggingface_hub.constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--bspatial--tiny"
    shutil.copytree(checkpoint, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    backend = load_backend("bspatial/tiny", max_new_tokens=2)
    assert backend.identity()["model"] == "bspatial/tiny" and backend.identity()["revision"] == commit


@pytest.mark.skipif(shutil.which("accelerate", path=str(Path(sys.executable).parent)) is None, reason="accelerate CLI")
def test_accelerate_launch_shards_items_and_merges(checkpoint, repos, tmp_path, backend):
    script = tmp_path / "eval.py"
    script.write_text(textwrap.dedent(f"""
        from bspatial.evaluation.vlm.backends import load_backend
        from bspatial.evaluation.vlm.runner import run_suite
        backend = load_backend({str(checkpoint)!r}, max_new_tokens={MAX_NEW_TOKENS})
        run_suite(backend, "vqa", "task_manipulation", {str(tmp_path / 'dp')!r},
                  data={str(repos['vqa'])!r}, batch_size=4, progress=False)
    """))
    run_suite(backend, "vqa", "task_manipulation", tmp_path / "single", data=str(repos["vqa"]), progress=False)
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    accelerate = str(Path(sys.executable).parent / "accelerate")
    done = subprocess.run([accelerate, "launch", "--cpu", "--num_processes", "2", "--num_machines", "1",
                           "--mixed_precision", "no", "--dynamo_backend", "no", str(script)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    dp, single = (part_dir(tmp_path / name, "vqa", "task_manipulation") for name in ("dp", "single"))
    assert sorted(p.name for p in dp.iterdir()) == ["errors.jsonl", "fingerprint.json", "samples.jsonl", "summary.json"]
    strip = lambda rows: [{k: v for k, v in r.items() if k != "latency_s"} for r in rows]  # noqa: E731
    assert strip(read_jsonl(dp / SAMPLES_FILE)) == strip(read_jsonl(single / SAMPLES_FILE))  # merged in dataset order
    summary = json.loads((dp / "summary.json").read_text())
    assert summary["complete"] and summary["n_scored"] == 12


def _png(seed: int) -> bytes:
    import io

    import numpy as np
    from PIL import Image

    pixels = np.random.default_rng(seed).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()
