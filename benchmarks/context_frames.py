"""Navigation context frames: what they cost and what the choices around them save, side by side in one run.

(a) rendering an episode's context (the task-grounded navigation VQA's tour, 12 kept poses): the whole tour
    rendered and subsampled vs only the kept poses (``render_tour(indices=)``, what ``context_tour`` does), at
    the policy's 224 px; the pixels are checked equal; best of ``--rounds`` per task.
(b) one training step (forward + backward) of the tiny policy on a batch of 2 at 64 px (the tiny presets'
    image size): with 12 context frames vs none (what the navigation policy's context costs), and with one
    intra-op thread vs torch's default (the demo's choice for the tiny model); best of ``--rounds``.

Run: ``.venv/bin/python benchmarks/context_frames.py`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import json
import logging
import time

logger = logging.getLogger("benchmarks.context_frames")
TASKS = ("move_to_table_near_sofa", "move_to_bookcase", "move_to_fridge")


def render_ratio(rounds: int) -> dict:
    """(a) seconds per episode context, full tour + subsample vs kept poses only."""
    import numpy as np

    from bspatial.construction.demonstrations.context_frames import CONTEXT_FRAME_SIZE
    from bspatial.construction.questions.navigation_vqa import context_indices
    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks import navigation as nav
    from bspatial.world.floorplans import get_floorplan

    rows = {}
    with MujocoBackend(camera_size=CONTEXT_FRAME_SIZE) as sim:
        for task in TASKS:
            plan = get_floorplan(nav.NAV_TASKS[task].plan)
            n = len(nav.tour_poses(plan))
            keep = context_indices(n)
            full, kept = [], []
            for _ in range(rounds):
                t = time.perf_counter()
                frames = nav.render_tour(sim, plan, size=CONTEXT_FRAME_SIZE)
                subsampled = [frames[i].rgb for i in keep]
                full.append(time.perf_counter() - t)
                t = time.perf_counter()
                only = [f.rgb for f in nav.render_tour(sim, plan, size=CONTEXT_FRAME_SIZE, indices=keep)]
                kept.append(time.perf_counter() - t)
                assert all(np.array_equal(a, b) for a, b in zip(subsampled, only, strict=True))
            rows[task] = {"tour_poses": n, "kept": len(keep), "full_ms": 1e3 * min(full),
                          "kept_ms": 1e3 * min(kept), "ratio": min(full) / min(kept)}
    return rows


def _step_seconds(context: int, threads: int, rounds: int) -> float:
    import numpy as np
    import torch

    from bspatial.modeling import BSpatialVLAForActionPrediction, BSpatialVLAProcessor
    from bspatial.modeling.processing_bspatial_vla import CONTEXT_IMAGE_KEY
    from bspatial.modeling.tiny_backbone import build_tiny_processor, tiny_policy_config

    state_dim, action_dim, size = 84, 23, 64
    stats = {"observation.state": {"q01": [-2.0] * state_dim, "q99": [2.0] * state_dim},
             "action": {"q01": [-1.0] * action_dim, "q99": [1.0] * action_dim}}
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    config = tiny_policy_config(max_context_frames=context, state_dim=state_dim)
    qwen = build_tiny_processor(max_side=size)
    processor = BSpatialVLAProcessor.from_model_config(config, qwen.image_processor, qwen.tokenizer, stats)
    model = BSpatialVLAForActionPrediction(config).train()
    rng = np.random.default_rng(0)
    batch = {f"observation.images.rgb.{c}": torch.from_numpy(rng.integers(0, 256, (2, 3, size, size), dtype=np.uint8))
             for c in config.camera_names}
    if context:
        batch[CONTEXT_IMAGE_KEY] = torch.from_numpy(rng.integers(0, 256, (2, context, 3, size, size), dtype=np.uint8))
    batch["observation.state"] = torch.from_numpy(rng.uniform(-2, 2, (2, state_dim)).astype(np.float32))
    batch["action"] = torch.from_numpy(rng.uniform(-1, 1, (2, 32, action_dim)).astype(np.float32))
    batch["task"] = ["Move to the sofa.", "Move to the oven."]
    inputs = dict(processor(batch))
    times = []
    for _ in range(rounds + 1):   # the first round warms up
        t = time.perf_counter()
        model.zero_grad()
        model.compute_loss(inputs).backward()
        times.append(time.perf_counter() - t)
    return min(times[1:])


def step_ratios(rounds: int) -> dict:
    """(b) seconds per training step: 12 context frames vs none, one thread vs the default."""
    import torch

    from bspatial.construction.questions.navigation_vqa import CONTEXT_FRAMES

    default = torch.get_num_threads()
    with_context = _step_seconds(CONTEXT_FRAMES, 1, rounds)
    without = _step_seconds(0, 1, rounds)
    default_threads = _step_seconds(CONTEXT_FRAMES, default, rounds)
    torch.set_num_threads(default)
    return {"context_frames": CONTEXT_FRAMES, "with_context_ms": 1e3 * with_context, "without_ms": 1e3 * without,
            "context_cost_ratio": with_context / without, "default_threads": default,
            "default_threads_ms": 1e3 * default_threads, "one_thread_speedup": default_threads / with_context}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per measurement (best one reported)")
    parser.add_argument("--only", choices=("render", "step"), help="run one part")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.only in (None, "render"):
        for task, row in render_ratio(args.rounds).items():
            print(f"(a) {task}: {row['kept']} of {row['tour_poses']} tour poses: full tour {row['full_ms']:.0f} ms "
                  f"vs kept poses {row['kept_ms']:.0f} ms -> {row['ratio']:.1f}x")
    if args.only in (None, "step"):
        row = step_ratios(args.rounds)
        print(f"(b) tiny training step, batch 2: {row['context_frames']} context frames {row['with_context_ms']:.0f} ms "
              f"vs none {row['without_ms']:.0f} ms -> {row['context_cost_ratio']:.2f}x the cost; "
              f"{row['default_threads']} threads {row['default_threads_ms']:.0f} ms vs 1 thread "
              f"{row['with_context_ms']:.0f} ms -> {row['one_thread_speedup']:.1f}x")
        print(json.dumps(row))


if __name__ == "__main__":
    main()
