"""Which items share content: the cluster key of an item, read from its id.

A run's per-sample log carries the item id, not the record's metadata, so the key is read from the ids
``bspatial build`` writes (:mod:`bspatial.construction`); logs written before this module exist keep working.
The unit is the broadest one whose items share what they show (nested units are covered by it):

* ``gs-`` / ``gm-`` (general VQA): the apartment ``{activity}-l{layout}`` (the records' ``metadata["scene"]``,
  :func:`bspatial.construction.questions.general.scene_id`). Several questions are asked of one frame and several frames
  of one apartment (its objects, its rooms); frames nest in it. The paper preset has 49 x 3 apartments.
* ``tn-`` (task navigation): the spawn ``{task}-{draw}``; up to ``QUESTIONS_PER_SPAWN`` (6) questions along one
  spawn's route share its instance.
* ``tm-`` / ``ir-`` (task manipulation VQA, IR): the item itself. Each draws its own layout and asks one
  question (or one query) of it; the task is a fixed stratum of Appendix 14's task mean, not a cluster.
* ``ep-`` (episode-aligned items, :func:`bspatial.construction.splits.aligned_item_id`): the item itself. One item
  per episode and suite, each episode its own scene seed.
* any other id: the item itself, with a warning: nothing is known of its structure, so its interval assumes
  independent items (its cluster count, equal to its item count, says so).

Not clustered on: navigation's context tour, shared by every question of a floor plan (5 plans: too few
clusters for a cluster-robust variance), and general VQA's activity across its 3 layouts (different
apartments).

Example:
    >>> cluster_key("gs-make_fried_rice-l2-v4-01"), cluster_key("tn-move_to_garage-0a1b2c3d-007")
    ('make_fried_rice-l2', 'move_to_garage-0a1b2c3d')
    >>> cluster_key("tm-reach_plate-2nd_largest-19cecd25"), cluster_key("ep-held_out-reach_plate-0003")
    ('tm-reach_plate-2nd_largest-19cecd25', 'ep-held_out-reach_plate-0003')
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from bspatial.construction.splits import aligned_episode_key

logger = logging.getLogger(__name__)

# General VQA: ``{gs|gm}-{activity}-l{layout}-{v|s|r|n}{index}-{question:02d}`` (construction/questions/general.py).
_GENERAL = re.compile(r"g[sm]-(?P<cluster>[A-Za-z0-9_]+-l\d+)-[vsrn]\d+-\d+")
# Task navigation: ``tn-{task}-{draw:08x}-{question:03d}`` (construction/questions/navigation_vqa.py).
_NAVIGATION = re.compile(r"tn-(?P<cluster>[A-Za-z0-9_]+-[0-9a-f]{8})-\d+")
# Task manipulation VQA and IR: ``{tm|ir}-{task}-{variant slug}-{draw:08x}`` (construction/publishing/task_records.py).
_SINGLE_DRAW = re.compile(r"(tm|ir)-[A-Za-z0-9_]+-[a-z0-9_]*-[0-9a-f]{8}")


def known_cluster_key(item_id: str) -> str | None:
    """The item's cluster key under the builders' id formats (module docstring), or None for another id."""
    for pattern in (_GENERAL, _NAVIGATION):
        match = pattern.fullmatch(item_id)
        if match:
            return match["cluster"]
    return item_id if _SINGLE_DRAW.fullmatch(item_id) or aligned_episode_key(item_id) is not None else None


def cluster_key(item_id: str) -> str:
    """:func:`known_cluster_key`, or the id itself (its own cluster) for an id of no known format."""
    key = known_cluster_key(item_id)
    return item_id if key is None else key


def cluster_keys(item_ids: Sequence[str]) -> list[str]:
    """Every item's :func:`cluster_key`; logs a warning naming how many ids have no known format."""
    keys = [known_cluster_key(i) for i in item_ids]
    unknown = [i for i, k in zip(item_ids, keys) if k is None]
    if unknown:
        logger.warning("%d of %d item ids (e.g. %r) match no bspatial build id format; each is its own cluster, so "
                       "their intervals assume independent items", len(unknown), len(item_ids), unknown[0])
    return [i if k is None else k for i, k in zip(item_ids, keys)]
