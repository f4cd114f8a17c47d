"""Reach the instructed object: point at it with the instruction, drive up to it, press down onto its top.

Works through the pointing model alone: whatever ``point_at`` returns for the instruction is what it
reaches, so a privileged pointer makes it succeed and a chance pointer makes it reach a random spot.
The base keeps its heading (turning sweeps the arms through the other candidates) and stops with the
target ``STANDOFF_M`` ahead and ``LATERAL_M`` toward the reaching arm, where the arm reaches best.
"""

STANDOFF_M = 0.62    # target this far ahead of the base after the drive
LATERAL_M = 0.22     # ... and this far toward the reaching arm's side
CLEAR_M = 0.15       # the hand travels this far above the target, clear of its neighbours
HOVER_M = 0.05       # the last stroke starts this far above the seen top ...
PRESS_M = 0.04       # ... and ends this far below it, so the fingers touch it
NEAR_M = 0.03        # the stroke aims this far nearer the robot than the seen point (wide objects)


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
    x, y, z = seen
    x -= NEAR_M
    torso = False
    for goal in ([x - 0.1, y, z + CLEAR_M], [x, y, z + HOVER_M]):
        moved = api.move_ee_to(goal, arm=arm)
        if not moved and moved.reason == "stalled" and not torso:
            torso = True                      # out of the arm's reach: lean with the torso from here on
            moved = api.move_ee_to(goal, arm=arm, use_torso=True)
    result = api.move_ee_to([x, y, z - PRESS_M], arm=arm, speed=0.1, use_torso=torso)
    api.log("stroke", result="ok" if result else result.reason)
    api.wait(1.0)
