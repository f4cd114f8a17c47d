"""VLM-predicted IR for rollouts (Appendix 16.7): a head image and an instruction in, a point or None out."""

from __future__ import annotations

import logging

import numpy as np

from bspatial.catalog.schema import POLICY_IMAGE_SIZE
from bspatial.evaluation.vlm.backend_api import Request, VLMBackend
from bspatial.evaluation.vlm.prompts import build_ir_prompt
from bspatial.scoring.point import PointStatus, parse_point

logger = logging.getLogger(__name__)


# Appendix 16.7: the grounding VLM sees the head image at 512 x 512; the point is rescaled to the
# 224 x 224 policy image. A failed prediction gives no point (never a simulator fallback).
GROUNDING_INPUT_SIZE = (512, 512)


def predict_ir_point(
    backend: VLMBackend,
    image,
    instruction: str,
    target: str,
    output_size: tuple[int, int] = (POLICY_IMAGE_SIZE, POLICY_IMAGE_SIZE),
) -> tuple[float, float] | None:
    """Ask a grounding VLM for the instructed target point, for rollouts with predicted dot IR.

    Args:
        backend: any backend.
        image: the head-camera image (``PIL.Image`` or an HxWx3 uint8 array).
        instruction: the task instruction.
        target: ``"object"`` (reach) or ``"placement"``.
        output_size: ``(width, height)`` of the policy image the point is returned in.

    Returns:
        ``(u, v)`` in pixels of ``output_size``, or None when the reply holds no valid point.
    """
    import io

    from PIL import Image

    picture = image if isinstance(image, Image.Image) else Image.fromarray(np.asarray(image, dtype=np.uint8))
    buffer = io.BytesIO()
    picture.convert("RGB").resize(GROUNDING_INPUT_SIZE, Image.Resampling.BICUBIC).save(buffer, format="PNG")
    request = Request("grounding", build_ir_prompt(instruction, target), (buffer.getvalue(),), "point")
    (response,) = backend.generate([request])
    parse = parse_point(response.text)
    if parse.status is not PointStatus.PARSED:
        logger.info("grounding VLM gave no point (%s): %.200r", parse.reason, response.text)
        return None
    return parse.to_pixels(*output_size)
