"""The scripted reference writer's bounds: develop, validate, freeze and evaluate its program per task with the
oracle pointer (privileged: simulator segmentation) and the chance pointer, then print Table 5 and Table S6
(ours beside the paper's writers).

The oracle row is the upper reference of what the agent API allows a program to do when its pointing model is
perfect; the chance row what the same program does when its pointer points at random. Each (task, pointer) run
folder resumes, so an interrupted benchmark continues where it stopped.

Run: ``.venv/bin/python benchmarks/agents.py --tasks reach_plate reach_soda_can place_carving_knife``
(``--help`` for options; the default runs one task per family and the paper's 10 development episodes).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

DEFAULT_TASKS = ("reach_plate", "reach_soda_can", "place_carving_knife", "place_bowl_in_cabinet")
"""One task per family: contact reach, base-proximity reach, directional and container placement."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(DEFAULT_TASKS))
    parser.add_argument("--pointers", nargs="+", default=["oracle", "chance"])
    parser.add_argument("--out", type=Path, default=Path("runs/benchmarks/agents"))
    parser.add_argument("--n-development", type=int, default=10)
    parser.add_argument("--n-episodes", type=int, default=None, help="held-out episodes per task (default: all)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    from bspatial.evaluation.agents.develop import develop
    from bspatial.evaluation.agents.evaluate import evaluate_frozen
    from bspatial.evaluation.agents.tables import write_agent_tables

    evaluations = []
    for task in args.tasks:
        for pointer in args.pointers:
            run = args.out / f"scripted-{pointer}-{task}"
            summary = develop("scripted", task, run, pointer=pointer, n_development=args.n_development, progress=True)
            print(f"{task} / {pointer}: frozen step {summary.frozen_step} ({summary.frozen_reason})")
            evaluations.append(evaluate_frozen(run, n_episodes=args.n_episodes, progress=True).out)
    written = write_agent_tables(evaluations, args.out / "tables")
    print(written["table5.md"].read_text())
    print(written["table_s6.md"].read_text())


if __name__ == "__main__":
    main()
