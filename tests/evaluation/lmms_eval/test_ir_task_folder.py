"""The shipped ``bspatial_ir`` lmms-eval task folder, checked in ``.venv`` without lmms-eval: its hooks are
bspatial's prompt and IR scoring (hand-chosen replies whose points fall inside / outside the fixture's known
regions), its task files agree with the hooks and the IR repo's configs, and local IR task files.
(The real lmms-eval run is test_lmms_eval_ir_run.py.)"""

from __future__ import annotations

import importlib.util
import io
import json
import math
from pathlib import Path

import pytest
import yaml

from bspatial.evaluation.lmms_eval_tasks import (
    IR_CONFIGS,
    IR_TAG,
    IR_TASK_DIR,
    IR_TASKS,
    LOCAL_TASKS_HEADER,
    ir_task_file,
    ir_task_name,
    write_local_tasks,
)
from bspatial.evaluation.lmms_eval_tasks.bspatial_ir import utils
from bspatial.evaluation.vlm.prompts import IR_LAYER_HINT, IR_OBJECT_TARGET, IR_PLACEMENT_TARGET, build_ir_prompt

REPO = Path(__file__).resolve().parents[3]
METRICS = REPO / "metrics"


class _Loader(yaml.SafeLoader):
    """Reads the task files with ``!function utils.x`` kept as the string ``"!function utils.x"``."""


_Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")


def _yaml(path: Path) -> dict:
    return yaml.load(path.read_text(), Loader=_Loader)


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> dict[str, dict]:
    """The fixture IR rows as lmms-eval hands them to the hooks (image decoded to PIL), by id."""
    import pyarrow.parquet as pq
    from PIL import Image

    from bspatial.evaluation.vlm.fixtures import SPLIT, write_fixture_repos

    repo = write_fixture_repos(tmp_path_factory.mktemp("fixture"))["ir"]
    rows = pq.read_table(repo / "all" / f"{SPLIT}-00000-of-00001.parquet").to_pylist()
    return {r["id"]: {**r, "image": Image.open(io.BytesIO(r["image"]["bytes"]))} for r in rows}


def _json(x: int, y: int) -> str:
    return json.dumps({"results": {"target": {"x": x, "y": y}}})


# Hand-chosen replies on the fixture (64 x 64 images; evaluation/vlm/fixtures.py). Reach: target mask rows
# 8+4k..24+4k, columns 8..28; distractor rows 36..52, columns 36..56. Placement: a camera 1.5 m above the
# origin looking straight down, 90 degrees: pixel u maps to x = (u - 32) / 32 * 1.5 m. The countertop spans
# x in [-1, 1] at z 0.9 and the reference is the origin; "right" is +x. The fridge box spans x, y in
# [-0.3, 0.3], z in [0, 1]; the instructed compartment is the top band [0.7, 1.0], where a vertical ray enters.
CASES = [  # (id, reply, label)
    ("reach_dice-0", _json(250, 250), "correct"),  # pixel (16, 16): in the target
    ("reach_dice-1", "<think>maybe (700, 700)</think>" + _json(280, 300), "correct"),  # (17.9, 19.2)
    ("reach_dice-2", '[{"point_2d": [700, 700], "label": "dice"}]', "wrong"),  # (44.8, 44.8): the distractor
    ("reach_hardback-0", _json(950, 50), "none"),  # (60.8, 3.2): background, far from the target
    ("reach_hardback-1", "I cannot see a hardback book.", "none"),  # unparseable
    ("reach_hardback-2", _json(1200, 300), "none"),  # out of the 0-1000 frame
    ("place_carving_knife-0", _json(780, 500), "correct"),  # x = +0.84 m: right of the board, on the counter
    ("place_tupperware_in_fridge-0", _json(500, 500), "correct"),  # enters the box top at z 1.0: top band
]


def _rows(docs, process=utils.bspatial_ir_all_process_results):
    return [process(docs[item], [reply])["strict_accuracy"] for item, reply, _ in CASES]


def test_the_prompt_is_appendix_15_2_with_the_harness_target(docs):
    reach, knife, fridge = docs["reach_dice-0"], docs["place_carving_knife-0"], docs["place_tupperware_in_fridge-0"]
    assert utils.bspatial_ir_doc_to_text(reach) == build_ir_prompt(reach["instruction"], "object")
    assert IR_OBJECT_TARGET in utils.bspatial_ir_doc_to_text(reach)
    assert IR_PLACEMENT_TARGET in utils.bspatial_ir_doc_to_text(knife)
    assert IR_LAYER_HINT in utils.bspatial_ir_doc_to_text(fridge)  # "layer 5" placement instruction
    assert utils.bspatial_ir_doc_to_text(reach, {}) == utils.bspatial_ir_doc_to_text(reach)
    assert utils.bspatial_ir_doc_to_text(reach, {"pre_prompt": "<", "post_prompt": ">"}) == f"<{utils.bspatial_ir_doc_to_text(reach)}>"
    assert utils.bspatial_ir_doc_to_visual(reach) == [reach["image"]]


def test_hand_chosen_replies_get_the_labels_their_points_deserve(docs):
    rows = _rows(docs)
    assert [r["label"] for r in rows] == [label for _, _, label in CASES]
    assert [r["parse_status"] for r in rows][3:6] == ["parsed", "unparseable", "out_of_range"]
    assert rows[0]["point_px"] == [16.0, 16.0] and rows[4]["point_px"] is None
    assert [r["target"] for r in rows] == ["object"] * 6 + ["placement"] * 2


def test_the_aggregates_are_the_hand_counted_numbers_and_the_bspatial_ir_metric(docs):
    import evaluate

    rows = _rows(docs)
    # 4 of 8 correct, 1 wrong, 3 none (a background point, an unparseable and an out-of-range reply). Tasks: dice 2/3, hardback 0/3,
    # knife 1/1, fridge 1/1: task mean (2/3 + 0 + 1 + 1) / 4. No reach point is near a target without being in it.
    assert utils.bspatial_ir_strict_accuracy(rows) == pytest.approx(50.0)
    assert utils.bspatial_ir_tolerant_accuracy(rows) == pytest.approx(50.0)
    assert utils.bspatial_ir_task_mean_strict_accuracy(rows) == pytest.approx(100 * (2 / 3 + 0 + 1 + 1) / 4)
    assert (utils.bspatial_ir_correct(rows), utils.bspatial_ir_wrong(rows), utils.bspatial_ir_none(rows),
            utils.bspatial_ir_unparseable(rows)) == (4, 1, 3, 2)
    metric = evaluate.load(str(METRICS / "bspatial_ir"))
    expected = metric.compute(predictions=[reply for _, reply, _ in CASES], references=[docs[i]["region"] for i, _, _ in CASES])
    for key in utils.ALL_METRICS:
        assert getattr(utils, f"bspatial_ir_{key}")(rows) == expected[key], key


def test_a_near_miss_is_tolerant_but_not_strict(docs):
    # Pixel (28.8, 16): outside the target (columns 8..27), 1.3 px from the centre 27.5 of its last column,
    # within 2% of the 90.5 px diagonal (1.81 px).
    row = utils.bspatial_ir_process_results(docs["reach_dice-0"], [_json(450, 250)])["strict_accuracy"]
    assert (row["strict"], row["tolerant"], row["label"]) == (False, True, "none")


def test_failed_requests_and_bad_rows_raise(docs):
    with pytest.raises(ValueError, match="refusing to score a failed request"):
        utils.bspatial_ir_process_results(docs["reach_dice-0"], ["[LMMS_EVAL_REQUEST_FAILED after 5 retries] x"])
    with pytest.raises(ValueError, match="reply must be a string"):
        utils.bspatial_ir_process_results(docs["reach_dice-0"], [None])
    with pytest.raises(ValueError, match="item bad: region is not a valid region spec"):
        utils.bspatial_ir_process_results({**docs["reach_dice-0"], "id": "bad", "region": "{not json"}, ["(1, 2)"])
    from PIL import Image

    with pytest.raises(ValueError, match=r"region.image_size \[64, 64\] must equal the image size \[32, 32\]"):
        utils.bspatial_ir_process_results({**docs["reach_dice-0"], "image": Image.new("RGB", (32, 32))}, ["(1, 2)"])
    assert math.isnan(utils.bspatial_ir_strict_accuracy([]))


def test_the_task_files_match_the_hooks_and_the_ir_configs():
    from bspatial.construction.publishing.export import builder_module

    assert IR_TASKS == tuple(builder_module("ir").TASKS) and IR_CONFIGS == ("all", *IR_TASKS)
    template = _yaml(IR_TASK_DIR / "_default_template_yaml")
    assert template["dataset_path"] == "behavior-spatial/ir" and "tag" not in template
    for key in ("doc_to_visual", "doc_to_text", "process_results"):
        assert hasattr(utils, template[key].removeprefix("!function utils."))
    assert [m["metric"] for m in template["metric_list"]] == list(utils.TASK_METRICS)
    expected = sorted(f"{ir_task_name(c)}.yaml" for c in IR_CONFIGS)
    assert sorted(p.name for p in IR_TASK_DIR.glob("*.yaml")) == expected
    for config in IR_CONFIGS:
        task = _yaml(ir_task_file(config))
        assert (task["task"], task["dataset_name"], task["include"]) == (ir_task_name(config), config, "_default_template_yaml")
        assert task.get("tag") == (None if config == "all" else IR_TAG)
        metrics = task.get("metric_list", template["metric_list"])
        assert [m["metric"] for m in metrics] == list(utils.ALL_METRICS if config == "all" else utils.TASK_METRICS)
        for metric in metrics:
            assert metric["aggregation"] == f"!function utils.bspatial_ir_{metric['metric']}"
    assert _yaml(ir_task_file("all"))["process_results"] == "!function utils.bspatial_ir_all_process_results"


def test_utils_load_by_path_as_lmms_eval_loads_them(docs):
    spec = importlib.util.spec_from_file_location("utils", IR_TASK_DIR / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    item, reply, _ = CASES[2]
    assert module.bspatial_ir_process_results(docs[item], [reply]) == utils.bspatial_ir_process_results(docs[item], [reply])


def test_local_ir_task_files(tmp_path):
    data = tmp_path / "ir"
    for config in ("all", "reach_dice", "not_a_config"):
        (data / config).mkdir(parents=True)
    names = write_local_tasks(data, tmp_path / "tasks", suite="ir")
    assert names == ["bspatial_ir_all", "bspatial_ir_reach_dice"]
    for config in ("all", "reach_dice"):
        text = (tmp_path / "tasks" / f"bspatial_ir_{config}.yaml").read_text()
        assert text.startswith(LOCAL_TASKS_HEADER)
        assert yaml.safe_load(text) == {"include": str(ir_task_file(config)), "dataset_path": str(data)}
    with pytest.raises(ValueError, match=r"must be a local IR repo folder"):
        write_local_tasks(tmp_path / "missing", tmp_path / "t", suite="ir")
    with pytest.raises(ValueError, match=r"suite must be one of \['vqa', 'ir'\], got 'pointing'"):
        write_local_tasks(data, tmp_path / "t", suite="pointing")
