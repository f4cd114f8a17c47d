"""Reach the instructed object: point at it with the instruction, drive up to it, press down onto its top.

Works through the pointing model alone: whatever ``point_at`` returns for the instruction is what it
reaches, so a privileged pointer makes it succeed and a chance pointer makes it reach a random spot.
The base keeps its heading (turning sweeps the arms through the other candidates) and stops with the
target ``STANDOFF_M`` ahead and ``LATERAL_M`` toward the reaching arm, where the arm reaches best.
"""

import numpy as np

STANDOFF_M = 0.62    # target this far ahead of the base after the drive
LATERAL_M = 0.22     # ... and this far toward the reaching arm's side
CLEAR_M = 0.15       # the hand travels this far above the target, clear of its neighbours
HOVER_M = 0.05       # the last stroke starts this far above the seen top ...
PRESS_M = 0.04       # ... and ends this far below it, so the fingers touch it
NEAR_M = 0.03        # the stroke aims this far nearer the robot than the seen point (wide objects) ...
EDGE_M = 0.015       # ... but stays this far inside the object's near and far edges (small ones: dice)
OBJECT_RADIUS_M = 0.12  # the target's depth points lie this close (xy) to the seen point ...
ABOVE_M = 0.008      # ... and this far above what it stands on ...
TOP_ABOVE_SEEN_M = 0.05  # ... and at most this far above the seen point (not the shelf above a book)


def cloud(api, camera):
    """(N, 3) base-frame points of every pixel of ``camera`` that sees something.

    A pinhole camera's rays are affine in the pixel once scaled to unit depth along the optical axis, so
    three corner rays and the centre ray give every pixel's ray (the same helper as the container
    program's: agent programs are self-contained modules).
    """
    depth = np.asarray(api.get_depth(camera), float)
    h, w = depth.shape
    centre = api.pixel_to_ray(w / 2, h / 2, camera)
    origin, axis = np.array(centre["origin"]), np.array(centre["direction"])

    def unit_depth(u, v):
        d = np.array(api.pixel_to_ray(u, v, camera)["direction"])
        return d / float(d @ axis)

    corner = unit_depth(0.5, 0.5)
    du = (unit_depth(w - 0.5, 0.5) - corner) / (w - 1)
    dv = (unit_depth(0.5, h - 0.5) - corner) / (h - 1)
    cols, rows = np.meshgrid(np.arange(w), np.arange(h))
    points = origin + (corner + cols[..., None] * du + rows[..., None] * dv) * depth[..., None]
    return points[depth > 0]


def stroke_point(points, seen):
    """Where the stroke aims for the target seen at base-frame ``seen``: NEAR_M nearer the robot, kept
    EDGE_M inside the near and far edges of the target's points (the points within OBJECT_RADIUS_M of
    ``seen`` above its support, the lowest height around it, and not far above ``seen``), at the
    target's top."""
    seen = np.asarray(seen, float)
    close = points[np.linalg.norm(points[:, :2] - seen[:2], axis=1) < OBJECT_RADIUS_M]
    x = float(seen[0]) - NEAR_M
    if not len(close):
        return [x, float(seen[1]), float(seen[2])]
    body = close[(close[:, 2] > float(np.percentile(close[:, 2], 5)) + ABOVE_M)
                 & (close[:, 2] < float(seen[2]) + TOP_ABOVE_SEEN_M)]
    body = body[np.linalg.norm(body[:, :2] - seen[:2], axis=1) < OBJECT_RADIUS_M]
    if not len(body):
        return [x, float(seen[1]), float(seen[2])]
    near, far = float(body[:, 0].min()), float(body[:, 0].max())
    if far - near > 2 * EDGE_M:
        x = min(max(x, near + EDGE_M), far - EDGE_M)
    return [x, float(seen[1]), max(float(seen[2]), float(body[:, 2].max()))]


def locate(api, camera="head"):
    """The base-frame point the pointer names for the instruction, or None."""
    for u, v in api.point_at(api.instruction, camera):
        p = api.pixel_to_point(u, v, camera)
        if p is not None:
            return p
    return None


def run(api):
    target = locate(api)
    if target is None:
        api.log("the pointer found nothing for the instruction")
        api.wait(1.0)
        return
    arm = "left" if target[1] >= 0 else "right"
    lateral = LATERAL_M if arm == "left" else -LATERAL_M
    api.log("target seen", point=target, arm=arm)
    drive = api.move_base(target[0] - STANDOFF_M, target[1] - lateral, 0.0)
    api.log("drive", ok=bool(drive), reason=drive.reason)
    seen = locate(api)                        # the frame moved with the base: look again
    if seen is None:
        api.log("lost the target after the drive")
        api.wait(1.0)
        return
    x, y, z = stroke_point(cloud(api, "head"), seen)
    api.log("stroke point", point=[x, y, z], seen=seen)
    api.close_gripper(arm)                    # open fingers straddle a small target (a die) without touching it
    torso = False
    for goal in ([x - 0.1, y, z + CLEAR_M], [x, y, z + HOVER_M]):
        moved = api.move_ee_to(goal, arm=arm)
        if not moved and moved.reason == "stalled" and not torso:
            torso = True                      # out of the arm's reach: lean with the torso from here on
            moved = api.move_ee_to(goal, arm=arm, use_torso=True)
    result = api.move_ee_to([x, y, z - PRESS_M], arm=arm, speed=0.1, use_torso=torso)
    api.log("stroke", result="ok" if result else result.reason)
    api.wait(1.0)
