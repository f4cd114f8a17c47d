"""Command functions for ``bspatial sim tasks`` and ``bspatial sim view`` (wired in :mod:`bspatial.cli`).

Heavy imports (mujoco, PIL) happen inside the functions so ``bspatial --help`` stays fast.

``sim_view`` writes, for one task / variant / seed, into ``out``:

* ``head.png``, ``left_wrist.png``, ``right_wrist.png``: the robot cameras (224x224, the policy size);
* ``head_segmentation.png``: the head frame with each instance tinted by a stable colour, the
  candidates outlined in white and the instructed target in red;
* ``top.png``: the scene's top-down camera;
* ``instance.json``: instruction, candidates, target, pixel counts and the scoring geometry.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from bspatial.catalog.schema import CAMERAS
from bspatial.common.files import atomic_write_bytes, atomic_write_text

logger = logging.getLogger(__name__)

TOP_VIEW_SIZE = 448
VIEW_REST_STEPS = 10   # holding actions before rendering, so free objects rest as an episode would see them


def sim_tasks() -> None:
    """List the simulator tasks with their variants and step budgets."""
    from bspatial.tasks.registry import NAVIGATION_REGISTRY, get_task, task_names

    for name in (*task_names(), *NAVIGATION_REGISTRY):
        task = get_task(name)
        typer.echo(f"{name}  [{task.spec.family}, {task.spec.category}]  budget={task.step_budget} steps")
        # Navigation tasks have one instance kind: pass --variant "" to `bspatial sim view`.
        typer.echo(f"    variants: {', '.join(task.variants) or '(none)'}")


def _palette(n: int) -> np.ndarray:
    rng = np.random.default_rng(12345)
    return rng.integers(40, 255, (n + 1, 3)).astype(np.uint8)


def segmentation_overlay(frame, candidates, target: str | None) -> np.ndarray:
    """RGB blended with per-instance colours; candidate outlines white, the target's red."""
    seg = frame.segmentation
    colours = _palette(max(frame.id_to_name) + 1 if frame.id_to_name else 1)
    tint = np.where(seg[..., None] >= 0, colours[np.clip(seg, 0, None)], 0)
    out = (0.5 * frame.rgb + 0.5 * tint).astype(np.uint8)
    for name in candidates:
        mask = frame.mask(name) if name in frame.id_to_name.values() else np.zeros_like(seg, bool)
        edge = mask & ~(np.roll(mask, 1, 0) & np.roll(mask, -1, 0) & np.roll(mask, 1, 1) & np.roll(mask, -1, 1))
        out[edge] = (255, 40, 40) if name == target else (255, 255, 255)
    return out


def _save_png(path: Path, image: np.ndarray) -> None:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    atomic_write_bytes(path, buffer.getvalue())


def sim_view(
    task: str = typer.Option(..., "--task", help="task name, e.g. reach_plate"),
    variant: str = typer.Option(..., "--variant", help="instruction variant, e.g. largest or closest/sofa"),
    seed: int = typer.Option(0, "--seed", help="scene seed"),
    out: Path = typer.Option(Path("sim_view"), "--out", help="output folder"),
    backend: Optional[str] = typer.Option(None, "--backend", hidden=True, help="reserved: only mujoco exists"),
) -> list[Path]:
    """Render one task instance: three robot cameras, a segmentation overlay and a top-down view."""
    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.world.furniture import TOP_CAMERA
    from bspatial.tasks.base import candidate_pixels
    from bspatial.tasks.registry import sample_instance

    if backend not in (None, "mujoco"):
        raise typer.BadParameter(f"backend must be 'mujoco', got {backend!r}")
    instance = sample_instance(task, variant, seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    sim = MujocoBackend()
    try:
        sim.load(instance.scene)
        for _ in range(VIEW_REST_STEPS):
            sim.step(sim.hold_action())
        frames = {cam: sim.render(cam) for cam in CAMERAS}
        for cam, frame in frames.items():
            written.append(out / f"{cam}.png")
            _save_png(written[-1], frame.rgb)
        written.append(out / "head_segmentation.png")
        _save_png(written[-1], segmentation_overlay(frames["head"], instance.candidates, instance.target))
        top = sim.render(TOP_CAMERA, width=TOP_VIEW_SIZE, height=TOP_VIEW_SIZE)
        written.append(out / "top.png")
        _save_png(written[-1], top.rgb)
        pixels = candidate_pixels(frames["head"], instance.candidates)
    finally:
        sim.close()
    info = {"task": instance.task, "variant": instance.variant, "seed": seed, "instruction": instance.instruction,
            "candidates": list(instance.candidates), "target": instance.target, "reference": instance.reference,
            "head_pixels": pixels, "step_budget": instance.step_budget,
            "countertop": instance.countertop.to_dict() if instance.countertop else None,
            "container": instance.container.to_dict() if instance.container else None}
    written.append(out / "instance.json")
    atomic_write_text(written[-1], json.dumps(info, indent=2, default=float))
    typer.echo(f"{instance.instruction}  target={instance.target}  -> {out}")
    return written
