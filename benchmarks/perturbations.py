"""The perturbation axes keep the scenes feasible: the privileged scripted expert under every axis, side by side.

For each split (held-out manipulation, navigation) the scripted expert plays ``--seeds`` episodes of every task
unperturbed and under each axis of :mod:`bspatial.tasks.perturbations` alone (``bspatial rollout --condition
<axis>``, drawn per episode from ``--seed`` and the scene seed). Printed per axis: the expert's strict success
[Wilson 95%] against the 95% bar, its worst task, the paired contrast with the unperturbed episodes (the Spa-Bench
condition table: the same scenes), and how many episodes took exactly the unperturbed path (the expert reads the
simulator's state, not pixels: under the pixel axes every path should be the unperturbed one, so an axis that
changes a path changed the physics).

Run: ``.venv/bin/python benchmarks/perturbations.py --seeds 20 --workers 2``. Everything stays in ``--out``: a rerun
plays nothing it has played.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import defaultdict
from pathlib import Path

BAR = 0.95
"""The expert's success each axis must keep (pooled over a split's tasks)."""
SPLITS = ("held_out", "navigation")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="episodes per task and axis")
    parser.add_argument("--splits", nargs="*", default=list(SPLITS))
    parser.add_argument("--workers", type=int, default=1, help="processes, one simulator each")
    parser.add_argument("--seed", type=int, default=0, help="the runs' --seed (the perturbations are drawn from it)")
    parser.add_argument("--out", type=Path, default=Path("runs/perturbations"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")

    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.plan import RunSettings
    from bspatial.evaluation.rollout.runner import run_rollouts
    from bspatial.evaluation.rollout.spa_bench import condition_rows
    from bspatial.scoring.stats import wilson_interval
    from bspatial.tasks.perturbations import AXES, RANGES

    failed = False
    print("| split | axis | range | expert strict success [Wilson 95%] | worst task | paired contrast with "
          "unperturbed | same path as unperturbed | >= 95% |")
    print("|---|---|---|---|---|---|---|---|")
    for split in args.splits:
        records: dict[str, list[dict]] = {}
        for condition in ("spatial", *AXES):
            out = args.out / split / condition
            summary = run_rollouts("scripted", split, None, out, RunSettings(seed=args.seed, condition=condition),
                                   n_episodes=args.seeds, workers=args.workers, progress=sys.stderr.isatty())
            if summary.errors:
                logging.warning("%s %s: %d episodes crashed (first: %s)", split, condition, summary.errors,
                                summary.first_error)
            records[condition] = load_results(out)
        contrasts = {row["condition"]: row["paired_difference"]
                     for row in condition_rows([r for rs in records.values() for r in rs])}
        plain = {(r["task"], r["index"]): json.dumps(r["trace"]) for r in records["spatial"]}
        for condition, rows in records.items():
            wins = sum(r["outcome"] == "correct" and r["status"] != "error" for r in rows)
            low, high = wilson_interval(wins, len(rows))
            by_task: dict[str, list[bool]] = defaultdict(list)
            for r in rows:
                by_task[r["task"]].append(r["outcome"] == "correct" and r["status"] != "error")
            worst = min(by_task, key=lambda t: sum(by_task[t]) / len(by_task[t]))
            same = sum(json.dumps(r["trace"]) == plain.get((r["task"], r["index"])) for r in rows)
            rate = wins / len(rows)
            ok = rate >= BAR
            failed |= condition != "spatial" and not ok
            print(f"| {split} | {condition if condition != 'spatial' else 'none'} | {RANGES.get(condition, '-')} | "
                  f"{100 * rate:.1f} [{100 * low:.1f}, {100 * high:.1f}] ({wins}/{len(rows)}) | {worst} "
                  f"{sum(by_task[worst])}/{len(by_task[worst])} | {contrasts.get(condition, '-')} | "
                  f"{same}/{len(rows)} | {'yes' if ok else 'NO'} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
