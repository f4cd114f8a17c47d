"""IR conditioning of checkpoint rollouts: oracle (Appendix 13.3) and VLM-predicted (Appendix 16.7) targets.

An IR checkpoint (``config.ir_mode`` ``"dot"`` or ``"attn_map"``) reads one extra image, and with
``first_frame_anchor`` a fifth. At every policy observation (every chunk the controller asks for) an
:class:`IRConditioner` turns the observation's head frame into those images:

1. a *target source* gives the target pixel on the 224 x 224 policy grid, or None:

   * ``oracle`` (:class:`OracleTarget`, Appendix 13.3 "Target localization"): reach tasks project the
     instructed object's *current* 3D box through the current head camera (corners projected, 2D box
     clipped, integer midpoint, scaled to 224, rounded: :func:`bspatial.modeling.ir_rendering.target_pixel`).
     Placement tasks fix a world-space box at the destination once, at the start of the episode, and
     reproject it through the current head camera at every observation. The box is the manipulated
     object's own box with its frame origin (the bottom-face centre of every bspatial object) moved to
     ``instance.placement.goal_point``: where the demonstrations' object comes to rest in their final
     frame (:mod:`bspatial.construction.demonstrations.demos` reprojects exactly that final-frame box), so training and
     evaluation see the same cue;
   * ``predicted`` (:class:`PredictedTarget`, Appendix 16.7): the grounding VLM receives the *current*
     head image at 512 x 512 and the instruction, with the IR prompt of the task's kind (object for
     reach, placement for placement); the point is rescaled to the 224 grid. A reply without a valid
     point gives no target (an unmarked image); simulator coordinates are never used as a fallback. The
     appendix says "the current head-camera image", so the VLM is queried at every policy observation,
     like the oracle cue ("the current-view cue is recomputed for each policy observation", App. 13.3);
   * ``none``: no target at all (the IR slot gets the unmarked head image / a uniform dark-blue map);
   * ``wrong`` (the grounding-cue ladder's last rung): the oracle cue of a wrong target, the goal the
     ``scripted-wrong`` reference pursues on the same episode (:func:`bspatial.tasks.experts.references.
     wrong_target_instance`, drawn from the same per-episode seed): another candidate (reach), the mirrored side
     (directional placement) or the nearest other layer (container). A policy that grounds from the cue follows
     it to the wrong target; one that grounds from the language ignores it.

2. the IR image is rendered with the checkpoint's mode (:func:`render_dot_ir` or
   :func:`render_attention_map_ir`); no target -> no dot / uniform dark blue (Appendix 13.3);
3. the anchor (``first_frame_anchor``) is the first observation's dot image, kept for the whole episode
   (Appendix 13.3 "Temporal conditioning").

The conditioner counts what happened (observations, observations without a target, VLM queries and
failed predictions) for the episode's result file.

Example:
    >>> IRSettings("predicted", "chance:0").as_manifest()
    {'ir': 'predicted', 'ir_model': 'chance:0'}
    >>> IRSettings("predicted")
    Traceback (most recent call last):
    ...
    ValueError: ir='predicted' needs ir_model (a VLM backend spec such as 'chance' or 'openai:<url>#<model>'), got None
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np

from bspatial.catalog.schema import POLICY_IMAGE_SIZE
from bspatial.evaluation.vlm.backend_api import VLMBackend
from bspatial.scoring.ir_target import box_corners, ir_target_pixel, round_half_up
from bspatial.sim.backend import SimBackend
from bspatial.tasks.base import TaskInstance

logger = logging.getLogger(__name__)

IR_SOURCES: tuple[str, ...] = ("oracle", "predicted", "none", "wrong")
"""Where an IR checkpoint's target comes from at rollout time (``bspatial rollout --ir``)."""
IR_CHECKPOINT_MODES: tuple[str, ...] = ("dot", "attn_map")
"""``config.ir_mode`` values that add an IR image slot (modeling/configuration_bspatial_vla.py)."""
GROUNDING_RENDER_SIZE = 512
"""Appendix 16.7: the grounding VLM receives the head image at 512 x 512; we render it at that size
instead of upsampling the 224 policy frame (the paper's frames come from a larger camera image)."""

TargetFn = Callable[[Any], "tuple[int, int] | None"]


@dataclass(frozen=True)
class IRSettings:
    """How a run conditions IR checkpoints.

    Attributes:
        source: one of :data:`IR_SOURCES`.
        model: the grounding VLM's backend spec (``bspatial.evaluation.vlm.backends.load_backend``);
            required with ``source="predicted"``, refused otherwise.
    """

    source: str = "none"
    model: str | None = None

    def __post_init__(self) -> None:
        if self.source not in IR_SOURCES:
            raise ValueError(f"ir must be one of {', '.join(IR_SOURCES)}, got {self.source!r}")
        if self.source == "predicted" and not self.model:
            raise ValueError("ir='predicted' needs ir_model (a VLM backend spec such as 'chance' or "
                             f"'openai:<url>#<model>'), got {self.model!r}")
        if self.source != "predicted" and self.model is not None:
            raise ValueError(f"ir_model={self.model!r} is only used with ir='predicted', got ir={self.source!r}")

    def as_manifest(self) -> dict[str, Any]:
        return {"ir": self.source, "ir_model": self.model}


NO_IR = IRSettings()


def target_kind(instance) -> Literal["object", "placement"]:
    """The IR prompt kind of a manipulation instance: reach -> object, placement -> placement (App. 15.2)."""
    return "placement" if instance.manipulated is not None else "object"


def destination_corners(backend: SimBackend, instance: TaskInstance) -> np.ndarray:
    """(8, 3) world corners of the manipulated object's box resting at ``instance.placement.goal_point``.

    Call on the freshly reset scene: the object's box and frame origin at the start of the episode define
    the box's shape and its offset from the origin (the bottom-face centre), which moves to the goal.
    """
    name = instance.manipulated
    bbox = backend.object_bbox(name)
    origin = np.asarray(backend.object_pose(name).position, float)
    goal = np.asarray(instance.placement.goal_point, float)
    return box_corners(np.asarray(bbox.center, float) - origin + goal, bbox.half_extents, bbox.rotation)


def cue_goal(instance: TaskInstance) -> dict[str, Any]:
    """The goal an oracle cue of ``instance`` marks, as the scoring rules name goals: the reach target
    (``{"target": name}``), the side of the reference its goal point lies on (``{"side": "left" | "right"}``) or
    the layer it lies in (``{"layer": n}``). For an instance whose goal point was moved (a wrong cue's) this is
    the goal the cue shows, not the instructed one."""
    if instance.manipulated is None:
        return {"target": instance.target}
    if instance.countertop is not None:
        geo = instance.countertop
        offset = float(np.dot(np.asarray(instance.placement.goal_point, float)[:2] - geo.reference_center,
                              geo.right_axis))
        return {"side": "right" if offset > 0 else "left"}
    return {"layer": int(instance.placement.layer)}


class OracleTarget:
    """Simulator-derived IR target of Appendix 13.3 (see the module docstring).

    Args:
        backend: the backend running ``instance`` (already reset to the episode start).
        instance: a manipulation :class:`~bspatial.tasks.base.TaskInstance`.
    """

    def __init__(self, backend: SimBackend, instance: TaskInstance) -> None:
        if instance.family == "navigation":
            raise ValueError(f"task {instance.task!r} is a navigation task: navigation has no IR target")
        self.backend, self.instance = backend, instance
        self.fixed = destination_corners(backend, instance) if instance.manipulated is not None else None

    def corners(self) -> np.ndarray:
        """The world box whose projection is the target now (current object box, or the fixed goal box)."""
        return self.fixed if self.fixed is not None else self.backend.object_bbox(self.instance.target).corners()

    def __call__(self, frame) -> tuple[int, int] | None:
        return ir_target_pixel(self.corners(), frame.K, frame.T_world_cam, (frame.width, frame.height),
                               out_size=POLICY_IMAGE_SIZE)

    def describe(self) -> dict[str, Any]:
        """What the cue marks, in the terms the Table S4 rules score (:func:`cue_goal`)."""
        return cue_goal(self.instance)


class PredictedTarget:
    """VLM-predicted IR target of Appendix 16.7 (see the module docstring).

    Args:
        vlm: a :class:`~bspatial.evaluation.vlm.backend_api.VLMBackend`.
        backend: the simulator backend (renders the 512 x 512 head image for the VLM).
        instance: a manipulation task instance (its instruction and prompt kind).

    Attributes:
        queries, failed: VLM calls made and replies without a valid point.
    """

    def __init__(self, vlm: VLMBackend, backend: SimBackend, instance: TaskInstance) -> None:
        if instance.family == "navigation":
            raise ValueError(f"task {instance.task!r} is a navigation task: navigation has no IR target")
        self.vlm, self.backend, self.instance = vlm, backend, instance
        self.kind = target_kind(instance)
        self.queries = self.failed = 0

    def __call__(self, frame) -> tuple[int, int] | None:
        from bspatial.evaluation.vlm.predicted_ir import predict_ir_point

        image = self.backend.render(frame.camera, width=GROUNDING_RENDER_SIZE, height=GROUNDING_RENDER_SIZE,
                                    rgb_only=True).rgb
        self.queries += 1
        # Backend errors (a server down) propagate: the episode is recorded as crashed, not as a model miss.
        point = predict_ir_point(self.vlm, image, self.instance.instruction, self.kind,
                                 output_size=(POLICY_IMAGE_SIZE, POLICY_IMAGE_SIZE))
        if point is None:
            self.failed += 1
            return None
        x, y = (min(max(round_half_up(v), 0), POLICY_IMAGE_SIZE - 1) for v in point)
        return x, y


@dataclass
class IRConditioner:
    """Per episode: the IR image (and anchor) for each policy observation, with counts.

    Args:
        mode: the checkpoint's ``ir_mode`` (``"dot"`` or ``"attn_map"``).
        source: the run's IR source name (recorded in the result file).
        target: ``head frame -> pixel or None``; None = no target ever (source ``"none"``).
        anchor: also produce the first observation's dot image, kept for the episode.
        dot_radius: the checkpoint's ``ir_dot_radius`` (its processor's): the dot is drawn as training drew it.
    """

    mode: str
    source: str
    target: TargetFn | None = None
    anchor: bool = False
    dot_radius: int | None = None
    observations: int = 0
    without_target: int = 0
    targets: list = field(default_factory=list)
    _anchor_image: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.mode not in IR_CHECKPOINT_MODES:
            raise ValueError(f"mode must be one of {IR_CHECKPOINT_MODES}, got {self.mode!r}")
        if self.anchor and self.mode != "dot":
            raise ValueError(f"anchor needs mode='dot' (Appendix 13.3), got mode={self.mode!r}")

    def images(self, head) -> dict[str, np.ndarray]:
        """``{"ir": (224, 224, 3) uint8[, "anchor": ...]}`` for the head frame of one policy observation."""
        from bspatial.modeling.ir_rendering import render_attention_map_ir, render_dot_ir, render_first_frame_anchor

        pixel = self.target(head) if self.target is not None else None
        self.observations += 1
        self.without_target += pixel is None
        self.targets.append(pixel)
        if self.mode == "dot":
            ir = (render_dot_ir(head.rgb, pixel) if self.dot_radius is None
                  else render_dot_ir(head.rgb, pixel, self.dot_radius))
        else:
            ir = render_attention_map_ir(pixel)
        out = {"ir": ir}
        if self.anchor:
            if self._anchor_image is None:
                # The same function training uses on a demonstration's first frame (modeling/ir_rendering).
                self._anchor_image = render_first_frame_anchor(head.rgb, pixel)
            out["anchor"] = self._anchor_image
        return out

    def summary(self) -> dict[str, Any]:
        """What the episode's result file records under ``"ir"``."""
        out: dict[str, Any] = {"source": self.source, "mode": self.mode, "anchor": self.anchor,
                               "observations": self.observations, "without_target": self.without_target}
        if isinstance(self.target, PredictedTarget):
            out.update(vlm_queries=self.target.queries, failed_predictions=self.target.failed)
        if isinstance(self.target, OracleTarget):
            out["cue"] = self.target.describe()
        return out


_VLMS: dict[str, Any] = {}  # one grounding backend per process and spec (loading a VLM is slow)


def make_conditioner(settings: IRSettings, ir_mode: str, anchor: bool, backend: SimBackend,
                     instance: TaskInstance, dot_radius: int | None = None,
                     rng: np.random.Generator | None = None) -> IRConditioner:
    """The episode's conditioner for a checkpoint with ``ir_mode`` (and ``ir_dot_radius``) under the run's
    ``settings``; ``rng`` (the episode's, required by ``wrong``) draws the wrong target."""
    target: TargetFn | None = None
    if settings.source == "oracle":
        target = OracleTarget(backend, instance)
    elif settings.source == "wrong":
        from bspatial.tasks.experts.references import wrong_target_instance

        if rng is None:
            raise ValueError("ir='wrong' needs the episode's rng (the one scripted-wrong draws its target with)")
        target = OracleTarget(backend, wrong_target_instance(instance, rng))
    elif settings.source == "predicted":
        from bspatial.evaluation.vlm.backends import load_backend

        if settings.model not in _VLMS:
            _VLMS[settings.model] = load_backend(settings.model)
        target = PredictedTarget(_VLMS[settings.model], backend, instance)
    return IRConditioner(ir_mode, settings.source, target, anchor, dot_radius)


__all__ = ["GROUNDING_RENDER_SIZE", "IRConditioner", "cue_goal", "IRSettings", "IR_CHECKPOINT_MODES", "IR_SOURCES", "NO_IR",
           "OracleTarget", "PredictedTarget", "destination_corners", "make_conditioner", "target_kind"]
