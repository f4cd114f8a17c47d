"""``bspatial model-card EXPORT --rollout RUN [--vlm RUN]``: a checkpoint's card with its closed-loop success, and
with ``--vlm`` its backbone's answers on those very episodes (one backbone's three views in one card: its VQA and
IR on the ``episode_aligned`` items and the policy's rollouts, joined per episode).

The card itself is rendered by :mod:`bspatial.modeling.model_card` (modeling may not import evaluation, so the
part that reads rollout runs lives here). A rollout run's episodes are read by the perception-action analysis'
reader (:func:`~bspatial.evaluation.analysis.success.read_rollout`: the paper's protocol only, a crashed episode
is a failure, navigation success is the strict rate) and pooled over episodes per protocol, as Table 4 and
Table S11 pool them; the rates are rounded to 0.1 as the rollout run's own per-task tables round them.

Only the episodes of the card's own policy count: a run's groups whose policy spec is this export folder. A run
that holds none of them (another checkpoint's, or only the reference policies) is refused, naming what it holds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

# Rounding of the rollout tables' numeric columns (tables.per_task_rows: round(rate, 1)).
RATE_DECIMALS = 1


def _is_export(policy_spec: str, export_dir: Path) -> bool:
    try:
        return Path(policy_spec).resolve() == export_dir.resolve()
    except (OSError, ValueError):  # a built-in name or an external spec (lerobot:..., openpi:ws://...)
        return False


def protocol_results(export_dir: str | Path, runs: Sequence[str | Path]) -> list:
    """The export's pooled success per protocol (split) in the rollout ``runs``, in the order found.

    Raises:
        ValueError: a run is not a rollout run folder, holds no episode of this export, or two runs hold
            the same protocol of it (which would be two numbers for one model-index entry).
    """
    from bspatial.evaluation.analysis.success import read_rollout
    from bspatial.modeling.model_card import ProtocolResult

    export_dir = Path(export_dir)
    results: dict[str, ProtocolResult] = {}
    for run in runs:
        groups = read_rollout(run)
        mine = [g for g in groups if _is_export(g.policy, export_dir)]
        if not mine:
            held = sorted({f"{g.policy} ({g.split})" for g in groups})
            raise ValueError(f"--rollout {run} holds no episode of {export_dir} (its policies: {held}); run "
                             f"`bspatial rollout --policy {export_dir}` and pass that run")
        for group in mine:
            if group.split in results:
                raise ValueError(f"the {group.split} protocol of {export_dir} is in both {results[group.split].source} "
                                 f"and {run}: pass one run per protocol")
            outcomes = {rate: np.concatenate(list(scores.samples.values())) for rate, scores in group.success.items()}
            episodes = {len(o) for o in outcomes.values()}
            (n,) = episodes  # every rate counts the same episodes
            results[group.split] = ProtocolResult(
                group.split, n, {rate: round(100.0 * float(o.mean()), RATE_DECIMALS) for rate, o in outcomes.items()},
                str(run))
    return list(results.values())


def _check_backbone_run(export_dir: Path, vlm: Path) -> None:
    """Refuse an eval-vlm run whose episode_aligned parts are not this export's backbone (``vla-backbone:``)."""
    from bspatial.evaluation.analysis.episode_join import ALIGNED_MEASURES
    from bspatial.evaluation.analysis.perception import part_folder
    from bspatial.evaluation.vlm.backend_vla_backbone import KIND, resolve_vla_export
    from bspatial.evaluation.vlm.run_files import FINGERPRINT_FILE

    for folder in {part_folder(vlm, m) for m in ALIGNED_MEASURES}:
        path = folder / FINGERPRINT_FILE
        if not path.is_file():
            continue
        model = json.loads(path.read_text())["components"]["model"]
        checkpoint = model.get("checkpoint") if model.get("kind") == KIND else None
        if checkpoint is None or resolve_vla_export(checkpoint).resolve() != export_dir.resolve():
            raise ValueError(f"--vlm {vlm}: {path} names model {model.get('spec') or model.get('kind')!r}, checkpoint "
                             f"{checkpoint!r}, not {KIND}:{export_dir}; evaluate this export's backbone with "
                             f"`bspatial eval-vlm --model {KIND}:{export_dir} --config episode_aligned`")


def backbone_section(export_dir: str | Path, vlm: str | Path, runs: Sequence[str | Path]) -> str:
    """The card's "backbone on its own episodes" Markdown: the export's backbone (an eval-vlm run of
    ``vla-backbone:<export>`` on the ``episode_aligned`` items) joined with its rollouts episode by episode
    (:func:`~bspatial.evaluation.analysis.episode_join.join_runs`, pooled over families, soft success).

    Raises:
        ValueError: the run is another model's, has no episode_aligned part, or no episode of this export pairs.
    """
    from bspatial.common.tables import markdown_table
    from bspatial.evaluation.analysis.episode_join import POOLED, join_runs
    from bspatial.evaluation.analysis.episode_join_report import cmh_text, difference_text, rate_text

    export_dir, vlm = Path(export_dir), Path(vlm)
    _check_backbone_run(export_dir, vlm)
    join = join_runs(vlm, runs)
    cells = [c for c in join.cells
             if c.family == POOLED and c.rate == "soft" and _is_export(c.join.group.policy, export_dir)]
    if not cells:
        raise ValueError(f"no episode of {export_dir} in the --rollout runs pairs with an item of --vlm {vlm}")
    rows = [(c.measure, c.join.group.split, c.n_right + c.n_wrong, rate_text(c.n_right, c.n_right + c.n_wrong),
             rate_text(c.successes_right, c.n_right), rate_text(c.successes_wrong, c.n_wrong), difference_text(c),
             cmh_text(c)) for c in cells]
    return ("### Its backbone on its own episodes\n\n"
            f"The backbone extracted from this export (`eval-vlm --model vla-backbone:...`, run `{vlm}`) answered the "
            "`episode_aligned` items: the IR query and task question made from each rolled-out episode's own first "
            "frame. Per measure: how often it was right on those episodes, and this policy's soft success when its "
            "backbone was right vs wrong on the same episode (difference in points within tasks, Sato 95% interval; "
            "CMH p stratified by task, with the number of tasks that carry information). `bspatial analyze join` "
            "gives the per-family rows.\n\n"
            + markdown_table(("measure", "protocol", "episodes", "backbone right (%)", "soft success if right (%)",
                              "soft success if wrong (%)", "difference within tasks [95% CI], tasks", "CMH p (tasks)"), rows))


def model_card_command(
    export_dir: Annotated[Path, typer.Argument(help="A pretrained_model/ export of `bspatial train` (a checkpoint's "
                                                    "or the final one).")],
    rollout: Annotated[Optional[list[Path]], typer.Option(help="Rollout run folder of this export (repeatable: "
                                                               "one per split).")] = None,
    vlm: Annotated[Optional[Path], typer.Option(help="An eval-vlm run of this export's backbone (vla-backbone:EXPORT) "
                                                     "on the episode_aligned items: adds its answers joined with the "
                                                     "--rollout episodes, episode by episode.")] = None,
) -> None:
    """Render EXPORT_DIR/README.md, its model card, with the success rates of the given rollout runs (and, with
    --vlm, its backbone's perception on those very episodes)."""
    from bspatial.modeling.model_card import write_model_card

    try:
        results = protocol_results(export_dir, rollout or [])
        if vlm is not None and not rollout:
            raise ValueError("--vlm joins the backbone's answers with this export's episodes: give --rollout too")
        perception = backbone_section(export_dir, vlm, rollout or []) if vlm is not None else ""
        path = write_model_card(export_dir, results, perception)
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=1) from None
    summary = "; ".join(f"{r.split}: " + ", ".join(f"{k} {v:.1f}%" for k, v in r.rates.items()) + f" (n={r.episodes})"
                        for r in results) or "no rollout run"
    typer.echo(f"wrote {path} ({summary})")


__all__ = ["backbone_section", "model_card_command", "protocol_results"]
