"""``bspatial rollout --policy replay:<demos folder> --split training``: a demonstration's actions, replayed open loop.

The replay check: the simulator is deterministic and rollouts start from the state demonstrations start
from (:mod:`bspatial.tasks.start`), so the recorded actions of a demonstration, played step by step on its own
instance through ``bspatial rollout``, must reproduce the demonstration's outcome (every recorded demonstration is
scored ``correct``). A replay that does not is a difference between recording and rollout (a start state, a ramp,
a step, a stop rule), which is what the check is for (``benchmarks/replay.py`` runs it over many episodes).

``<demos folder>`` is a dataset ``bspatial demos`` wrote (``meta/bspatial_demos.json`` lists its episodes with their
task, scene seed and variant). An episode of the run is matched to the demonstration recorded on the same task and
scene seed (the training manifest's entry: run it on ``--split training``); an entry the recording rejected, or did
not reach, has no demonstration and is recorded ``not_applicable``, as is a paperback-prefix demonstration (it
started from an augmented spawn, not the entry's). Past the recorded actions (a replay that did not commit where the
recording did) the last action is held.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from bspatial.catalog.schema import ACTION_KEY
from bspatial.construction.demonstrations.demos import PROVENANCE_FILE

logger = logging.getLogger(__name__)

_ACTIONS: dict[str, dict[tuple[str, int], np.ndarray | str]] = {}   # folder -> (task, scene seed) -> actions / why not


def check_spec(target: str) -> str:
    """The resolved demos folder; ValueError naming the target and what is missing."""
    folder = Path(target).expanduser()
    if not target.strip() or not folder.is_dir():
        raise ValueError(f"policy replay:{target}: no such folder (expected a `bspatial demos` dataset)")
    if not (folder / PROVENANCE_FILE).is_file():
        raise ValueError(f"policy replay:{target}: no {PROVENANCE_FILE} in it; is it a `bspatial demos` dataset?")
    return str(folder.resolve())


def recorded_actions(folder: str) -> dict[tuple[str, int], np.ndarray | str]:
    """(task, scene seed) -> the demonstration's (T, 23) float32 actions, or the reason it cannot be replayed."""
    if folder not in _ACTIONS:
        import pyarrow.parquet as pq

        root = Path(folder)
        provenance = json.loads((root / PROVENANCE_FILE).read_text())
        tables = [pq.read_table(p, columns=["episode_index", ACTION_KEY]) for p in sorted((root / "data").rglob("*.parquet"))]
        index = np.concatenate([t.column("episode_index").to_numpy() for t in tables])
        actions = np.concatenate([np.stack(t.column(ACTION_KEY).to_numpy(zero_copy_only=False)) for t in tables])
        out: dict[tuple[str, int], np.ndarray | str] = {}
        for row in provenance["episodes"]:
            key = (row["task_name"], int(row["scene_seed"]))
            if row.get("prefix"):
                out[key] = "its demonstration starts from the paperback prefix's augmented spawn"
            else:
                out[key] = actions[index == row["episode_index"]].astype(np.float32)
        _ACTIONS[folder] = out
    return _ACTIONS[folder]


class ReplayPolicy:
    """Plays ``actions[t]`` at step ``t``; the last action past the end."""

    def __init__(self, actions: np.ndarray) -> None:
        self.actions = actions

    def __call__(self, observation) -> np.ndarray:
        return self.actions[min(observation.step, len(self.actions) - 1)].copy()


def make_policy(target: str, backend, instance, settings) -> ReplayPolicy:
    """The replay of ``instance``'s demonstration in the demos folder ``target``.

    Raises:
        bspatial.tasks.conditions.NotApplicable: no demonstration of this instance can be replayed.
    """
    from bspatial.tasks.conditions import NotApplicable

    if settings.condition != "spatial":
        raise ValueError(f"policy replay:{target} replays demonstrations as recorded; condition must be 'spatial', "
                         f"got {settings.condition!r}")
    found = recorded_actions(target).get((instance.task, int(instance.seed)))
    if found is None:
        raise NotApplicable(f"no demonstration of {instance.task} scene seed {instance.seed} in {target} (the "
                            "recording rejected or did not reach this training entry)")
    if isinstance(found, str):
        raise NotApplicable(f"{instance.task} scene seed {instance.seed}: {found}")
    return ReplayPolicy(found)


def protocol(target: str) -> str:
    return "per_step"
