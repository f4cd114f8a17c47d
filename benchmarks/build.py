"""Benchmark build: wall time, frames/s, questions/s and peak memory of ``bspatial build --preset``.

Target (with the meshes, furnished apartments and clutter): ``--preset paper`` in under 20 minutes on
this machine's 2 CPU cores (30 before those were added; the paper replayed OmniGibson on an RTX GPU).
The build runs in this process, exactly as ``bspatial build`` runs it; the script then counts what was written
(rows and images per suite and config, read back from the parquet files) and reports rates over the wall time.
Peak memory is the process's maximum resident set size (``resource.getrusage``), children included.

``--compare`` builds the preset three times side by side instead: in 1 process, in 2 local worker
processes and on Ray with 2 actors (a local 2-CPU cluster, its start-up timed apart), checks the three outputs are
the same bytes, and reports images per second and the ratios to 1 process.

``--against REF`` builds the preset at git revision ``REF`` too (a temporary ``git worktree``, run with this venv
and that tree first on ``PYTHONPATH``), the two one after the other in this run, and reports both wall times, the
ratio and both counts: the issue-29 check that item rules do not cost the paper build its time or its counts.

Run: ``.venv/bin/python benchmarks/build.py --preset paper`` (``--preset mini`` for a quick check;
``--preset tiny --compare`` for the engines side by side in about a minute; ``--preset paper --against f81541f``
for today against an earlier commit).
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
TARGET_MINUTES = 20.0


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
    parser.add_argument("--compare", action="store_true",
                        help="1 process vs 2 local processes vs Ray with 2 actors, side by side")
    parser.add_argument("--against", default=None, metavar="REF",
                        help="also build at git revision REF (a worktree) and report both side by side")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.compare:
        return compare_engines(args.preset, args.seed)
    if args.against:
        return compare_revisions(args.preset, args.seed, args.workers, args.against)
    from bspatial.construction.publishing.build import build

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
    images = _images(counts)
    for suite, configs in counts.items():
        for config, (rows, imgs) in configs.items():
            logger.info("  %-4s %-28s %6d rows %7d images", suite, config, rows, imgs)
    logger.info("workers: %d", args.workers)
    logger.info("preset %s: %.1f min wall (target < %.0f: %s) | %.2f images/s | %.2f VQA questions/s | "
                "%.2f IR queries/s | peak RSS %.0f MB", args.preset, wall / 60, TARGET_MINUTES,
                "met" if wall / 60 < TARGET_MINUTES else "MISSED", images / wall, questions / wall, ir / wall,
                _peak_rss_mb())


ENGINES = (("1 process", {"workers": 1}), ("2 local processes", {"workers": 2}),
           ("Ray, 2 actors", {"workers": 2, "ray": "auto"}))


def _images(counts: dict[str, dict[str, tuple[int, int]]]) -> int:
    # As main(): each suite's images counted once (the VQA configs are disjoint; IR's "all" holds every query).
    return sum(images for _, images in counts.get("vqa", {}).values()) + counts.get("ir", {}).get("all", (0, 0))[1]


def compare_engines(preset: str, seed: int) -> None:
    """Build ``preset`` on each of :data:`ENGINES` in turn; log images/s and the ratio to 1 process."""
    import os

    import ray

    from bspatial.construction.publishing.build import build

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    logger.info("Ray local cluster start-up (2 CPUs): %.1f s (paid once per run, not in the rates below)",
                time.perf_counter() - start)
    rates, outputs = {}, {}
    try:
        with tempfile.TemporaryDirectory(prefix="bspatial-build-engines-") as tmp:
            for name, engine in ENGINES:
                out = Path(tmp) / name.replace(" ", "-").replace(",", "")
                start = time.perf_counter()
                build(preset, out, seed=seed, **engine)
                wall = time.perf_counter() - start
                rates[name] = (_images(count_written(out)) / wall, wall)
                outputs[name] = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    finally:
        ray.shutdown()
    same = all(files == outputs["1 process"] for files in outputs.values())
    for name, _ in ENGINES:
        logger.info("build %s, %-18s %7.2f images/s (%.1f s wall) %.2fx", preset, name, rates[name][0], rates[name][1],
                    rates[name][0] / rates["1 process"][0])
    logger.info("outputs byte-identical across the three: %s", same)


def _timed_build(tree: Path, preset: str, seed: int, workers: int, out: Path) -> float:
    """Wall seconds of ``bspatial build`` run from source tree ``tree`` (a subprocess: its own imports)."""
    import os
    import subprocess

    code = ("import sys; from bspatial.cli import app; "
            f"sys.argv = ['bspatial', 'build', '--preset', {preset!r}, '--seed', '{seed}', '--workers', '{workers}', "
            f"'--out', {str(out)!r}]; app()")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, check=True)
    return time.perf_counter() - start


def compare_revisions(preset: str, seed: int, workers: int, ref: str) -> None:
    """Build ``preset`` at ``ref`` and at the working tree, one after the other; log wall times, ratio and counts."""
    import subprocess

    here = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="bspatial-build-against-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(here), "worktree", "add", "--detach", "-q", str(tree), ref], check=True)
        try:
            results = {}
            for name, source in ((ref, tree), ("this tree", here)):
                out = Path(tmp) / name.replace(" ", "-")
                wall = _timed_build(source, preset, seed, workers, out)
                results[name] = (wall, count_written(out))
        finally:
            subprocess.run(["git", "-C", str(here), "worktree", "remove", "--force", str(tree)], check=False)
    (old_wall, old_counts), (new_wall, new_counts) = results[ref], results["this tree"]
    rows = {name: {suite: {c: r for c, (r, _) in configs.items()} for suite, configs in counts.items()}
            for name, counts in ((ref, old_counts), ("this tree", new_counts))}
    logger.info("build %s at %s: %.1f min; this tree: %.1f min; ratio %.2fx (target < 10 min)", preset, ref,
                old_wall / 60, new_wall / 60, new_wall / old_wall)
    logger.info("rows per config the same: %s (%s: %s; this tree: %s)", rows[ref] == rows["this tree"], ref,
                rows[ref], rows["this tree"])


if __name__ == "__main__":
    sys.exit(main())
