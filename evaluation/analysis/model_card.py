"""``bspatial model-card EXPORT --rollout RUN``: a checkpoint's card with its closed-loop success.

The card itself is rendered by :mod:`bspatial.modeling.model_card` (modeling may not import evaluation, so the
part that reads rollout runs lives here). A rollout run's episodes are read by the perception-action analysis'
reader (:func:`~bspatial.evaluation.analysis.success.read_rollout`: the paper's protocol only, a crashed episode
is a failure, navigation success is the strict rate) and pooled over episodes per protocol, as Table 4 and
Table S11 pool them; the rates are rounded to 0.1 as the rollout run's own per-task tables round them.

Only the episodes of the card's own policy count: a run's groups whose policy spec is this export folder. A run
that holds none of them (another checkpoint's, or only the reference policies) is refused, naming what it holds.
"""

from __future__ import annotations

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


def model_card_command(
    export_dir: Annotated[Path, typer.Argument(help="A pretrained_model/ export of `bspatial train` (a checkpoint's "
                                                    "or the final one).")],
    rollout: Annotated[Optional[list[Path]], typer.Option(help="Rollout run folder of this export (repeatable: "
                                                               "one per split).")] = None,
) -> None:
    """Render EXPORT_DIR/README.md, its model card, with the success rates of the given rollout runs."""
    from bspatial.modeling.model_card import write_model_card

    try:
        results = protocol_results(export_dir, rollout or [])
        path = write_model_card(export_dir, results)
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=1) from None
    summary = "; ".join(f"{r.split}: " + ", ".join(f"{k} {v:.1f}%" for k, v in r.rates.items()) + f" (n={r.episodes})"
                        for r in results) or "no rollout run"
    typer.echo(f"wrote {path} ({summary})")


__all__ = ["model_card_command", "protocol_results"]
