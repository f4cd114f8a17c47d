"""The grounding-cue ladder: did an episode go where its IR cue pointed?

``bspatial rollout --ir oracle | predicted | none | wrong`` runs an IR checkpoint under each rung. Under ``wrong``
the cue marks the goal the ``scripted-wrong`` reference pursues (:mod:`bspatial.evaluation.rollout.ir`); an
episode *followed the cue* when its trace, scored by Table S4's rule with the cue's goal in place of the
instructed one, is a strict success. The references bound the share: ``scripted-wrong`` follows the cue in every
episode (it pursues exactly that goal), ``scripted`` (reads the instruction) in none.

A record carries its cue (``ir.cue``) when it was run with one; for a policy without an IR slot (the references)
the wrong cue is recomputed from the episode and the run's seed, as the conditioner would have drawn it.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

from bspatial.evaluation.rollout.ir import cue_goal

LADDER = ("oracle", "predicted", "none", "wrong")
"""The rungs, from the cue on the instructed target to the cue on a wrong one."""


def wrong_cue(record: Mapping[str, Any], run_seed: int) -> dict[str, Any]:
    """The wrong cue of ``record``'s episode: the goal ``scripted-wrong`` pursues with run seed ``run_seed``."""
    from bspatial.evaluation.rollout.plan import episode_rng
    from bspatial.tasks import sample_instance
    from bspatial.tasks.experts.references import wrong_target_instance

    instance = sample_instance(record["task"], record["variant"], int(record["seed"]))
    return cue_goal(wrong_target_instance(instance, episode_rng(run_seed, instance.seed)))


def followed_cue(record: Mapping[str, Any], cue: Mapping[str, Any]) -> bool | None:
    """Whether the episode's trace is a strict success for the cue's goal; None without a trace.

    Raises:
        ValueError: a cue that names no goal of the record's family, or a reach target not among its candidates.
    """
    from bspatial.scoring.action import outcome_from_trace
    from bspatial.scoring.trace import EpisodeTrace

    if not record.get("trace"):
        return None
    trace = copy.deepcopy(dict(record["trace"]))
    if "target" in cue:
        names = list(trace["candidate_names"])
        if cue["target"] not in names:
            raise ValueError(f"cue target {cue['target']!r} is not a candidate of {record['task']}: {names}")
        trace["instructed_candidate"] = names.index(cue["target"])
    elif "side" in cue and trace.get("countertop"):
        trace["countertop"]["instructed_side"] = cue["side"]
    elif "layer" in cue and trace.get("container"):
        trace["container"]["instructed_compartment"] = int(cue["layer"]) - 1   # layer n is compartment row n-1
    else:
        raise ValueError(f"cue {dict(cue)!r} names no goal of task {record['task']!r}")
    return outcome_from_trace(EpisodeTrace.from_dict(trace)).outcome == "correct"


def ir_source(record: Mapping[str, Any]) -> str:
    """The record's rung: its IR source, or ``"none"`` for a policy that reads no cue."""
    return (record.get("ir") or {}).get("source", "none")


def cue_of(record: Mapping[str, Any], run_seed: int) -> dict[str, Any]:
    """The wrong cue of the record: the one it was run with (``ir.cue`` under ``--ir wrong``), else recomputed."""
    if ir_source(record) == "wrong":
        return dict(record["ir"]["cue"])
    return wrong_cue(record, run_seed)


__all__ = ["LADDER", "cue_of", "followed_cue", "ir_source", "wrong_cue"]


def ladder_cells(runs: Mapping[str, tuple[list[Mapping[str, Any]], int]]) -> list[dict[str, Any]]:
    """The ladder's cells, per (policy spec, rung): each task, then POOLED, with their records and, where the wrong
    cue is scored (the ``wrong`` rung and the scripted references), whether each followed it (else None).

    Args:
        runs: run name -> (its records, its run seed).
    """
    groups: dict[tuple[str, str], list[tuple[Mapping[str, Any], int]]] = {}
    for records, seed in runs.values():
        for record in records:
            if record.get("status") == "not_applicable" or record.get("split") not in ("held_out", "prompt_probe"):
                continue
            groups.setdefault((record["policy"], ir_source(record)), []).append((record, seed))
    cells = []
    for (policy, rung), members in sorted(groups.items(), key=lambda kv: (kv[0][0], LADDER.index(kv[0][1]))):
        scores_cue = rung == "wrong" or policy in ("scripted", "scripted-wrong")
        followed = [followed_cue(r, cue_of(r, seed)) if scores_cue else None for r, seed in members]
        tasks = list(dict.fromkeys(r["task"] for r, _ in members))
        for task in [*tasks, "POOLED"]:
            chosen = [i for i, (r, _) in enumerate(members) if task in ("POOLED", r["task"])]
            cells.append({"policy": policy, "cue": rung, "task": task, "records": [members[i][0] for i in chosen],
                          "followed": [followed[i] for i in chosen if followed[i] is not None]})
    return cells


__all__ += ["ladder_cells"]
