"""Print the folder to pass as lmms-eval's ``--include_path`` (the only output, for ``$(...)``).

    python -m bspatial.evaluation.lmms_eval_tasks
        the shipped task folders (data from the Hub repos behavior-spatial/vqa and behavior-spatial/ir)
    python -m bspatial.evaluation.lmms_eval_tasks --dataset-path <local vqa repo> --out <folder>
        writes the same tasks reading the local repo into <folder> and prints <folder>
    python -m bspatial.evaluation.lmms_eval_tasks --suite ir --dataset-path <local ir repo> --out <folder>
        the same for the IR suite
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bspatial.evaluation.lmms_eval_tasks import SUITE_CONFIGS, include_path, write_local_tasks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bspatial.evaluation.lmms_eval_tasks",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset-path", help="a local repo folder of --suite (e.g. written by `bspatial build`)")
    parser.add_argument("--suite", choices=sorted(SUITE_CONFIGS), default="vqa", help="the suite of --dataset-path")
    parser.add_argument("--out", help="where to write the task files for --dataset-path")
    args = parser.parse_args(argv)
    if (args.dataset_path is None) != (args.out is None):
        parser.error("--dataset-path and --out go together")
    if args.dataset_path is None:
        print(include_path())
        return 0
    try:
        tasks = write_local_tasks(args.dataset_path, args.out, args.suite)
    except ValueError as error:
        parser.error(str(error))
    print(f"tasks: {', '.join(tasks)}", file=sys.stderr)  # stdout stays the path alone
    print(Path(args.out).expanduser().resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
