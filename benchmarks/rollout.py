"""Rollout throughput on this machine, measured side by side in one run.

1. Episodes per hour with a tiny trained policy (demos -> `train("tiny")` -> checkpoint), with the
   synchronous controller (latency 0: the model runs when a new plan is due) vs the simulated
   asynchronous one (latency k: the model is called back to back and each chunk lands k steps
   later; inference still runs in-process, so this measures the extra calls, not overlap).
2. Scripted-expert episodes per hour with 1 worker process vs 2 (one simulator per process).
3. Navigation: scripted navigation-expert episodes per hour (full budget, stopped on arrival).
4. Oracle IR cost per policy observation: one dot IR image (project the instructed box through the
   head camera, draw the dot) vs one 224 x 224 head render, in milliseconds, side by side.
5. Scale-out (``--only scale-out`` runs just this): scripted-expert episodes per hour, full budgets,
   in 1 process vs 2 local worker processes vs Ray with 2 actors (a local 2-CPU cluster, its start-up timed
   apart), on the same plan side by side; and the time the whole Action protocol (469 held-out + 700
   prompt-probe + 401 navigation episodes) takes the scripted expert on 2 cores, projected from each split's
   measured rate on the fastest of the three (``--protocol`` runs it instead: hours).

6. Batched inference (``--only batched`` runs just this): the tiny trained policy's episodes per hour at 1, 2, 4 and 8
   worker processes, each worker with its own copy of the model (unbatched) vs one server process batching every
   worker's requests (``--batch-inference``), side by side; a per-stage breakdown of one episode's step (physics,
   three RGB renders, the model per call, the batched round trip's transport); and the whole Action protocol's
   time with the tiny policy projected from per-split rates measured on a sample of every task, for this machine
   and, as a stated projection, for 16 and 64 cores with the model on one GPU.

Episode planning (the split manifests sample instances) happens before the clocks start.

Episodes are capped at ``--max-steps`` so a run takes minutes; the ratios are what matter.

Run: ``.venv/bin/python benchmarks/rollout.py``
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

logger = logging.getLogger("benchmarks.rollout")
POLICY_TASK = "reach_plate"
SCRIPTED_TASKS = ["reach_plate", "reach_dice", "reach_tool", "reach_item"]
NAV_TASKS = ["move_to_bookcase", "move_to_bathroom", "move_to_corner_booth"]
IR_REPEATS = 200


def _episodes_per_hour(run) -> tuple[float, int]:
    start = time.perf_counter()
    summary = run()
    elapsed = time.perf_counter() - start
    return 3600.0 * summary.ran / elapsed, summary.ran


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2, help="episodes per task and setting")
    parser.add_argument("--max-steps", type=int, default=120, help="cap on each episode's step budget")
    parser.add_argument("--latency", type=int, default=3, help="simulated inference latency (steps) for async")
    parser.add_argument("--only", choices=["scale-out", "batched"], default=None, help="run one section only")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8], help="batched: worker counts")
    parser.add_argument("--protocol", action="store_true",
                        help="scale-out: run the whole Action protocol instead of projecting its time")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logger.setLevel(logging.INFO)
    if args.only == "scale-out":
        _scale_out(args)
        return
    if args.only == "batched":
        _batched(args)
        return

    from bspatial.evaluation.rollout.plan import RunSettings, plan_episodes
    from bspatial.evaluation.rollout.runner import run_rollouts

    for split, tasks in (("held_out", [POLICY_TASK, *SCRIPTED_TASKS]), ("navigation", NAV_TASKS)):
        plan_episodes(split, tasks, args.episodes)  # cached in-process: the timings below exclude planning

    with tempfile.TemporaryDirectory(prefix="bspatial-rollout-bench-") as scratch:
        root = Path(scratch)
        checkpoint = _tiny_policy(root)

        rates = {}
        for name, latency in (("sync", 0), ("async", args.latency)):
            rates[name] = _episodes_per_hour(lambda latency=latency, name=name: run_rollouts(
                checkpoint, "held_out", [POLICY_TASK], root / f"policy-{name}",
                RunSettings(max_steps=args.max_steps, latency_steps=latency), n_episodes=args.episodes))
        logger.info("tiny policy, %d-step episodes: sync %.0f episodes/h, async (latency %d) %.0f episodes/h, "
                    "async/sync %.2fx", args.max_steps, rates["sync"][0], args.latency, rates["async"][0],
                    rates["async"][0] / rates["sync"][0])

        workers = {}
        for count in (1, 2):
            workers[count] = _episodes_per_hour(lambda count=count: run_rollouts(
                "scripted", "held_out", SCRIPTED_TASKS, root / f"scripted-{count}",
                RunSettings(max_steps=args.max_steps), n_episodes=args.episodes, workers=count))
        logger.info("scripted experts on %d tasks: 1 worker %.0f episodes/h, 2 workers %.0f episodes/h, ratio %.2fx",
                    len(SCRIPTED_TASKS), workers[1][0], workers[2][0], workers[2][0] / workers[1][0])

        nav = _episodes_per_hour(lambda: run_rollouts("scripted", "navigation", NAV_TASKS, root / "navigation",
                                                      n_episodes=args.episodes))
        logger.info("scripted navigation on %d tasks (full budget): %.0f episodes/h", len(NAV_TASKS), nav[0])
    ir_ms, render_ms = _oracle_ir_cost()
    logger.info("oracle dot IR %.2f ms per observation vs head render %.2f ms (IR/render %.2fx)", ir_ms, render_ms,
                ir_ms / render_ms)
    _scale_out(args)


def _tiny_policy(root: Path) -> str:
    """A tiny policy trained here on one demonstration of POLICY_TASK (``train("tiny")``): its checkpoint folder."""
    from bspatial.construction.demonstrations.demos import record_demos
    from bspatial.modeling.train import train

    record_demos(root / "demos", tasks=[POLICY_TASK], episodes_per_task=1)
    train("tiny", str(root / "demos"), str(root / "policy"))
    return str(root / "policy" / "pretrained_model")


def _batched(args) -> None:
    """Section 6: unbatched vs batched episodes per hour per worker count, the stage breakdown, the projection."""
    import numpy as np

    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.plan import RunSettings, plan_episodes
    from bspatial.evaluation.rollout.runner import BatchSettings, run_rollouts

    tasks = [POLICY_TASK, *SCRIPTED_TASKS[1:]]
    n = max(args.episodes, max(args.workers) // len(tasks) + 1)   # enough episodes to keep every worker busy
    plan_episodes("held_out", tasks, n)
    settings = RunSettings(max_steps=args.max_steps)
    with tempfile.TemporaryDirectory(prefix="bspatial-batched-bench-") as scratch:
        root = Path(scratch)
        checkpoint = _tiny_policy(root)
        rows = {}
        for workers in args.workers:
            for batched in (False, True):
                out = root / f"w{workers}-{'batched' if batched else 'plain'}"
                rate, ran = _episodes_per_hour(lambda: run_rollouts(
                    checkpoint, "held_out", tasks, out, settings, n_episodes=n, workers=workers,
                    batch=BatchSettings() if batched else None))
                records = load_results(out)
                calls = [r["inference_ms"] for r in records if r.get("inference_ms")]
                mean_ms = sum(c["mean_ms"] * c["calls"] for c in calls) / max(1, sum(c["calls"] for c in calls))
                steps_per_hour = rate / ran * sum(r["steps"] for r in records)   # episodes may commit early
                rows[workers, batched] = (rate, mean_ms, steps_per_hour)
            (plain, plain_ms, _), (batch, batch_ms, _) = rows[workers, False], rows[workers, True]
            logger.info("tiny policy, %d workers, %d episodes of %d steps: unbatched %.0f episodes/h (%.0f ms per "
                        "call) | batched %.0f episodes/h (%.0f ms per round trip) | batched/unbatched %.2fx | vs 1 "
                        "unbatched worker %.2fx", workers, ran, args.max_steps, plain, plain_ms, batch, batch_ms,
                        batch / plain, batch / rows[args.workers[0], False][0])
        stages = _stage_breakdown(checkpoint)
        logger.info("one step, one process: physics %.1f ms | the policy's RGB renders (%s) %.1f ms | model %.1f ms "
                    "per call (every 10 steps: %.1f ms per step) | batched transport %.1f ms per call (round trip at "
                    "1 worker minus the model)", stages["physics"], stages["cameras"], stages["render"],
                    stages["model"], stages["model"] / 10,
                    rows[args.workers[0], True][1] - rows[args.workers[0], False][1])
        _tiny_protocol_projection(args, rows, stages)


def _stage_breakdown(checkpoint: str) -> dict[str, float]:
    """Milliseconds of one control step's physics, its three RGB renders, and one model call, in this process."""
    from bspatial.evaluation.rollout.episodes import load_instance
    from bspatial.evaluation.rollout.plan import plan_episodes
    from bspatial.evaluation.rollout.policies import CheckpointPredictor
    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks.episode import EpisodeRun

    from bspatial.catalog.schema import POLICY_IMAGE_SIZE

    predictor = CheckpointPredictor(checkpoint)
    size = POLICY_IMAGE_SIZE   # what a rollout worker's backend renders at (process_backend's default)
    with MujocoBackend(camera_size=size) as backend:
        instance, _ = load_instance(backend, plan_episodes("held_out", [POLICY_TASK], 1)[0])
        run = EpisodeRun(backend, instance, max_steps=200)
        hold = backend.hold_action()
        times = {"physics": [], "render": [], "model": []}
        for step in range(40):
            start = time.perf_counter()
            backend.step(hold)
            times["physics"].append(time.perf_counter() - start)
            start = time.perf_counter()
            for cam in predictor.cameras:   # what the policy reads (cameras render when a chunk is due; an upper bound)
                backend.render(cam, rgb_only=True)
            times["render"].append(time.perf_counter() - start)
        observation = run.observation()
        inputs = predictor.prepare(observation, lambda c: backend.render(c, rgb_only=True))
        predictor.infer(inputs)   # warm-up
        for _ in range(5):
            start = time.perf_counter()
            predictor.infer(inputs)
            times["model"].append(time.perf_counter() - start)
    out: dict[str, Any] = {k: 1000.0 * float(sorted(v)[len(v) // 2]) for k, v in times.items()}
    out["cameras"] = f"{', '.join(predictor.cameras)} at {size} px"
    return out


def _tiny_protocol_projection(args, rows: dict, stages: dict[str, float]) -> None:
    """The whole manipulation protocol with the tiny policy: its step count (every episode at its task's full budget:
    the tiny policy seldom commits early) over the fastest measured steps per hour on this machine; then the stated
    projection for more cores with the model on one GPU."""
    from bspatial.evaluation.rollout.plan import plan_episodes
    from bspatial.tasks.budgets import step_budget

    steps = {split: sum(step_budget(e.task) for e in plan_episodes(split)) for split in ("held_out", "prompt_probe")}
    (workers, batched), (_, _, steps_per_hour) = max(rows.items(), key=lambda item: item[1][2])
    hours = sum(steps.values()) / steps_per_hour
    logger.info("whole manipulation protocol with the tiny policy (469 + 700 episodes, %d steps at full budgets) on "
                "this machine: %.1f h projected from the fastest setting above (%d workers, %s: %.0f steps/h)",
                sum(steps.values()), hours, workers, "batched" if batched else "unbatched", steps_per_hour)
    # A projection, not a measurement: simulation scales with the cores (one worker each) while one GPU serves the
    # batched model calls, so a step costs the CPU its physics and renders only.
    cpu_ms = stages["physics"] + stages["render"]
    for cores in (16, 64):
        projected = sum(steps.values()) * cpu_ms / 1000.0 / cores / 3600.0
        logger.info("projection (not measured), %d cores + 1 GPU: %.2f h (%.1f ms of simulation per step over %d "
                    "workers; the model on the GPU assumed to keep up at batch %d)", cores, projected, cpu_ms, cores,
                    cores)


SCALE_OUT_SPLITS = ("held_out", "prompt_probe", "navigation")
"""The Action protocol (Section 4.3, Table S11): 469 + 700 + 401 episodes."""
SCALE_OUT_ENGINES = (("1 process", {"workers": 1}), ("2 local processes", {"workers": 2}),
                     ("Ray, 2 actors", {"workers": 2, "ray": "auto"}))


def _scale_out(args) -> None:
    """Section 5: scripted episodes per hour on each engine, side by side, then the whole protocol's time."""
    import os

    import ray

    from bspatial.evaluation.rollout.plan import plan_episodes, resolve_tasks
    from bspatial.evaluation.rollout.runner import run_rollouts

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Sample: the first --episodes entries of every task of each split (all of the protocol's tasks, full budgets).
    plans = {split: resolve_tasks(split, None) for split in SCALE_OUT_SPLITS}
    for split, tasks in plans.items():
        plan_episodes(split, tasks, args.episodes)   # cached: the clocks below exclude planning
    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    logger.info("Ray local cluster start-up (2 CPUs): %.1f s (paid once per run, not in the rates below)",
                time.perf_counter() - start)
    rates: dict[str, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="bspatial-scale-out-bench-") as scratch:
            for split, tasks in plans.items():
                for name, engine in SCALE_OUT_ENGINES:
                    rates.setdefault(name, {})[split] = _episodes_per_hour(lambda: run_rollouts(
                        "scripted", split, tasks, Path(scratch) / f"{split}-{name}", n_episodes=args.episodes,
                        **engine))[0]
            ones = rates["1 process"]
            for name, _ in SCALE_OUT_ENGINES:
                logger.info("scale-out %-18s %s", name, " | ".join(
                    f"{split} {rates[name][split]:6.0f} episodes/h ({rates[name][split] / ones[split]:.2f}x)"
                    for split in SCALE_OUT_SPLITS))
            _protocol_time(args, rates, Path(scratch))
    finally:
        ray.shutdown()


def _protocol_time(args, rates: dict[str, dict[str, float]], scratch: Path) -> None:
    from bspatial.evaluation.rollout.plan import plan_episodes
    from bspatial.evaluation.rollout.runner import run_rollouts

    counts = {split: len(plan_episodes(split)) for split in SCALE_OUT_SPLITS}
    def hours(name: str) -> float:
        return sum(counts[split] / rates[name][split] for split in SCALE_OUT_SPLITS)

    best = min(rates, key=hours)
    if not args.protocol:
        logger.info("whole Action protocol (%s episodes), scripted expert, %s on 2 cores: %.2f h projected from the "
                    "rates above", " + ".join(str(counts[s]) for s in SCALE_OUT_SPLITS), best, hours(best))
        return
    engine = dict(SCALE_OUT_ENGINES)[best]
    start = time.perf_counter()
    for split in SCALE_OUT_SPLITS:
        run_rollouts("scripted", split, None, scratch / f"protocol-{split}", progress=True, **engine)
    logger.info("whole Action protocol (%d episodes), scripted expert, %s on 2 cores: %.2f h measured",
                sum(counts.values()), best, (time.perf_counter() - start) / 3600)


def _oracle_ir_cost() -> tuple[float, float]:
    """Milliseconds per oracle dot IR image and per head render, on one held-out reach instance."""
    from bspatial.evaluation.rollout.ir import IRConditioner, OracleTarget
    from bspatial.evaluation.rollout.episodes import load_instance
    from bspatial.evaluation.rollout.plan import plan_episodes
    from bspatial.sim.mujoco_backend import MujocoBackend

    with MujocoBackend() as backend:
        instance, _ = load_instance(backend, plan_episodes("held_out", [POLICY_TASK], 1)[0])
        conditioner = IRConditioner("dot", "oracle", OracleTarget(backend, instance))
        head = backend.render("head")
        start = time.perf_counter()
        for _ in range(IR_REPEATS):
            conditioner.images(head)
        ir_ms = 1000 * (time.perf_counter() - start) / IR_REPEATS
        start = time.perf_counter()
        for _ in range(IR_REPEATS):
            backend.render("head")
        render_ms = 1000 * (time.perf_counter() - start) / IR_REPEATS
    return ir_ms, render_ms


if __name__ == "__main__":
    main()
