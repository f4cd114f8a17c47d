"""ir_accuracy: the bspatial_ir result, its errors, and memory that does not grow with the number of predictions."""

from __future__ import annotations

import gc
import json
import tracemalloc

import numpy as np
import pytest

from bspatial.scoring.ir_accuracy import ir_accuracy
from bspatial.scoring.masks import rle_encode

pytestmark = [pytest.mark.slow]

SIZE = 720


def _reach_spec(task: str, row: int) -> dict:
    """Target: columns 100..299 of rows row..row+99; distractor: a block in the lower right."""
    target = np.zeros((SIZE, SIZE), bool)
    target[row : row + 100, 100:300] = True
    distractor = np.zeros((SIZE, SIZE), bool)
    distractor[500:600, 500:650] = True
    return {"kind": "reach", "task": task, "image_size": [SIZE, SIZE], "targets": [rle_encode(target)],
            "distractors": [rle_encode(distractor)]}


SPECS = [_reach_spec(f"task_{i % 4}", 20 * i) for i in range(8)]
JSON_SPECS = [json.dumps(s) for s in SPECS]


def _column(n: int, seed: int = 0) -> tuple[list[list[float]], list[int]]:
    rng = np.random.default_rng(seed)
    return rng.uniform(0, SIZE, (n, 2)).tolist(), rng.integers(0, len(SPECS), n).tolist()


def _peak_bytes(fn) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_counts_and_task_means_by_hand():
    # Spec 0 (task_0): target rows 0..99, columns 100..299. Spec 1 (task_1): rows 20..119.
    predictions = [[150.0, 50.0], [550.0, 550.0], [10.0, 700.0], '{"results": {"target": {"x": 277, "y": 97}}}', "no"]
    references = [JSON_SPECS[0], JSON_SPECS[0], JSON_SPECS[1], JSON_SPECS[1], JSON_SPECS[1]]
    r = ir_accuracy(predictions, references)
    # (277, 97) on the 0-1000 grid is (199.44, 69.84) px: inside spec 1's target.
    assert (r["n"], r["correct"], r["wrong"], r["none"], r["unparseable"]) == (5, 2, 1, 2, 1)
    assert r["strict_accuracy"] == 40.0
    assert r["task/task_0/strict"] == 50.0 and r["task/task_1/strict"] == 100.0 / 3 and r["n/task/task_1"] == 3
    assert r["task_mean_strict_accuracy"] == (50.0 + 100.0 / 3) / 2


def test_tasks_are_read_from_regions_only_when_every_region_names_one():
    unnamed = json.dumps({**SPECS[0], "task": None})
    r = ir_accuracy([[150.0, 50.0], [150.0, 50.0]], [JSON_SPECS[0], unnamed])
    assert r["strict_accuracy"] == 100.0
    assert not [k for k in r if k.startswith(("task", "n/task"))]
    given = ir_accuracy([[150.0, 50.0], [150.0, 50.0]], [JSON_SPECS[0], unnamed], tasks=["a", "b"])
    assert given["task/a/strict"] == given["task/b/strict"] == 100.0


def test_scoring_nothing_is_an_error():
    with pytest.raises(ValueError, match="predictions is empty: there is nothing to score"):
        ir_accuracy([], [])
    with pytest.raises(ValueError, match="predictions is empty: there is nothing to score"):
        ir_accuracy([], [], tasks=[])
    with pytest.raises(ValueError, match="predictions has 0 entries but references has 1"):
        ir_accuracy([], [JSON_SPECS[0]])


def test_errors_name_the_row_in_the_whole_column():
    points, which = _column(50_000)
    references = [JSON_SPECS[i] for i in which]
    references[40_000] = "{not json"
    with pytest.raises(ValueError, match=r"references\[40000\]"):
        ir_accuracy(points, references)
    predictions: list = list(points)
    predictions[45_000] = [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"predictions\[45000\]"):
        ir_accuracy(predictions, [JSON_SPECS[i] for i in which])


def test_memory_does_not_grow_with_the_number_of_predictions():
    # Issue 14: 1e6 predictions took 8 GB. Scoring keeps counters, not per-item arrays, so ten times
    # the predictions must not take anywhere near ten times the memory (inputs are built beforehand
    # and not counted).
    small_points, small_which = _column(20_000, seed=1)
    large_points, large_which = _column(200_000, seed=2)
    small_refs = [JSON_SPECS[i] for i in small_which]
    large_refs = [JSON_SPECS[i] for i in large_which]
    small = _peak_bytes(lambda: ir_accuracy(small_points, small_refs))
    large = _peak_bytes(lambda: ir_accuracy(large_points, large_refs))
    assert large < 3 * small, f"peak {large / 1e6:.1f} MB for 200k predictions vs {small / 1e6:.1f} MB for 20k"


def test_dict_references_equal_in_value_share_one_prepared_region():
    # The dataset's region column decoded to dicts gives one dict per row: each used to become its own
    # region (masks and caches, ~20 kB per row at 720 x 720).
    points, which = _column(3_000, seed=3)
    references = [json.loads(JSON_SPECS[i]) for i in which]  # a fresh dict per row
    peak = _peak_bytes(lambda: ir_accuracy(points, references))
    assert peak / len(points) < 2_000, f"{peak / len(points):.0f} bytes per prediction"
    assert ir_accuracy(points, references) == ir_accuracy(points, [JSON_SPECS[i] for i in which])
