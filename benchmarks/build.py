"""Benchmark build: wall time, frames/s, questions/s and peak memory of ``bspatial build --preset``.

Target (construction issue): ``--preset paper`` in under 30 minutes on this machine's 2 CPU cores (the
paper replayed OmniGibson on an RTX GPU). The build runs in this process, exactly as
``bspatial build`` runs it; the script then counts what was written (rows and images per suite
and config, read back from the parquet files) and reports rates over the wall time. Peak memory is
the process's maximum resident set size (``resource.getrusage``), children included.

Run: ``.venv/bin/python benchmarks/build.py --preset paper`` (``--preset mini`` for a quick check).
"""

from __future__ import annotations

import argparse
import logging
import resource
import sys
import tempfile
import time
from pathlib import Path

logger = logging.getLogger("benchmarks.build")
TARGET_MINUTES = 30.0


def count_written(out: Path) -> dict[str, dict[str, tuple[int, int]]]:
    """{suite: {config: (rows, images)}} of a finished build, read back from its parquet files."""
    import pyarrow.parquet as pq

    counts: dict[str, dict[str, tuple[int, int]]] = {}
    for path in sorted(out.glob("*/*/test-*.parquet")):
        suite, config = path.parent.parent.name, path.parent.name
        table = pq.read_table(path)
        images = 0
        for column in ("frames", "image"):
            if column in table.column_names:
                values = table.column(column).to_pylist()
                images += sum(len(v) if isinstance(v, list) else 1 for v in values)
        counts.setdefault(suite, {})[config] = (table.num_rows, images)
    return counts


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="paper")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="build folder (default: a temporary one)")
    parser.add_argument("--workers", type=int, default=2, help="build processes (the target is for the 2 cores)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from bspatial.construction.build import build

    with tempfile.TemporaryDirectory(prefix="bspatial-build-bench-") as tmp:
        out = args.out or Path(tmp) / "suites"
        start = time.perf_counter()
        build(args.preset, out, seed=args.seed, overwrite=True, workers=args.workers)
        wall = time.perf_counter() - start
        counts = count_written(out)
    # Every config holds a subset of its suite's records ("all" = the union of the per-task configs),
    # so the totals count each suite's largest config family once.
    questions = sum(rows for config, (rows, _) in counts.get("vqa", {}).items())
    ir = counts.get("ir", {}).get("all", (0, 0))[0]
    images = sum(images for config, (_, images) in counts.get("vqa", {}).items()) + counts.get("ir", {}).get("all", (0, 0))[1]
    for suite, configs in counts.items():
        for config, (rows, imgs) in configs.items():
            logger.info("  %-4s %-28s %6d rows %7d images", suite, config, rows, imgs)
    logger.info("workers: %d", args.workers)
    logger.info("preset %s: %.1f min wall (target < %.0f: %s) | %.2f images/s | %.2f VQA questions/s | "
                "%.2f IR queries/s | peak RSS %.0f MB", args.preset, wall / 60, TARGET_MINUTES,
                "met" if wall / 60 < TARGET_MINUTES else "MISSED", images / wall, questions / wall, ir / wall,
                _peak_rss_mb())


if __name__ == "__main__":
    sys.exit(main())
