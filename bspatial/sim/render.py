"""Two-pass offscreen MuJoCo renderer: RGB, metric depth and instance segmentation per camera.

``mujoco.Renderer`` needs three renders for RGB + depth + segmentation (one per mode). Here one
scene update feeds two renders: a normal RGB pass, and a segmentation pass
(``mjRND_SEGMENT | mjRND_IDCOLOR``) whose colour buffer carries geom ids and whose depth buffer is
read in the same ``mjr_readPixels`` call. Depth from the segmentation pass is also cleaner (no
anti-aliasing at edges). MuJoCo 4 renders reversed-Z (near -> 1, far -> 0 with ``mjDEPTH_ZEROFAR``);
:func:`linearize_depth` undoes it.

The CPU render profile (Mesa llvmpipe through EGL) is applied by the backend when it builds the
model: no multisampling, at most one shadow light with a small shadow map, no reflections.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import mujoco
import numpy as np

BACKGROUND = -1
"""Segmentation id of pixels where nothing was rendered."""

HIDDEN_GROUP = 3
"""Geom group of invisible colliders (``Part(visible=False)``: the primitives under a visual mesh).

Both passes of :class:`SegmentationRenderer` draw from one scene update with this group switched off,
so segmentation (and the visibility filters and IR labels built on it) sees the visual mesh, never the
collider. MuJoCo's default ``MjvOption`` also draws groups 0-2 only, so ``mujoco.Renderer`` and the
viewer hide the colliders the same way."""

CEILING_GROUP = 4
"""Geom group of the rooms' ceilings and their light fixtures (:class:`bspatial.world.spec.Ceiling`).

The one place that decides who sees a ceiling is :meth:`SegmentationRenderer.render`: a camera below the
lowest ceiling's underside (a head, wrist or room camera) sees the ceilings; a camera at or above it (the
scenes' ``top`` cameras, the navigation maps, any view over the walls) does not, and sees the rooms as it did
before there were ceilings. The ceilings collide with nothing and cast no shadow (``geom_castshadow`` 0: the
sun above them still lights the rooms), and their body is no object, so segmentation labels them background.
``mujoco.Renderer`` and the viewer leave group 4 off by default (a viewer user can switch it on)."""


def gl_context_class() -> type:
    """MuJoCo's GL context class, or a headless one when mujoco defaulted to GLFW without a display.

    MuJoCo reads ``MUJOCO_GL`` once, at import; :mod:`bspatial.sim` sets a headless default, but a user
    who imported mujoco first gets GLFW, which cannot open a window on a headless machine. Then fall
    back to EGL / OSMesa directly instead of failing deep inside ``MjrContext``.
    """
    from bspatial.sim import default_gl_platform

    cls = getattr(mujoco, "GLContext", None)
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if cls is not None and not (headless and cls.__module__.startswith("mujoco.glfw")):
        return cls
    platform = default_gl_platform()
    if platform is None:
        raise RuntimeError("no headless OpenGL found for MuJoCo: install libEGL (Mesa) or libOSMesa and set "
                           f"MUJOCO_GL=egl or osmesa (MUJOCO_GL={os.environ.get('MUJOCO_GL')!r})")
    return importlib.import_module(f"mujoco.{platform}").GLContext


def camera_to_world(cam_xpos: np.ndarray, cam_xmat: np.ndarray) -> np.ndarray:
    """4x4 camera-to-world transform in the OpenCV convention: R = cam_xmat @ diag(1, -1, -1)."""
    T = np.eye(4)
    T[:3, :3] = np.asarray(cam_xmat).reshape(3, 3) @ np.diag([1.0, -1.0, -1.0])
    T[:3, 3] = cam_xpos
    return T


def linearize_depth(buffer: np.ndarray, near: float, far: float) -> np.ndarray:
    """Metric z-depth from a reversed-Z depth buffer read with ``mjDEPTH_ZEROFAR``.

    In reversed-Z the window depth b equals NDC depth and b = n (f - z) / (z (f - n)), so
    z = n f / (n + b (f - n)): b = 1 at the near plane, 0 at the far plane. Computed in float64.

    Example:
        >>> linearize_depth(np.array([1.0, 0.0]), 0.01, 50.0).round(9).tolist()
        [0.01, 50.0]
    """
    b = buffer.astype(np.float64)
    return (near * far) / (near + b * (far - near))


class SegmentationRenderer:
    """Owns one GL context + MjrContext and renders RGB, depth and instance ids for any camera.

    Args:
        model: the compiled model; its offscreen buffer must be at least ``max_width x max_height``.
        geom_instance: (ngeom,) int instance id of every model geom (-1 to leave as background).
        max_width, max_height: the largest frame this renderer will be asked for.
        gl: a GL context (:func:`gl_context_class`, at least ``max_width x max_height``) to render in, owned by
            the caller and left open by :meth:`close`; None: the renderer opens and frees its own. A simulator
            that loads scene after scene keeps one: the first MjrContext of a fresh context costs 0.2 s (Mesa
            compiles its shaders), a later one in the same context 0.02 s (measured on an activity scene).
    """

    def __init__(self, model: mujoco.MjModel, geom_instance: np.ndarray, max_width: int, max_height: int,
                 gl: Any | None = None) -> None:
        self._gl = None
        self._own_gl = gl is None
        self._ctx = None
        if max_width > model.vis.global_.offwidth or max_height > model.vis.global_.offheight:
            raise ValueError(f"max size {max_width}x{max_height} exceeds the model's offscreen buffer "
                             f"{model.vis.global_.offwidth}x{model.vis.global_.offheight}")
        self.model = model
        self.geom_instance = np.asarray(geom_instance, dtype=np.int32)
        self._gl = gl_context_class()(max_width, max_height) if gl is None else gl
        self._gl.make_current()
        self._ctx = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150.value)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self._ctx)
        self._ctx.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self.scene = mujoco.MjvScene(model, maxgeom=max(1000, 2 * model.ngeom + 100))
        self.option = mujoco.MjvOption()
        self.option.geomgroup[HIDDEN_GROUP] = 0
        # The ceilings' slabs (boxes; their fixtures hang below them): how high their undersides are decides which
        # cameras see them (CEILING_GROUP).
        self._ceiling_slabs = np.flatnonzero((model.geom_group == CEILING_GROUP)
                                             & (model.geom_type == int(mujoco.mjtGeom.mjGEOM_BOX)))
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        extent = model.stat.extent
        self.near = float(model.vis.map.znear * extent)
        self.far = float(model.vis.map.zfar * extent)
        self.max_width, self.max_height = max_width, max_height

    @property
    def closed(self) -> bool:
        return self._ctx is None

    def render(self, data: mujoco.MjData, camera_id: int, width: int, height: int, *, rgb_only: bool = False
               ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Return (rgb uint8 HxWx3, depth float32 HxW metres (0 = no hit), instance ids int32 HxW); with
        ``rgb_only`` the segmentation pass is skipped and depth and ids are None (the same RGB pixels: the RGB pass
        is the first of the two either way)."""
        if self._ctx is None:
            raise RuntimeError("render called after close()")
        if not (0 < width <= self.max_width and 0 < height <= self.max_height):
            raise ValueError(f"width x height must be within 1..{self.max_width} x 1..{self.max_height}, "
                             f"got {width}x{height}")
        self._gl.make_current()
        self.camera.fixedcamid = camera_id
        self.option.geomgroup[CEILING_GROUP] = self._below_ceilings(data, camera_id)
        scene, flags = self.scene, self.scene.flags
        mujoco.mjv_updateScene(self.model, data, self.option, None, self.camera,
                               mujoco.mjtCatBit.mjCAT_ALL.value, scene)
        rect = mujoco.MjrRect(0, 0, width, height)
        rgb = np.empty((height, width, 3), dtype=np.uint8)
        seg_rgb = np.empty((height, width, 3), dtype=np.uint8)
        depth_buf = np.empty((height, width), dtype=np.float32)
        seg_flag, id_flag = mujoco.mjtRndFlag.mjRND_SEGMENT, mujoco.mjtRndFlag.mjRND_IDCOLOR
        flags[seg_flag] = flags[id_flag] = 0
        mujoco.mjr_render(rect, scene, self._ctx)
        mujoco.mjr_readPixels(rgb, None, rect, self._ctx)
        if rgb_only:
            return np.ascontiguousarray(rgb[::-1]), None, None
        flags[seg_flag] = flags[id_flag] = 1
        try:
            mujoco.mjr_render(rect, scene, self._ctx)
            mujoco.mjr_readPixels(seg_rgb, depth_buf, rect, self._ctx)
        finally:
            flags[seg_flag] = flags[id_flag] = 0
        seg = self._instances(seg_rgb[::-1])
        depth = linearize_depth(depth_buf[::-1], self.near, self.far).astype(np.float32)
        depth[seg == BACKGROUND] = 0.0
        return np.ascontiguousarray(rgb[::-1]), depth, seg

    def _below_ceilings(self, data: mujoco.MjData, camera_id: int) -> bool:
        """Whether camera ``camera_id`` is below the lowest ceiling's underside (see :data:`CEILING_GROUP`)."""
        slabs = self._ceiling_slabs
        if not slabs.size:
            return False
        underside = float(np.min(data.geom_xpos[slabs, 2] - self.model.geom_size[slabs, 2]))
        return bool(data.cam_xpos[camera_id, 2] < underside)

    def _instances(self, seg_rgb: np.ndarray) -> np.ndarray:
        """Decode IDCOLOR pixels (segid + 1, 0 = background) to instance ids via the scene geoms."""
        n = self.scene.ngeom
        lut = np.full(n + 1, BACKGROUND, dtype=np.int32)
        geom_obj = int(mujoco.mjtObj.mjOBJ_GEOM)
        for g in self.scene.geoms[:n]:
            if g.segid >= 0 and int(g.objtype) == geom_obj and 0 <= g.objid < len(self.geom_instance):
                lut[g.segid + 1] = self.geom_instance[g.objid]
        code = (seg_rgb[..., 0].astype(np.int32) | (seg_rgb[..., 1].astype(np.int32) << 8)
                | (seg_rgb[..., 2].astype(np.int32) << 16))
        return lut[np.minimum(code, n)]

    def close(self) -> None:
        """Free the MjrContext, and the GL context when this renderer opened it (idempotent)."""
        if self._ctx is not None:
            self._gl.make_current()
            self._ctx.free()
            self._ctx = None
        if self._gl is not None and self._own_gl:
            self._gl.free()
        self._gl = None

    def __enter__(self) -> "SegmentationRenderer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown: GL may already be gone
            pass
