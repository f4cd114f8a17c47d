"""A small fixture benchmark with the suites' schema, written as Hub-shaped parquet repos.

The tests and ``make demo`` evaluate this fixture (it needs no benchmark build). It covers every
setting and prompt variant the harness handles:

* ``vqa/general``: single-frame direction (object-, robot-arm-relative, locate), distance
  (object-, camera-, robot-arm-relative) and size; multi-frame rotation and navigation.
* ``vqa/task_manipulation``: four tasks of Table S2 (direction incl. locate and ordinal, distance, size).
* ``vqa/task_navigation``: two navigation tasks, 4 context frames + the current view.
* ``ir/all``: reach queries (RLE masks via ``bspatial.scoring.masks.rle_encode``), one
  directional placement and one container placement ("layer" instruction) region spec.

Layout of each repo: ``README.md`` with a ``configs:`` YAML header and
``<config>/test-00000-of-00001.parquet``, images embedded as PNG bytes (``datasets.Image``), so
``datasets.load_dataset(<repo dir>, <config>)`` reads it offline.

Example:
    >>> import tempfile
    >>> repos = write_fixture_repos(tempfile.mkdtemp())
    >>> sorted(repos), sorted(FIXTURE_CONFIGS["vqa"])
    (['ir', 'vqa'], ['general', 'task_manipulation', 'task_navigation'])
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from bspatial.construction.items.records import IRRecord, VQARecord
from bspatial.evaluation.vlm.records import features
from bspatial.scoring.masks import rle_encode

SPLIT = "test"
IMAGE_SIZE = (64, 64)  # (width, height) of every fixture frame
# The fixture's "general" config mixes single- and multi-frame items so one small run covers every
# prompt path; built suites split them into general_single_frame / general_multi_frame.
FIXTURE_CONFIGS: dict[str, tuple[str, ...]] = {
    "vqa": ("general", "task_manipulation", "task_navigation"),
    "ir": ("all",),
}
_DIRECTIONS = ["front-left", "front-right", "back-left", "back-right"]
_SIDES = ["left", "right", "above", "behind"]
_OBJECTS = ["mug", "bowl", "plate", "apple"]
_GRID = ["1x1", "1x2", "2x1", "2x2"]

# (setting, category, subtype, frames, question, options) per general-VQA cell; 3 items each.
_GENERAL: list[tuple[str, str, str, int, str, list[str]]] = [
    ("single_frame", "direction", "object_relative", 1, "Where is the mug relative to the bowl?", _SIDES),
    ("single_frame", "direction", "robot_arm_relative", 1, "Where is the apple relative to the robot's left arm?", _DIRECTIONS),
    ("single_frame", "direction", "locate", 1, "Where is the book located on the bookcase?", _GRID),
    ("single_frame", "distance", "object_relative", 1, "Which object is closest to the sink?", _OBJECTS),
    ("single_frame", "distance", "camera_relative", 1, "Which object is closest to the camera?", _OBJECTS),
    ("single_frame", "distance", "robot_arm_relative", 1, "Which object is closest to the robot's right hand?", _OBJECTS),
    ("single_frame", "size", "object_relative", 1, "Which object is the largest?", _OBJECTS),
    ("multi_frame_rotation", "direction", "object_relative", 3, "Where is the fridge relative to the table?", _SIDES),
    ("multi_frame_rotation", "distance", "camera_relative", 3, "Which object is closest to the camera in the last frame?", _OBJECTS),
    ("multi_frame_navigation", "direction", "object_relative", 4, "Where is the sofa relative to the lamp?", _SIDES),
    ("multi_frame_navigation", "size", "object_relative", 4, "Which object is the largest?", _OBJECTS),
]
# (task, category, subtype, variant, question, options) for task-grounded manipulation; 3 items each.
_TASK_MANIPULATION: list[tuple[str, str, str, str, str, list[str]]] = [
    ("reach_dice", "distance", "object_relative", "closest x board game", "Which dice is closest to the board game?", ["dice 1", "dice 2", "dice 3", "dice 4"]),
    ("reach_hardback", "direction", "locate", "2x2", "Where is the hardback book located on the bookcase?", _GRID),
    ("reach_tool", "direction", "ordinal", "2nd leftmost", "Which tool is the second leftmost on the countertop?", ["hammer", "wrench", "pliers", "screwdriver"]),
    ("reach_food_item", "size", "object_relative", "largest", "Which food item on the chopping board is the largest?", ["carrot", "onion", "pepper", "lemon"]),
]
_TASK_NAVIGATION = [("move_to_fridge", "Move to the fridge."), ("move_to_bar", "Move to the bar.")]
_PLACEMENT_INSTRUCTIONS = {
    "place_carving_knife": "Place the carving knife on the countertop and to the right of the cutting board.",
    "place_tupperware_in_fridge": "Place the tupperware in the layer 5 of the fridge.",
}


def write_fixture_repos(root: str | Path, malformed: bool = False) -> dict[str, Path]:
    """Write the ``vqa`` and ``ir`` fixture repos under ``root``; returns ``{suite: repo dir}``.

    Args:
        root: folder to write ``vqa/`` and ``ir/`` into (created if needed).
        malformed: also write one malformed row per suite (a VQA answer ``"E"`` in ``general``,
            an IR region that is not JSON), to exercise ``errors.jsonl``.
    """
    root = Path(root)
    rng = np.random.default_rng(0)
    rows = {
        ("vqa", "general"): _general_rows(rng),
        ("vqa", "task_manipulation"): _task_manipulation_rows(rng),
        ("vqa", "task_navigation"): _task_navigation_rows(rng),
        ("ir", "all"): _ir_rows(rng),
    }
    if malformed:
        bad = dict(rows[("vqa", "general")][0], id="bad_answer_letter", answer="E")
        rows[("vqa", "general")].insert(2, bad)
        rows[("ir", "all")].insert(1, dict(rows[("ir", "all")][0], id="bad_region_json", region="{not json"))
    repos = {}
    for suite, configs in FIXTURE_CONFIGS.items():
        repo = root / suite
        for config in configs:
            write_parquet_config(repo, suite, config, rows[(suite, config)])
        write_readme(repo, configs)
        repos[suite] = repo
    return repos


def write_parquet_config(repo: Path, suite: str, config: str, rows: list[dict[str, Any]], split: str = SPLIT) -> Path:
    """Write one config's split as ``<config>/<split>-00000-of-00001.parquet`` with the suite's features."""
    import datasets
    import pyarrow.parquet as pq

    columns = {name: [row[name] for row in rows] for name in features(suite)}
    path = Path(repo) / config / f"{split}-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    # The Arrow table carries the features in its schema metadata, so the parquet file reads back
    # with datasets.Image columns; images are already embedded bytes.
    table = datasets.Dataset.from_dict(columns, features=features(suite)).data.table
    pq.write_table(table, path)
    return path


def write_readme(repo: Path, configs: tuple[str, ...], split: str = SPLIT) -> None:
    """The ``configs:`` YAML header that maps each config to its parquet file."""
    lines = ["---", "configs:"]
    for config in configs:
        lines += [
            f"- config_name: {config}",
            "  data_files:",
            f"  - split: {split}",
            f"    path: {config}/{split}-00000-of-00001.parquet",
        ]
    lines += ["---", "", f"# BEHAVIOR-Spatial fixture ({Path(repo).name})", "", "A small test fixture with the suite's schema.", ""]
    (Path(repo) / "README.md").write_text("\n".join(lines))


# --------------------------------------------------------------------------- rows


def _png(rng: np.random.Generator) -> bytes:
    from PIL import Image

    width, height = IMAGE_SIZE
    pixels = rng.integers(0, 256, size=(height // 8, width // 8, 3), dtype=np.uint8).repeat(8, 0).repeat(8, 1)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def _embedded(data: bytes) -> dict[str, Any]:
    """A ``datasets.Image`` value that carries its bytes (the parquet repo points nowhere)."""
    return {"bytes": data, "path": None}


def _vqa_row(rng, item_id, setting, category, subtype, frames, question, options, task=None, variant=None) -> dict:
    images = tuple(_png(rng) for _ in range(frames))
    answer = "ABCD"[int(rng.integers(4))]
    row = VQARecord(item_id, setting, category, subtype, images, question, tuple(options), answer, task=task,
                    variant=variant).to_row()
    return {**row, "frames": [_embedded(data) for data in row["frames"]]}


def _general_rows(rng) -> list[dict]:
    return [
        _vqa_row(rng, f"{setting}-{subtype}-{category}-{k}", setting, category, subtype, frames, question, options)
        for setting, category, subtype, frames, question, options in _GENERAL
        for k in range(3)
    ]


def _task_manipulation_rows(rng) -> list[dict]:
    return [
        _vqa_row(rng, f"{task}-{k}", "task_manipulation", category, subtype, 1, question, options, task, variant)
        for task, category, subtype, variant, question, options in _TASK_MANIPULATION
        for k in range(3)
    ]


def _task_navigation_rows(rng) -> list[dict]:
    question = "You are asked to: {}. In which direction is the target relative to the robot?"
    return [
        _vqa_row(rng, f"{task}-{k}", "task_navigation", "direction", "camera_relative", 5, question.format(instr.rstrip(".").lower()), _DIRECTIONS, task)
        for task, instr in _TASK_NAVIGATION
        for k in range(3)
    ]


def _ir_rows(rng) -> list[dict]:
    width, height = IMAGE_SIZE
    rows = []
    for task, instruction in (
        ("reach_dice", "Reach the dice closest to the board game on the bed."),
        ("reach_hardback", "Reach the hardback book at the 2x2 grid of the bookcase."),
    ):
        for k in range(3):
            target = np.zeros((height, width), dtype=bool)
            distractor = np.zeros_like(target)
            target[8 + 4 * k : 24 + 4 * k, 8:28] = True
            distractor[36:52, 36:56] = True
            region = {
                "kind": "reach",
                "task": task,
                "image_size": [width, height],
                "targets": [rle_encode(target)],
                "distractors": [rle_encode(distractor)],
            }
            rows.append(_ir_row(rng, f"{task}-{k}", task, instruction, region))
    camera = _downward_camera()
    directional = {
        "kind": "directional_placement",
        "task": "place_carving_knife",
        "image_size": [width, height],
        **camera,
        "countertop": {"height": 0.9, "center": [0.0, 0.0], "half_extents": [1.0, 1.0]},
        "reference_center": [0.0, 0.0, 0.9],
        "robot_right": [1.0, 0.0],
        "side": "right",
    }
    container = {
        "kind": "container_placement",
        "task": "place_tupperware_in_fridge",
        "image_size": [width, height],
        **camera,
        "container": {"center": [0.0, 0.0, 0.5], "half_extents": [0.3, 0.3, 0.5]},
        "compartments": [[0.0, 0.3], [0.35, 0.65], [0.7, 1.0]],
        "instructed_compartment": 2,
    }
    for region in (directional, container):
        task = region["task"]
        rows.append(_ir_row(rng, f"{task}-0", task, _PLACEMENT_INSTRUCTIONS[task], region))
    return rows


def _ir_row(rng, item_id: str, task: str, instruction: str, region: dict) -> dict:
    row = IRRecord(item_id, task, instruction, _png(rng), region).to_row()
    return {**row, "image": _embedded(row["image"])}


def _downward_camera() -> dict[str, list]:
    """A 90-degree camera 1.5 m above the origin looking straight down (OpenCV axes)."""
    width, height = IMAGE_SIZE
    focal = (height / 2) / np.tan(np.radians(90) / 2)  # pinhole: fx = fy = (H/2) / tan(fovy/2)
    K = [[focal, 0.0, width / 2], [0.0, focal, height / 2], [0.0, 0.0, 1.0]]
    T = [[1.0, 0.0, 0.0, 0.0], [0.0, -1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 1.5], [0.0, 0.0, 0.0, 1.0]]
    return {"K": K, "T_world_cam": T}
