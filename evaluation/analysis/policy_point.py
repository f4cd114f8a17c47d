"""``policy-point:<rollout run>[,<rollout run>...]``: a policy's own pointing head, answering the episode-aligned IR.

A BSpatialVLA checkpoint with pointing co-training (``config.predicts_point``) has a head that points at the
instructed target; ``bspatial rollout`` records that point on each episode's first observation (the record's
``pointed``: :mod:`bspatial.evaluation.rollout.episodes`). The ``episode_aligned`` IR items are rendered from that
very observation (the episode's first head frame, :mod:`bspatial.construction.publishing.aligned_records`), so the
recorded point is the policy's own answer to the episode's IR item. This backend replays it: ``eval-vlm --model
policy-point:<runs> --suite ir --config episode_aligned`` scores the policy's grounding with the IR rule every model
is scored with, and ``bspatial analyze join --vlm <that run> --rollout <runs>`` joins it, episode by episode, with
the same policy's success: its own grounding beside its own action.

Why a replay and not the head run on the IR item: the head reads the policy's whole input (state, instruction,
the IR cue of an IR-conditioned checkpoint), which an IR item does not carry; the rollout has them all.

The point is on the 0-1000 scale of the image the head points in (the checkpoint's IR camera); the aligned items
show the head camera, so a checkpoint pointing in another camera is refused. Only the spatial condition's episodes
answer (the aligned items carry the spatial instruction). An item whose episode is in none of the runs (a task or
split the runs did not roll out) is answered with no point: scored wrong and counted unparsed by the runner, and
left out by the join, which pairs items with episodes; the backend logs how many. It reads no image
(``accepts_text_only``), and answers IR point requests only.

It lives here, above the rollout layer whose records it reads, and registers its kind with the VLM backends'
registry on import (the ``bspatial`` command imports it; a script passes a :class:`PolicyPointBackend` itself).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from bspatial.catalog.schema import HEAD_CAMERA
from bspatial.catalog.tasks import canonical_task_name
from bspatial.construction.splits import aligned_episode_key
from bspatial.evaluation.vlm.backend_api import Request, Response, answer_each
from bspatial.evaluation.vlm.backend_chance import point_reply
from bspatial.evaluation.vlm.backends import register_backend

logger = logging.getLogger(__name__)

EpisodeKey = tuple[str, str, int]
"""(split, canonical task, index), as :func:`bspatial.construction.splits.aligned_episode_key` names an episode."""


def recorded_points(runs: Sequence[str | Path]) -> tuple[str, dict[EpisodeKey, list[float]]]:
    """(policy spec, episode -> recorded ``[x, y]``) of the spatial-condition episodes of ``runs``.

    Raises:
        ValueError: A run is not a rollout run folder, the runs hold more than one policy, an episode is recorded
            twice, a point is in a camera other than the head's, or no episode recorded a point (a policy without a
            pointing head, or batched through a path that drops it).
    """
    from bspatial.evaluation.analysis.success import load_rollout_records
    from bspatial.evaluation.rollout.tables import group_records

    policies: set[str] = set()
    points: dict[EpisodeKey, list[float]] = {}
    unpointed: list[EpisodeKey] = []   # e.g. an episode that crashed before its first chunk
    for run in runs:
        try:
            groups = group_records(load_rollout_records(Path(run)))
        except ValueError as error:
            raise ValueError(f"policy-point: {error}") from None
        for (policy, split), records in groups.items():
            policies.add(policy)
            if len(policies) > 1:
                raise ValueError(f"policy-point: the runs hold several policies {sorted(policies)}; give one "
                                 f"policy's runs")
            for record in records:
                key = (split, canonical_task_name(record["task"]), int(record["index"]))
                pointed = record.get("pointed")
                if pointed is None:
                    unpointed.append(key)
                    continue
                if pointed.get("camera") != HEAD_CAMERA:
                    raise ValueError(f"policy-point: {run}: episode {key} was pointed in camera "
                                     f"{pointed.get('camera')!r}; the aligned IR items show the {HEAD_CAMERA!r} camera")
                if key in points:
                    raise ValueError(f"policy-point: episode {key} is recorded twice in {list(map(str, runs))}")
                points[key] = [float(v) for v in pointed["xy"]]
    if not points:
        raise ValueError(f"policy-point: no episode of {list(map(str, runs))} recorded a point (field 'pointed'): the "
                         f"policy needs a pointing head (point_loss_weight > 0) and a rollout by this version")
    if unpointed:
        logger.warning("policy-point: %d episodes of the runs recorded no point (their items get none, scored wrong): "
                       "%s", len(unpointed), unpointed[:10])
    return policies.pop(), points


@dataclass
class PolicyPointBackend:
    """Replays a policy's recorded first-observation points as IR answers (module docstring)."""

    runs: tuple[str, ...]
    spec: str = ""
    policy: str = field(init=False)
    points: dict[EpisodeKey, list[float]] = field(init=False, repr=False)
    accepts_text_only: ClassVar[bool] = True   # it never looks at the images: the rollout did
    _missing: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.runs:
            raise ValueError("policy-point: give at least one rollout run folder: 'policy-point:<run>[,<run>...]'")
        self.policy, self.points = recorded_points(self.runs)
        self.spec = self.spec or "policy-point:" + ",".join(self.runs)

    def identity(self) -> dict[str, Any]:
        digest = hashlib.sha256(json.dumps(sorted((list(k), v) for k, v in self.points.items())).encode()).hexdigest()
        return {"kind": "policy-point", "policy": self.policy, "episodes": len(self.points), "points_sha256": digest}

    def generation_settings(self) -> dict[str, Any]:
        return {}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        return answer_each(requests, self._reply)

    def _reply(self, request: Request) -> str:
        if request.kind != "point":
            raise ValueError(f"policy-point answers IR point items only; request {request.id!r} is a "
                             f"{request.kind!r} request (evaluate it with --suite ir --config episode_aligned)")
        key = aligned_episode_key(request.id)
        if key is None:
            raise ValueError(f"policy-point: item {request.id!r} is not an episode-aligned item "
                             f"(ep-<split>-<task>-<index>); evaluate the episode_aligned config")
        xy = self.points.get((key[0], canonical_task_name(key[1]), key[2]))
        if xy is not None:
            return point_reply(*(round(v) for v in xy))
        self._missing += 1
        if self._missing in (1, 10, 100) or self._missing % 1000 == 0:
            logger.warning("policy-point: %d items so far have no episode with a point in %s (latest: %s): answered "
                           "with no point", self._missing, list(self.runs), request.id)
        return ""


@register_backend("policy-point")
def build(argument: str, **options: Any) -> PolicyPointBackend:
    if options:
        raise ValueError(f"policy-point: unexpected options {sorted(options)}; it takes only its rollout run folders")
    runs = tuple(part for part in argument.split(",") if part)
    return PolicyPointBackend(runs, spec=f"policy-point:{argument}")


__all__ = ["PolicyPointBackend", "build", "recorded_points"]
