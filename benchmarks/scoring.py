"""Scoring throughput: 100,000 VQA predictions and 100,000 IR points, ours vs a per-item Python loop.

Both paths apply the same rules (the loop calls the single-item functions ``parse_choice`` and
``score_ir_item`` and accumulates breakdowns in dicts); the script checks that they agree, then
prints throughput and the ratio measured side by side in this run. Target: at
least 20x the loop, each 100k in under 2 s on a 2-core machine.

The IR loop is slow (~1 ms per point), so by default it runs on a seeded subsample and its
per-item time is scaled to 100k (``--ir-loop-sample 0`` runs all of it).

Then the answer-parser corpus (``tests/fixtures/answer_corpus.json``): the parse of
every case beside its expected letter, and the unparseable rate, ours vs expected, per reply shape.

Run: ``.venv/bin/python benchmarks/scoring.py`` (``--corpus-only`` skips the throughput runs)
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from bspatial.scoring.choice import parse_choice
from bspatial.scoring.geometry import intrinsics_from_fovy
from bspatial.scoring.ir import score_ir, score_ir_item
from bspatial.scoring.ir_regions import ContainerPlacementRegion, DirectionalPlacementRegion, ReachRegion
from bspatial.scoring.ir_accuracy import as_regions, ir_accuracy
from bspatial.scoring.vqa import vqa_accuracy

logger = logging.getLogger("benchmarks.scoring")
N = 100_000
IMAGE = 720
N_REGIONS = 1_240  # the IR suite's size (paper Section 3.3)
OPTIONS = ["front-left", "front-right", "back-left", "back-right"]
CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "answer_corpus.json"


# ----------------------------------------------------------------------------- VQA


def vqa_workload(rng: np.random.Generator) -> dict[str, list]:
    """100k answers shaped like real runs: mostly format-following, some verbose, some refusals."""
    letters = rng.integers(0, 4, N)
    kind = rng.choice(6, N, p=[0.35, 0.30, 0.05, 0.12, 0.13, 0.05])
    texts = []
    for i, (k, li) in enumerate(zip(kind, letters)):
        letter, option = "ABCD"[li], OPTIONS[li]
        texts.append(
            [
                letter,
                f"{letter}. {option}",
                f"({letter.lower()})",
                f"The answer is {letter}.",
                # verbose reasoning, unique per item (defeats any caching of identical strings)
                f"<think>The mug is {i % 97} cm from the edge; comparing frames {i}.</think>\nAnswer: {letter}",
                "I cannot determine the answer from the image.",
            ][k]
        )
    return {
        "predictions": texts,
        "references": ["ABCD"[x] for x in rng.integers(0, 4, N)],
        "options": [OPTIONS] * N,
        "settings": list(rng.choice(["single_frame", "multi_frame_rotation", "multi_frame_navigation"], N)),
        "categories": list(rng.choice(["direction", "distance", "size"], N)),
        "subtypes": list(rng.choice(["object_relative", "camera_relative", "locate"], N)),
        "tasks": [f"task_{t}" for t in rng.integers(0, 14, N)],
    }


def vqa_loop(w: dict[str, list]) -> dict[str, float]:
    """The straightforward path: parse each answer, accumulate every breakdown in dicts."""
    hits: dict[str, int] = defaultdict(int)
    counts: dict[str, int] = defaultdict(int)
    unparseable = 0
    for i, text in enumerate(w["predictions"]):
        parse = parse_choice(text, w["options"][i])
        correct = parse.letter is not None and parse.letter == w["references"][i]
        unparseable += parse.letter is None
        keys = ["accuracy", f"setting/{w['settings'][i]}", f"category/{w['categories'][i]}",
                f"subtype/{w['subtypes'][i]}", f"task/{w['tasks'][i]}", f"{w['settings'][i]}/{w['categories'][i]}"]
        for key in keys:
            hits[key] += correct
            counts[key] += 1
    result = {key: 100.0 * hits[key] / counts[key] for key in hits}
    tasks = [k for k in result if k.startswith("task/")]
    result["task_mean_accuracy"] = sum(result[k] for k in tasks) / len(tasks)
    result["unparseable"] = unparseable
    return result


# ----------------------------------------------------------------------------- IR


def _look_at(eye: np.ndarray, target: tuple[float, float, float]) -> np.ndarray:
    z = np.asarray(target, float) - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, (0.0, 0.0, 1.0))
    x /= np.linalg.norm(x)
    pose = np.eye(4)
    pose[:3, :3] = np.column_stack([x, np.cross(z, x), z])  # OpenCV camera: x right, y down, z forward
    pose[:3, 3] = eye
    return pose


def ir_regions(rng: np.random.Generator) -> tuple[list[str], np.ndarray]:
    """1,240 region specs as the dataset stores them (JSON): 10/14 reach (target + 3 distractor
    masks at 720x720), 2/14 directional and 2/14 container placement; plus a likely-hit pixel each."""
    yy, xx = np.mgrid[:IMAGE, :IMAGE]

    def blob() -> np.ndarray:
        cy, cx = rng.uniform(60, 660, 2)
        ry, rx = rng.uniform(15, 90, 2)
        return ((yy + 0.5 - cy) / ry) ** 2 + ((xx + 0.5 - cx) / rx) ** 2 <= 1

    K = intrinsics_from_fovy(IMAGE, IMAGE, 60)
    specs, centers = [], []
    for i in range(N_REGIONS):
        task = f"task_{i % 14}"
        if i % 14 < 10:
            target = blob()
            region = ReachRegion(image_size=(IMAGE, IMAGE), targets=[target], distractors=[blob() & ~target for _ in range(3)], task=task)
            ys, xs = np.nonzero(target)
            centers.append((xs.mean(), ys.mean()))
        elif i % 14 < 12:
            region = DirectionalPlacementRegion(
                image_size=(IMAGE, IMAGE), K=K, T_world_cam=_look_at(np.array([0, -1.2, 1.8]), (0, 0, 0.9)),
                countertop={"height": 0.9, "center": [0, 0], "half_extents": [1.0, 0.4]},
                reference_center=(0.1, 0, 0.95), robot_right=(1, 0), side="left", task=task,
            )
            centers.append((IMAGE / 2, IMAGE / 2))
        else:
            region = ContainerPlacementRegion(
                image_size=(IMAGE, IMAGE), K=K, T_world_cam=_look_at(np.array([0, -2, 1.2]), (0, 0, 1.0)),
                container={"center": [0, 0, 1], "half_extents": [0.4, 0.3, 0.7]},
                compartments=[[0.4, 0.7], [0.8, 1.1], [1.2, 1.6]], instructed_compartment=1, task=task,
            )
            centers.append((IMAGE / 2, IMAGE / 2))
        specs.append(json.dumps(region.to_dict()))
    return specs, np.asarray(centers)


def ir_points(rng: np.random.Generator, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """100k points (~80 per query): near the target, uniform over the image, or missing."""
    which = rng.integers(0, len(centers), N)
    points = centers[which] + rng.normal(0, 40, (N, 2))
    uniform = rng.uniform(size=N) < 0.3
    points[uniform] = rng.uniform(-10, IMAGE + 10, (int(uniform.sum()), 2))
    points[rng.uniform(size=N) < 0.02] = np.nan
    return which, points


def ir_loop(points: np.ndarray, regions: list, sample: np.ndarray) -> tuple[dict[str, int], np.ndarray]:
    """The straightforward path on ``sample`` rows: score_ir_item per point, counts in a dict."""
    counts: dict[str, int] = defaultdict(int)
    strict = np.zeros(len(sample), dtype=bool)
    for j, i in enumerate(sample):
        point = None if np.isnan(points[i]).any() else (points[i, 0], points[i, 1])
        is_strict, is_tolerant, label, _ = score_ir_item(point, regions[i])
        counts[label] += 1
        counts["strict"] += is_strict
        counts["tolerant"] += is_tolerant
        counts[f"{regions[i].task}/strict"] += is_strict
        strict[j] = is_strict
    return counts, strict


# ----------------------------------------------------------------------------- main


# ----------------------------------------------------------------------------- answer-parser corpus


def corpus_report(path: Path = CORPUS) -> int:
    """Log every corpus case's parse beside its expected letter, and the unparseable rates per shape.

    Returns the number of cases whose parse differs from the expected one.
    """
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    by_shape: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # cases, ours unparseable, expected unparseable
    differ = 0
    logger.info("%-40s %-8s %-8s %-18s %s", "case", "expected", "parsed", "reason", "reply")
    for case in cases:
        parse = parse_choice(case["text"], case["options"])
        same = parse.letter == case["expected"]
        differ += not same
        counts = by_shape[case["shape"]]
        counts[0] += 1
        counts[1] += parse.letter is None
        counts[2] += case["expected"] is None
        logger.info("%-40s %-8s %-8s %-18s %s%s", case["id"], case["expected"] or "-", parse.letter or "-",
                    parse.reason, json.dumps(case["text"], ensure_ascii=False)[:70], "" if same else "   <-- differs")
    total = [sum(column) for column in zip(*by_shape.values())]
    logger.info("%-30s %6s %22s %22s", "shape", "cases", "unparseable (ours)", "unparseable (expected)")
    for shape, (n, ours, expected) in sorted(by_shape.items()) + [("all", tuple(total))]:
        logger.info("%-30s %6d %15d %5.1f%% %15d %5.1f%%", shape, n, ours, 100 * ours / n, expected, 100 * expected / n)
    logger.info("corpus: %d cases, %d parse differently from expected", len(cases), differ)
    return differ


def _best_of(repeats: int, fn):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ir-loop-sample", type=int, default=10_000, help="points for the IR loop (0 = all 100k)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of our path (best time is reported)")
    parser.add_argument("--corpus-only", action="store_true", help="only the answer-parser corpus report")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.corpus_only:
        raise SystemExit(1 if corpus_report() else 0)
    rng = np.random.default_rng(0)

    w = vqa_workload(rng)
    t_ours, ours = _best_of(args.repeats, lambda: vqa_accuracy(**w))
    t_loop, loop = _best_of(1, lambda: vqa_loop(w))
    agree = all(abs(ours[k] - v) < 1e-9 for k, v in loop.items())
    logger.info("VQA  100k predictions: ours %.3f s (%.0f/s), loop %.3f s (%.0f/s), ratio %.1fx, results agree: %s",
                t_ours, N / t_ours, t_loop, N / t_loop, t_loop / t_ours, agree)

    specs, centers = ir_regions(rng)
    which, points = ir_points(rng, centers)
    references = [specs[i] for i in which]
    t_ours, result = _best_of(args.repeats, lambda: ir_accuracy(points, references))
    regions_by_spec = as_regions(specs)
    regions = [regions_by_spec[i] for i in which]
    sample = np.arange(N) if args.ir_loop_sample <= 0 else rng.choice(N, min(args.ir_loop_sample, N), replace=False)
    t_sample, (counts, loop_strict) = _best_of(1, lambda: ir_loop(points, regions, sample))
    t_loop = t_sample * N / len(sample)
    agree = bool((score_ir(points[sample], [regions[i] for i in sample]).strict == loop_strict).all())
    logger.info("IR   100k points (1,240 regions, JSON specs, masks 720x720): ours %.3f s (%.0f/s), "
                "loop %.1f s (%.0f/s, %d-point sample scaled to 100k), ratio %.0fx, results agree: %s",
                t_ours, N / t_ours, t_loop, N / t_loop, len(sample), t_loop / t_ours, agree)
    logger.info("IR   strict %.1f%%, tolerant %.1f%%; labels correct %d / wrong %d / none %d",
                result["strict_accuracy"], result["tolerant_accuracy"], result["correct"], result["wrong"], result["none"])
    if corpus_report():
        raise SystemExit(1)


if __name__ == "__main__":
    main()
