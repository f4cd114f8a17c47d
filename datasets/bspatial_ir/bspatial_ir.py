"""BEHAVIOR-Spatial IR: point-grounding queries with region specs scored by ``bspatial_ir``.

A ``GeneratorBasedBuilder`` over the records ``bspatial build`` writes (``ir.jsonl`` plus PNG head
frames under ``data_dir``). Configs: ``all`` and one per evaluated manipulation task (Table S2), and
``episode_aligned`` (queries made from the rollout episodes themselves, ``bspatial build --preset aligned``).
Self-contained: imports only ``datasets`` and the standard library.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets

_DESCRIPTION = "BEHAVIOR-Spatial-IR: predict one point on the target object or placement region (paper Sec. 3.3)."
_CITATION = "@misc{behaviorspatial, title={BEHAVIOR-Spatial}}"
VERSION = datasets.Version("0.1.0")
SPLIT = "test"
RECORDS_FILE = "ir.jsonl"
# The 14 evaluated manipulation tasks (Table S2 without the training-only place_saucer).
TASKS = (
    "reach_food_item", "reach_item", "reach_plate", "reach_toys", "reach_dice", "reach_paperback_book",
    "reach_pizza_plate", "reach_soda_can", "reach_storage_box", "reach_tool", "reach_hardback",
    "place_carving_knife", "place_tupperware_in_fridge", "place_bowl_in_cabinet",
)


def ir_features() -> datasets.Features:
    """Harness columns (bspatial.evaluation.vlm.records) plus ``metadata`` JSON."""
    text = datasets.Value("string")
    return datasets.Features({
        **{c: text for c in ("id", "suite", "task", "variant", "instruction")},
        "image": datasets.Image(),
        "region": text,
        "metadata": text,
    })


def is_aligned(row: dict) -> bool:
    """Whether a record row is an episode-aligned query (its metadata names the episode it was made from)."""
    return "episode" in json.loads(row["metadata"])


class BspatialIRConfig(datasets.BuilderConfig):
    """``task`` None keeps every query (config ``all``); otherwise one task's queries. ``aligned`` selects the
    episode-aligned queries (``episode_aligned``) or the others (every other config)."""

    def __init__(self, *, task: str | None, aligned: bool = False, **kwargs):
        super().__init__(version=VERSION, **kwargs)
        self.task = task
        self.aligned = aligned


class BspatialIR(datasets.GeneratorBasedBuilder):
    BUILDER_CONFIG_CLASS = BspatialIRConfig
    BUILDER_CONFIGS = [BspatialIRConfig(name="all", task=None, description="All IR queries (Table 2 IR column).")] + [
        BspatialIRConfig(name=t, task=t, description=f"IR queries of {t}.") for t in TASKS
    ] + [BspatialIRConfig(name="episode_aligned", task=None, aligned=True,
                          description="IR queries made from the held-out and prompt-probe episodes themselves (their "
                                      "first head frame); the id names the episode (bspatial analyze join).")]
    DEFAULT_CONFIG_NAME = "all"

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=_DESCRIPTION, features=ir_features(), citation=_CITATION)

    def _split_generators(self, dl_manager):
        if not self.config.data_dir:
            raise ValueError("data_dir must be the records folder written by `bspatial build`, got None")
        return [datasets.SplitGenerator(name=SPLIT, gen_kwargs={"root": Path(self.config.data_dir)})]

    def _generate_examples(self, root: Path):
        with open(root / RECORDS_FILE, encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                if (self.config.task is not None and row["task"] != self.config.task) \
                        or is_aligned(row) != self.config.aligned:
                    continue
                row["image"] = {"bytes": (root / row["image"]).read_bytes(), "path": None}
                yield row["id"], row
