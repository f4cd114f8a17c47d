"""How much a build makes: the named presets (tiny for tests, mini for the demo, paper for the paper's counts).

One explicit list (:data:`PRESETS`); unknown names raise an error listing the known ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from bspatial.catalog.counts import (IR_QUERIES, MULTI_FRAME_COUNTS, SINGLE_FRAME_COUNTS, TASK_MANIPULATION_VQA,
                                     TASK_NAVIGATION_VQA, split_evenly)
from bspatial.catalog.tasks import MANIPULATION_EVAL_TASKS, NAVIGATION_TASKS, TASKS
from bspatial.common.registry import by_name, lookup
from bspatial.construction.questions.general import GeneralPlan
from bspatial.construction.splits import ALIGNED_SPLITS


BUILD_SCHEMA_VERSION = 3
"""Bumped when records change meaning; part of the build fingerprint in the dataset cards."""


@dataclass(frozen=True)
class Preset:
    """How much to build.

    Attributes:
        name: preset name.
        tasks: manipulation tasks to build.
        vqa_per_task / ir_per_task: task-grounded manipulation questions / IR queries per task: one
            number for every task, or ``((task, n), ...)`` pairs (the paper preset's exact totals).
        max_draws_per_variant: instance draws per variant before the preset counts as unmeetable.
        general: the general-VQA plan (configs ``general_single_frame`` / ``general_multi_frame``), or None.
        navigation_per_task: task-grounded navigation questions (config ``task_navigation``) per navigation
            task, as for ``vqa_per_task``; 0 builds none.
        vqa_choice: task-grounded questions drawn per question kept (first round): the kept ones are a
            prior-balanced pick (:mod:`~bspatial.construction.quality.debias`) with each variant's count unchanged.
        aligned_splits: manipulation splits whose episodes (of ``tasks``) get their own IR query and task VQA item
            (config ``episode_aligned``, :mod:`~bspatial.construction.publishing.aligned_records`); () builds none.
        aligned_limit: at most this many episodes per task and split (the first of the manifest), or None for all.
    """

    name: str
    tasks: tuple[str, ...]
    vqa_per_task: int | tuple[tuple[str, int], ...]
    ir_per_task: int | tuple[tuple[str, int], ...]
    max_draws_per_variant: int = 8
    general: GeneralPlan | None = None
    navigation_per_task: int | tuple[tuple[str, int], ...] = 0
    vqa_choice: int = 1
    aligned_splits: tuple[str, ...] = ()
    aligned_limit: int | None = None

    def __post_init__(self) -> None:
        bad_splits = [s for s in self.aligned_splits if s not in ALIGNED_SPLITS]
        if bad_splits:
            raise ValueError(f"preset {self.name!r}: aligned_splits must be among {ALIGNED_SPLITS}, got {bad_splits}")
        if self.aligned_limit is not None and (isinstance(self.aligned_limit, bool)
                                               or not isinstance(self.aligned_limit, int) or self.aligned_limit < 1):
            raise ValueError(f"preset {self.name!r}: aligned_limit must be an int >= 1 or None, "
                             f"got {self.aligned_limit!r}")
        unknown = [t for t in self.tasks if t not in TASKS]
        if unknown:
            raise ValueError(f"preset {self.name!r}: unknown tasks {unknown}")
        if self.vqa_choice < 1:
            raise ValueError(f"preset {self.name!r}: vqa_choice must be >= 1, got {self.vqa_choice}")
        if self.max_draws_per_variant < 0:
            raise ValueError(f"preset {self.name!r}: max_draws_per_variant must be >= 0, "
                             f"got {self.max_draws_per_variant}")
        for field_name in ("vqa_per_task", "ir_per_task", "navigation_per_task"):
            value = getattr(self, field_name)
            counts = dict(value) if isinstance(value, tuple) else {"every task": value}
            bad = {t: n for t, n in counts.items() if not isinstance(n, int) or n < 0}
            if bad:
                raise ValueError(f"preset {self.name!r}: {field_name} must be >= 0, got {bad}")

    def count(self, field_name: str, task: str) -> int:
        """``field_name``'s number for ``task`` (0 for a task the pairs do not name)."""
        value = getattr(self, field_name)
        return dict(value).get(task, 0) if isinstance(value, tuple) else value


def _general_counts(n: int) -> tuple[tuple, tuple]:
    """``n`` questions for every general-VQA (category, subtype) of Table S1."""
    return tuple((k, n) for k in SINGLE_FRAME_COUNTS), tuple((k, n) for k in MULTI_FRAME_COUNTS)


PRESETS: tuple[Preset, ...] = (
    # Tests: one instance of each IR region kind and of the locate / direction templates; one general
    # question per Table S1 subtype from two activities.
    Preset("tiny", ("reach_plate", "reach_dice", "reach_tool", "reach_hardback", "place_carving_knife",
                    "place_tupperware_in_fridge"), 1, 1, 6,
           GeneralPlan(*_general_counts(1), activities=3, layouts=1, views=3, rotations=1, navigations=1),
           navigation_per_task=(("move_to_bookcase", 2),)),
    # make demo: every evaluated task, about two minutes on 2 cores. Two questions per task: the
    # container-locate question needs the placed object visible from the head camera, which most
    # bottom-cabinet layers are not (see the build report). General VQA: 3 per subtype.
    Preset("mini", MANIPULATION_EVAL_TASKS, 2, 4, 8,
           GeneralPlan(*_general_counts(3), activities=6, layouts=1, views=6, rotations=1, navigations=1),
           navigation_per_task=2),
    # The paper's counts exactly: general VQA (Table S1: 1,078 single-frame, 494 multi-frame over 49
    # activities), task-grounded manipulation 1,082 and navigation 602 questions, 1,240 IR queries
    # (Section 3.3), spread evenly over the tasks (paper_counts.split_evenly: no per-task table exists).
    Preset("paper", MANIPULATION_EVAL_TASKS, split_evenly(TASK_MANIPULATION_VQA, MANIPULATION_EVAL_TASKS),
           split_evenly(IR_QUERIES, MANIPULATION_EVAL_TASKS), 400,
           GeneralPlan(tuple(SINGLE_FRAME_COUNTS.items()), tuple(MULTI_FRAME_COUNTS.items()),
                       activities=49, layouts=3, views=6, rotations=2, navigations=1),
           navigation_per_task=split_evenly(TASK_NAVIGATION_VQA, NAVIGATION_TASKS), vqa_choice=2),
    # Issue 32 item 1: every held-out and prompt-probe episode's own IR query and task VQA item (config
    # episode_aligned), apart from the paper's counts (a separate build, so the paper build's bytes and time stay).
    Preset("aligned", MANIPULATION_EVAL_TASKS, 0, 0, 0, aligned_splits=ALIGNED_SPLITS),
)
_BY_NAME = by_name(PRESETS, "preset")


class PresetShortfall(RuntimeError):
    """A preset cannot be met: names the category and the shortfall."""


def get_preset(name: str | Preset) -> Preset:
    if isinstance(name, Preset):
        return name
    return lookup(_BY_NAME, name, "preset")
