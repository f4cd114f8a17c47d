"""Builds the `tiny` preset once (a handful of instances) and checks answers, IR labels, loading,
determinism and the unmeetable-preset error."""

import json
import math

import numpy as np
import pytest

from bspatial.construction.publishing.build import build
from bspatial.construction.publishing.presets import Preset, PresetShortfall, get_preset
from bspatial.evaluation.vlm import records
from bspatial.scoring.ir import score_ir
from bspatial.scoring.ir_regions import region_from_dict

pytestmark = [pytest.mark.slow, pytest.mark.sim]

SEED = 3


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "out"
    build("tiny", out, SEED)
    return out




def test_loads_with_the_harness_columns(built):
    import datasets

    vqa = datasets.load_dataset(str(built / "vqa"), "task_manipulation", split="test")
    ir = datasets.load_dataset(str(built / "ir"), "all", split="test")
    records.check_columns("vqa", vqa.column_names)
    records.check_columns("ir", ir.column_names)
    tiny = get_preset("tiny")
    assert len(vqa) == sum(tiny.count("vqa_per_task", t) for t in tiny.tasks)
    assert len(ir) == sum(tiny.count("ir_per_task", t) for t in tiny.tasks)
    raw_vqa = vqa.cast_column("frames", datasets.List(datasets.Image(decode=False)))
    raw_ir = ir.cast_column("image", datasets.Image(decode=False))
    for row in raw_vqa:
        item = records.vqa_item(row)
        assert item.frames[0].size == (720, 720)
    for row in raw_ir:
        assert records.ir_item(row).image.size == (720, 720)
    one_task = datasets.load_dataset(str(built / "ir"), "reach_dice", split="test")
    assert set(one_task["task"]) == {"reach_dice"}


def test_answers_agree_with_an_independent_check(built):
    import datasets

    vqa = datasets.load_dataset(str(built / "vqa"), "task_manipulation", split="test").remove_columns("frames")
    seen = set()
    checked = set()   # which independent checks ran: none of them may be skipped silently
    for row in vqa:
        meta = json.loads(row["metadata"])
        text = row["options"]["ABCD".index(row["answer"])]
        states = meta["objects"]
        seen.add(row["task"])
        if row["category"] == "size":
            longest = {n: max(states[n]["extents"]) for n in meta["candidates"]}
            ranked = sorted(longest, key=longest.get, reverse=True)
            rank = {"largest": 0, "2nd largest": 1, "smallest": -1, "2nd smallest": -2}[row["variant"]]
            assert meta["option_objects"][text] == ranked[rank]
            checked.add("size")
        elif row["category"] == "distance":
            relation = row["variant"].split("/")[0]
            ref = states[meta["reference"]]
            # Every option names an object in the frame, and a numbered one a mark drawn on it (issue 16:
            # no "dice 1" when only marks 2-4 are drawn).
            drawn = {mark[0] for mark in meta["marks"]}
            assert set(row["options"]) == set(meta["option_objects"]), row["id"]
            assert all(states[n]["pixels"] > 0 for n in meta["option_objects"].values()), row["id"]
            assert all(t.rsplit(" ", 1)[1] in drawn for t in row["options"]), row["id"]
            if meta["reference"].startswith("wall"):   # perpendicular distance to the wall slab's face
                gap = lambda c: np.linalg.norm(np.maximum(np.abs(np.subtract(c, ref["center"])) - np.divide(ref["extents"], 2), 0))  # noqa: E731
            else:
                gap = lambda c: np.linalg.norm(np.subtract(c, ref["center"]))  # noqa: E731
            dist = {t: gap(states[n]["center"]) for t, n in meta["option_objects"].items()}
            pick = min if relation == "closest" else max
            assert pick(dist, key=dist.get) == text
            checked.add("distance")
        elif row["subtype"] == "ordinal":
            left = {t: states[n]["center"][1] for t, n in meta["option_objects"].items()}  # robot at yaw 0: left = +y
            order = sorted(left, key=left.get, reverse=True)
            index = {"leftmost": 0, "2nd leftmost": 1, "rightmost": -1, "2nd rightmost": -2}[row["variant"]]
            assert order[index] == text
            checked.add("ordinal")
        elif row["subtype"] == "locate" and "cells" in meta:
            x0, x1, y0, y1, z0, z1 = meta["cells"][text]
            z = states[meta["object"]]["center"][2]
            assert z0 <= z <= z1
            rows_bottom_up = sorted({tuple(c[4:]) for c in meta["cells"].values()})
            assert rows_bottom_up.index((z0, z1)) + 1 == int(text.split("x")[0])
            checked.add("locate_cells")
        elif row["subtype"] == "locate" and "layer_bounds" in meta:
            # Container placement: the answer mark sits in the instructed layer, counted from the bottom.
            tops, z = meta["layer_bounds"], meta["spots"][text][2]
            assert tops[int(row["variant"]) - 1] < z < tops[int(row["variant"])]
            assert sum(tops[k] < p[2] < tops[k + 1] for p in meta["spots"].values() for k in [int(row["variant"]) - 1]) == 1
            checked.add("locate_bands")
        elif row["subtype"] == "locate" and "spots" in meta:
            # Directional placement: the answer spot projects on the instructed side of the reference's centre.
            K, T = np.array(meta["camera"]["K"]), np.array(meta["camera"]["T_world_cam"])

            def column(point):
                cam = T[:3, :3].T @ (np.asarray(point, float) - T[:3, 3])
                return (K @ cam)[0] / cam[2]
            spot = meta["spots"][text]
            assert (column(spot) > column([*meta["reference_center"], spot[2]])) == (row["variant"].startswith("right"))
            assert sorted(meta["spots"]) == sorted(row["options"]) == [f"spot {k}" for k in range(1, 5)]
            checked.add("goal_spot")
        else:
            raise AssertionError(f"{row['id']}: no check for {row['category']} / {row['subtype']}")
    assert seen == set(get_preset("tiny").tasks)
    # Every kind of check ran on at least one row (the distance one on a non-wall reference), so no
    # branch above passes vacuously.
    assert checked >= {"size", "distance", "ordinal", "locate_cells", "locate_bands", "goal_spot"}, checked


def test_ir_masks_score_through_bspatial_ir(built):
    import datasets

    ir = datasets.load_dataset(str(built / "ir"), "all", split="test")
    kinds = set()
    for row in ir:
        region = region_from_dict(row["region"])
        kinds.add(region.kind)
        assert tuple(region.image_size) == row["image"].size
        if region.kind != "reach":
            continue
        meta = json.loads(row["metadata"])
        K, T = np.array(meta["camera"]["K"]), np.array(meta["camera"]["T_world_cam"])
        cam = T[:3, :3].T @ (np.array(meta["target_center"]) - T[:3, 3])
        u, v = (K @ cam)[:2] / cam[2]
        target = region.targets[0].to_array()
        assert target[int(v), int(u)], "the target mask contains the projected target centre"
        points = []
        for mask in (target, *(d.to_array() for d in region.distractors)):
            rows, cols = np.nonzero(mask)
            # The mask pixel nearest its centroid (an occluded mask may not contain its own centroid).
            i = np.argmin((rows - rows.mean()) ** 2 + (cols - cols.mean()) ** 2)
            points.append([cols[i] + 0.5, rows[i] + 0.5])
        labels = score_ir(np.array(points), [region] * len(points)).label.tolist()
        assert labels[0] == "correct" and set(labels[1:]) == {"wrong"} and len(labels) > 1
    assert kinds == {"reach", "directional_placement", "container_placement"}


def test_same_seed_gives_identical_parquet_bytes(built, tmp_path):
    again = tmp_path / "again"
    build("tiny", again, SEED)
    files = sorted(p.relative_to(built) for p in built.rglob("*.parquet"))
    assert files == sorted(p.relative_to(again) for p in again.rglob("*.parquet"))
    for f in files:
        assert (built / f).read_bytes() == (again / f).read_bytes(), f


def test_two_workers_write_the_same_bytes(built, tmp_path):
    parallel = tmp_path / "parallel"
    build("tiny", parallel, SEED, workers=2)
    files = sorted(p.relative_to(built) for p in built.rglob("*.parquet"))
    assert files == sorted(p.relative_to(parallel) for p in parallel.rglob("*.parquet"))
    for f in files:
        assert (built / f).read_bytes() == (parallel / f).read_bytes(), f
    with pytest.raises(ValueError, match="workers must be an int >= 1, got 0"):
        build("tiny", tmp_path / "x", SEED, workers=0)


def test_unmeetable_preset_names_the_category_and_leaves_nothing(tmp_path):
    out = tmp_path / "never"
    preset = Preset("impossible", ("reach_dice",), vqa_per_task=3, ir_per_task=0, max_draws_per_variant=0)
    with pytest.raises(PresetShortfall, match=r"task_manipulation VQA / task reach_dice: built 0 of 3 \(short by 3"):
        build(preset, out, SEED)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_vqa_choice_keeps_each_variants_count_and_vqa_only_presets_build(tmp_path):
    import collections

    import datasets

    per_variant = {}
    for choice in (1, 2):
        out = tmp_path / f"choice{choice}"
        build(Preset(f"choice{choice}", ("reach_food_item",), vqa_per_task=6, ir_per_task=0, vqa_choice=choice),
              out, SEED)
        assert not (out / "ir").exists()   # a VQA-only preset writes no IR repo (no empty configs)
        rows = list(datasets.load_dataset(str(out / "vqa"), "task_manipulation", split="test").remove_columns("frames"))
        assert len(rows) == 6 and len({r["id"] for r in rows}) == 6
        per_variant[choice] = collections.Counter(r["variant"] for r in rows)
    assert per_variant[1] == per_variant[2]
    with pytest.raises(ValueError, match="preset 'bad': vqa_choice must be >= 1, got 0"):
        Preset("bad", ("reach_dice",), 1, 1, vqa_choice=0)


def test_refuses_to_overwrite_and_unknown_preset(built):
    with pytest.raises(FileExistsError, match="not empty"):
        build("tiny", built, SEED)
    with pytest.raises(ValueError, match="unknown preset"):
        build("huge", built.parent / "x", SEED)


def test_ir_builder_configs_follow_the_task_table():
    # The builder module stays self-contained (it ships to the Hub), so its task list is a copy.
    from bspatial.construction.publishing.export import builder_module
    from bspatial.catalog.tasks import MANIPULATION_EVAL_TASKS

    ir = builder_module("ir")
    assert tuple(ir.TASKS) == tuple(MANIPULATION_EVAL_TASKS)
    assert [c.name for c in ir.BspatialIR.BUILDER_CONFIGS] == ["all", *MANIPULATION_EVAL_TASKS, "episode_aligned"]


def test_task_navigation_config_holds_a_context_tour_then_the_current_view(built):
    import datasets

    from bspatial.construction.questions.navigation_vqa import CONTEXT_FRAMES

    def bearing_quadrant(pose, point):
        # This test's own rule: the bearing of the destination seen from the robot (x forward, y
        # left, yaw counter-clockwise), wrapped to (-180, 180]; front within 90 degrees, left when positive.
        x, y, yaw = pose
        bearing = (math.degrees(math.atan2(point[1] - y, point[0] - x) - yaw) + 180.0) % 360.0 - 180.0
        return f"{'front' if abs(bearing) < 90 else 'back'}-{'left' if bearing > 0 else 'right'}"

    nav = datasets.load_dataset(str(built / "vqa"), "task_navigation", split="test")
    assert len(nav) == 2 and set(nav["task"]) == {"move_to_bookcase"}
    records.check_columns("vqa", nav.column_names)
    for row in nav:
        meta = json.loads(row["metadata"])
        assert len(row["frames"]) == min(CONTEXT_FRAMES, meta["context_frames"]) + 1
        # The answer, recomputed from the stored pose and destination with the bearing rule above
        # (not the builder's quadrant function, not the stored answer text).
        answer = row["options"]["ABCD".index(row["answer"])]
        assert answer == bearing_quadrant(meta["pose"], meta["destination_point"])
        assert set(row["options"]) == {"front-left", "front-right", "back-left", "back-right"}
        assert row["frames"][0].size == row["frames"][-1].size == (320, 320)
    # The tour is shared by the task's questions; the current views differ.
    assert nav[0]["frames"][0].tobytes() == nav[1]["frames"][0].tobytes()
    assert nav[0]["frames"][-1].tobytes() != nav[1]["frames"][-1].tobytes()


def test_card_lists_every_config_and_carries_the_quality_report(built):
    import yaml

    card = (built / "vqa" / "README.md").read_text()
    meta = yaml.safe_load(card.split("---\n")[1])
    names = [c["config_name"] for c in meta["configs"]]
    assert names == ["task_manipulation", "general_single_frame", "general_multi_frame", "task_navigation", "tiny"]
    for config in names:
        assert (built / "vqa" / config / "test-00000-of-00001.parquet").is_file()
    assert "| category | task or subtype | n | chance % | top answer |" in card
    assert "| prior baseline % (95% interval) | probe % (95% interval) | check |" in card
    ir_card = (built / "ir" / "README.md").read_text()
    assert "| prior baseline %" not in ir_card      # the VQA table stays on the VQA card
    assert "| all | target_visible |" in ir_card and "| all | goal_in_frame |" in ir_card   # the IR audit is on it


def test_tiny_config_is_a_stratified_subset_and_eval_vlm_runs_on_it(built, tmp_path):
    """The dataset config ``tiny`` (issue 30 item 4), which every build exports (here one of build preset tiny)."""
    import datasets
    from typer.testing import CliRunner

    from bspatial.cli import app

    for suite, sources, fields in (("vqa", ["task_manipulation", "general_single_frame", "general_multi_frame",
                                            "task_navigation"], ("setting", "category", "subtype", "task")),
                                   ("ir", ["all"], ("task",))):
        full = {}
        for config in sources:
            for row in datasets.load_dataset(str(built / suite), config, split="test").with_format("arrow")[:].to_pylist():
                full[row["id"]] = row   # frames / image as stored bytes
        tiny = datasets.load_dataset(str(built / suite), "tiny", split="test").with_format("arrow")[:].to_pylist()
        assert tiny and all(row == full[row["id"]] for row in tiny)   # a subset, every column unchanged
        strata = {tuple(r[f] for f in fields) for r in full.values()}
        assert {tuple(r[f] for f in fields) for r in tiny} == strata  # every stratum represented
        assert len(tiny) < len(full) or len(strata) == len(full)
        card = (built / suite / "README.md").read_text()
        assert "## The `tiny` config" in card and f"| {len(full)} | {len(tiny)} |" in card
    result = CliRunner().invoke(app, ["eval-vlm", "--model", "chance", "--suite", "vqa", "--config", "tiny",
                                      "--data", str(built / "vqa"), "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "run" / "vqa-tiny").is_dir()


def test_paper_preset_carries_the_paper_totals():
    from bspatial.catalog.counts import MULTI_FRAME_COUNTS, SINGLE_FRAME_COUNTS
    from bspatial.catalog.tasks import MANIPULATION_EVAL_TASKS, NAVIGATION_TASKS

    paper = get_preset("paper")
    task = sum(paper.count("vqa_per_task", t) for t in MANIPULATION_EVAL_TASKS)
    navigation = sum(paper.count("navigation_per_task", t) for t in NAVIGATION_TASKS)
    single, multi = sum(SINGLE_FRAME_COUNTS.values()), sum(MULTI_FRAME_COUNTS.values())
    assert (single, multi, task, navigation) == (1078, 494, 1082, 602)
    assert single + multi + task + navigation == 3256   # the paper's VQA total, from the preset's own counts
    assert sum(paper.count("ir_per_task", t) for t in MANIPULATION_EVAL_TASKS) == 1240
    with pytest.raises(ValueError, match=r"navigation_per_task must be >= 0, got \{'move_to_bar': -1\}"):
        Preset("bad", ("reach_dice",), 1, 1, navigation_per_task=(("move_to_bar", -1),))


def test_container_view_is_the_start_scene_from_a_backed_off_crouched_pose():
    import math

    from bspatial.construction.items.frames import CONTAINER_VIEW_BACKOFF_M, CONTAINER_VIEW_TORSO, \
        container_view_scene
    from bspatial.tasks import sample_instance

    inst = sample_instance("place_bowl_in_cabinet", "4", 0)
    view = container_view_scene(inst)
    assert view.objects == inst.scene.objects            # nothing placed yet: the bowl is where the episode starts
    start, robot = inst.scene.robot, view.robot
    assert math.hypot(robot.x - start.x, robot.y - start.y) == pytest.approx(CONTAINER_VIEW_BACKOFF_M)
    assert robot.torso == CONTAINER_VIEW_TORSO and robot.yaw == start.yaw
    with pytest.raises(ValueError, match="no container"):
        container_view_scene(sample_instance("place_carving_knife", "left/microwave", 0))


def test_blind_circular_and_clustered_runs_work_on_the_builds_tiny_config(built, tmp_path, monkeypatch):
    # Issue 30's end-to-end path: the tiny config a build exports, asked plainly, blind and circularly through
    # the command line, then reported with clustered intervals and the circular table.
    import csv

    import datasets
    from typer.testing import CliRunner

    from bspatial.cli import app
    from bspatial.common.jsonl import read_jsonl

    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    tiny = {suite: datasets.load_dataset(str(built / suite), "tiny", split="test") for suite in ("vqa", "ir")}
    for suite in ("vqa", "ir"):
        base = ["eval-vlm", "--model", "chance", "--suite", suite, "--config", "tiny", "--data", str(built / suite),
                "--no-progress"]
        for extra in ([], ["--blind"], *([["--circular", "--out", "runs/circular"]] if suite == "vqa" else [])):
            result = runner.invoke(app, [*base, *extra])
            assert result.exit_code == 0, result.output
        for run in ("chance_0", "chance_0-blind"):
            logged = read_jsonl(tmp_path / "runs" / run / f"{suite}-tiny" / "samples.jsonl")
            assert sorted(r["id"] for r in logged) == sorted(tiny[suite]["id"])
    result = runner.invoke(app, ["report", "runs/chance_0", "runs/chance_0-blind", "runs/circular", "--out", "reports"])
    assert result.exit_code == 0, result.output
    with open(tmp_path / "reports" / "intervals.csv") as handle:
        intervals = list(csv.DictReader(handle))
    assert {row["model"] for row in intervals} == {"chance:0", "chance:0 (blind)"}
    assert all(int(row["clusters"]) <= int(row["n"]) for row in intervals)
    assert any(int(row["clusters"]) < int(row["n"]) for row in intervals)   # items share frames: clustered
    with open(tmp_path / "reports" / "circular.csv") as handle:
        circular = list(csv.DictReader(handle))
    assert circular and {row["part"] for row in circular} == {"vqa-tiny"}
    assert all(float(row["circular_accuracy"]) <= float(row["plain_accuracy"]) for row in circular)
