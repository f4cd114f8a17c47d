"""IR scoring memory: peak bytes of ``ir_accuracy`` at 1e4 and 1e5 predictions, beside the one-shot path it replaced.

The one-shot path took 8 GB for 1e6 predictions. Two causes: every prediction's arrays (points, region
keys, label and detail strings) lived at once, and a dict reference (the dataset's region column
decoded to one dict per row) became its own region with its own masks and caches, ~20 kB a row at
720 x 720. ``ir_accuracy`` now scores in chunks keeping only counters, and equal specs share one
region. The one-shot path is rebuilt here from the same building blocks (regions for the whole
column, one ``score_ir`` call, per-item label arrays), so the two are measured side by side in
this run.

Each measurement runs in a fresh interpreter; the inputs are built first and the peak is
``tracemalloc``'s over a second scoring call alone (numpy buffers included; the first call is timed
without tracing). Printed: peak MB, bytes per prediction, and the ratio of the 1e5 peak to the 1e4
peak (10 means memory per prediction, about 1 means constant). The workload is the IR suite's 1,240
regions (``benchmarks/scoring.py``); their prepared masks are most of a constant ~33 MB.

Run: ``.venv/bin/python benchmarks/ir_scoring_memory.py`` (``--dict-sizes 0`` skips the slow
one-shot dict-reference rows).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

logger = logging.getLogger("benchmarks.ir_scoring_memory")
PATHS = ("streaming", "one-shot")


def one_shot_ir_accuracy(predictions, references) -> dict[str, float | int]:
    """The earlier one-shot ``ir_accuracy``: every prediction's arrays at once, a region per dict row."""
    from bspatial.scoring.aggregate import group_accuracy, task_mean
    from bspatial.scoring.ir import score_ir
    from bspatial.scoring.ir_accuracy import prediction_points
    from bspatial.scoring.ir_regions import region_from_dict

    by_string: dict[str, object] = {}
    regions = []
    for reference in references:
        if isinstance(reference, str):
            region = by_string.get(reference) or by_string.setdefault(reference, region_from_dict(reference))
        else:
            region = region_from_dict(reference)
        regions.append(region)
    points, unreadable = prediction_points(predictions, regions)
    scores = score_ir(points, regions)
    labels = np.asarray(scores.label, dtype=str)
    result: dict[str, float | int] = {
        "strict_accuracy": 100.0 * float(scores.strict.mean()),
        "tolerant_accuracy": 100.0 * float(scores.tolerant.mean()),
        "n": len(points),
        "correct": int((labels == "correct").sum()),
        "wrong": int((labels == "wrong").sum()),
        "none": int((labels == "none").sum()),
        "unparseable": int(unreadable.sum()),
    }
    tasks = [r.task for r in regions]
    for kind, values in (("strict", scores.strict), ("tolerant", scores.tolerant)):
        for task, (acc, count) in group_accuracy(values, tasks).items():
            result[f"task/{task}/{kind}"] = acc
            result[f"n/task/{task}"] = count
        result[f"task_mean_{kind}_accuracy"] = task_mean(values, tasks)[0]
    return result


def _inputs(specs: list[str], centers: np.ndarray, n: int, refs: str, preds: str, seed: int) -> tuple[list, list]:
    """n predictions on the suite's regions: near the target, uniform, or missing (as benchmarks/scoring.py)."""
    rng = np.random.default_rng(seed)
    size = 720
    which = rng.integers(0, len(specs), n)
    points = centers[which] + rng.normal(0, 40, (n, 2))
    uniform = rng.uniform(size=n) < 0.3
    points[uniform] = rng.uniform(-10, size + 10, (int(uniform.sum()), 2))
    if preds == "text":  # the prompt's JSON on the 0-1000 grid, a distinct string per prediction
        grid = np.clip(points * 1000 / size, 0, 1000).round().astype(int)
        predictions = [f'{{"results": {{"target": {{"x": {x}, "y": {y}}}}}}}' for x, y in grid]
    else:
        predictions = points.tolist()
    if refs == "dict":  # one dict per row, as a decoded dataset column gives them
        references = [json.loads(specs[i]) for i in which]
    else:
        references = [specs[i] for i in which]
    return predictions, references


def child(args: argparse.Namespace) -> None:
    """Measure one (path, refs, preds, n) in this fresh interpreter; print one JSON line."""
    from bspatial.scoring.ir_accuracy import ir_accuracy

    stored = json.loads(Path(args.workload).read_text())
    predictions, references = _inputs(stored["specs"], np.asarray(stored["centers"]), args.n, args.refs, args.preds,
                                      seed=args.n)
    score = ir_accuracy if args.path == "streaming" else one_shot_ir_accuracy
    start = time.perf_counter()  # timed without tracemalloc, which slows allocation-heavy code severalfold
    result = score(predictions, references)
    seconds = time.perf_counter() - start
    gc.collect()
    tracemalloc.start()
    again = score(predictions, references)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert again == result
    print(json.dumps({"peak": peak, "seconds": seconds, "strict": result["strict_accuracy"]}))


def _measure(workload: Path, path: str, refs: str, preds: str, n: int) -> dict:
    cmd = [sys.executable, __file__, "--child", "--workload", str(workload), "--path", path, "--refs", refs,
           "--preds", preds, "--n", str(n)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="predictions per run")
    parser.add_argument("--dict-sizes", type=int, nargs="*", default=[10_000],
                        help="sizes for dict references (the one-shot path takes ~20 kB and ~1 ms a row)")
    parser.add_argument("--preds", choices=("pixels", "text"), default="pixels")
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--workload", help=argparse.SUPPRESS)
    parser.add_argument("--path", choices=PATHS, help=argparse.SUPPRESS)
    parser.add_argument("--refs", choices=("json", "dict"), help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from scoring import ir_regions  # benchmarks/scoring.py: the IR suite's 1,240 regions

    specs, centers = ir_regions(np.random.default_rng(0))
    with tempfile.TemporaryDirectory(prefix="bspatial-ir-memory-") as tmp:
        workload = Path(tmp) / "workload.json"
        workload.write_text(json.dumps({"specs": specs, "centers": centers.tolist()}))
        runs = [(refs, sizes) for refs, sizes in (("json", args.sizes), ("dict", args.dict_sizes)) if sizes]
        for refs, sizes in runs:
            for path in args.paths:
                peaks = {}
                for n in sizes:
                    m = _measure(workload, path, refs, args.preds, n)
                    peaks[n] = m["peak"]
                    logger.info("%-9s refs=%-4s preds=%-6s n=%7d: peak %8.1f MB, %7.0f bytes/prediction, %6.2f s, "
                                "strict %.2f%%", path, refs, args.preds, n, m["peak"] / 1e6, m["peak"] / n,
                                m["seconds"], m["strict"])
                if len(sizes) > 1:
                    small, large = min(sizes), max(sizes)
                    logger.info("%-9s refs=%-4s peak ratio %d / %d predictions: %.2f (x%.0f predictions)", path, refs,
                                large, small, peaks[large] / peaks[small], large / small)


if __name__ == "__main__":
    main()
