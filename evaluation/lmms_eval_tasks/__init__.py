"""lmms-eval task folders shipped with bspatial: point ``--include_path`` here.

lmms-eval cannot share bspatial's environment (lmms-eval 0.7.3 resolves ``packaging`` 26 where lerobot pins
``packaging<26``, and it imports ``filelock._api``, which filelock 4 removed), so it runs in its own, with
bspatial installed there ``--no-deps``: the task hooks import only bspatial's prompt and scoring modules, which
need numpy and pandas, both lmms-eval dependencies::

    pip install lmms-eval==0.7.3 'filelock<4' && pip install --no-deps <behavior-spatial checkout>
    lmms-eval --model openai --model_args model=<name>,base_url=http://127.0.0.1:8000/v1,api_key=EMPTY \\
        --tasks bspatial_vqa --include_path "$(python -m bspatial.evaluation.lmms_eval_tasks)" --log_samples ...

Tasks, one per config of the suite's Hub repo:

* ``bspatial_vqa/`` (tag ``bspatial_vqa`` runs all four): ``bspatial_vqa_<config>`` for the configs of
  :data:`VQA_CONFIGS`, loading ``behavior-spatial/vqa``;
* ``bspatial_ir/``: ``bspatial_ir_all`` (config ``all``, the Table 2 IR column) and ``bspatial_ir_<task>`` for
  each task of :data:`IR_TASKS` (tag ``bspatial_ir_tasks`` runs those 14, each query once), loading
  ``behavior-spatial/ir``. ``all`` overlaps the per-task configs, so no tag holds both.

Not the ``episode_aligned`` configs (``bspatial build --preset aligned``): their use is the per-episode join with
rollouts, which reads ``bspatial eval-vlm``'s per-item logs (``bspatial analyze join``); an lmms-eval run of them
could not be joined.

:func:`write_local_tasks` writes task files for a local copy of a repo (e.g. a ``bspatial build`` output)
that include the shipped ones and change only ``dataset_path``. This module imports nothing beyond the standard library and
``bspatial.common``, so it runs in either environment.
"""

from __future__ import annotations

import json
from pathlib import Path

from bspatial.common.files import atomic_write_text

TASKS_ROOT = Path(__file__).resolve().parent
VQA_TASK_DIR = TASKS_ROOT / "bspatial_vqa"
VQA_TAG = "bspatial_vqa"
# The VQA repo's configs (datasets/bspatial_vqa), one lmms-eval task each.
VQA_CONFIGS = ("general_single_frame", "general_multi_frame", "task_manipulation", "task_navigation")
IR_TASK_DIR = TASKS_ROOT / "bspatial_ir"
IR_TAG = "bspatial_ir_tasks"
# The IR repo's per-task configs (datasets/bspatial_ir TASKS: Table S2's 14 evaluated manipulation tasks;
# tests pin the two equal). Written out because this module may import nothing but the standard library.
IR_TASKS = (
    "reach_food_item", "reach_item", "reach_plate", "reach_toys", "reach_dice", "reach_paperback_book",
    "reach_pizza_plate", "reach_soda_can", "reach_storage_box", "reach_tool", "reach_hardback",
    "place_carving_knife", "place_tupperware_in_fridge", "place_bowl_in_cabinet",
)
IR_CONFIGS = ("all", *IR_TASKS)
SUITE_CONFIGS: dict[str, tuple[str, ...]] = {"vqa": VQA_CONFIGS, "ir": IR_CONFIGS}
# What lmms-eval's API models put in place of a reply when a request failed or the token budget ran
# out (lmms_eval/models/chat/openai.py). Scoring it would count a transport failure as the model's
# answer; bspatial eval-vlm raises in that case, and so do the task hooks (no silent fallbacks).
LMMS_EVAL_FAILURE_MARKERS = ("[LMMS_EVAL_REQUEST_FAILED", "[LMMS_EVAL_BUDGET_EXCEEDED]")
LOCAL_TASKS_HEADER = (
    "# Written by `python -m bspatial.evaluation.lmms_eval_tasks --dataset-path ...`: the shipped task, reading\n"
    "# the local repo below. Regenerate rather than edit.\n"
)


def include_path() -> Path:
    """The folder to pass as lmms-eval's ``--include_path`` (it holds one task folder per suite)."""
    return TASKS_ROOT


def vqa_task_name(config: str) -> str:
    """``bspatial_vqa_<config>``; raises ValueError naming the known configs for any other.

    Example:
        >>> vqa_task_name("task_manipulation")
        'bspatial_vqa_task_manipulation'
    """
    if config not in VQA_CONFIGS:
        raise ValueError(f"config must be one of {list(VQA_CONFIGS)}, got {config!r}")
    return f"{VQA_TAG}_{config}"


def vqa_task_file(config: str) -> Path:
    """The shipped task file of one config."""
    return VQA_TASK_DIR / f"{vqa_task_name(config)}.yaml"


def ir_task_name(config: str) -> str:
    """``bspatial_ir_<config>`` (``all`` or a task); raises ValueError naming the known configs for any other.

    Example:
        >>> ir_task_name("all"), ir_task_name("reach_dice")
        ('bspatial_ir_all', 'bspatial_ir_reach_dice')
    """
    if config not in IR_CONFIGS:
        raise ValueError(f"config must be one of {list(IR_CONFIGS)}, got {config!r}")
    return f"bspatial_ir_{config}"


def ir_task_file(config: str) -> Path:
    """The shipped task file of one IR config."""
    return IR_TASK_DIR / f"{ir_task_name(config)}.yaml"


_TASK_FILE = {"vqa": vqa_task_file, "ir": ir_task_file}
_TASK_NAME = {"vqa": vqa_task_name, "ir": ir_task_name}


def write_local_tasks(dataset_path: str | Path, out: str | Path, suite: str = "vqa") -> list[str]:
    """Write one task file per config present in a local repo of ``suite`` into ``out``; returns the task names.

    Each file includes the shipped task file by absolute path and overrides ``dataset_path``, so prompt,
    parser and metrics stay the shipped ones. Pass ``out`` (not :func:`include_path`) as
    ``--include_path``: the task names are the shipped ones, and lmms-eval keeps one file per name.

    Raises:
        ValueError: ``suite`` is not ``vqa`` / ``ir``, ``dataset_path`` is not a folder, or holds none of
            the suite's configs.
    """
    if suite not in SUITE_CONFIGS:
        raise ValueError(f"suite must be one of {list(SUITE_CONFIGS)}, got {suite!r}")
    configs = SUITE_CONFIGS[suite]
    dataset = Path(dataset_path).expanduser().resolve()
    if not dataset.is_dir():
        raise ValueError(f"dataset_path must be a local {suite.upper()} repo folder, got {str(dataset_path)!r} (not a folder)")
    present = [c for c in configs if (dataset / c).is_dir()]
    if not present:
        raise ValueError(f"dataset_path {str(dataset)!r} holds none of the configs {list(configs)} "
                         f"(one folder per config, as `bspatial build` writes)")
    out = Path(out).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    for config in present:
        shipped = _TASK_FILE[suite](config)
        text = f"{LOCAL_TASKS_HEADER}include: {_quoted(shipped)}\ndataset_path: {_quoted(dataset)}\n"
        atomic_write_text(out / shipped.name, text)
    return [_TASK_NAME[suite](c) for c in present]


def _quoted(path: Path) -> str:
    return json.dumps(str(path))  # a JSON string is a YAML string, whatever the path holds


__all__ = ["IR_CONFIGS", "IR_TAG", "IR_TASKS", "IR_TASK_DIR", "LMMS_EVAL_FAILURE_MARKERS", "SUITE_CONFIGS",
           "TASKS_ROOT", "VQA_CONFIGS", "VQA_TAG", "VQA_TASK_DIR", "include_path", "ir_task_file", "ir_task_name",
           "vqa_task_file", "vqa_task_name", "write_local_tasks"]
