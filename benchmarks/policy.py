"""Policy speed and memory, each a ratio measured side by side in one run:

(a) ``sample_actions`` with the VLM prefix computed once vs recomputed at every denoising step
    (``sample_actions_recomputing_prefix``), tiny Qwen3.5 policy, 3 cameras at ``--image-size`` pixels,
    10 Euler steps, batch 1; the two paths alternate in rounds, best round of each. Target: >= 4x.
(b) training samples/s (LeRobot loader + processor + forward/backward/AdamW step) with 2 DataLoader
    workers vs 0, on a tiny LeRobot video dataset built here (3 cameras at ``--image-size``).
(c) peak memory of frozen-VLM training vs full fine-tuning at the same (small) config: each mode runs in
    its own subprocess and reports its peak RSS above the RSS of the built model (the peak is reset
    after the imports, whose transient peak would otherwise hide the model; CUDA peak allocation when a
    GPU is present); a forward-only baseline is subtracted so the ratio compares what training adds.

Run: ``.venv/bin/python benchmarks/policy.py`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
import time

logger = logging.getLogger("benchmarks.policy")
PREFIX_TARGET = 4.0


def _tiny_policy(image_size: int, **overrides):
    import torch

    from bspatial.modeling import BSpatialVLAForActionPrediction
    from bspatial.modeling.tiny_backbone import build_tiny_processor, tiny_policy_config
    from bspatial.modeling.testing_utils import make_batch

    torch.manual_seed(0)
    config = tiny_policy_config(**overrides)
    processor = build_tiny_processor(max_side=image_size)
    model = BSpatialVLAForActionPrediction(config).eval()
    return model, make_batch(config, processor, batch_size=1, image_size=image_size)


def prefix_ratio(image_size: int, rounds: int) -> dict:
    """(a) best-of-rounds seconds per chunk, prefix once vs recomputed."""
    import torch

    model, batch = _tiny_policy(image_size)
    noise = torch.randn(1, model.config.chunk_size, model.config.action_dim, generator=torch.Generator().manual_seed(0))
    once, again = [], []
    model.sample_actions(batch, noise=noise)  # warm-up
    for _ in range(rounds):
        t = time.perf_counter()
        a = model.sample_actions(batch, noise=noise)
        once.append(time.perf_counter() - t)
        t = time.perf_counter()
        b = model.sample_actions_recomputing_prefix(batch, noise=noise)
        again.append(time.perf_counter() - t)
    torch.testing.assert_close(a, b)
    tokens = int(batch["input_ids"].shape[1])
    return {"prefix_tokens": tokens, "once_ms": 1e3 * min(once), "recomputed_ms": 1e3 * min(again),
            "ratio": min(again) / min(once)}


def _training_rate(dataset_root: str, workers: int, steps: int, batch_size: int, image_size: int) -> float:
    import torch

    from bspatial.modeling.train import MODEL_INPUTS, _loader, build_policy
    from bspatial.modeling.training_config import get_preset
    from bspatial.modeling.training_data import build_dataset, dataset_metadata

    class _Single:  # the loader's view of Accelerate: one process
        process_index, num_processes = 0, 1

    config = get_preset("tiny", num_workers=workers, batch_size=batch_size, max_steps=steps + 1,
                        image_pixels=image_size * image_size)
    model, processor, _ = build_policy(config, dataset_metadata(dataset_root))
    dataset, tasks = build_dataset(dataset_root, config, chunk_size=model.config.chunk_size)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    iterator = iter(_loader(dataset, tasks, processor, config, 0, _Single()))
    start = None
    for step in range(steps + 1):
        if step == 1:
            start = time.perf_counter()  # after the first batch: worker start-up excluded
        batch = next(iterator)
        loss = model(**{k: batch[k] for k in MODEL_INPUTS if k in batch}).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return steps * batch_size / (time.perf_counter() - start)


def loader_ratio(image_size: int, steps: int, batch_size: int) -> dict:
    """(b) samples/s at 2 workers vs 0 on a tiny LeRobot video dataset."""
    from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset

    with tempfile.TemporaryDirectory() as tmp:
        root = f"{tmp}/tiny"
        build_tiny_lerobot_dataset(root, image_size=image_size, frames_per_episode=60)
        zero = _training_rate(root, 0, steps, batch_size, image_size)
        two = _training_rate(root, 2, steps, batch_size, image_size)
    return {"samples_per_s_0_workers": zero, "samples_per_s_2_workers": two, "ratio": two / zero}


MEMORY_CHILD = r"""
import json, sys, torch
sys.path.insert(0, sys.argv[3])
from policy import _tiny_policy
mode, image_size = sys.argv[1], int(sys.argv[2])
# A wider backbone than the test one, so that parameters and optimizer state dominate.
from bspatial.modeling.tiny_backbone import tiny_vlm_config
vlm = tiny_vlm_config()
vlm["text_config"].update(hidden_size=512, intermediate_size=2048, num_attention_heads=4, head_dim=128,
                          linear_key_head_dim=64, linear_value_head_dim=64, linear_num_value_heads=8)
vlm["text_config"]["rope_parameters"]["partial_rotary_factor"] = 0.0625
vlm["vision_config"].update(out_hidden_size=512, hidden_size=256, intermediate_size=1024, num_heads=4)
model, batch = _tiny_policy(image_size, vlm_config=vlm, freeze_vlm=(mode != "full"))
cuda = torch.cuda.is_available()
def status_kb(field):
    return int(next(l for l in open("/proc/self/status") if l.startswith(field + ":")).split()[1])
if cuda:
    model, batch = model.cuda(), {k: v.cuda() for k, v in batch.items()}
    torch.cuda.reset_peak_memory_stats()
else:
    # Imports (torch, transformers) briefly peak far above the model's footprint, which would hide it
    # in ru_maxrss: reset the peak (Linux: "5" -> clear_refs resets VmHWM) once the model is built.
    open("/proc/self/clear_refs", "w").write("5")
    start_kb = status_kb("VmRSS")
model.train()
if mode == "baseline":
    with torch.no_grad():
        model.compute_loss(batch)
else:
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    for _ in range(3):
        optimizer.zero_grad(); model.compute_loss(batch).backward(); optimizer.step()
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
peak = torch.cuda.max_memory_allocated() if cuda else (status_kb("VmHWM") - start_kb) * 1024
print(json.dumps({"mode": mode, "peak_bytes": peak, "trainable": trainable, "cuda": cuda}))
"""


def memory_ratio(image_size: int) -> dict:
    """(c) peak memory per mode, each in a fresh subprocess."""
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    results = {}
    for mode in ("baseline", "frozen", "full"):
        out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, mode, str(image_size), here], capture_output=True,
                             text=True, check=True)
        results[mode] = json.loads(out.stdout.strip().splitlines()[-1])
    base = results["baseline"]["peak_bytes"]
    frozen, full = results["frozen"]["peak_bytes"] - base, results["full"]["peak_bytes"] - base
    return {"peak_mb": {m: r["peak_bytes"] / 2**20 for m, r in results.items()},
            "trainable": {m: r["trainable"] for m, r in results.items() if m != "baseline"},
            "training_overhead_mb": {"frozen": frozen / 2**20, "full": full / 2**20},
            "ratio_full_over_frozen": full / frozen if frozen > 0 else float("inf"),
            "device": "cuda" if results["full"]["cuda"] else "cpu (peak RSS above the built model's RSS)"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image-size", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--train-steps", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads in this process")
    parser.add_argument("--only", choices=("prefix", "loader", "memory"), action="append")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    import torch

    torch.set_num_threads(args.threads)
    parts = args.only or ["prefix", "loader", "memory"]
    report = {"image_size": args.image_size, "torch_threads": args.threads}
    if "prefix" in parts:
        report["prefix"] = prefix_ratio(args.image_size, args.rounds)
        report["prefix"]["meets_target"] = report["prefix"]["ratio"] >= PREFIX_TARGET
    if "loader" in parts:
        report["loader"] = loader_ratio(args.image_size, args.train_steps, args.batch_size)
    if "memory" in parts:
        report["memory"] = memory_ratio(args.image_size)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
