"""Oracle intermediate-representation (IR) images of Appendix 13.3, in pure numpy (+ PIL to resize).

* target: project the 8 corners of the target's 3D box through the head camera, clip the 2D box to
  the image, take its integer midpoint, scale to the 224 x 224 policy image and round;
* dot IR: on the head image resized to 224 x 224, a filled RGB (255, 51, 51) disc of radius 4 with a
  1-pixel white outline at the target; no valid target -> the image without a marker;
* first-frame anchor: the dot IR of the episode's first observation, held fixed for the episode;
* attention-map IR: a unit-peak Gaussian ``H`` on the 224 grid, ``q = round(255 H)``, mapped through
  a 256-entry analytic jet LUT sampled over [0, 0.875] (background (0, 0, 128), peak (255, 0, 0));
  no valid target -> a uniform (0, 0, 128) image.

Camera conventions: ``K`` = [[fx, 0, cx], [0, fy, cy], [0, 0, 1]]; ``T_world_cam`` is
the 4 x 4 camera-to-world pose in the OpenCV convention (x right, y down, z forward).

Rounding: "round" means round half up (``floor(x + 0.5)``) everywhere here, not numpy's half-to-even.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

IR_IMAGE_SIZE = 224  # Appendix 13.3: the 224 x 224 policy image
DOT_COLOR = (255, 51, 51)  # Appendix 13.3: filled red marker
DOT_RADIUS = 4  # pixels (Appendix 13.3)
DOT_OUTLINE_COLOR = (255, 255, 255)  # 1-pixel white outline (Appendix 13.3)
DOT_OUTLINE_WIDTH = 1
JET_LUT_SIZE = 256  # Appendix 13.3: 256-entry analytic jet LUT ...
JET_SAMPLE_MAX = 0.875  # ... sampled over [0, 0.875]
ATTN_BACKGROUND = (0, 0, 128)  # jet(0): what an invalid projection fills the map with
# The paper's equation for H(x, y) was lost in the text we have (Appendix 13.3 says only "unit peak,
# not normalised"); the standard deviation is therefore ours, a named parameter, not the paper's.
ATTN_SIGMA = 8.0
MIN_DEPTH = 1e-6  # corners at or behind the camera plane do not project


def _round_half_up(x):
    return np.floor(np.asarray(x, dtype=np.float64) + 0.5).astype(np.int64)


def box_corners(center, half_extents, rotation=None) -> np.ndarray:
    """The 8 world-frame corners ``(8, 3)`` of a box given its center, half extents and 3 x 3 rotation.

    Example:
        >>> box_corners([0, 0, 0], [1, 2, 3]).max(axis=0).tolist()
        [1.0, 2.0, 3.0]
    """
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64)
    local = signs * np.asarray(half_extents, dtype=np.float64)
    rot = np.eye(3) if rotation is None else np.asarray(rotation, dtype=np.float64)
    return local @ rot.T + np.asarray(center, dtype=np.float64)


def project_points(points_world, K, T_world_cam) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates ``(N, 2)`` and camera depths ``(N,)`` of world points ``(N, 3)``."""
    pose = np.asarray(T_world_cam, dtype=np.float64)
    rot, trans = pose[:3, :3], pose[:3, 3]
    cam = (np.asarray(points_world, dtype=np.float64) - trans) @ rot  # R^T (p - t), row-wise
    depth = cam[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        uvw = cam @ np.asarray(K, dtype=np.float64).T
        uv = uvw[:, :2] / uvw[:, 2:3]
    return uv, depth


def target_pixel(corners_world, K, T_world_cam, image_size: tuple[int, int],
                 out_size: int = IR_IMAGE_SIZE) -> tuple[int, int] | None:
    """The IR target on the ``out_size`` grid, or None when the box has no valid projection.

    Appendix 13.3: project the box corners, clip the 2D bounding box to the image, take its integer
    midpoint, scale it to the 224 x 224 image and round to the nearest pixel. Corners behind the
    camera are dropped; no corner in front, or a clipped box outside the image, is "no valid
    projection".

    Args:
        corners_world: ``(8, 3)`` box corners in the world frame (see ``box_corners``).
        K: ``(3, 3)`` intrinsics of the source image.
        T_world_cam: ``(4, 4)`` camera-to-world pose (OpenCV axes).
        image_size: ``(width, height)`` of the source image in pixels.

    Returns:
        ``(x, y)`` integer pixel on the ``out_size`` grid, or None.

    Example:
        A 0.2 m cube 2 m in front of a 448 x 448 camera lands at the image center:

        >>> K = [[224.0, 0, 224], [0, 224.0, 224], [0, 0, 1]]
        >>> target_pixel(box_corners([0, 0, 2], [0.1] * 3), K, np.eye(4), (448, 448))
        (112, 112)
    """
    width, height = image_size
    uv, depth = project_points(corners_world, K, T_world_cam)
    uv = uv[depth > MIN_DEPTH]
    if len(uv) == 0:
        return None
    x0, y0 = uv.min(axis=0)
    x1, y1 = uv.max(axis=0)
    if x1 < 0 or y1 < 0 or x0 > width - 1 or y0 > height - 1:
        return None
    x0, x1 = np.clip([x0, x1], 0, width - 1)
    y0, y1 = np.clip([y0, y1], 0, height - 1)
    mid_x, mid_y = int(np.floor((x0 + x1) / 2)), int(np.floor((y0 + y1) / 2))  # integer midpoint
    x = int(_round_half_up(mid_x * out_size / width))
    y = int(_round_half_up(mid_y * out_size / height))
    return min(max(x, 0), out_size - 1), min(max(y, 0), out_size - 1)


def resize_to_policy(image: np.ndarray, size: int = IR_IMAGE_SIZE) -> np.ndarray:
    """``(H, W, 3)`` uint8 -> ``(size, size, 3)`` uint8 (PIL bilinear; no copy when already sized)."""
    image = np.asarray(image)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"image must be (H, W, 3) uint8, got shape {image.shape} dtype {image.dtype}")
    if image.shape[:2] == (size, size):
        return image.copy()
    # np.array, not np.asarray: an array over a PIL image is read-only, and render_dot_ir draws on it.
    return np.array(Image.fromarray(image).resize((size, size), Image.BILINEAR))


def render_dot_ir(head_image: np.ndarray, target: tuple[int, int] | None, radius: int = DOT_RADIUS) -> np.ndarray:
    """Dot IR: the head image at 224 x 224 with a red disc and a 1-pixel white outline at ``target``.

    Pixels at distance ``d <= radius`` from the target are ``DOT_COLOR``; pixels with
    ``radius < d <= radius + 1`` are white. ``target=None`` returns the resized image unmarked.

    Example:
        >>> out = render_dot_ir(np.zeros((224, 224, 3), np.uint8), (100, 50))
        >>> out[50, 100].tolist(), out[50, 105].tolist(), out[50, 106].tolist()
        ([255, 51, 51], [255, 255, 255], [0, 0, 0])
    """
    image = resize_to_policy(head_image)
    if target is None:
        return image
    size = image.shape[0]
    ys, xs = np.mgrid[0:size, 0:size]
    dist2 = (xs - target[0]) ** 2 + (ys - target[1]) ** 2
    outer = radius + DOT_OUTLINE_WIDTH
    image[(dist2 > radius**2) & (dist2 <= outer**2)] = DOT_OUTLINE_COLOR
    image[dist2 <= radius**2] = DOT_COLOR
    return image


def target_or_none(xy) -> tuple[int, int] | None:
    """An ``observation.ir_target`` value ``(x, y)`` as an integer pixel, or None when it is NaN.

    The dataset stores "no valid projection" as NaN (``construction.demonstrations.demos``); rounding is half up,
    as everywhere in this module (targets written by :func:`target_pixel` are integers already).

    Example:
        >>> target_or_none([100.0, 50.0]), target_or_none([float("nan")] * 2), target_or_none(None)
        ((100, 50), None, None)
    """
    if xy is None:
        return None
    values = np.asarray(xy, dtype=np.float64).reshape(-1)
    if values.shape != (2,):
        raise ValueError(f"an IR target must be (x, y), got shape {np.shape(xy)}: {xy!r}")
    if np.isnan(values).any():
        return None
    x, y = _round_half_up(values).tolist()
    return int(x), int(y)


def render_first_frame_anchor(first_head_image: np.ndarray, first_target) -> np.ndarray:
    """First-frame anchor: the episode's FIRST head frame, dot-marked at the first frame's target.

    Appendix 13.3, "Temporal conditioning": the anchor variant "retains the initial dot-marked head
    image and supplies this fixed image throughout the episode as a fifth input". It is exactly the
    dot IR of the first observation (same rendering parameters), so training (first frame of the
    demonstration) and rollout (first observation of the episode) build it with this one function
    and hold it fixed for the episode.

    Args:
        first_head_image: ``(H, W, 3)`` uint8 head frame of the episode's first step.
        first_target: that frame's oracle target ``(x, y)`` on the 224 grid (``observation.ir_target``),
            NaN or None when the box had no valid projection (-> the frame without a marker).

    Returns:
        ``(224, 224, 3)`` uint8.

    Example:
        >>> anchor = render_first_frame_anchor(np.zeros((224, 224, 3), np.uint8), [100.0, 50.0])
        >>> anchor[50, 100].tolist()
        [255, 51, 51]
    """
    return render_dot_ir(first_head_image, target_or_none(first_target))


def jet_lut(size: int = JET_LUT_SIZE, sample_max: float = JET_SAMPLE_MAX) -> np.ndarray:
    """The analytic jet colormap sampled at ``sample_max * i / (size - 1)``, as ``(size, 3)`` uint8.

    jet(x) = clip(1.5 - |4x - c|, 0, 1) with c = 3, 2, 1 for red, green, blue.

    Example:
        >>> lut = jet_lut()
        >>> lut[0].tolist(), lut[-1].tolist()
        ([0, 0, 128], [255, 0, 0])
    """
    x = sample_max * np.arange(size, dtype=np.float64) / (size - 1)
    channels = [np.clip(1.5 - np.abs(4.0 * x - c), 0.0, 1.0) for c in (3.0, 2.0, 1.0)]
    return _round_half_up(255.0 * np.stack(channels, axis=-1)).astype(np.uint8)


def gaussian_map(target: tuple[int, int], size: int = IR_IMAGE_SIZE, sigma: float = ATTN_SIGMA) -> np.ndarray:
    """Unit-peak (not normalised) Gaussian ``H`` ``(size, size)`` centred on ``target`` = (x, y)."""
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float64)
    return np.exp(-((xs - target[0]) ** 2 + (ys - target[1]) ** 2) / (2.0 * sigma**2))


def render_attention_map_ir(target: tuple[int, int] | None, size: int = IR_IMAGE_SIZE,
                            sigma: float = ATTN_SIGMA) -> np.ndarray:
    """Attention-map IR ``(size, size, 3)`` uint8: jet LUT of ``q = round(255 H)``; None -> dark blue.

    Example:
        >>> out = render_attention_map_ir((10, 20))
        >>> out[20, 10].tolist(), out[200, 200].tolist()
        ([255, 0, 0], [0, 0, 128])
    """
    if target is None:
        return np.broadcast_to(np.array(ATTN_BACKGROUND, dtype=np.uint8), (size, size, 3)).copy()
    q = _round_half_up(255.0 * gaussian_map(target, size, sigma))
    return jet_lut()[q]


__all__ = [
    "ATTN_BACKGROUND", "ATTN_SIGMA", "DOT_COLOR", "DOT_RADIUS", "IR_IMAGE_SIZE", "JET_SAMPLE_MAX",
    "box_corners", "gaussian_map", "jet_lut", "project_points", "render_attention_map_ir", "render_dot_ir",
    "render_first_frame_anchor", "resize_to_policy", "target_or_none", "target_pixel",
]
