"""The paper's question counts (Table S1, Section 3.3); presets and reports check against them."""

from __future__ import annotations

# General VQA, single-frame (Table S1). Table 1's "Dir." column includes the locate subtype.
SINGLE_FRAME_COUNTS: dict[tuple[str, str], int] = {
    ("direction", "object_relative"): 150,
    ("direction", "robot_arm_relative"): 150,
    ("direction", "locate"): 300,
    ("distance", "object_relative"): 143,
    ("distance", "camera_relative"): 143,
    ("distance", "robot_arm_relative"): 53,
    ("size", "object_relative"): 139,
}
# General VQA, multi-frame (Table S1): category totals over rotation and navigation sequences.
MULTI_FRAME_CATEGORY_COUNTS: dict[str, int] = {"direction": 401, "distance": 77, "size": 16}
TASK_MANIPULATION_VQA = 1_082  # Section 3.3
TASK_NAVIGATION_VQA = 602  # Section 3.3
GENERAL_ACTIVITIES = 49  # BEHAVIOR activities behind general VQA (Section 3.3)
IR_QUERIES = 1_240  # over the 14 evaluated manipulation tasks

SINGLE_FRAME_TOTAL = sum(SINGLE_FRAME_COUNTS.values())  # 1,078
MULTI_FRAME_TOTAL = sum(MULTI_FRAME_CATEGORY_COUNTS.values())  # 494
VQA_TOTAL = SINGLE_FRAME_TOTAL + MULTI_FRAME_TOTAL + TASK_MANIPULATION_VQA + TASK_NAVIGATION_VQA  # 3,256

# General VQA, multi-frame, as record keys: Table S1's multi-frame questions are about rooms ("measuring
# from room centers"); the records' subtype vocabulary has no room subtype, so they are object_relative.
MULTI_FRAME_COUNTS: dict[tuple[str, str], int] = {(c, "object_relative"): n for c, n in MULTI_FRAME_CATEGORY_COUNTS.items()}


def split_evenly(total: int, tasks: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """``total`` spread over ``tasks`` as evenly as integers allow, the remainder to the first tasks.

    The paper gives suite totals but no per-task question counts for task-grounded VQA and IR
    (Section 3.3: "balanced across instruction variants within each task"); we balance across tasks too.

    Example:
        >>> split_evenly(7, ("a", "b", "c"))
        (('a', 3), ('b', 2), ('c', 2))
    """
    if not tasks:
        raise ValueError("tasks must name at least one task, got none")
    if total < 0:
        raise ValueError(f"total must be >= 0, got {total}")
    base, extra = divmod(total, len(tasks))
    return tuple((task, base + (i < extra)) for i, task in enumerate(tasks))
