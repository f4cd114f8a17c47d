"""The action metrics' validity ladder on this machine: every reference policy on the held-out and
prompt-probe manifests, each rate with its Wilson interval beside the band its behaviour puts it in.

Policies: hold (never moves), random, scripted (the oracle), scripted-wrong (pursues a distractor),
scripted-memorizer (pursues its training layout's target), scripted-stops-short (approaches the instructed
target and stops before committing). Bands: ``bspatial.evaluation.rollout.validity.REFERENCE_BANDS``.
A row outside its band means the metric is wrong, not the reference.

Run: ``.venv/bin/python benchmarks/ladder.py --episodes 2 --workers 2`` (episodes per task and split;
full budgets). Results stay in ``--out`` and a rerun resumes there.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

POLICIES = ("hold", "random", "scripted", "scripted-wrong", "scripted-memorizer", "scripted-stops-short")
SPLITS = ("held_out", "prompt_probe")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2, help="episodes per task and split")
    parser.add_argument("--workers", type=int, default=1, help="processes, one simulator each")
    parser.add_argument("--tasks", nargs="*", default=None, help="tasks (default: the 14 evaluated ones)")
    parser.add_argument("--policies", nargs="*", default=list(POLICIES))
    parser.add_argument("--out", type=Path, default=Path("runs/ladder"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")

    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.runner import run_rollouts
    from bspatial.evaluation.rollout.validity import ladder_markdown, ladder_rows

    records = []
    for policy in args.policies:
        for split in SPLITS:
            folder = args.out / f"{policy}-{split}"
            run_rollouts(policy, split, args.tasks, folder, n_episodes=args.episodes, workers=args.workers,
                         progress=True)
            records += load_results(folder)
    rows = ladder_rows(records)
    print(ladder_markdown(rows))
    return 0 if all(r.get("in_band") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
