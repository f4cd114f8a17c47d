"""BEHAVIOR-Spatial VQA: four-option spatial questions over rendered household scenes.

A ``GeneratorBasedBuilder`` over the records ``bspatial build`` writes (``vqa.jsonl`` plus PNG / JPEG
frames under ``data_dir``). Self-contained (imports only ``datasets`` and the standard library) so
it can travel with the Hub repo. Configs follow the paper's subsets: ``general_single_frame`` (Table 1
single-frame: one 720x720 frame per question), ``general_multi_frame`` (Table 1 multi-frame: four
rotation frames, oldest first), ``task_manipulation`` (Table 2), ``task_navigation`` (a context
tour of the environment, then the robot's current view, last) and ``episode_aligned`` (task-grounded questions
made from the rollout episodes themselves, ``bspatial build --preset aligned``).

Every config has the harness's columns (``bspatial.evaluation.vlm.records``): ``frames`` is a list of
images in every config (length 1 for single-frame ones), so one reader serves all settings.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets

_DESCRIPTION = "BEHAVIOR-Spatial-VQA: direction, distance and size questions with four options (paper Sec. 3.3)."
_CITATION = "@misc{behaviorspatial, title={BEHAVIOR-Spatial}}"
VERSION = datasets.Version("0.1.0")
SPLIT = "test"
RECORDS_FILE = "vqa.jsonl"


def vqa_features() -> datasets.Features:
    """Harness columns (bspatial.evaluation.vlm.records) plus ``metadata``: JSON needed to re-score."""
    text = datasets.Value("string")
    return datasets.Features({
        **{c: text for c in ("id", "suite", "setting", "category", "subtype", "task", "variant")},
        "frames": datasets.List(datasets.Image()),
        "question": text,
        "options": datasets.List(text),
        "answer": text,
        "metadata": text,
    })


def is_aligned(row: dict) -> bool:
    """Whether a record row is an episode-aligned item (its metadata names the episode it was made from)."""
    return "episode" in json.loads(row["metadata"])


class BspatialVQAConfig(datasets.BuilderConfig):
    """One VQA subset; ``settings`` select the records of those observation settings, ``aligned`` the
    episode-aligned items (``episode_aligned``) or the others (every other config)."""

    def __init__(self, *, settings: tuple[str, ...], aligned: bool = False, **kwargs):
        super().__init__(version=VERSION, **kwargs)
        self.settings = tuple(settings)
        self.aligned = aligned


class BspatialVQA(datasets.GeneratorBasedBuilder):
    BUILDER_CONFIG_CLASS = BspatialVQAConfig
    BUILDER_CONFIGS = [
        BspatialVQAConfig(name="general_single_frame", settings=("single_frame",),
                          description="General single-frame questions over 49 BEHAVIOR activities (Table S1)."),
        BspatialVQAConfig(name="general_multi_frame", settings=("multi_frame_rotation", "multi_frame_navigation"),
                          description="General multi-frame questions: four rotation frames covering 360 degrees (Table S1)."),
        BspatialVQAConfig(name="task_manipulation", settings=("task_manipulation",),
                          description="Task-grounded manipulation questions (Table 2)."),
        BspatialVQAConfig(name="task_navigation", settings=("task_navigation",),
                          description="Task-grounded navigation questions: a context tour, then the current view "
                                      "(Appendix 15.1; Table S11's VQA column)."),
        BspatialVQAConfig(name="episode_aligned", settings=("task_manipulation",), aligned=True,
                          description="Task-grounded manipulation questions made from the held-out and prompt-probe "
                                      "episodes themselves (their first head frame), one per episode where it "
                                      "qualifies; the id names the episode (bspatial analyze join)."),
    ]
    DEFAULT_CONFIG_NAME = "task_manipulation"

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=_DESCRIPTION, features=vqa_features(), citation=_CITATION)

    def _split_generators(self, dl_manager):
        if not self.config.data_dir:
            raise ValueError("data_dir must be the records folder written by `bspatial build`, got None")
        return [datasets.SplitGenerator(name=SPLIT, gen_kwargs={"root": Path(self.config.data_dir)})]

    def _generate_examples(self, root: Path):
        with open(root / RECORDS_FILE, encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                if row["setting"] not in self.config.settings or is_aligned(row) != self.config.aligned:
                    continue
                # Embed bytes (not paths): the parquet repo must not point into the build folder.
                row["frames"] = [{"bytes": (root / p).read_bytes(), "path": None} for p in row["frames"]]
                yield row["id"], row


def config_of_row(row: dict) -> str:
    """The config a record row belongs to (each row belongs to exactly one)."""
    if is_aligned(row):
        return "episode_aligned"
    return next(c.name for c in BspatialVQA.BUILDER_CONFIGS if row["setting"] in c.settings and not c.aligned)
