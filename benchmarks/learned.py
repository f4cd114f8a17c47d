"""Learned policies, measured: demonstrations -> five learners -> rollouts -> a Table 4 beside its references.

One resumable command. Every step skips what is already done, so it can be stopped at any moment and rerun:

1. **demos**: ``bspatial demos`` on the training manifest of the tasks (``--demos`` per task), one LeRobot dataset;
2. **train**: our BSpatialVLA preset (``--preset``, the baseline), its dot-IR and attention-map IR variants, its
   language-blanked variant (every instruction replaced by the task's bare name,
   :func:`bspatial.catalog.tasks.bare_task_name`), each with ``bspatial.modeling.train`` (a killed run resumes from
   its newest checkpoint; a finished one is reused only when its recorded config is this preset's); and LeRobot's ACT
   through the real ``lerobot-train`` (instruction-blind by construction: ACT reads no language), sized for CPU
   (:data:`ACT_FLAGS`, ``benchmarks/act_recipe.md``);
3. **rollouts**: every learner and the references ``random``, ``scripted`` and ``scripted-memorizer`` on every
   held-out and prompt-probe entry of the tasks (``bspatial rollout``: one result file per episode, resumable), under
   the chunk controller (the benchmark's protocol); the language-blanked learner is prompted with the bare task name
   (``--condition task_name``), as it was trained; the IR learners get the oracle IR point;
4. **analysis**: ``bspatial analyze correlate`` (Table 3's layout) of a perception run against the learned and
   reference held-out rows, and ``bspatial report --html`` (the leaderboard) over every rollout folder; the episode
   join (issue 32) of each of our learners, its own pointing-head points on its episodes' aligned IR items
   (``eval-vlm --model policy-point``) beside the chance points (:func:`join_own_points`); the grounding-cue ladder
   of the IR learners on the held-out split (:func:`cue_ladder`); the baseline learner and the scripted expert under
   each perturbation axis, paired with their unperturbed held-out episodes (:func:`perturbation_axes`);
5. **table**: Table 4's layout (held-out soft / strict, probe soft / strict / wrong, Wilson 95%), one row per policy
   and split, as Markdown and as ``benchmarks/results/learned_table4.csv`` (columns
   ``policy,split,n,strict,strict_lo,strict_hi,soft,soft_lo,soft_hi,wrong,wrong_lo,wrong_hi``, percent; reference
   rows named by their ``--policy`` spec), with the commit, the preset, the data counts and each step's wall time
   in ``benchmarks/results/learned_table4.md``.

Run (the measured configuration; see the README for its table):
    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/learned.py --out runs/learned --workers 2
Smoke (what ``make test`` runs: one demonstration per task, two training steps, one episode per task and split
capped at 8 steps; checks the wiring, not the learning):
    .venv/bin/python benchmarks/learned.py --out /tmp/learned-smoke --smoke
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

logger = logging.getLogger("learned")

TASKS = ("reach_plate", "reach_tool", "reach_dice")
"""Three reach tasks of different categories: size, ordinal, distance."""
SPLITS = ("held_out", "prompt_probe")
REFERENCES = ("random", "scripted", "scripted-memorizer")
CAMERAS = ("head",)
"""The cameras recorded: every learner here reads the head camera alone (the CPU presets and the CPU ACT), and a
head-only recording runs 4.2x the episodes per hour of a three-camera one (benchmarks/demos.py)."""
CSV_COLUMNS = ("policy", "split", "n", "strict", "strict_lo", "strict_hi", "soft", "soft_lo", "soft_hi", "wrong",
               "wrong_lo", "wrong_hi")
RESULTS = Path(__file__).resolve().parent / "results"
ACT_FLAGS: tuple[str, ...] = (
    # Offline: a local dataset (a repo id that is never fetched), nothing pushed, no torchvision weights (none can be
    # downloaded: the ResNet-18 trains from scratch, so the learning rate is 1e-4, not ACT's 1e-5 for a pretrained one).
    "--policy.type=act", "--dataset.repo_id=local/bspatial_demos", "--policy.pretrained_backbone_weights=null",
    "--policy.push_to_hub=false", "--wandb.enable=false", "--policy.device=cpu",
    "--policy.optimizer_lr=1e-4", "--policy.optimizer_lr_backbone=1e-4",
    # CPU-sized (benchmarks/act_recipe.md: 7.0 -> 1.6 s per step under load, 1.1 CPU s): the head camera only (the
    # ResNet dominates; the rollout then renders and feeds the head camera alone), a narrower transformer, our
    # 32-step chunk, no VAE.
    '--policy.input_features={"observation.state": {"type": "STATE", "shape": [84]}, '
    '"observation.images.rgb.head": {"type": "VISUAL", "shape": [3, 224, 224]}}',
    "--policy.dim_model=256", "--policy.n_heads=8", "--policy.dim_feedforward=1024", "--policy.n_encoder_layers=1",
    "--policy.n_decoder_layers=1", "--policy.use_vae=false", "--policy.chunk_size=32", "--policy.n_action_steps=32",
    "--num_workers=1", "--batch_size=8",
)
"""lerobot-train's flags for the CPU ACT (steps, save period, dataset root and output folder are added per run)."""


@dataclass(frozen=True)
class Scale:
    """How big a run is: demonstrations per task, training steps, rollout episodes and step caps."""

    demos: int
    steps: int | None           # None: the preset's max_steps
    act_steps: int
    episodes: int | None         # per task and split; None: every manifest entry
    max_steps: int | None        # rollout step cap; None: the task's budget
    validation_demos: int        # per task, on other training-manifest layouts (the diagnosis's data)


FULL = Scale(demos=100, steps=None, act_steps=1500, episodes=None, max_steps=None, validation_demos=6)
SMOKE = Scale(demos=1, steps=2, act_steps=2, episodes=1, max_steps=8, validation_demos=1)
VALIDATION_SEED = 1
"""The validation demonstrations' build seed: the same training instructions on layouts the training seed (0)
never drew (``construction.demonstrations.demos.scene_seed`` derives every scene from it)."""


def learners(preset: str) -> dict[str, dict]:
    """Learner name -> how it is trained and rolled out (``preset``: the baseline preset's name)."""
    return {
        preset: dict(kind="bspatial", preset=preset, condition="spatial"),
        f"{preset}_dot_ir": dict(kind="bspatial", preset=f"{preset}_dot_ir", condition="spatial"),
        f"{preset}_blind_language": dict(kind="bspatial", preset=f"{preset}_blind_language", condition="task_name"),
        f"{preset}_attn_map_ir": dict(kind="bspatial", preset=f"{preset}_attn_map_ir", condition="spatial"),
        "act": dict(kind="act", condition="spatial"),
    }


class Timings:
    """Wall time per step, accumulated over resumptions in ``<out>/timings.json``."""

    def __init__(self, out: Path) -> None:
        self.path = out / "timings.json"
        self.seconds: dict[str, float] = json.loads(self.path.read_text()) if self.path.is_file() else {}

    def add(self, step: str, seconds: float) -> None:
        from bspatial.common.files import atomic_write_text

        self.seconds[step] = round(self.seconds.get(step, 0.0) + seconds, 1)
        atomic_write_text(self.path, json.dumps(self.seconds, indent=2))


def _timed(timings: Timings, step: str, work) -> None:
    start = time.perf_counter()
    try:
        work()
    finally:
        timings.add(step, time.perf_counter() - start)


def record(folder: Path, step: str, tasks: list[str], per_task: int, seed: int, workers: int,
           timings: Timings) -> Path:
    """Head-camera demonstrations of ``tasks`` from the training manifest at ``folder`` (skipped when done): the
    training set (build seed 0) and the validation set of :func:`diagnose_learners` (:data:`VALIDATION_SEED`)."""
    from bspatial.construction.demonstrations.demos import PROVENANCE_FILE, record_demos

    if (folder / PROVENANCE_FILE).is_file():
        logger.info("%s: done (%s)", step, folder)
        return folder
    logger.info("%s: recording %d per task of %s (build seed %d)", step, per_task, tasks, seed)
    _timed(timings, step, lambda: record_demos(folder, tasks=tasks, episodes_per_task=per_task, seed=seed,
                                               workers=workers, cameras=CAMERAS))
    return folder


WEIGHTS_FIELD = "weights_sha256"


def weights_sha256(checkpoint: str | Path) -> str:
    """The digest of a checkpoint's weight files: what a cached diagnosis was computed on."""
    digest = hashlib.sha256()
    files = sorted(Path(checkpoint).glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"checkpoint {checkpoint} has no *.safetensors weights")
    for file in files:
        digest.update(file.name.encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def diagnose_learners(out: Path, jobs: dict[str, dict], specs: dict[str, str], validation: Path,
                      timings: Timings) -> dict[str, dict]:
    """``bspatial.modeling.diagnostics.diagnose`` of each of our learners (the ACT is lerobot's, not ours) on the
    validation demonstrations, kept in ``<out>/diagnosis.json`` (a learner already there is skipped)."""
    from bspatial.common.files import atomic_write_text
    from bspatial.modeling.diagnostics import Diagnosis, diagnose

    path = out / "diagnosis.json"
    done: dict[str, dict] = json.loads(path.read_text()) if path.is_file() else {}
    for name, how in jobs.items():
        if how["kind"] != "bspatial":
            continue
        weights = weights_sha256(specs[name])
        entry = done.get(name, {})
        if entry.get(WEIGHTS_FIELD) == weights and {f.name for f in fields(Diagnosis)} <= set(entry):
            continue   # diagnosed on these very weights with every measurement (else: diagnosed again)
        start = time.perf_counter()
        done[name] = {**diagnose(specs[name], validation, how["preset"]).as_dict(), WEIGHTS_FIELD: weights}
        timings.add("diagnose", time.perf_counter() - start)
        atomic_write_text(path, json.dumps(done, indent=2))
    return done


def train_bspatial(name: str, preset: str, demos: Path, out: Path, scale: Scale) -> tuple[Path, bool]:
    """The learner's checkpoint, and whether it was trained now (False: an earlier run finished it)."""
    from bspatial.modeling.train import finished_run_differences, train
    from bspatial.modeling.training_config import get_preset

    run = out / "train" / name
    if (run / "pretrained_model" / "config.json").is_file():
        # Reused by name only when it is this learner's run: a folder left by an older preset (or other data)
        # would silently stand in for it.
        config = get_preset(preset, task_column="task_name", **({"max_steps": scale.steps} if scale.steps else {}))
        differences = finished_run_differences(run, config, demos)
        if differences:
            raise ValueError(f"{run} holds a finished run that is not {preset!r} on {demos}: {'; '.join(differences)}. "
                             f"Move it aside to retrain")
        logger.info("train %s: done", name)
        return run / "pretrained_model", False
    resume = (run / "run_config.json").is_file()
    logger.info("train %s: preset %s, %s", name, preset, "resuming" if resume else "from scratch")
    train(preset, str(demos), str(run), max_steps=scale.steps, resume=resume, task_column="task_name")
    return run / "pretrained_model", True


def train_act(demos: Path, out: Path, scale: Scale) -> tuple[Path, bool]:
    """The ACT's checkpoint, and whether it was trained now (False: an earlier run finished it)."""
    run = out / "train" / "act"
    final = run / "checkpoints" / f"{scale.act_steps:06d}"
    if (final / "pretrained_model" / "config.json").is_file():
        logger.info("train act: done")
        return final, False
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled"}
    last = run / "checkpoints" / "last" / "pretrained_model" / "train_config.json"
    binary = str(Path(sys.executable).parent / "lerobot-train")
    if last.is_file():   # lerobot-train's own resume: the saved config, optimizer and step
        command = [binary, f"--config_path={last}", "--resume=true"]
    else:
        command = [binary, *ACT_FLAGS, f"--dataset.root={demos}", f"--steps={scale.act_steps}",
                   f"--save_freq={max(1, min(scale.act_steps, 500))}", f"--log_freq={max(1, min(scale.act_steps, 50))}",
                   f"--output_dir={run}"]
    logger.info("train act: %s", " ".join(command))
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    (out / "train").mkdir(parents=True, exist_ok=True)
    (out / "train" / "act.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"lerobot-train failed (exit {proc.returncode}); log: {out / 'train' / 'act.log'}\n"
                           f"{proc.stderr[-3000:]}")
    return final, True


def _exit_with_parent(parent: int) -> None:
    """End this worker when the process that started it is gone: a ProcessPoolExecutor worker outlives a killed
    parent and would go on training (and holding the run folder's lock) after the user stopped the run."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(2.0)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def train_learner(name: str, how: dict, demos: Path, out: Path, scale: Scale, threads: int,
                  parent: int) -> tuple[str, float | None]:
    """Train one learner (in a worker process of :func:`train_all`): its rollout spec and the wall seconds of its
    training (None: an earlier run finished it)."""
    import torch

    _exit_with_parent(parent)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    # The learners share the machine's cores; torch (and lerobot-train, a child process) would each take them all.
    os.environ["OMP_NUM_THREADS"] = str(threads)
    torch.set_num_threads(threads)
    start = time.perf_counter()
    if how["kind"] == "act":
        checkpoint, trained = train_act(demos, out, scale)
        spec = f"lerobot:{checkpoint}"
    else:
        checkpoint, trained = train_bspatial(name, how["preset"], demos, out, scale)
        spec = str(checkpoint)
    return spec, (time.perf_counter() - start) if trained else None


def train_all(jobs: dict[str, dict], demos: Path, out: Path, scale: Scale, workers: int,
              timings: Timings) -> dict[str, str]:
    """Every learner's rollout spec, training ``workers`` of them at once (spawned processes, one torch thread per
    core each); a finished learner is skipped, a killed one resumes from its newest checkpoint."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # the cores are shared by the learners trained at once (fewer than the workers when fewer are asked for)
    threads = max(1, (os.cpu_count() or 1) // max(1, min(workers, len(jobs))))
    specs: dict[str, str] = {}
    with ProcessPoolExecutor(max_workers=max(1, workers), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {name: pool.submit(train_learner, name, how, demos, out, scale, threads, os.getpid())
                   for name, how in jobs.items()}
        for name, future in futures.items():
            specs[name], seconds = future.result()
            if seconds is not None:
                timings.add(f"train {name}", seconds)
    return specs


def rollout(spec: str, split: str, tasks: list[str], folder: Path, scale: Scale, workers: int, condition: str,
            timings: Timings, ir=None) -> None:
    from bspatial.evaluation.rollout.runner import run_rollouts
    from bspatial.evaluation.rollout.plan import RunSettings

    start = time.perf_counter()
    summary = run_rollouts(spec, split, tasks, folder, RunSettings(max_steps=scale.max_steps, condition=condition,
                                                                   ir=ir),
                           n_episodes=scale.episodes, workers=workers, progress=True)
    if summary.ran:
        timings.add(f"rollout {folder.name}", time.perf_counter() - start)
    if summary.errors and summary.errors == summary.ran:
        raise RuntimeError(f"rollout {folder.name}: every episode crashed; first: {summary.first_error}")


def table_rows(runs: dict[tuple[str, str], Path]) -> list[dict]:
    """One CSV row per (policy label, split) from the run folders' result files."""
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.tables import rates_of

    rows = []
    for (label, split), folder in runs.items():
        records = [r for r in load_results(folder) if r["status"] != "not_applicable"]
        if not records:
            continue
        rates = rates_of(records)
        row = {"policy": label, "split": split, "n": rates.n}
        for name in ("strict", "soft", "wrong"):
            rate = getattr(rates, name)
            row.update({name: round(rate.rate, 1), f"{name}_lo": round(rate.low, 1), f"{name}_hi": round(rate.high, 1)})
        rows.append(row)
    return rows


def table4_markdown(rows: list[dict]) -> str:
    """Table 4's layout: a line per policy, held-out soft / strict, probe soft / strict / wrong, with intervals."""
    cell = lambda r, k: "-" if r is None else f"{r[k]:.1f} [{r[k + '_lo']:.1f}, {r[k + '_hi']:.1f}]"   # noqa: E731
    by = {(r["policy"], r["split"]): r for r in rows}
    lines = ["| policy | held-out n | held-out +Soft | held-out S | probe n | probe +Soft | probe S | probe W |",
             "|---|---|---|---|---|---|---|---|"]
    for policy in dict.fromkeys(r["policy"] for r in rows):
        h, p = by.get((policy, "held_out")), by.get((policy, "prompt_probe"))
        lines.append(f"| {policy} | {h['n'] if h else 0} | {cell(h, 'soft')} | {cell(h, 'strict')} | "
                     f"{p['n'] if p else 0} | {cell(p, 'soft')} | {cell(p, 'strict')} | {cell(p, 'wrong')} |")
    return "\n".join(lines)


def analyse(out: Path, runs: dict[tuple[str, str], Path], spatial: set[str], timings: Timings) -> tuple[Path, Path]:
    """``bspatial analyze correlate`` and ``bspatial report --html`` on the learned rows: the ``tiny`` suites built
    from the simulator (every reach task above is in them), the chance backend's run on them as the perception
    column (the learners' from-scratch backbones answer no VQA), and every rollout folder; returns (correlation.md,
    the leaderboard's index.html)."""
    from bspatial.construction.publishing.build import build
    from bspatial.evaluation.analysis.correlate import correlate_runs
    from bspatial.evaluation.analysis.report import write_report
    from bspatial.evaluation.analysis.site import write_site
    from bspatial.evaluation.vlm.runner import run_suite

    def work() -> tuple[Path, Path]:
        suites, vlm = out / "build", out / "vlm" / "chance-0"
        if not (suites / "vqa").is_dir():
            build("tiny", suites, seed=0)
        run_suite("chance:0", "vqa", "task_manipulation", vlm, data=str(suites / "vqa"), progress=False)
        run_suite("chance:0", "ir", "all", vlm, data=str(suites / "ir"), progress=False)
        # Table 3 reads the paper's protocol only: the language-blanked row (prompted with the bare task name) is
        # another condition, which correlate refuses.
        held_out = [folder for (label, split), folder in runs.items() if split == "held_out" and label in spatial]
        written = write_report(correlate_runs(vlm, held_out, seed=0), out / "reports" / "correlation")
        site = write_site([vlm, *runs.values()], out / "site", seed=0)
        return written["correlation.md"], site

    start = time.perf_counter()
    try:
        return work()
    finally:
        timings.add("analysis", time.perf_counter() - start)


JOIN_MEASURE = "ir_strict"
"""The join's headline measure: the policy's own point inside the target's (or the region's) mask."""


def _points(checkpoint: str) -> bool:
    """Whether a learner's checkpoint has the pointing head (its rollouts record ``pointed``)."""
    config = json.loads((Path(checkpoint) / "config.json").read_text())
    return float(config.get("point_loss_weight", 0.0)) > 0


def join_own_points(out: Path, jobs: dict[str, dict], runs: dict[tuple[str, str], Path], specs: dict[str, str],
                    tasks: list[str], scale: Scale, timings: Timings) -> str:
    """Perception and action on the very same episode (issue 32), for each of our learners with a pointing head: the
    episode-aligned items of the tasks' held-out and probe episodes (``--preset aligned`` restricted to the tasks,
    build seed 0 = the manifests'), the learner's own pointing-head points replayed on their IR items (``eval-vlm
    --model policy-point:<its two runs>``), joined with its episodes (``analyze join``); the chance backend's points
    on the same items, joined with the same episodes, as the reference (a point drawn without looking cannot tell
    a succeeding episode from a failing one; every one of our learners gets that row). Returns the Markdown section;
    the full reports go to
    ``<out>/reports/join-<learner>`` and ``join-chance``."""
    import dataclasses

    from bspatial.construction.publishing.build import build
    from bspatial.construction.publishing.presets import get_preset
    from bspatial.evaluation.analysis.episode_join import POOLED, join_runs
    from bspatial.evaluation.analysis.episode_join_report import (cmh_text, difference_text, rate_text,
                                                                   write_report)
    from bspatial.evaluation.analysis.policy_point import PolicyPointBackend
    from bspatial.evaluation.vlm.runner import run_suite

    start = time.perf_counter()
    aligned = out / "aligned"
    if not (aligned / "ir").is_dir():
        build(dataclasses.replace(get_preset("aligned"), tasks=tuple(tasks), aligned_limit=scale.episodes), aligned,
              seed=0)
    ours = {label: (runs[(label, "held_out")], runs[(label, "prompt_probe")])
            # the language-blanked learner is prompted with the bare task name: its episodes are another condition
            for label, how in jobs.items() if how["kind"] == "bspatial" and how["condition"] == "spatial"}
    chance = out / "vlm" / "chance-aligned"
    run_suite("chance:0", "ir", "episode_aligned", chance, data=str(aligned / "ir"), progress=False)
    rows = []
    for label, folders in ours.items():
        perception = {}
        if _points(specs[label]):   # a learner without the pointing head has only the reference row
            perception[label] = out / "vlm" / f"policy-point-{label}"
            run_suite(PolicyPointBackend(tuple(map(str, folders))), "ir", "episode_aligned", perception[label],
                      data=str(aligned / "ir"), progress=False)
        perception["chance:0"] = chance
        for name, vlm in perception.items():
            join = join_runs(vlm, list(folders))
            write_report(join, out / "reports" / f"join-{label}{'' if name == label else '-chance'}")
            for cell in join.cells:
                if cell.measure == JOIN_MEASURE and cell.family == POOLED:
                    n = cell.n_right + cell.n_wrong
                    rows.append(f"| {label} | {name} | {cell.join.group.split} | {cell.rate} | "
                                f"{rate_text(cell.n_right, n)} | {rate_text(cell.successes_right, cell.n_right)} | "
                                f"{rate_text(cell.successes_wrong, cell.n_wrong)} | {difference_text(cell)} | "
                                f"{cmh_text(cell)} |")
    timings.add("join", time.perf_counter() - start)
    header = ("| policy | points by | split | success | point right % (n) | success if right | success if wrong | "
              "difference (MH) [95%], tasks | CMH p (tasks) |\n|---|---|---|---|---|---|---|---|---|")
    return ("Perception and action on the same episode (`bspatial analyze join`, measure "
            f"`{JOIN_MEASURE}`, pooled over the tasks): each learner's own pointing-head point on its episode's first "
            "frame, scored on that episode's aligned IR item, against the episode's success; `chance:0` is a "
            "uniform point on the same items, joined with the same episodes (its difference should hold 0). Full "
            f"reports: `{out / 'reports'}/join-*`.\n\n" + header + "\n" + "\n".join(rows))


LADDER_RUNGS = ("none", "wrong")
"""The cue ladder's rungs run beside the IR learners' oracle-cue rollouts (Table 4's)."""


def cue_ladder(out: Path, jobs: dict[str, dict], runs: dict[tuple[str, str], Path], specs: dict[str, str],
               tasks: list[str], scale: Scale, workers: int, timings: Timings) -> str:
    """The grounding-cue ladder (issue 32) of the IR learners on the held-out split: their oracle-cue rollouts and
    rollouts with no cue and with the cue on a wrong target (``--ir none`` / ``--ir wrong``), with the share of
    wrong-cue episodes that went where the cue pointed; the references bound that share (``scripted`` reads the
    instruction and never follows it, ``scripted-wrong`` pursues the wrong goal and always does; they read no cue,
    so their rung is "none", the wrong cue recomputed from the episode). Returns the Markdown section."""
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.ir import IRSettings
    from bspatial.evaluation.rollout.policies import checkpoint_ir_mode
    from bspatial.evaluation.rollout.tables import CUE_LADDER_HEADERS, cue_ladder_rows, to_markdown

    folders = {"scripted": runs[("scripted", "held_out")]}
    reference = out / "rollouts" / "scripted-wrong-held_out"
    rollout("scripted-wrong", "held_out", tasks, reference, scale, workers, "spatial", timings)
    folders["scripted-wrong"] = reference
    for label, how in jobs.items():
        if how["kind"] != "bspatial" or checkpoint_ir_mode(specs[label]) == "none":
            continue
        folders[label] = runs[(label, "held_out")]
        for rung in LADDER_RUNGS:
            folder = out / "rollouts" / f"{label}-held_out-ir_{rung}"
            rollout(specs[label], "held_out", tasks, folder, scale, workers, "spatial", timings, IRSettings(rung))
            folders[f"{label} ({rung})"] = folder
    labels = {spec: label for label, spec in specs.items()}
    rows = [{k: v for k, v in row.items() if k != "task"}
            for row in cue_ladder_rows({str(folder): load_results(folder) for folder in folders.values()},
                                       label=lambda spec: labels.get(spec, spec))
            if row["task"] == "POOLED"]
    return ("The grounding-cue ladder on the held-out split (`bspatial rollout --ir oracle | none | wrong`, pooled "
            "over the tasks, the rows of `bspatial analyze rollouts`' cue ladder): success (Wilson 95%) under each "
            "cue and, under the wrong cue, the share of episodes that went where the cue pointed; the references "
            "bound that share (`scripted` reads the instruction, `scripted-wrong` pursues the wrong goal).\n\n"
            + to_markdown(rows, CUE_LADDER_HEADERS))


def perturbation_axes(out: Path, baseline: str, runs: dict[tuple[str, str], Path], specs: dict[str, str],
                      tasks: list[str], scale: Scale, workers: int, timings: Timings) -> str:
    """The baseline learner under each perturbation axis alone (issue 32: pixels and start state beside the
    language probes), on the held-out split (``bspatial rollout --condition <axis>``, drawn per episode from the run
    seed and the scene), each episode paired with its unperturbed one on the same scene (the Spa-Bench condition
    table's contrast); the scripted expert on the same perturbed scenes beside it (it keeps >= 95% under every axis,
    ``benchmarks/perturbations.py``: a drop of the learner's measures the learner, not an infeasible scene). Only the
    baseline: each axis is another 95 held-out episodes per policy, on 2 cores. Returns the Markdown section ("" when
    the baseline was not trained in this run)."""
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.spa_bench import condition_rows
    from bspatial.evaluation.rollout.tables import to_markdown
    from bspatial.tasks.perturbations import AXES, RANGES

    if baseline not in specs:
        return ""
    policies = {baseline: specs[baseline], "scripted": "scripted"}
    records = []
    for label, spec in policies.items():
        records += load_results(runs[(label, "held_out")])
        for axis in AXES:
            folder = out / "rollouts" / f"{label}-held_out-{axis}"
            rollout(spec, "held_out", tasks, folder, scale, workers, axis, timings)
            records += load_results(folder)
    labels = {spec: label for label, spec in policies.items()}
    rows = [{"policy": labels[row["policy"]], "axis": "none" if row["condition"] == "spatial" else row["condition"],
             "range": RANGES.get(row["condition"], "-"), "n": row["n"], "strict success": row["success"],
             "paired difference with unperturbed": row["paired_difference"]}
            for row in condition_rows(records)]
    return ("Perturbation axes on the held-out split (`bspatial rollout --condition <axis>`, one axis at a time, pooled "
            "over the tasks): strict success (Wilson 95%) and the paired difference with the same policy's unperturbed "
            "episode on the same scene (Newcombe 95%, exact McNemar p); the scripted expert on the same perturbed "
            "scenes is the feasibility reference.\n\n" + to_markdown(rows))


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def write_results(rows: list[dict], results: Path, header: str, footer: str) -> tuple[Path, Path]:
    from bspatial.common.files import atomic_write_text

    results.mkdir(parents=True, exist_ok=True)
    from bspatial.common.tables import csv_table

    csv_path, md_path = results / "learned_table4.csv", results / "learned_table4.md"
    atomic_write_text(csv_path, csv_table(CSV_COLUMNS, rows))
    atomic_write_text(md_path, header + "\n\n" + table4_markdown(rows) + "\n\n" + footer + "\n")
    return csv_path, md_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/learned"))
    parser.add_argument("--tasks", nargs="*", default=list(TASKS))
    parser.add_argument("--preset", default="cpu_reach", help="the baseline's training preset")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes for recording, training (learners at once) and rollouts")
    parser.add_argument("--smoke", action="store_true", help="one demo per task, two steps (wiring only)")
    parser.add_argument("--demos", type=int, default=None, help="demonstrations per task (default 100)")
    parser.add_argument("--steps", type=int, default=None, help="training steps of our learners (default: preset)")
    parser.add_argument("--act-steps", type=int, default=None, help=f"lerobot-train steps of the ACT (default {FULL.act_steps})")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the table files go")
    parser.add_argument("--learners", nargs="*", default=None,
                        help="train and roll out only these learners (names as in the table, e.g. cpu_reach "
                             "cpu_reach_dot_ir act; default: all five); the references always run")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")

    from bspatial.catalog.tasks import canonical_task_name
    from bspatial.construction.demonstrations.demos import PROVENANCE_FILE
    from bspatial.modeling.diagnostics import Diagnosis, diagnosis_markdown

    base = SMOKE if args.smoke else FULL
    scale = Scale(demos=args.demos or base.demos, steps=args.steps or base.steps,
                  act_steps=args.act_steps or base.act_steps, episodes=base.episodes, max_steps=base.max_steps,
                  validation_demos=base.validation_demos)
    tasks = [canonical_task_name(t) for t in args.tasks]
    preset = "tiny" if args.smoke else args.preset
    jobs = learners(preset)
    unknown = sorted(set(args.learners or ()) - set(jobs))
    if unknown:
        parser.error(f"--learners: unknown learner(s) {', '.join(map(repr, unknown))} for preset {preset!r}; "
                     f"known: {', '.join(jobs)}")
    if args.learners:
        jobs = {name: how for name, how in jobs.items() if name in args.learners}
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    timings = Timings(out)

    demos = record(out / "demos", "demos", tasks, scale.demos, 0, args.workers, timings)
    specs = train_all(jobs, demos, out, scale, args.workers, timings)
    validation = record(out / "demos_val", "validation demos", tasks, scale.validation_demos, VALIDATION_SEED,
                        args.workers, timings)
    diagnosis = diagnose_learners(out, jobs, specs, validation, timings)
    # label -> (policy spec, condition)
    policies = {name: (specs[name], how["condition"]) for name, how in jobs.items()}
    runs: dict[tuple[str, str], Path] = {}
    for label, (spec, condition) in [*policies.items(), *((r, (r, "spatial")) for r in REFERENCES)]:
        for split in SPLITS:
            folder = out / "rollouts" / f"{label}-{split}"
            rollout(spec, split, tasks, folder, scale, args.workers, condition, timings)
            runs[(label, split)] = folder
    rows = table_rows(runs)
    spatial = {label for label, (_, condition) in policies.items() if condition == "spatial"} | set(REFERENCES)
    correlation, site = analyse(out, runs, spatial, timings)
    joined = join_own_points(out, jobs, runs, specs, tasks, scale, timings)
    ladder = cue_ladder(out, jobs, runs, specs, tasks, scale, args.workers, timings)
    perturbed = perturbation_axes(out, preset, runs, specs, tasks, scale, args.workers, timings)
    provenance = json.loads((demos / PROVENANCE_FILE).read_text())
    header = "\n".join([
        f"# Learned policies on {', '.join(tasks)} (benchmarks/learned.py{' --smoke' if args.smoke else ''})",
        "",
        f"- commit {_commit()}; baseline preset `{preset}`; ACT: lerobot-train {scale.act_steps} steps "
        f"({' '.join(ACT_FLAGS)})",
        f"- demonstrations: {len(provenance['episodes'])} episodes "
        f"({sum(int(e['length']) for e in provenance['episodes'])} frames), {len(provenance['rejected'])} rejected "
        "attempts",
        f"- rollouts: every held-out and prompt-probe entry of the tasks"
        f"{'' if scale.episodes is None else f' (first {scale.episodes} per task)'}, chunk controller",
        "- wall time per step (s, accumulated over resumptions): " + ", ".join(
            f"{k} {v:.0f}" for k, v in timings.seconds.items()),
    ])
    validation_provenance = json.loads((validation / PROVENANCE_FILE).read_text())
    footer = (f"Diagnosis (bspatial.modeling.diagnostics) on {len(validation_provenance['episodes'])} validation "
              f"demonstrations (build seed {VALIDATION_SEED}: the training instructions on layouts the learners never "
              "saw), 4 frames each; losses on normalised actions, errors in robot units:\n\n"
              + diagnosis_markdown({name: Diagnosis(**{k: v for k, v in d.items() if k != WEIGHTS_FIELD})
                                    for name, d in diagnosis.items()}))
    footer += "\n\n" + "\n\n".join(part for part in (joined, ladder, perturbed) if part)
    csv_path, md_path = write_results(rows, args.results, header, footer)
    print(header + "\n\n" + table4_markdown(rows) + "\n\n" + footer)
    logger.info("wrote %s and %s; correlation %s; leaderboard file://%s", csv_path, md_path, correlation,
                site.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
