"""Evaluation split manifests (Sec. 4.3 "Held-out & Prompt-probe evaluation", Appendix 13.4, Table S2).

Four splits, each a deterministic function of a build seed:

* ``training``: the configurations (task, instruction variant, scene seed) demonstrations are recorded
  on; :func:`bspatial.construction.demonstrations.demos.record_demos` walks them in order.
* ``held_out`` (Table S2 n per task, 469 in all): unseen scene configurations, each paired with the
  instruction variant that *reverses* the relation of a training variant (Sec. 4.3: "unseen instruction
  variants that reverse the spatial relation used during training").
* ``prompt_probe`` (50 per evaluated manipulation task, 700 in all): training configurations with an
  instruction variant whose geometric target differs from the training demo's target (Sec. 4.3:
  "retains scene configurations used during training but changes the instruction to specify a
  different valid target").
* ``navigation`` (40 per navigation task, 41 for move_to_table_near_sofa, 401 in all): held-out spawn
  seeds (Appendix 13.4), each resolved to a validated spawn by
  :func:`bspatial.tasks.navigation.sample_validated_instance`.
* ``spa_id`` / ``spa_ood`` (Spa-Bench's ID / OOD protocol: 20 / 50 per task with a withheld cell):
  unseen configurations with an in-distribution variant, or with a withheld concept-argument cell
  (:data:`bspatial.tasks.conditions.WITHHELD_CELLS`). A policy for this study trains on
  :func:`spa_training_entry` configurations (``bspatial demos --spa-withheld``), which never use a
  withheld cell.

**Variant partition (ours; the paper names the rule, not the assignment).** Every variant is paired
with its reversal (:func:`reverse_variant`). Pairs are taken in Table S2's variant order and alternate
which member is trained on (pair 0 trains its first member, pair 1 its second, ...), so both relation
words of a task appear in training (largest and 2nd smallest; closest/folder and farthest/pencil case)
while every held-out variant stays unseen. Variants that are their own reversal (the median "3rd
largest" of five toys; the middle layer 5 of the fridge's 4-6 and 3 of the cabinet's 1-5) are
training-only: they cannot be both reversed and unseen. The training-only place_saucer trains on all
its variants. Reversal for locate variants: bookcase cells mirror their column (``RxC`` <-> ``Rx(3-C)``,
the left/right reversal of the grid), container layers mirror within the task's layer range
(fridge 4 <-> 6, cabinet 1 <-> 5 and 2 <-> 4).

**Seeds and disjointness.** Entry ``i`` of a split uses :func:`split_seed`: 61 bits drawn from
``SeedSequence([seed, crc32(task), split stream, i])``, tagged in bits 61-62 with the split's code
(:data:`SEED_SPLIT_CODE`): training seeds lie in ``[0, 2**61)``, held-out in ``[2**61, 2**62)``,
navigation in ``[2**62, 2**62 + 2**61)``. Held-out and navigation seeds can therefore never equal a
training seed, under any build seed and any number of training entries, and every seed still fits
an int64 (parquet, numpy). Prompt-probe entries reuse training seeds by definition.

**Planning needs no simulator.** Training and navigation entries are pure seed arithmetic. Held-out
entries sample the instance (:func:`bspatial.tasks.sample_instance`: layout geometry only, 10-60 ms,
no physics) and skip the rare seed whose layout cannot meet its margins. A prompt probe samples the
training instance and candidate probe variants on the same seed, and keeps the first candidate whose
scene is identical (same pickled :class:`~bspatial.world.spec.SceneSpec`: a generator may redraw a
layout for one variant and not another) and whose target differs (reach: the instructed candidate;
placement: the goal side / layer). ``sample_instance(task, probe_variant, seed)`` then reproduces the
training scene with the probe instruction, so a rollout needs no extra API.

Example:
    >>> [e.variant for e in split_episodes("held_out", ["reach_tool"])[:2]]
    ['2nd leftmost', 'rightmost']
    >>> reverse_variant("reach_dice", "closest/wall")
    'farthest/wall'
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import os
import pickle
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from bspatial.common.files import atomic_write_text
from bspatial.common.seeds import derive_seed
from bspatial.catalog.tasks import (MANIPULATION_EVAL_TASKS, N_HELDOUT_TOTAL, N_NAVIGATION_TOTAL,
                                         N_PROMPT_PROBE_TOTAL, NAVIGATION_TASKS, TASKS, VARIANT_SEPARATOR,
                                         canonical_task_name)

logger = logging.getLogger(__name__)

SPLITS: tuple[str, ...] = ("training", "held_out", "prompt_probe", "navigation", "spa_id", "spa_ood")
"""Manifest names, in the order :func:`write_manifests` writes them."""
TRACE_SPLIT: dict[str, str] = {"training": "train", "held_out": "held_out", "prompt_probe": "prompt_probe",
                               "navigation": "held_out", "spa_id": "held_out", "spa_ood": "held_out"}
"""The :data:`bspatial.scoring.trace.SPLITS` value an episode of each manifest is recorded under
(navigation instances are held-out instances, Appendix 13.4)."""
SPLIT_TOTALS: dict[str, int] = {"held_out": N_HELDOUT_TOTAL, "prompt_probe": N_PROMPT_PROBE_TOTAL,
                                "navigation": N_NAVIGATION_TOTAL}
"""Sec. 4.3 / Table S2 / Table S11 totals; the planner checks its output against them."""

DEFAULT_BUILD_SEED = 0
DEFAULT_TRAINING_PER_TASK = 200
"""Training configurations listed per task (ours: the paper does not print demonstration counts).
The prompt probe draws its 50 configurations from the front of this list, so record at least the first
~55 per task to have a demonstration on every probed configuration."""

SEED_SPLIT_CODE: dict[str, int] = {"training": 0, "held_out": 1, "navigation": 2, "spa_id": 3, "spa_ood": 3}
"""Bits 61-62 of a seed: which split drew it (prompt probes reuse training seeds; the two Spa-Bench
splits share code 3 and differ in their stream)."""
_SEED_VALUE_BITS = 61
_STREAM: dict[str, int] = {"training": 0, "held_out": 1, "prompt_probe": 2, "navigation": 3, "spa_id": 4, "spa_ood": 5}
SPA_ID_PER_TASK = 20
"""Spa-Bench (Sec. III.D, Appendix B): 20 in-distribution rollouts per task ..."""
SPA_OOD_PER_TASK = 50
"""... and 50 on withheld concept-argument cells (:data:`bspatial.tasks.conditions.WITHHELD_CELLS`)."""
"""Extra SeedSequence word per split, so the streams differ below the tag bits too."""
MAX_SKIPPED_SEEDS = 200
"""A task whose split cannot be filled after skipping this many seeds / configurations raises."""

MANIFEST_SUFFIX = ".jsonl"
META_FILE = "splits.json"

_SIZE_REVERSAL = {"largest": "smallest", "2nd largest": "2nd smallest", "3rd largest": "3rd smallest"}
_ORDINAL_REVERSAL = {"leftmost": "rightmost", "2nd leftmost": "2nd rightmost"}
_DISTANCE_REVERSAL = {"closest": "farthest"}
_DIRECTION_REVERSAL = {"left": "right"}


def _symmetric(pairs: dict[str, str]) -> dict[str, str]:
    return {**pairs, **{b: a for a, b in pairs.items()}}


_RELATION_REVERSAL = _symmetric({**_SIZE_REVERSAL, **_ORDINAL_REVERSAL, **_DISTANCE_REVERSAL, **_DIRECTION_REVERSAL})


@dataclass(frozen=True)
class SplitEntry:
    """One planned episode of a split manifest.

    Attributes:
        task: canonical Table S2 task name.
        variant: the instruction variant to run ("" for navigation).
        seed: scene seed for :func:`bspatial.tasks.sample_instance` (manipulation) or
            :func:`bspatial.tasks.navigation.sample_validated_instance` (navigation).
        split: one of :data:`SPLITS`.
        index: position of the entry among the task's entries of this split (0-based).
        training_variant: prompt_probe: the variant the training demonstration on this configuration
            was recorded with; held_out: the training variant this variant reverses; else "".
        training_index: prompt_probe: the ``index`` of the probed training entry; else None.
    """

    task: str
    variant: str
    seed: int
    split: str
    index: int
    training_variant: str = ""
    training_index: int | None = None

    def __post_init__(self) -> None:
        _check_entry_fields(self)

    @property
    def key(self) -> str:
        """The entry's name in a run folder (``<task>-<index>``, unique within one split)."""
        return f"{self.task}-{self.index:04d}"

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"))


def _check_entry_fields(e: SplitEntry) -> None:
    if e.split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {e.split!r}")
    if not isinstance(e.task, str) or canonical_task_name(e.task) != e.task:
        raise ValueError(f"task must be a canonical task name, got {e.task!r}")
    variants = _variants(e.task)
    if e.variant not in variants:
        raise ValueError(f"variant of task {e.task!r} must be one of {list(variants)}, got {e.variant!r}")
    for name in ("seed", "index"):
        value = getattr(e, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value >= 2 ** 63:
            raise ValueError(f"{name} must be an int in [0, 2**63), got {value!r}")
    if e.training_variant and e.training_variant not in variants:
        raise ValueError(f"training_variant of task {e.task!r} must be one of {list(variants)} or '', "
                         f"got {e.training_variant!r}")
    if e.split == "prompt_probe":
        if isinstance(e.training_index, bool) or not isinstance(e.training_index, int) or e.training_index < 0:
            raise ValueError(f"training_index of a prompt_probe entry must be an int >= 0, got {e.training_index!r}")
        if not e.training_variant or e.training_variant == e.variant:
            raise ValueError(f"training_variant of a prompt_probe entry must be another variant than "
                             f"{e.variant!r}, got {e.training_variant!r}")
    elif e.training_index is not None:
        raise ValueError(f"training_index must be None outside prompt_probe, got {e.training_index!r}")


# ----------------------------------------------------------------------------- variants


def _variants(task: str) -> tuple[str, ...]:
    spec = TASKS[task]
    return ("",) if spec.is_navigation else spec.variants


def reverse_variant(task: str, variant: str) -> str | None:
    """The variant that reverses ``variant``'s spatial relation, or None when it reverses to itself.

    Size, ordinal, distance and direction relations swap their word (largest <-> smallest, 2nd leftmost
    <-> 2nd rightmost, closest <-> farthest, left <-> right), keeping the reference object. Locate
    variants mirror: a bookcase cell its column, a container layer within the task's layer range.
    A reversal that is not among the task's variants (the "3rd smallest" of five toys is the "3rd
    largest") counts as the variant itself: None.

    Raises:
        ValueError: unknown task (listing the known ones), a navigation task, or a variant the task lacks.

    Example:
        >>> reverse_variant("reach_hardback", "2x1"), reverse_variant("place_bowl_in_cabinet", "2")
        ('2x2', '4')
    """
    name = canonical_task_name(task)
    spec = TASKS[name]
    if spec.is_navigation:
        raise ValueError(f"task {task!r} is a navigation task: it has no instruction variants to reverse")
    if variant not in spec.variants:
        raise ValueError(f"variant of task {name!r} must be one of {list(spec.variants)}, got {variant!r}")
    relation, sep, reference = variant.partition(VARIANT_SEPARATOR)
    if spec.category == "locate" and "x" in relation:           # bookcase grid cell "RxC"
        row, column = relation.split("x")
        columns = sorted({int(r.split("x")[1]) for r in spec.relations})
        mirrored = f"{row}x{columns[0] + columns[-1] - int(column)}"
    elif spec.category == "locate":                              # container layer number
        layers = sorted(int(r) for r in spec.relations)
        mirrored = str(layers[0] + layers[-1] - int(relation))
    else:
        mirrored = _RELATION_REVERSAL[relation]
    reversed_variant = f"{mirrored}{sep}{reference}"
    if reversed_variant == variant or reversed_variant not in spec.variants:
        return None
    return reversed_variant


def variant_partition(task: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(training variants, held-out variants) of a task, each in Table S2 order (module docstring rule).

    Example:
        >>> variant_partition("reach_plate")
        (('largest', '2nd smallest'), ('2nd largest', 'smallest'))
        >>> variant_partition("place_tupperware_in_fridge")
        (('4', '5'), ('6',))
    """
    name = canonical_task_name(task)
    spec = TASKS[name]
    if spec.is_navigation:
        return ("",), ()
    if spec.n_heldout == 0:   # training-only task (place_saucer): nothing to hold out
        return spec.variants, ()
    train, held, pair = set(), set(), 0
    for variant in spec.variants:
        if variant in train or variant in held:
            continue
        other = reverse_variant(name, variant)
        if other is None:
            train.add(variant)
            continue
        first, second = (variant, other) if pair % 2 == 0 else (other, variant)
        train.add(first)
        held.add(second)
        pair += 1
    return tuple(v for v in spec.variants if v in train), tuple(v for v in spec.variants if v in held)


# ----------------------------------------------------------------------------- seeds


def split_seed(seed: int, task: str, split: str, index: int) -> int:
    """The scene seed of entry ``index`` of ``task`` in ``split`` (training / held_out / navigation).

    Example:
        >>> split_seed(0, "reach_plate", "training", 0) < 2**61 <= split_seed(0, "reach_plate", "held_out", 0)
        True
    """
    if split not in SEED_SPLIT_CODE:
        raise ValueError(f"split must be one of {tuple(SEED_SPLIT_CODE)} (prompt probes reuse training seeds), "
                         f"got {split!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
        raise ValueError(f"index must be an int >= 0, got {index!r}")
    words = [int(seed), derive_seed(task), _STREAM[split], int(index)]
    value = int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0]) >> (64 - _SEED_VALUE_BITS)
    return (SEED_SPLIT_CODE[split] << _SEED_VALUE_BITS) | value


def seed_split(scene_seed: int) -> str:
    """Which split drew ``scene_seed`` (from its tag bits)."""
    code = int(scene_seed) >> _SEED_VALUE_BITS
    if code == SEED_SPLIT_CODE["spa_id"]:
        return "spa"            # spa_id and spa_ood share the tag (their streams differ)
    for split, c in SEED_SPLIT_CODE.items():
        if c == code:
            return split
    raise ValueError(f"scene_seed {scene_seed!r} carries no known split tag (bits 61-62 = {code})")


# ----------------------------------------------------------------------------- planning


def training_entry(task: str, index: int, seed: int = DEFAULT_BUILD_SEED) -> SplitEntry:
    """Training configuration ``index`` of ``task``: the training variants cycled, :func:`split_seed` seeds."""
    name = canonical_task_name(task)
    train, _ = variant_partition(name)
    return SplitEntry(name, train[index % len(train)], split_seed(seed, name, "training", index), "training", index)


def _scene_key(instance) -> str:
    # Identical pickles = identical scene specs (object poses, sizes, colours, textures, robot spawn).
    return hashlib.sha256(pickle.dumps(instance.scene, protocol=4)).hexdigest()


def target_key(instance) -> tuple:
    """What decides success: the instructed candidate (reach) or the goal region (placement)."""
    if instance.placement is None:
        return ("object", instance.target)
    goal = instance.placement
    return ("region", goal.surface, goal.side, goal.layer)


def _sample(task: str, variant: str, seed: int):
    from bspatial.tasks import sample_instance

    try:
        # Only the target and the layout's margins matter here, and clutter changes neither.
        return sample_instance(task, variant, seed, clutter=False)
    except ValueError as error:   # a seed whose layout cannot meet the margins
        logger.debug("split planning: %s/%s seed %d skipped: %s", task, variant, seed, error)
        return None


def _unseen_entries(task: str, seed: int, split: str, variants: tuple[str, ...], want: int,
                    training_variant=lambda variant: "") -> tuple[SplitEntry, ...]:
    """``want`` entries on fresh ``split`` seeds, ``variants`` cycled; a seed whose layout cannot be
    sampled is skipped. Entry i depends only on the entries before it, so the first ``want`` entries are
    a prefix of the full plan: a smoke run (``limit``) plans only what it runs."""
    entries: list[SplitEntry] = []
    candidate = 0
    while len(entries) < want:
        if candidate - len(entries) > MAX_SKIPPED_SEEDS:
            raise ValueError(f"task {task!r}: {MAX_SKIPPED_SEEDS} {split} seeds could not be sampled (seed {seed})")
        variant = variants[len(entries) % len(variants)]
        scene = split_seed(seed, task, split, candidate)
        candidate += 1
        if _sample(task, variant, scene) is not None:
            entries.append(SplitEntry(task, variant, scene, split, len(entries),
                                      training_variant=training_variant(variant)))
    return tuple(entries)


@functools.lru_cache(maxsize=None)
def _held_out(task: str, seed: int, want: int) -> tuple[SplitEntry, ...]:
    _, held = variant_partition(task)
    return _unseen_entries(task, seed, "held_out", held, want, lambda variant: reverse_variant(task, variant))


def _probe_variant(task: str, train: SplitEntry, seed: int) -> str | None:
    """The first other variant (in a seeded order) that keeps the training scene and moves the target."""
    base = _sample(task, train.variant, train.seed)
    if base is None:
        return None
    others = [v for v in _variants(task) if v != train.variant]
    order = np.random.default_rng([seed, derive_seed(task), _STREAM["prompt_probe"], train.index])
    for i in order.permutation(len(others)):
        probe = _sample(task, others[i], train.seed)
        if probe is not None and _scene_key(probe) == _scene_key(base) and target_key(probe) != target_key(base):
            return others[i]
    return None


@functools.lru_cache(maxsize=None)
def _prompt_probe(task: str, seed: int, n_training: int, want: int) -> tuple[SplitEntry, ...]:
    entries: list[SplitEntry] = []
    for index in range(n_training):
        if len(entries) == want:
            return tuple(entries)
        train = training_entry(task, index, seed)
        variant = _probe_variant(task, train, seed)
        if variant is None:
            logger.debug("prompt probe: %s training entry %d has no variant with another target", task, index)
            continue
        entries.append(SplitEntry(task, variant, train.seed, "prompt_probe", len(entries),
                                  training_variant=train.variant, training_index=index))
    if len(entries) < want:
        raise ValueError(f"task {task!r}: only {len(entries)} of the first {n_training} training configurations "
                         f"admit a prompt probe, {want} wanted; raise n_training")
    return tuple(entries)


def spa_tasks() -> tuple[str, ...]:
    """Evaluated manipulation tasks whose variants have a withheld cell (the Spa-Bench ID / OOD study)."""
    from bspatial.tasks.conditions import withheld_variants

    return tuple(t for t in MANIPULATION_EVAL_TASKS if withheld_variants(t))


def spa_training_entry(task: str, index: int, seed: int = DEFAULT_BUILD_SEED) -> SplitEntry:
    """Training configuration ``index`` of the ID / OOD study: the training seeds with the task's
    in-distribution variants cycled (every variant but the withheld cells)."""
    from bspatial.tasks.conditions import in_distribution_variants

    name = canonical_task_name(task)
    if TASKS[name].is_navigation:
        return training_entry(name, index, seed)   # navigation has no variants to withhold
    variants = in_distribution_variants(name, TASKS[name].variants)
    return SplitEntry(name, variants[index % len(variants)], split_seed(seed, name, "training", index), "training",
                      index)


@functools.lru_cache(maxsize=None)
def _spa(task: str, seed: int, split: str, want: int) -> tuple[SplitEntry, ...]:
    """Unseen configurations with the ID variants (``spa_id``) or the withheld cells (``spa_ood``)."""
    from bspatial.tasks.conditions import in_distribution_variants, withheld_variants

    variants = (in_distribution_variants(task, TASKS[task].variants) if split == "spa_id"
                else withheld_variants(task))
    return _unseen_entries(task, seed, split, variants, want)


def _split_tasks(split: str) -> tuple[str, ...]:
    if split == "training":
        return tuple(TASKS)
    if split == "navigation":
        return NAVIGATION_TASKS
    if split in ("spa_id", "spa_ood"):
        return spa_tasks()
    field = "n_heldout" if split == "held_out" else "n_prompt_probe"
    return tuple(t for t in MANIPULATION_EVAL_TASKS if getattr(TASKS[t], field) > 0)


def _resolve(split: str, tasks: Iterable[str] | None) -> tuple[str, ...]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    known = _split_tasks(split)
    if tasks is None:
        return known
    if isinstance(tasks, str):
        raise ValueError(f"tasks must be a list of task names, got the string {tasks!r}")
    names = []
    for task in tasks:
        name = canonical_task_name(task)   # unknown names raise, listing the known tasks
        if name not in known:
            raise ValueError(f"task {task!r} has no episodes in split {split!r}; its tasks: {', '.join(known)}")
        names.append(name)
    return tuple(dict.fromkeys(names))


def split_episodes(split: str, tasks: Sequence[str] | None = None, *, seed: int = DEFAULT_BUILD_SEED,
                   n_training: int = DEFAULT_TRAINING_PER_TASK, limit: int | None = None) -> list[SplitEntry]:
    """The planned entries of ``split`` for ``tasks`` (default: every task of the split), Table S2 order.

    Args:
        split: one of :data:`SPLITS`.
        tasks: task names (any spelling :func:`~bspatial.catalog.tasks.canonical_task_name` accepts).
        seed: the build seed.
        n_training: training configurations per task (training manifest length; prompt probes come from
            the front of it).
        limit: at most this many entries per task: the first ones of the full plan (only those are planned).

    Raises:
        ValueError: unknown split or task (the message lists the known ones), a task with no episodes in
            ``split``, or a bad seed / n_training.
    """
    if isinstance(n_training, bool) or not isinstance(n_training, int) or n_training < 1:
        raise ValueError(f"n_training must be an int >= 1, got {n_training!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be an int >= 1, got {limit!r}")

    def count(n: int) -> int:
        return n if limit is None else min(n, limit)

    out: list[SplitEntry] = []
    for task in _resolve(split, tasks):
        if split == "training":
            out += [training_entry(task, i, seed) for i in range(count(n_training))]
        elif split == "held_out":
            out += _held_out(task, seed, count(TASKS[task].n_heldout))
        elif split == "prompt_probe":
            out += _prompt_probe(task, seed, n_training, count(TASKS[task].n_prompt_probe))
        elif split in ("spa_id", "spa_ood"):
            out += _spa(task, seed, split, count(SPA_ID_PER_TASK if split == "spa_id" else SPA_OOD_PER_TASK))
        else:
            out += [SplitEntry(task, "", split_seed(seed, task, "navigation", i), "navigation", i)
                    for i in range(count(TASKS[task].n_navigation))]
    if tasks is None and limit is None and split in SPLIT_TOTALS and len(out) != SPLIT_TOTALS[split]:
        raise AssertionError(f"{split} plan has {len(out)} entries, the paper's total is {SPLIT_TOTALS[split]}")
    return out


# ----------------------------------------------------------------------------- episode-aligned items


ALIGNED_SPLITS: tuple[str, ...] = ("held_out", "prompt_probe")
"""The manipulation splits whose episodes get their own IR query and task VQA item (the ``aligned`` build preset,
:mod:`bspatial.construction.publishing.aligned_records`)."""
_ALIGNED_ID = re.compile(r"ep-(?P<split>held_out|prompt_probe)-(?P<task>[a-z0-9_]+)-(?P<index>\d{4,})")


def aligned_item_id(entry: SplitEntry) -> str:
    """The id of ``entry``'s aligned VQA item and IR query: ``ep-<split>-<task>-<index:04d>``. The episode is in
    the id because a run's per-sample log keeps the id, not the record's metadata, and ``bspatial analyze join``
    pairs items with rollout records through it (:func:`aligned_episode_key`).

    Example:
        >>> aligned_item_id(SplitEntry("reach_plate", "largest", 7, "held_out", 3))
        'ep-held_out-reach_plate-0003'
    """
    if entry.split not in ALIGNED_SPLITS:
        raise ValueError(f"split of an aligned item must be one of {ALIGNED_SPLITS}, got {entry.split!r}")
    return f"ep-{entry.split}-{entry.key}"


def aligned_episode_key(item_id: str) -> tuple[str, str, int] | None:
    """(split, task, index) of an :func:`aligned_item_id`, or None for any other id.

    Example:
        >>> aligned_episode_key("ep-prompt_probe-place_bowl_in_cabinet-0012"), aligned_episode_key("tm-x")
        (('prompt_probe', 'place_bowl_in_cabinet', 12), None)
    """
    match = _ALIGNED_ID.fullmatch(item_id)
    return None if match is None else (match["split"], match["task"], int(match["index"]))


# ----------------------------------------------------------------------------- files


def write_manifests(out_dir: str | os.PathLike, *, seed: int = DEFAULT_BUILD_SEED,
                    n_training: int = DEFAULT_TRAINING_PER_TASK) -> dict[str, Path]:
    """Write ``<split>.jsonl`` for every split (one :class:`SplitEntry` per line) and ``splits.json``.

    Every file is written to a temporary sibling and renamed into place; the same ``seed`` and
    ``n_training`` give byte-identical files. Returns split -> path.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plans = {split: split_episodes(split, seed=seed, n_training=n_training) for split in SPLITS}
    paths = {}
    for split, entries in plans.items():
        paths[split] = out / f"{split}{MANIFEST_SUFFIX}"
        atomic_write_text(paths[split], "".join(e.to_json() + "\n" for e in entries))
        logger.info("split %s: %d entries -> %s", split, len(entries), paths[split])
    counts = {split: {t: sum(e.task == t for e in entries) for t in dict.fromkeys(e.task for e in entries)}
              for split, entries in plans.items()}
    meta = {"seed": seed, "n_training": n_training, "totals": {s: len(e) for s, e in plans.items()}, "counts": counts}
    atomic_write_text(out / META_FILE, json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return paths


_FIELDS = {f.name for f in dataclasses.fields(SplitEntry)}


def read_manifest(path: str | os.PathLike) -> list[SplitEntry]:
    """Read and validate a manifest written by :func:`write_manifests`.

    Raises:
        ValueError: naming the file, the line and the bad field / value: a line that is not a JSON
            object, missing or unknown fields, a bad field value, or a duplicate (task, index).
    """
    path = Path(path)
    entries: list[SplitEntry] = []
    seen: set[tuple[str, int]] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: not JSON ({error})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected a JSON object, got {line!r}")
        missing, unknown = _FIELDS - set(row), set(row) - _FIELDS
        if missing or unknown:
            raise ValueError(f"{where}: missing fields {sorted(missing)}, unknown fields {sorted(unknown)}")
        try:
            entry = SplitEntry(**row)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
        if (entry.task, entry.index) in seen:
            raise ValueError(f"{where}: duplicate index {entry.index!r} for task {entry.task!r}")
        seen.add((entry.task, entry.index))
        entries.append(entry)
    return entries


__all__ = ["ALIGNED_SPLITS", "aligned_episode_key", "aligned_item_id", "SPA_ID_PER_TASK", "SPA_OOD_PER_TASK", "spa_tasks", "spa_training_entry", "DEFAULT_BUILD_SEED", "DEFAULT_TRAINING_PER_TASK", "SEED_SPLIT_CODE", "SPLITS", "SPLIT_TOTALS",
           "SplitEntry", "TRACE_SPLIT", "read_manifest", "reverse_variant", "seed_split", "split_episodes",
           "split_seed", "target_key", "training_entry", "variant_partition", "write_manifests"]
