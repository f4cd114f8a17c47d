"""Pointing models for the agent API's ``point_at``: the privileged oracle pointer and how a spec is built.

The reference rows of the code-as-policy tables bound the scripted reference programs between two pointing
models (the programs themselves never see anything privileged):

* ``oracle``: :class:`OraclePointer`, a *privileged pointing model*: it answers every ``point_at`` request
  with the instructed target, read from the simulator's segmentation of the very image the program asked
  about (reach tasks: the target object; placement tasks: the goal point of the instructed region when the
  text asks *where* (the word "where"), else the manipulated object). The program only sees the points, as it would
  see a real pointing model's; it is the pointer that is privileged, and the table row says so.
* ``chance`` (``chance:<seed>``): a uniform point per request (the VLM harness's chance backend), so a
  program that follows its pointer reaches a random spot: the lower bound.
* anything else: a VLM harness backend spec (a transformers checkpoint such as Molmo, ``openai:<url>#<model>``).

The oracle finds which camera a request is about by matching the request's image with the frames its
``frames`` callable returns (the episode's current renders, or a recorded scene's frames during screening);
an image it cannot match is an error, never a guess.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from bspatial.evaluation.vlm.backend_api import Request, Response, VLMBackend
from bspatial.scoring.point import POINT_SCALE
from bspatial.sim.backend import CameraFrame
from bspatial.tasks.base import TaskInstance

POINTERS = ("oracle", "chance")
"""The pointer specs with a reference-row name (others are VLM backend specs)."""
_WORD = re.compile(r"[a-z]+")


class OraclePointer:
    """The privileged pointing model (module docstring); one per episode.

    Args:
        instance: the episode's task instance (what is instructed).
        frames: returns the camera frames a request's image may come from.
    """

    spec = "oracle"

    def __init__(self, instance: TaskInstance, frames: Callable[[], Iterable[CameraFrame]]) -> None:
        self.instance, self.frames = instance, frames

    def identity(self) -> dict[str, Any]:
        return {"kind": "oracle-pointer", "source": "simulator segmentation"}

    def generation_settings(self) -> dict[str, Any]:
        return {}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [Response(self._reply(request), 0.0) for request in requests]

    def _frame_of(self, request: Request) -> CameraFrame:
        from PIL import Image

        if request.kind != "point" or len(request.images) != 1:
            raise ValueError(f"the oracle pointer answers point requests with one image, got kind "
                             f"{request.kind!r} with {len(request.images)} images")
        pixels = np.asarray(Image.open(io.BytesIO(request.images[0])).convert("RGB"))
        for frame in self.frames():
            if frame.rgb.shape == pixels.shape and np.array_equal(frame.rgb, pixels):
                return frame
        raise ValueError(f"the oracle pointer cannot tell which camera request {request.id!r} shows "
                         f"(its image matches none of the current frames)")

    def _reply(self, request: Request) -> str:
        frame = self._frame_of(request)
        inst = self.instance
        words = set(_WORD.findall(request.prompt.lower()))
        if inst.placement is None or "where" not in words:
            mask = frame.mask(inst.target)
            if not mask.any():
                return "There is none."          # out of view: a pointing model finds nothing
            rows, cols = np.nonzero(mask)
            # The mask pixel nearest its centroid: inside the object even for a ring-shaped mask.
            k = int(np.argmin((rows - rows.mean()) ** 2 + (cols - cols.mean()) ** 2))
            u, v = cols[k] + 0.5, rows[k] + 0.5
        else:
            uv = _project(frame, inst.placement.goal_point)
            if uv is None:
                return "There is none."
            u, v = uv
        x, y = round(POINT_SCALE * u / frame.width), round(POINT_SCALE * v / frame.height)
        return json.dumps({"results": {"target": {"x": x, "y": y}}})


def _project(frame: CameraFrame, world_point) -> tuple[float, float] | None:
    """The pixel of a world point in ``frame`` (None when behind the camera or outside the image)."""
    uv, depth = frame.project(np.asarray(world_point, float)[None])
    if depth[0] <= 1e-6:
        return None
    u, v = uv[0]
    if not (0 <= u < frame.width and 0 <= v < frame.height):
        return None
    return float(u), float(v)


def make_pointer(spec: str, instance: TaskInstance, frames: Callable[[], Iterable[CameraFrame]]) -> VLMBackend:
    """The pointing model of ``spec`` for one episode: ``oracle``, ``chance[:<seed>]`` or a VLM backend spec."""
    if spec == "oracle":
        return OraclePointer(instance, frames)
    from bspatial.evaluation.vlm.backends import load_backend

    return load_backend("chance:0" if spec == "chance" else spec)


def pointer_label(spec: str) -> str:
    """The table row's words for a pointer."""
    if spec == "oracle":
        return "oracle pointer (privileged: simulator segmentation)"
    if spec in ("chance", "chance:0"):
        return "chance pointer"
    return f"pointer {spec}"
