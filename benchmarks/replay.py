"""The replay check over many demonstrations: recorded actions replayed open loop reproduce the recorded outcome.

Records demonstrations of tasks of every family (``bspatial demos``: reach, reach with base proximity, directional
placement, container placement, navigation), replays each one through ``bspatial rollout --policy replay:<demos>
--split training`` and prints, per family, how many replays reproduce the recorded outcome (every recorded
demonstration is ``correct``) and on the recorded step. The bar: at least 95% in every family.

Optionally (``--observations N``, with ``--checkpoint``) the observation check of
:mod:`bspatial.evaluation.conformance.observations` runs on the first N demonstrations of each task.

Run: ``.venv/bin/python benchmarks/replay.py --episodes 10 --workers 2`` (episodes per task). Everything stays in
``--out``: a rerun records nothing it has and replays nothing it has replayed.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import defaultdict
from pathlib import Path

TASKS = ("reach_plate", "reach_tool", "reach_dice", "reach_soda_can", "place_carving_knife", "place_saucer",
         "place_bowl_in_cabinet", "place_tupperware_in_fridge", "move_to_bookcase", "move_to_fridge")
"""Two tasks or more of each family (reach_soda_can: the base-proximity rule)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10, help="demonstrations per task")
    parser.add_argument("--tasks", nargs="*", default=list(TASKS))
    parser.add_argument("--workers", type=int, default=1, help="processes, one simulator each")
    parser.add_argument("--observations", type=int, default=0, help="observation-checked demonstrations per task")
    parser.add_argument("--checkpoint", type=Path, default=None, help="BSpatialVLA checkpoint (observation check)")
    parser.add_argument("--out", type=Path, default=Path("runs/replay"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    if args.observations and args.checkpoint is None:
        parser.error("--observations needs --checkpoint")

    from bspatial.catalog.tasks import TASKS as CATALOG, canonical_task_name
    from bspatial.construction.demonstrations.demos import PROVENANCE_FILE, record_demos
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.runner import run_rollouts

    tasks = [canonical_task_name(t) for t in args.tasks]
    demos = args.out / "demos"
    if not (demos / PROVENANCE_FILE).is_file():
        record_demos(demos, tasks=tasks, episodes_per_task=args.episodes, workers=args.workers)
    provenance = json.loads((demos / PROVENANCE_FILE).read_text())
    recorded = {(r["task_name"], int(r["scene_seed"])): r for r in provenance["episodes"]}
    # The training entries the recording tried: kept ones plus rejected ones, per task.
    tried = defaultdict(int)
    for row in provenance["episodes"] + provenance["rejected"]:
        tried[row["task_name"]] = max(tried[row["task_name"]], int(row["training_index"]) + 1)
    replays = args.out / "replayed"
    for task in tasks:
        run_rollouts(f"replay:{demos}", "training", [task], replays / task, n_episodes=tried[task],
                     workers=args.workers, progress=True)
    by_family: dict[str, list[bool]] = defaultdict(list)
    misses = []
    for task in tasks:
        for record in load_results(replays / task):
            row = recorded.get((task, int(record["seed"])))
            if row is None:
                continue   # rejected by the recording: nothing to replay (status not_applicable)
            same = record["outcome"] == "correct" and record["steps"] == row["length"]
            by_family[CATALOG[task].family].append(same)
            if not same:
                misses.append(f"{task} seed {record['seed']}: {record['outcome']} at step {record['steps']} "
                              f"(recorded: correct at step {row['length']}); {record['message']}")
    print("| family | replayed | reproduced | rate |\n|---|---|---|---|")
    ok = True
    for family, same in sorted(by_family.items()):
        rate = sum(same) / len(same)
        ok &= rate >= 0.95
        print(f"| {family} | {len(same)} | {sum(same)} | {100 * rate:.1f}% |")
    for miss in misses:
        print(f"- not reproduced: {miss}")
    if args.observations:
        from bspatial.evaluation.conformance.observations import check_observations

        print("\n| task | episode | path | state max abs | pixel mean abs (frame t) | (frames t -/+ 1) | pixel p99 | "
              "passed |\n|---|---|---|---|---|---|---|---|")
        for task in tasks:
            indices = [r["episode_index"] for r in provenance["episodes"] if r["task_name"] == task and not r.get("prefix")]
            for index in indices[:args.observations]:
                report = check_observations(demos, index, args.checkpoint)
                ok &= report.passed
                for path, r in report.paths.items():
                    print(f"| {task} | {index} | {path} | {r.state_max_abs:.3g} | {r.pixel_mean_abs:.2f} | "
                          f"{r.pixel_neighbour_mean_abs:.2f} | {r.pixel_p99:.1f} | {r.passed} |")
                for problem in report.cross_path_problems + [p for r in report.paths.values() for p in r.problems]:
                    print(f"- {task} episode {index}: {problem}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
