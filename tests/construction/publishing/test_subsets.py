"""The ``tiny`` config's stratified selection (issue 30 item 4) on hand-made items whose strata and expected
sizes are counted by hand, and its export from parquet configs."""

import hashlib
import random

import pytest

from bspatial.construction.publishing.export import write_tiny
from bspatial.construction.publishing.subsets import (VQA_STRATA, composition, composition_markdown, row_key, stratified_ids,
                                           stratum_quota)

# (config, category, subtype, task): size, and the expected kept count at 10% rounded half up, at least one.
HAND_STRATA = {
    ("general_single_frame", "direction", "locate", None): (25, 3),        # 2.5 -> 3
    ("general_single_frame", "distance", "camera_relative", None): (14, 1),  # 1.4 -> 1
    ("general_multi_frame", "direction", "object_relative", None): (15, 2),  # 1.5 -> 2
    ("general_multi_frame", "size", "object_relative", None): (1, 1),        # one item: kept
    ("task_manipulation", "direction", "object_relative", "reach_plate"): (4, 1),   # 0.4 -> 0 -> at least 1
    ("task_manipulation", "size", "object_relative", "reach_plate"): (100, 10),
}


def hand_rows() -> list[dict]:
    rows = []
    for (config, category, subtype, task), (size, _) in HAND_STRATA.items():
        rows += [{"id": f"{config}-{category}-{subtype}-{k}", "config": config, "setting": config, "category": category,
                  "subtype": subtype, "task": task, "question": f"q{k}"} for k in range(size)]
    return rows


def items(rows):
    return [(r["id"], row_key(r["config"], r, VQA_STRATA)) for r in rows]


def test_every_stratum_keeps_its_hand_counted_share():
    rows = hand_rows()
    picked = stratified_ids(items(rows), seed=7)
    assert len(rows) == 159 and len(picked) == 3 + 1 + 2 + 1 + 1 + 10
    for (config, category, subtype, task), (_, expected) in HAND_STRATA.items():
        got = [r for r in rows if r["id"] in picked and (r["config"], r["category"], r["subtype"], r["task"])
               == (config, category, subtype, task)]
        assert len(got) == expected, (config, category, subtype)


def test_keeps_the_ids_with_the_smallest_seeded_hash():
    rows = [r for r in hand_rows() if r["task"] == "reach_plate" and r["category"] == "size"]
    # Computed here with hashlib, not with the module's rank().
    expected = sorted((r["id"] for r in rows), key=lambda i: hashlib.sha256(f"7:{i}".encode()).hexdigest())[:10]
    assert stratified_ids(items(rows), seed=7) == set(expected)


def test_stable_under_shuffling_and_other_strata():
    rows = hand_rows()
    picked = stratified_ids(items(rows), seed=7)
    for shuffle_seed in range(5):
        shuffled = list(rows)
        random.Random(shuffle_seed).shuffle(shuffled)
        assert stratified_ids(items(shuffled), seed=7) == picked
    # A stratum's pick depends on its own ids only: dropping another stratum changes nothing in it.
    plate = [r for r in rows if r["task"] == "reach_plate"]
    assert stratified_ids(items(plate), seed=7) == {r["id"] for r in plate} & picked
    other = stratified_ids(items(rows), seed=8)
    assert other != picked and len(other) == len(picked)


def test_composition_and_errors():
    rows = hand_rows()
    picked = stratified_ids(items(rows), seed=0)
    strata = composition(items(rows), picked)
    assert {s.key: (s.size, s.kept) for s in strata} == {
        (c, c, cat, sub, task or "-"): counts for (c, cat, sub, task), counts in HAND_STRATA.items()}
    table = composition_markdown(strata, VQA_STRATA)
    assert table.splitlines()[0] == "| config | setting | category | subtype | task | items | tiny |"
    assert table.splitlines()[-1] == "| **all** |  |  |  |  | 159 | 18 |"
    with pytest.raises(ValueError, match="item ids must be unique, got 'a' twice"):
        stratified_ids([("a", ("x",)), ("a", ("y",))], seed=0)
    with pytest.raises(ValueError, match="percent must be in"):
        stratum_quota(3, 0)


def test_write_tiny_copies_rows_unchanged_from_every_config(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = hand_rows()
    for config in ("general_single_frame", "general_multi_frame", "task_manipulation"):
        part = [{k: r[k] for k in ("id", "setting", "category", "subtype", "task", "question")} for r in rows
                if r["config"] == config]
        (tmp_path / config).mkdir()
        schema = pa.schema([(k, pa.string()) for k in ("id", "setting", "category", "subtype", "task", "question")])
        pq.write_table(pa.Table.from_pylist(part, schema=schema), tmp_path / config / "test-00000-of-00001.parquet")
    table_md = write_tiny(tmp_path, "vqa", ["general_single_frame", "general_multi_frame", "task_manipulation"], seed=7)
    tiny = pq.read_table(tmp_path / "tiny" / "test-00000-of-00001.parquet").to_pylist()
    by_id = {r["id"]: {k: r[k] for k in ("id", "setting", "category", "subtype", "task", "question")} for r in rows}
    assert {r["id"] for r in tiny} == stratified_ids(items(rows), seed=7)
    assert all(r == by_id[r["id"]] for r in tiny)       # a subset, contents unchanged
    assert [r["id"] for r in tiny] == [r["id"] for r in rows if r["id"] in {t["id"] for t in tiny}]  # source order
    assert table_md.splitlines()[-1] == "| **all** |  |  |  |  | 159 | 18 |"
