"""openpi's websocket policy protocol, as both our server and our ``openpi:`` rollout client speak it.

The protocol (openpi ``src/openpi/serving/websocket_policy_server.py``, client ``openpi_client.
websocket_client_policy.WebsocketClientPolicy``):

1. The client opens a websocket (no compression, no message size limit). The server's first message is its
   **metadata**: a msgpack map (ours: :func:`server_metadata`).
2. Each request is one **observation**: a msgpack map of numpy arrays and strings. The reply is a msgpack map
   with ``"actions"`` of shape ``(horizon, action_dim)`` and, from openpi's server and ours,
   ``"server_timing": {"infer_ms": ..., "prev_total_ms": ...}``.
3. A failed request is answered with a **text** frame (openpi sends the traceback) and the server closes the
   connection with code 1011; the client raises with that text.
4. ``GET /healthz`` answers ``200 OK`` without a websocket.
5. **Reset**: the wire protocol has none (``WebsocketClientPolicy.reset`` is a no-op on the client, and
   openpi's server implements only metadata and ``infer``). An episode boundary is therefore a new connection:
   our server keeps state only per connection (the flow-matching noise generator, seeded anew on connect)
   and our rollout client opens one connection per episode.

Arrays travel as msgpack-numpy maps ``{b"__ndarray__": True, b"data": raw bytes, b"dtype": dtype.str,
b"shape": shape}`` and numpy scalars as ``{b"__npgeneric__": True, b"data": value, b"dtype": dtype.str}``
(openpi's ``msgpack_numpy``; object, void and complex dtypes are refused, so nothing is ever pickled).

Observation keys (BEHAVIOR-1K's openpi convention for the R1Pro, the keys of the 2025 challenge's openpi
policies, so such a server finds the images where it looks for them):

===================================  ==========================================================================
``observation/egocentric_camera``    head camera, ``(H, W, 3)`` uint8 RGB (``(3, H, W)`` accepted by our server)
``observation/wrist_image_left``     left wrist camera, same format
``observation/wrist_image_right``    right wrist camera, same format
``observation/state``                ``(84,)`` float32 proprioception in :data:`bspatial.catalog.schema.
                                     PROPRIO_LAYOUT` order (NOT BEHAVIOR-1K's raw proprio vector: a server
                                     trained on BEHAVIOR data must map its state indices to this layout)
``prompt``                           the instruction (str), openpi's key for the language input
``observation/ir_image``             IR checkpoints only: the IR image (Appendix 13.3), same image format
``observation/anchor_image``         first-frame-anchor checkpoints only: the episode's anchor image
===================================  ==========================================================================

Actions: ``"actions"`` is ``(horizon, 23)`` in robot units, BEHAVIOR's R1Pro layout
(:data:`bspatial.catalog.schema.ACTION_SLICES`): base ``0:3`` (vx, vy in the robot frame, m/s; wz, rad/s),
torso ``3:7`` and left arm ``7:14`` (absolute joint positions, rad), left gripper ``14`` (+1 open, -1 closed),
right arm ``15:22``, right gripper ``22``. The simulator steps at 30 Hz, one row per step.

Example:
    >>> import numpy as np
    >>> data = pack({"actions": np.zeros((2, 23), np.float32), "prompt": "pick"})
    >>> out = unpack(data)
    >>> out["actions"].shape, out["actions"].dtype.name, out["prompt"]
    ((2, 23), 'float32', 'pick')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bspatial.catalog.schema import ACTION_SLICES, CONTROL_HZ, PROPRIO_SLICES, STATE_DIM

PROMPT_KEY = "prompt"
"""openpi's key of the language instruction."""
STATE_KEY = "observation/state"
"""The 84-dim proprioceptive state (:data:`bspatial.catalog.schema.PROPRIO_LAYOUT`)."""
CAMERA_KEYS: dict[str, str] = {
    "head": "observation/egocentric_camera",
    "left_wrist": "observation/wrist_image_left",
    "right_wrist": "observation/wrist_image_right",
}
"""Our camera name -> observation key (BEHAVIOR-1K's openpi names for the R1Pro's three cameras)."""
IR_IMAGE_KEYS: dict[str, str] = {"ir": "observation/ir_image", "anchor": "observation/anchor_image"}
"""Extra image slots of IR checkpoints (``processing_bspatial_vla``'s ``ir`` and ``anchor``) -> observation key."""
NOISE_SEED_KEY = "bspatial/noise_seed"
"""Optional: the episode's flow-matching noise seed (an int >= 0), sent by our rollout client with every observation
(:func:`bspatial.evaluation.rollout.plan.episode_noise_seed` of ``--seed`` and the scene seed). Our server seeds the
connection's noise generator with it on the connection's first request, so a served rollout draws the noise an
in-process rollout of the same episode draws and the two play the same episode; without it the connection's
generator starts from the server's ``--seed``. Other openpi servers ignore a key they do not read."""
ACTIONS_KEY = "actions"
"""The reply's action chunk ``(horizon, action_dim)``."""
TIMING_KEY = "server_timing"
"""The reply's timing map (milliseconds), as openpi's server sends it."""
HEALTH_PATH = "/healthz"
"""Plain HTTP health check of openpi's server (200 OK, no websocket)."""
INTERNAL_ERROR = 1011
"""Close code after a failed request (websocket "internal error", as openpi's server closes)."""


def _encode(obj: Any) -> Any:
    if isinstance(obj, (np.ndarray, np.generic)) and obj.dtype.kind in ("V", "O", "c"):
        # These would need pickle (object) or have no portable raw form: refused, as openpi refuses them.
        raise ValueError(f"cannot send a numpy value of dtype {obj.dtype} over the openpi protocol")
    if isinstance(obj, np.ndarray):
        return {b"__ndarray__": True, b"data": np.ascontiguousarray(obj).tobytes(), b"dtype": obj.dtype.str,
                b"shape": list(obj.shape)}
    if isinstance(obj, np.generic):
        return {b"__npgeneric__": True, b"data": obj.item(), b"dtype": obj.dtype.str}
    return obj


def _decode(obj: dict) -> Any:
    if b"__ndarray__" in obj:
        return np.ndarray(buffer=obj[b"data"], dtype=np.dtype(obj[b"dtype"]), shape=tuple(obj[b"shape"]))
    if b"__npgeneric__" in obj:
        return np.dtype(obj[b"dtype"]).type(obj[b"data"])
    return obj


def pack(obj: Any) -> bytes:
    """msgpack bytes of ``obj`` (maps, lists, strings, numbers, numpy arrays and scalars)."""
    import msgpack

    return msgpack.packb(obj, default=_encode)


def unpack(data: bytes) -> Any:
    """The value :func:`pack` (or openpi's ``msgpack_numpy``) encoded; arrays are read-only views of ``data``."""
    import msgpack

    return msgpack.unpackb(data, object_hook=_decode)


def noise_seed_of(observation: dict[str, Any]) -> int | None:
    """The :data:`NOISE_SEED_KEY` of an observation map, or None without one; ValueError naming the key otherwise.

    Example:
        >>> noise_seed_of({NOISE_SEED_KEY: np.int64(5)}), noise_seed_of({})
        (5, None)
    """
    if NOISE_SEED_KEY not in observation:
        return None
    value = observation[NOISE_SEED_KEY]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or int(value) < 0:
        raise ValueError(f"observation {NOISE_SEED_KEY!r} must be an int >= 0, got {value!r}")
    return int(value)


def action_layout() -> dict[str, list[int]]:
    """Part of the 23-dim action -> ``[start, stop)`` (:data:`bspatial.catalog.schema.ACTION_SLICES`)."""
    return {name: [s.start, s.stop] for name, s in ACTION_SLICES.items()}


def state_layout() -> dict[str, list[int]]:
    """Part of the 84-dim state -> ``[start, stop)`` (:data:`bspatial.catalog.schema.PROPRIO_SLICES`)."""
    return {name: [s.start, s.stop] for name, s in PROPRIO_SLICES.items()}


def observation(instruction: str, state: np.ndarray, images: dict[str, np.ndarray],
                noise_seed: int | None = None) -> dict[str, Any]:
    """The observation map of one step: ``images`` maps camera names (and ``ir`` / ``anchor``) to RGB frames;
    ``noise_seed`` (optional) is sent as :data:`NOISE_SEED_KEY`.

    Example:
        >>> obs = observation("pick", np.zeros(84), {"head": np.zeros((4, 4, 3), np.uint8)})
        >>> sorted(obs), obs["observation/state"].dtype.name
        (['observation/egocentric_camera', 'observation/state', 'prompt'], 'float32')
    """
    state = np.asarray(state, dtype=np.float32)
    if state.shape != (STATE_DIM,):
        raise ValueError(f"state must have shape ({STATE_DIM},), got {state.shape}")
    keys = {**CAMERA_KEYS, **IR_IMAGE_KEYS}
    unknown = sorted(set(images) - set(keys))
    if unknown:
        raise ValueError(f"unknown image slots {unknown}; known: {sorted(keys)}")
    out: dict[str, Any] = {PROMPT_KEY: str(instruction), STATE_KEY: state}
    for name, rgb in images.items():
        rgb = np.asarray(rgb)
        if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[-1] != 3:
            # No silent cast: a float frame in [0, 1] would become black.
            raise ValueError(f"image {name!r} must be (H, W, 3) uint8 RGB, got {rgb.dtype} {rgb.shape}")
        out[keys[name]] = np.ascontiguousarray(rgb)
    if noise_seed is not None:
        out[NOISE_SEED_KEY] = np.int64(noise_seed)
    return out


def server_metadata(*, checkpoint: str, cameras: list[str], horizon: int, action_dim: int, ir_mode: str,
                    first_frame_anchor: bool, seed: int, ir_dot_radius: int | None = None) -> dict[str, Any]:
    """What ``bspatial serve-policy`` sends on connect: enough for a client to build its observations
    (an IR checkpoint's client draws the dot with ``ir_dot_radius`` pixels at 224 px, as training did)."""
    required = [PROMPT_KEY, STATE_KEY, *(CAMERA_KEYS[c] for c in cameras)]
    if ir_mode != "none":
        required.append(IR_IMAGE_KEYS["ir"])
    if first_frame_anchor:
        required.append(IR_IMAGE_KEYS["anchor"])
    return {
        "server": "bspatial serve-policy",
        "policy": "bspatial_vla",
        "checkpoint": checkpoint,
        "observation_keys": required,
        "image_format": "uint8 RGB, (H, W, 3) or (3, H, W)",
        "cameras": {c: CAMERA_KEYS[c] for c in cameras},
        "state_dim": STATE_DIM,
        "state_layout": state_layout(),
        "action_horizon": int(horizon),
        "action_dim": int(action_dim),
        "action_layout": action_layout(),
        "control_hz": CONTROL_HZ,
        "ir_mode": ir_mode,
        "first_frame_anchor": bool(first_frame_anchor),
        **({"ir_dot_radius": int(ir_dot_radius)} if ir_mode == "dot" and ir_dot_radius is not None else {}),
        "seed": int(seed),
    }

