"""Simulator speed: (a) RGB+depth+seg fps per 224x224 camera, our 2-pass path vs ``mujoco.Renderer``'s
three passes, side by side in one run; (b) closed-loop control rate with the three robot cameras at
224x224 on one core, RGB + depth + segmentation beside RGB only (what policies read) beside no cameras, alternating
in rounds; (c) scripted-expert success per manipulation variant and navigation task over N seeds
(seeds 0..N-1; strict Table S4 outcome of the recorded trace, :func:`bspatial.scoring.action.outcome_from_trace`;
target >= 95% each), every episode limited by the task's calibrated step budget
(:mod:`bspatial.tasks.budgets`, calibrated on seeds 500000+, so these seeds are fresh).

Both render paths draw the same scene and cameras from the same state, alternating in rounds; ours is
:class:`bspatial.sim.render.SegmentationRenderer` (one scene update, an RGB pass and a segmentation pass
that also reads depth, decoded to instance ids and metric depth); the reference is ``mujoco.Renderer``
with ``update_scene`` + RGB render, depth render and segmentation render (its documented way to get
all three). Part (b) pins the process to one CPU and sets ``LP_NUM_THREADS=1`` (Mesa llvmpipe would
otherwise render with every core) before mujoco is imported; one control step = ``step`` (8 physics
substeps, 1/30 s simulated) + three 224x224 renders + ``robot_state``. Target: >= 30 Hz.
Part (d) runs the same closed loop on a scene of eight task objects wearing the asset library's visual meshes
(:mod:`bspatial.world.assets`) and on the same scene with its primitives only (the meshes taken off),
alternating in rounds, and prints both rates and their ratio (target: meshes must keep >= 30 Hz).

Part (e) times warm scene sampling (:func:`bspatial.tasks.sample_instance`) over a fixed list of tasks (every
task's first variant) and seeds, three ways alternating in rounds: as sampled (an object carries a cheap
reference to its meshes, :class:`bspatial.world.spec.Look`, built only when a backend loads the scene), sampled
and then every look resolved (what dressing at spec time cost: the meshes built for every scene sampled), and
without meshes at all (``dress`` switched off); it prints ms per scene side by side with the ratios.

Part (f) loads activity scenes one after another and renders one 720x720 head frame of each (what the build does
per frame), two ways alternating in rounds: the backend keeping one GL context for every scene (as it does) and a
fresh GL context per scene (what it did: the first MjrContext in a context pays for Mesa's shader compilation);
it prints seconds per scene side by side and the ratio.

Run: ``.venv/bin/python benchmarks/sim.py`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import logging
import os
import time

logger = logging.getLogger("benchmarks.sim")
CONTROL_TARGET_HZ = 30.0


def _pin_to_one_core() -> str:
    os.environ.setdefault("LP_NUM_THREADS", "1")
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"cpu {cpu}, LP_NUM_THREADS={os.environ['LP_NUM_THREADS']}"
    return "affinity not supported here"


def benchmark_scene():
    """A kitchen-counter-like scene: a counter, a table, eight small objects, the robot facing them."""
    import numpy as np

    from bspatial.world.spec import ObjectSpec, Part, Pose, SceneSpec, box_object, table_object

    rng = np.random.default_rng(0)
    objects = [table_object("countertop_0", "countertop", (0.7, 1.6), 0.9, (0.95, 0.0)),
               table_object("table_0", "breakfast_table", (0.8, 0.8), 0.75, (0.0, 1.4))]
    for i in range(4):
        objects.append(box_object(f"box_{i}", "box_of_cereal", (0.06, 0.18, 0.26), (0.85, -0.6 + 0.4 * i, 1.03),
                                  rgba=(*rng.uniform(0.2, 0.9, 3), 1.0)))
    for i in range(4):
        objects.append(ObjectSpec(f"plate_{i}", "plate", (Part("cylinder", (0.1, 0.02), rgba=(0.95, 0.95, 0.92, 1)),),
                                  Pose((1.1, -0.45 + 0.3 * i, 0.91))))
    return SceneSpec("benchmark", objects=tuple(objects))


ROUNDS = 8   # the two render paths alternate in rounds, so load from other processes hits both alike


def _frames(fn, cameras, seconds: float) -> tuple[int, float]:
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn(cameras[n % len(cameras)])
        n += 1
    return n, time.perf_counter() - start


def render_fps(seconds: float, size: int) -> tuple[float, float]:
    """(ours, mujoco.Renderer) RGB+depth+seg frames per second, cycling the three robot cameras."""
    import mujoco

    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.sim.render import SegmentationRenderer

    sim = MujocoBackend(camera_size=size, max_render_size=size)
    sim.load(benchmark_scene())
    cameras = ("head", "left_wrist", "right_wrist")
    ids = {c: sim._camera_ids[c] for c in cameras}
    with SegmentationRenderer(sim.model, sim.geom_instance, size, size) as ours, \
            mujoco.Renderer(sim.model, size, size) as ref:
        def two_passes(cam: str):
            return ours.render(sim.data, ids[cam], size, size)

        def three_passes(cam: str):
            ref.update_scene(sim.data, cam)
            rgb = ref.render()
            ref.enable_depth_rendering()
            depth = ref.render()
            ref.disable_depth_rendering()
            ref.enable_segmentation_rendering()
            seg = ref.render()
            ref.disable_segmentation_rendering()
            return rgb, depth, seg

        totals = {two_passes: [0, 0.0], three_passes: [0, 0.0]}
        for fn in totals:                     # warm-up: first frames compile shaders / allocate
            _frames(fn, cameras, 0.2)
        for _ in range(ROUNDS):
            for fn, total in totals.items():
                n, dt = _frames(fn, cameras, seconds / ROUNDS)
                total[0] += n
                total[1] += dt
    sim.close()
    (n_ours, t_ours), (n_ref, t_ref) = totals.values()
    return n_ours / t_ours, n_ref / t_ref


CONTROL_MODES: tuple[str, ...] = ("rgb+depth+seg", "rgb", "physics")
"""Part (b)'s loops: three cameras rendered with depth and segmentation (what the dataset build reads), RGB only
(what every policy, demonstration and env observation reads: ``render(..., rgb_only=True)``), no cameras."""


def control_rate(seconds: float, size: int) -> dict[str, float]:
    """Closed-loop Hz per :data:`CONTROL_MODES` over a sinusoidal arm motion, the modes alternating in rounds."""
    import numpy as np

    from bspatial.sim.mujoco_backend import MujocoBackend

    sim = MujocoBackend(camera_size=size)
    sim.load(benchmark_scene())
    home = sim.hold_action()

    def loop(mode: str, duration: float) -> tuple[int, float]:
        sim.reset()
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < duration:
            action = home.copy()
            action[7:14] += 0.2 * np.sin(0.1 * n)
            action[15:22] -= 0.2 * np.sin(0.1 * n)
            action[0] = 0.1
            if sim.step(action).status != "ok":
                raise RuntimeError(f"benchmark episode hit sim_error: {sim.message}")
            if mode != "physics":
                for cam in ("head", "left_wrist", "right_wrist"):
                    sim.render(cam, rgb_only=mode == "rgb")
            sim.robot_state()
            n += 1
        return n, time.perf_counter() - start

    for mode in CONTROL_MODES:   # warm-up
        loop(mode, 0.2)
    totals = {mode: [0, 0.0] for mode in CONTROL_MODES}
    for _ in range(ROUNDS):
        for mode, total in totals.items():
            n, dt = loop(mode, seconds / ROUNDS)
            total[0] += n
            total[1] += dt
    sim.close()
    return {mode: n / dt for mode, (n, dt) in totals.items()}


EXPERT_TARGET = 95.0


def meshed_scene(meshed: bool):
    """The benchmark's counter and table with eight task objects of the asset library on the counter,
    each wearing its visual mesh (``meshed``) or only its primitives."""
    import dataclasses

    import numpy as np

    from bspatial.world import objects as shapes
    from bspatial.world.assets import undressed

    rng = np.random.default_rng(0)
    z = 0.9
    items = [shapes.bowl("bowl_0", (0.8, -0.6, z)), shapes.plate("plate_0", 0.26, (1.1, -0.45, z)),
             shapes.food_item("banana_0", "banana", 0.18, (0.8, -0.2, z)), shapes.food_item("apple_0", "apple", 0.08, (1.1, -0.1, z)),
             shapes.tool("hammer_0", "hammer", (0.8, 0.2, z)), shapes.tupperware("tupperware_0", (1.1, 0.25, z)),
             shapes.carving_knife("carving_knife_0", (0.8, 0.55, z)), shapes.toy("teddy_bear_0", "teddy_bear", 0.22, (1.1, 0.6, z), rng)]
    if not meshed:
        items = [undressed(o) for o in items]
    base = benchmark_scene()
    return dataclasses.replace(base, name=f"benchmark-{'meshed' if meshed else 'primitives'}",
                               objects=base.objects[:2] + tuple(items))


def meshed_control_rate(seconds: float, size: int) -> tuple[float, float, int]:
    """(closed-loop Hz with meshes, Hz with primitives only, mesh faces in the scene), alternating in rounds."""
    import numpy as np

    from bspatial.sim.mujoco_backend import MujocoBackend

    sims = {}
    for meshed in (True, False):
        sims[meshed] = MujocoBackend(camera_size=size)
        sims[meshed].load(meshed_scene(meshed))
    faces = int(sims[True].model.nmeshface)

    def loop(sim, duration: float) -> tuple[int, float]:
        home = sim.hold_action()
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < duration:
            action = home.copy()
            action[7:14] += 0.2 * np.sin(0.1 * n)
            action[15:22] -= 0.2 * np.sin(0.1 * n)
            if sim.step(action).status != "ok":
                raise RuntimeError(f"benchmark episode hit sim_error: {sim.message}")
            for cam in ("head", "left_wrist", "right_wrist"):
                sim.render(cam)
            sim.robot_state()
            n += 1
        return n, time.perf_counter() - start

    totals = {True: [0, 0.0], False: [0, 0.0]}
    for sim in sims.values():   # warm-up
        loop(sim, 0.3)
    for _ in range(ROUNDS):
        for meshed, sim in sims.items():
            n, dt = loop(sim, seconds / ROUNDS)
            totals[meshed][0] += n
            totals[meshed][1] += dt
    for sim in sims.values():
        sim.close()
    return totals[True][0] / totals[True][1], totals[False][0] / totals[False][1], faces


SAMPLING_SEEDS = range(100, 106)
"""(e) seeds per task (the first variant of each); fixed, so runs compare."""


def sampling_cost(rounds: int = 3) -> tuple[float, float, float, int]:
    """(ms per scene as sampled, with every look resolved, without meshes; scenes per way), warm."""
    from unittest import mock

    from bspatial.tasks import sample_instance
    from bspatial.tasks.registry import get_task, task_names
    from bspatial.world import objects
    from bspatial.world.assets import visual_parts

    pairs = [(t, get_task(t).variants[0]) for t in task_names()]

    def lazy() -> None:
        for task, variant in pairs:
            for seed in SAMPLING_SEEDS:
                sample_instance(task, variant, seed)

    def resolved() -> None:
        for task, variant in pairs:
            for seed in SAMPLING_SEEDS:
                for obj in sample_instance(task, variant, seed).scene.objects:
                    visual_parts(obj)

    def plain() -> None:
        with mock.patch.object(objects, "dress", lambda obj, salt="": obj):
            lazy()

    ways = {"lazy": lazy, "resolved": resolved, "plain": plain}
    lazy(), plain()                           # warm: imports, lru caches of fixed inputs (not the per-scene looks)
    spent = dict.fromkeys(ways, 0.0)
    for _ in range(rounds):
        for name, fn in ways.items():
            # Clearing the resolution memo each round measures building the meshes, not looking them up.
            from bspatial.world.assets import dressing
            dressing._resolved.cache_clear()
            dressing._design.cache_clear()
            start = time.perf_counter()
            fn()
            spent[name] += time.perf_counter() - start
    n = rounds * len(pairs) * len(SAMPLING_SEEDS)
    return spent["lazy"] / n * 1e3, spent["resolved"] / n * 1e3, spent["plain"] / n * 1e3, n


SCENE_SWITCH_ACTIVITIES = 4
"""(f) activity scenes (the first of GENERAL_ACTIVITIES, layout 0) loaded in turn."""


def scene_switch_cost(rounds: int = 3) -> tuple[float, float, int]:
    """(s per scene load + 720x720 render with one GL context for all scenes, with a fresh one per scene; scenes)."""
    import dataclasses

    import numpy as np

    from bspatial.construction.questions.activities import GENERAL_ACTIVITIES, activity_scene
    from bspatial.construction.questions.general import view_robot
    from bspatial.sim.mujoco_backend import MujocoBackend

    scenes = []
    for k, activity in enumerate(GENERAL_ACTIVITIES[:SCENE_SWITCH_ACTIVITIES]):
        ascene = activity_scene(activity, k)
        scenes.append(dataclasses.replace(ascene.scene, robot=view_robot(ascene, np.random.default_rng(k))))

    def run(fresh_context: bool) -> float:
        sim = MujocoBackend(max_render_size=720)
        start = time.perf_counter()
        for scene in scenes:
            sim.load(scene)
            sim.render("head", width=720, height=720)
            if fresh_context:
                sim.close()     # frees the GL context too: the next render opens a new one
        spent = time.perf_counter() - start
        sim.close()
        return spent

    run(False)                                  # warm: imports, mesh caches
    spent = {True: 0.0, False: 0.0}
    for _ in range(rounds):
        for fresh in (False, True):
            spent[fresh] += run(fresh)
    n = rounds * len(scenes)
    return spent[False] / n, spent[True] / n, n


def expert_success(seeds: int, tasks: list[str] | None = None) -> list[tuple[str, str, int, int, float, int, int]]:
    """(task, variant, correct, n, seconds per episode, longest episode, budget) per manipulation variant and
    navigation task under its scripted expert, each episode limited by the task's calibrated step budget."""
    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks import get_task, task_names
    from bspatial.tasks.episode import load_instance, run_episode
    from bspatial.tasks.experts import make_expert
    from bspatial.tasks.registry import NAVIGATION_REGISTRY

    rows = []
    sim = MujocoBackend()
    for name in tasks or [*task_names(), *NAVIGATION_REGISTRY]:
        task = get_task(name)
        for variant in task.variants:
            correct, longest, start = 0, 0, time.perf_counter()
            for seed in range(seeds):
                inst, _ = load_instance(sim, name, variant, seed)
                result = run_episode(sim, inst, make_expert(sim, inst))
                correct += result.outcome is not None and result.outcome.outcome == "correct"
                longest = max(longest, result.steps)
            per_episode = (time.perf_counter() - start) / seeds
            rows.append((name, variant, correct, seeds, per_episode, longest, task.step_budget))
            rate = 100.0 * correct / seeds
            logger.info("(c) %-28s %-22s %3d/%-3d = %5.1f%% (%s) %.2f s/episode, longest %d of %d steps", name,
                        variant or "-", correct, seeds, rate, "met" if rate >= EXPERT_TARGET else "MISSED",
                        per_episode, longest, task.step_budget)
    sim.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per path")
    parser.add_argument("--size", type=int, default=224, help="camera width = height")
    parser.add_argument("--all-cores", action="store_true", help="do not pin to one core")
    parser.add_argument("--parts", default="abdefc", help="which parts to run, e.g. 'c'")
    parser.add_argument("--seeds", type=int, default=20, help="(c) seeds per variant")
    parser.add_argument("--tasks", default="", help="(c) comma-separated task names (default: all 25 tasks)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    where = "all cores" if args.all_cores else _pin_to_one_core()
    import bspatial.sim  # noqa: F401  (sets the headless MUJOCO_GL default before mujoco is imported)

    logger.info("MUJOCO_GL=%s, %s", os.environ.get("MUJOCO_GL"), where)
    if "a" in args.parts:
        _part_a(args)
    if "b" in args.parts:
        _part_b(args)
    if "d" in args.parts:
        _part_d(args)
    if "e" in args.parts:
        _part_e()
    if "f" in args.parts:
        _part_f()
    if "c" in args.parts:
        rows = expert_success(args.seeds, [t for t in args.tasks.split(",") if t] or None)
        met = sum(100.0 * row[2] / row[3] >= EXPERT_TARGET for row in rows)
        logger.info("(c) %d/%d variants meet the %.0f%% target", met, len(rows), EXPERT_TARGET)


def _part_a(args) -> None:
    ours, ref = render_fps(args.seconds, args.size)
    logger.info("(a) RGB+depth+seg per %dx%d camera: ours (2 passes) %.1f fps | mujoco.Renderer (3 passes) %.1f fps "
                "| ratio %.2fx", args.size, args.size, ours, ref, ours / ref)


def _part_b(args) -> None:
    hz = control_rate(args.seconds, args.size)
    full, rgb = hz["rgb+depth+seg"], hz["rgb"]
    logger.info("(b) closed loop, 3 cameras at %dx%d: RGB+depth+seg %.1f Hz (target >= %.0f: %s) | RGB only %.1f Hz "
                "(%.2fx) | physics + state only %.0f Hz", args.size, args.size, full, CONTROL_TARGET_HZ,
                "met" if full >= CONTROL_TARGET_HZ else "MISSED", rgb, rgb / full, hz["physics"])


def _part_d(args) -> None:
    meshed, plain, faces = meshed_control_rate(args.seconds, args.size)
    logger.info("(d) closed loop, 3 cameras, 8 task objects: meshed (%d mesh faces) %.1f Hz | primitives only %.1f Hz "
                "| ratio %.2fx (target >= %.0f Hz: %s)", faces, meshed, plain, meshed / plain, CONTROL_TARGET_HZ,
                "met" if meshed >= CONTROL_TARGET_HZ else "MISSED")


def _part_e() -> None:
    lazy, resolved, plain, n = sampling_cost()
    logger.info("(e) sample_instance, warm, %d scenes each: meshes by reference %.1f ms | meshes built (spec-time "
                "dressing) %.1f ms | no meshes %.1f ms | by reference / built %.2fx, by reference / none %.2fx",
                n, lazy, resolved, plain, lazy / resolved, lazy / plain)


def _part_f() -> None:
    shared, fresh, n = scene_switch_cost()
    logger.info("(f) load + one 720x720 render per activity scene, %d scenes each: one GL context for all %.3f s | "
                "a fresh context per scene %.3f s | ratio %.2fx", n, shared, fresh, fresh / shared)


if __name__ == "__main__":
    main()
