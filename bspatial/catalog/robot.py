"""The robot's body: the sizes and camera mounts every layer that reasons about the robot reads.

The simulator builds the robot from these (:mod:`bspatial.sim.robot`); the scripted experts, the floor-plan
planner and the question builders keep their clearances from them, so a change of the body reaches all of them.
"""

from __future__ import annotations

import math

BASE_HALF_EXTENTS_M = (0.30, 0.25, 0.12)
"""Half extents of the base box (x forward, y left, z up): a 0.60 x 0.50 m footprint, 0.24 m tall."""
BASE_CENTRE_HEIGHT_M = 0.18
"""Height of the base box's centre above the floor."""
BASE_TOP_M = 0.30
"""Height of the base box's top, where the torso's first joint sits (centre 0.18 + half height 0.12)."""
BASE_RADIUS_M = 0.40
"""Planning radius: the footprint's circumscribed radius, sqrt(0.30^2 + 0.25^2) = 0.39 m, rounded up."""
HEAD_FOVY_DEG = 60.0
"""Vertical field of view of the head camera."""
HEAD_PITCH_DEG = 35.0
"""The head camera looks down this far below horizontal."""
HEAD_CAMERA_HEIGHT_M = 1.45
"""Height of the head camera at the start pose (measured in the MuJoCo backend after reset)."""
WRIST_FOVY_DEG = 75.0
"""Vertical field of view of the wrist cameras."""

assert math.isclose(BASE_TOP_M, BASE_CENTRE_HEIGHT_M + BASE_HALF_EXTENTS_M[2])
assert math.hypot(*BASE_HALF_EXTENTS_M[:2]) <= BASE_RADIUS_M
