"""The seeded chance backend: the reference row of every table (uniform option, uniform point)."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from bspatial.evaluation.vlm.backend_api import Request, Response, answer_each
from bspatial.scoring.choice import LETTERS
from bspatial.scoring.point import POINT_SCALE


TEXT_REPLIES = ("yes", "no")
"""Free-form requests (kind "text"): chance answers a yes/no question uniformly."""


def _choice_reply(letter: str, options: Sequence[str]) -> str:
    """The answer-format form (Appendix 15.1): 'C.front'."""
    return f"{letter}.{options[LETTERS.index(letter)]}" if options else letter


def point_reply(x: int, y: int) -> str:
    """The IR prompt's JSON (Appendix 15.2) on the 0-1000 scale."""
    return json.dumps({"results": {"target": {"x": x, "y": y}}})


@dataclass
class ChanceBackend:
    """Seeded chance: a uniform option for VQA, a uniform 0-1000 point for IR, yes or no for free text.

    Each reply depends only on ``(seed, request.id)``, never on batch composition or order, so
    a resumed or re-batched run gives the same answers.

    Example:
        >>> req = Request("q1", "prompt", (), "choice", ("above", "under", "front", "behind"))
        >>> ChanceBackend(seed=0).generate([req])[0].text == ChanceBackend(seed=0).generate([req])[0].text
        True
    """

    seed: int = 0
    spec: str = field(default="")
    accepts_text_only: ClassVar[bool] = True  # it never looks at the images

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"chance: seed must be an int, got {self.seed!r}")
        self.spec = self.spec or f"chance:{self.seed}"

    def identity(self) -> dict[str, Any]:
        return {"kind": "chance", "seed": self.seed}

    def generation_settings(self) -> dict[str, Any]:
        return {}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        return answer_each(requests, self._reply)

    def _reply(self, request: Request) -> str:
        rng = self._rng(request.id)
        if request.kind == "choice":
            return _choice_reply(LETTERS[rng.randrange(len(LETTERS))], request.options)
        if request.kind == "point":
            return point_reply(rng.randint(0, POINT_SCALE), rng.randint(0, POINT_SCALE))
        if request.kind == "text":
            return TEXT_REPLIES[rng.randrange(len(TEXT_REPLIES))]
        raise ValueError(f"request {request.id}: kind must be 'choice', 'point' or 'text', got {request.kind!r}")

    def _rng(self, item_id: str) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}\x00{item_id}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))
