"""Paired comparison of two eval-vlm runs on the same items (``bspatial report --paired RUN_A RUN_B``).

Two models scored on the same questions differ by less noise than two independent samples would: the
items both get right or both get wrong say nothing about which is better. Per part both runs evaluated
(``vqa-general``, ``ir-all``, ...) and per score (VQA ``correct``; IR ``strict`` and ``tolerant``), pooled over
the part's items:

* the discordant counts and the exact McNemar p-value with Newcombe's paired interval of the difference
  (:func:`bspatial.scoring.stats.matched_pair_contrast`, the rule Spa-Bench's matched scenes use): these
  treat items as independent pairs;
* the CR1 interval of the difference with items clustered by scene / frame
  (:func:`bspatial.scoring.clustered.clustered_difference_interval`, clusters from :mod:`.clusters`). Where
  it and McNemar disagree, the clustered interval is the one that respects how the items were built.

Why an explicit pair and not a line for every two runs of the same items: k runs give k(k-1)/2 tests,
most of them questions nobody asked, and a page of p-values invites reading the smallest. The user
names the comparison they mean.

The pair must have scored the same items: a part whose item ids differ between the runs (an interrupted
or ``--limit``-ed run) is an error naming the counts, never a comparison on the overlap; so is a part
whose dataset fingerprints differ (the builders' ids repeat across builds of other seeds).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bspatial.evaluation.vlm.clusters import cluster_keys
from bspatial.evaluation.vlm.run_files import FINGERPRINT_FILE, SAMPLES_FILE, SUMMARY_FILE, part_folders
from bspatial.common.jsonl import read_jsonl
from bspatial.scoring.clustered import clustered_difference_interval
from bspatial.scoring.stats import matched_pair_contrast

PAIRED_COLUMNS = ("part", "metric", "run_a", "run_b", "n", "accuracy_a", "accuracy_b", "difference", "a_only",
                  "b_only", "mcnemar_p", "newcombe_low", "newcombe_high", "clusters", "clustered_low", "clustered_high")
PAIRED_HEADERS = ("Part", "Score", "Run A", "Run B", "n", "A (%)", "B (%)", "A - B (pp)", "A only", "B only",
                  "McNemar exact p", "Newcombe 95% (independent pairs)", "Clusters", "Clustered 95% (CR1)")
SCORES = {"vqa": ("correct",), "ir": ("strict", "tolerant")}
"""The 0/1 fields of a part's samples.jsonl compared per suite."""


def _data_hash(folder: Path) -> str | None:
    file = folder / FINGERPRINT_FILE
    return json.loads(file.read_text()).get("components", {}).get("data") if file.is_file() else None


def _aligned(part: str, a: Path, b: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both parts' sample rows in one item order; an error unless they scored the same items of one dataset."""
    hash_a, hash_b = _data_hash(a), _data_hash(b)
    if hash_a and hash_b and hash_a != hash_b:
        raise ValueError(f"part {part}: the runs evaluated different datasets (data fingerprints {hash_a[:12]} and "
                         f"{hash_b[:12]}); a paired comparison needs the same items")
    rows_a = {r["id"]: r for r in read_jsonl(a / SAMPLES_FILE)}
    rows_b = {r["id"]: r for r in read_jsonl(b / SAMPLES_FILE)}
    if rows_a.keys() != rows_b.keys():
        common = len(rows_a.keys() & rows_b.keys())
        raise ValueError(f"part {part}: the runs scored different items (A: {len(rows_a)}, B: {len(rows_b)}, both: "
                         f"{common}, only A: {len(rows_a) - common}, only B: {len(rows_b) - common}); a paired "
                         f"comparison needs the same items")
    if not rows_a:
        raise ValueError(f"part {part}: no scored items in either run")
    ids = sorted(rows_a)
    return [rows_a[i] for i in ids], [rows_b[i] for i in ids]


def _score_row(part: str, metric: str, names: tuple[str, str], a: Sequence[dict[str, Any]],
               b: Sequence[dict[str, Any]]) -> dict[str, Any]:
    xs, ys = [bool(r[metric]) for r in a], [bool(r[metric]) for r in b]
    contrast = matched_pair_contrast(xs, ys)
    clustered = clustered_difference_interval(xs, ys, cluster_keys([r["id"] for r in a]))
    return {"part": part, "metric": metric, "run_a": names[0], "run_b": names[1], "n": contrast.n_pairs,
            "accuracy_a": contrast.rate_a, "accuracy_b": contrast.rate_b, "difference": contrast.difference,
            "a_only": contrast.a_only, "b_only": contrast.b_only, "mcnemar_p": contrast.p_value,
            "newcombe_low": contrast.ci_low, "newcombe_high": contrast.ci_high, "clusters": clustered.clusters,
            "clustered_low": None if clustered.low is None else 100.0 * clustered.low,
            "clustered_high": None if clustered.high is None else 100.0 * clustered.high}


def paired_rows(run_a: str | Path, run_b: str | Path) -> list[dict[str, Any]]:
    """One row (:data:`PAIRED_COLUMNS`; percent and percentage points) per shared part and score.

    Raises:
        ValueError: The runs share no part, or a shared part's items or dataset differ (module docstring).
    """
    parts_a, parts_b = part_folders(run_a), part_folders(run_b)
    shared = sorted(parts_a.keys() & parts_b.keys())
    if not shared:
        raise ValueError(f"--paired: {run_a} (parts {sorted(parts_a)}) and {run_b} (parts {sorted(parts_b)}) share no "
                         f"part to compare")
    names = (Path(run_a).name, Path(run_b).name)
    rows = []
    for part in shared:
        suite = json.loads((parts_a[part] / SUMMARY_FILE).read_text())["suite"]
        a, b = _aligned(part, parts_a[part], parts_b[part])
        rows += [_score_row(part, metric, names, a, b) for metric in SCORES[suite]]
    return rows
