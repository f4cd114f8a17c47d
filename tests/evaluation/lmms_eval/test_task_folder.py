"""The shipped lmms-eval task folder, checked in ``.venv`` without lmms-eval: its hooks are bspatial's rules,
its task files agree with the hooks and with the VQA repo's configs, local task files, the include-path
helper, and the wheel carrying the YAML files. (The real lmms-eval run is test_lmms_eval_run.py.)"""

from __future__ import annotations

import importlib.util
import math
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from bspatial.evaluation.lmms_eval_tasks import (
    LOCAL_TASKS_HEADER,
    TASKS_ROOT,
    VQA_CONFIGS,
    VQA_TAG,
    VQA_TASK_DIR,
    include_path,
    vqa_task_file,
    vqa_task_name,
    write_local_tasks,
)
from bspatial.evaluation.lmms_eval_tasks.bspatial_vqa import utils
from bspatial.evaluation.vlm.prompts import build_vqa_prompt
from bspatial.evaluation.vlm.summary import summarize_vqa
from bspatial.scoring.vqa import vqa_accuracy

pytestmark = [pytest.mark.subprocess]

REPO = Path(__file__).resolve().parents[3]


def _load_by_path():
    """utils.py as lmms-eval loads it (lmms_eval.utils.import_function): a fresh module named "utils"."""
    spec = importlib.util.spec_from_file_location("utils", VQA_TASK_DIR / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Loader(yaml.SafeLoader):
    """Reads the task files with ``!function utils.x`` kept as the string ``"!function utils.x"``."""


_Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")


def _yaml(path: Path) -> dict:
    return yaml.load(path.read_text(), Loader=_Loader)


def _doc(setting="single_frame", category="direction", subtype="object_relative", task=None, answer="A", item_id="q0"):
    return {"id": item_id, "setting": setting, "category": category, "subtype": subtype, "task": task,
            "question": "Where is the mug relative to the bowl?", "options": ["left", "right", "above", "behind"],
            "answer": answer, "frames": ["frame-0", "frame-1"]}


# ----------------------------------------------------------------------------- hooks


def test_the_hooks_are_the_same_functions_by_name_and_by_path():
    by_path = _load_by_path()
    doc = _doc(setting="multi_frame_rotation", category="distance", subtype="camera_relative")
    assert by_path.bspatial_vqa_doc_to_text(doc) == utils.bspatial_vqa_doc_to_text(doc)
    assert by_path.METRICS_BY_SETTING == utils.METRICS_BY_SETTING


def test_doc_to_text_is_the_appendix_prompt_and_visuals_are_the_frames_in_order():
    doc = _doc(setting="multi_frame_rotation", category="distance", subtype="camera_relative")
    prompt = build_vqa_prompt("multi_frame_rotation", "distance", "camera_relative", doc["question"], doc["options"])
    assert utils.bspatial_vqa_doc_to_text(doc) == prompt
    assert utils.bspatial_vqa_doc_to_text(doc, {}) == prompt  # lmms-eval passes {} when a task sets no kwargs
    assert utils.bspatial_vqa_doc_to_text(doc, {"pre_prompt": "<", "post_prompt": ">"}) == f"<{prompt}>"
    assert utils.bspatial_vqa_doc_to_visual(doc) == ["frame-0", "frame-1"]


def test_process_results_marks_with_bspatials_parser_and_returns_the_settings_metrics():
    row = utils.bspatial_vqa_process_results(_doc(answer="B"), ["<think>maybe A</think>B.right"])
    assert set(row) == set(utils.METRICS_BY_SETTING["single_frame"])
    (first, *rest) = row.values()
    assert all(r is first for r in rest)
    assert first["parsed"] == "B" and first["correct"] is True and first["parse_status"] == "parsed"
    unparseable = utils.bspatial_vqa_process_results(_doc(setting="task_navigation", task="t"), ["A or B"])
    assert set(unparseable) == set(utils.METRICS_BY_SETTING["task_navigation"])
    assert unparseable["accuracy"]["parse_reason"] == "ambiguous" and unparseable["accuracy"]["correct"] is False


def test_a_failed_request_is_refused_not_scored():
    with pytest.raises(ValueError, match=r"item q0: lmms-eval got no reply"):
        utils.bspatial_vqa_process_results(_doc(), ["[LMMS_EVAL_REQUEST_FAILED after 5 retries] Connection error."])
    with pytest.raises(ValueError, match=r"item q0: the model's reply must be a string"):
        utils.bspatial_vqa_process_results(_doc(), [None])
    with pytest.raises(ValueError, match=r"item q0: setting must be one of .* got 'general'"):
        utils.bspatial_vqa_process_results(_doc(setting="general"), ["A"])


def _rows(docs_and_replies):
    return [utils.bspatial_vqa_process_results(doc, [reply])["accuracy"] for doc, reply in docs_and_replies]


def test_aggregations_are_bspatial_vqa_and_the_summary_cells():
    replies = [
        (_doc("task_manipulation", "direction", "locate", "t1", "A", "a"), "A.left"),
        (_doc("task_manipulation", "direction", "ordinal", "t1", "B", "b"), "C"),
        (_doc("task_manipulation", "distance", "object_relative", "t2", "D", "c"), "behind"),
        (_doc("task_manipulation", "size", "object_relative", "t3", "A", "d"), "I cannot tell"),
        (_doc("task_manipulation", "size", "object_relative", "t3", "C", "e"), "The answer is C."),
    ]
    rows = _rows(replies)
    expected = vqa_accuracy([r for _, r in replies], [d["answer"] for d, _ in replies], [d["options"] for d, _ in replies],
                            tasks=[d["task"] for d, _ in replies])
    # Identity with bspatial is exact; the hand-computed values are approximate (float rounding).
    assert utils.bspatial_vqa_accuracy(rows) == expected["accuracy"] == pytest.approx(60.0)
    assert utils.bspatial_vqa_task_mean_accuracy(rows) == expected["task_mean_accuracy"] == pytest.approx(100 * (0.5 + 1 + 0.5) / 3)
    assert utils.bspatial_vqa_unparseable_rate(rows) == expected["unparseable_rate"] == pytest.approx(20.0)
    cells = summarize_vqa(rows)["cells"]
    assert utils.bspatial_vqa_direction(rows) == cells["task_manipulation/direction"]["accuracy"] == 50.0
    assert utils.bspatial_vqa_distance(rows) == 100.0 and utils.bspatial_vqa_size(rows) == 50.0


def test_an_absent_group_is_nan_never_zero_and_mixed_families_are_refused():
    rows = _rows([(_doc(category="direction"), "A")])
    assert math.isnan(utils.bspatial_vqa_size(rows)) and math.isnan(utils.bspatial_vqa_task_mean_accuracy(rows))
    assert utils.bspatial_vqa_direction(rows) == 100.0
    mixed = rows + _rows([(_doc(setting="multi_frame_navigation", item_id="m"), "A")])
    with pytest.raises(ValueError, match=r"one setting family, got \['multi_frame', 'single_frame'\]"):
        utils.bspatial_vqa_direction(mixed)


# ----------------------------------------------------------------------------- task files


def _builder_settings() -> dict[str, tuple[str, ...]]:
    """config -> settings of the VQA repo's builder (datasets/bspatial_vqa), loaded by path as the project does."""
    path = REPO / "datasets" / "bspatial_vqa" / "bspatial_vqa.py"
    spec = importlib.util.spec_from_file_location("bspatial_vqa_builder", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # episode_aligned (the aligned preset's config) has no lmms-eval task: see the task folder's docstring.
    return {c.name: c.settings for c in module.BspatialVQA.BUILDER_CONFIGS if not c.aligned}


def test_one_task_file_per_repo_config_whose_metrics_are_the_hooks():
    settings = _builder_settings()
    assert tuple(settings) == VQA_CONFIGS
    assert sorted(p.name for p in VQA_TASK_DIR.glob("*.yaml")) == sorted(f"{vqa_task_name(c)}.yaml" for c in VQA_CONFIGS)
    for config in VQA_CONFIGS:
        task = _yaml(vqa_task_file(config))
        assert (task["task"], task["dataset_name"], task["include"]) == (vqa_task_name(config), config, "_default_template_yaml")
        names = [m["metric"] for m in task["metric_list"]]
        for setting in settings[config]:
            assert names == list(utils.METRICS_BY_SETTING[setting]), (config, setting)
        for metric in task["metric_list"]:
            assert metric["aggregation"] == f"!function utils.bspatial_vqa_{metric['metric']}"
            assert callable(getattr(utils, f"bspatial_vqa_{metric['metric']}"))
            assert metric["higher_is_better"] is (metric["metric"] != "unparseable_rate")


def test_the_template_scores_raw_replies_without_stop_strings():
    template = _yaml(VQA_TASK_DIR / "_default_template_yaml")
    assert template["dataset_path"] == "behavior-spatial/vqa" and template["test_split"] == "test"
    assert template["tag"] == VQA_TAG and template["output_type"] == "generate_until"
    assert template["reasoning_tags"] == "none"  # lmms-eval's parse_reasoning_tags_config: "none" disables stripping
    assert template["generation_kwargs"] == {"max_new_tokens": 1024, "temperature": 0, "do_sample": False, "until": []}
    for key in ("doc_to_visual", "doc_to_text", "process_results"):
        name = template[key].removeprefix("!function utils.")
        assert callable(getattr(utils, name)), key


# ----------------------------------------------------------------------------- local task files, helper


def test_local_task_files_include_the_shipped_ones_and_set_only_the_data(tmp_path):
    data = tmp_path / "my: vqa build"  # a path YAML would misread unquoted
    for config in ("task_manipulation", "general_single_frame"):
        (data / config).mkdir(parents=True)
    names = write_local_tasks(data, tmp_path / "tasks")
    assert names == [vqa_task_name("general_single_frame"), vqa_task_name("task_manipulation")]
    for config in ("general_single_frame", "task_manipulation"):
        text = (tmp_path / "tasks" / vqa_task_file(config).name).read_text()
        assert text.startswith(LOCAL_TASKS_HEADER)
        assert yaml.safe_load(text) == {"include": str(vqa_task_file(config)), "dataset_path": str(data)}
    assert sorted(p.name for p in (tmp_path / "tasks").iterdir()) == sorted(f"{n}.yaml" for n in names)


def test_local_task_files_refuse_what_is_not_a_vqa_repo(tmp_path):
    with pytest.raises(ValueError, match=r"dataset_path must be a local VQA repo folder, got '.*missing' \(not a folder\)"):
        write_local_tasks(tmp_path / "missing", tmp_path / "tasks")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"holds none of the configs \['general_single_frame'"):
        write_local_tasks(tmp_path / "empty", tmp_path / "tasks")
    with pytest.raises(ValueError, match=r"config must be one of .* got 'general'"):
        vqa_task_name("general")


def _helper(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bspatial.evaluation.lmms_eval_tasks", *args],
                          capture_output=True, text=True, timeout=120)


def test_the_helper_prints_only_the_include_path(tmp_path):
    shipped = _helper()
    assert shipped.returncode == 0 and shipped.stdout == f"{TASKS_ROOT}\n" and include_path() == TASKS_ROOT
    (tmp_path / "vqa" / "task_navigation").mkdir(parents=True)
    local = _helper("--dataset-path", str(tmp_path / "vqa"), "--out", str(tmp_path / "tasks"))
    assert local.returncode == 0 and local.stdout == f"{tmp_path / 'tasks'}\n", local.stderr
    assert "bspatial_vqa_task_navigation" in local.stderr
    alone = _helper("--dataset-path", str(tmp_path / "vqa"))
    assert alone.returncode == 2 and "--dataset-path and --out go together" in alone.stderr
    bad = _helper("--dataset-path", str(tmp_path / "nowhere"), "--out", str(tmp_path / "t2"))
    assert bad.returncode == 2 and "not a folder" in bad.stderr


def test_the_wheel_ships_the_task_folder(tmp_path):
    """A wheel built from the tree carries every file of lmms_eval_tasks/ (YAML files as package data)."""
    # A copy of what the build reads (setup.py skips the absent data folders), so nothing is built in the tree.
    source = tmp_path / "src"
    source.mkdir()
    for name in ("setup.py", "setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for folder in ("bspatial", "evaluation", "modeling"):
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                            "--wheel-dir", str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    prefix = "bspatial/evaluation/lmms_eval_tasks/"
    shipped = sorted(n.removeprefix(prefix) for n in zipfile.ZipFile(wheel).namelist() if n.startswith(prefix))
    expected = sorted(str(p.relative_to(TASKS_ROOT)) for p in TASKS_ROOT.rglob("*")
                      if p.is_file() and "__pycache__" not in p.parts)
    assert shipped == expected
    assert "bspatial_vqa/_default_template_yaml" in shipped
