"""Frozen programs on the held-out episodes of their task (Appendix 16.5 "Closed-loop execution").

``evaluate_frozen(run, out)`` reads a development run's ``frozen.json`` / ``frozen_program.py`` and runs the
program unchanged on the split's episodes (the rollout plan: the same held-out episodes and the same
Table S4 rules as the VLA policies, with the evaluation sandbox limits: no call cap, the 900 s no-command
stop). One result file per episode (``<out>/episodes/<task>-<index>.json``, the rollout runner's format),
written atomically: a killed run resumes with the episodes it has not written.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from bspatial.common.files import check_run_settings, remove_stale_temp_files, require_folder_path
from bspatial.common.locks import run_folder_lock
from bspatial.evaluation.agents.records import program_sha, run_agent
from bspatial.evaluation.agents.sandbox import SandboxLimits
from bspatial.evaluation.rollout.episodes import EPISODES_DIR, result_path, write_record
from bspatial.evaluation.rollout.plan import SPLIT_BUILD_SEED, plan_episodes

logger = logging.getLogger(__name__)

EVALUATION_MANIFEST = "agent_evaluation.json"
AGENT_SPLITS = ("held_out", "prompt_probe")
"""Splits a frozen program may run on (Table 5 / S6 use held-out)."""


@dataclass
class EvaluateSummary:
    out: Path
    planned: int
    ran: int
    skipped_existing: int
    errors: int


def load_frozen(run: str | Path) -> tuple[dict, str]:
    """(frozen.json, program text) of a development run; refuses a run that has not frozen a program."""
    run = Path(run)
    meta_path, program_path = run / "frozen.json", run / "frozen_program.py"
    if not meta_path.exists() or not program_path.exists():
        raise ValueError(f"{run} holds no frozen program (frozen.json); run 'bspatial agents develop' there first")
    meta, source = json.loads(meta_path.read_text()), program_path.read_text(encoding="utf-8")
    if program_sha(source) != meta["program_sha256"]:
        raise ValueError(f"{program_path} is not the frozen program (SHA-256 differs from frozen.json)")
    return meta, source


def evaluate_frozen(run: str | Path, out: str | Path | None = None, *, split: str = "held_out",
                    n_episodes: int | None = None, max_steps: int | None = None, vlm: str = "chance",
                    limits: SandboxLimits = SandboxLimits(), require_confinement: bool = True,
                    progress: bool = False) -> EvaluateSummary:
    """Run the frozen program of development run ``run`` on ``split`` (default out: ``<run>/evaluation-<split>``)."""
    from bspatial.common.progress import track
    from bspatial.sim.process import close_process_backends, process_backend

    if split not in AGENT_SPLITS:
        raise ValueError(f"split must be one of {AGENT_SPLITS}, got {split!r}")
    meta, source = load_frozen(run)
    plan = plan_episodes(split, [meta["task"]], n_episodes)
    out = require_folder_path(out if out is not None else Path(run) / f"evaluation-{split}")
    settings = {"policy": meta["policy"], "program_sha256": meta["program_sha256"], "split": split,
                "split_build_seed": SPLIT_BUILD_SEED, "max_steps": max_steps, "vlm": vlm}
    with run_folder_lock(out, f"agents evaluate {run} --split {split}"):
        for folder in (out, out / EPISODES_DIR):
            remove_stale_temp_files(folder)
        (out / EPISODES_DIR).mkdir(parents=True, exist_ok=True)
        check_run_settings(out / EVALUATION_MANIFEST, settings, "an evaluation")
        todo = [e for e in plan if not result_path(out, e).exists()]
        errors = 0
        try:
            backend = process_backend()
            for episode in track(todo, f"evaluate {meta['task']}", "episode", enabled=progress):
                record, _, _ = run_agent(backend, episode, source, meta["policy"], pointer=meta["pointer"], vlm=vlm,
                                         trace_split=split, max_steps=max_steps, limits=limits,
                                         require_confinement=require_confinement)
                record["agent"].update(writer=meta["writer"], pointer=meta["pointer"], frozen_step=meta["step"])
                write_record(out, episode, record)
                errors += record["status"] == "error"
        finally:
            close_process_backends()
    logger.info("evaluated %s on %d %s episodes (%d already done)", meta["policy"], len(plan), split,
                len(plan) - len(todo))
    return EvaluateSummary(out, len(plan), len(todo), len(plan) - len(todo), errors)
