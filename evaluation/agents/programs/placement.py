"""Place the object where the instruction says: point at the object, grasp it from above, lift it, point at
where it should go, carry it there, lower it and let go.

Works through the pointing model alone: the object is what ``point_at`` returns for the instruction, the
goal what it returns when asked *where* the instruction puts it.
"""

CAMERA = "head"
STANDOFF_M = 0.55    # the object this far ahead of the base after the first drive
LATERAL_M = 0.22     # ... and this far toward the grasping arm
CLEAR_M = 0.12       # the hand travels this far above what it passes over
GRASP_DEPTH_M = 0.03  # the closed hand pushes this far below the seen top (the assisted grasp engages on contact)
RELEASE_M = 0.06     # the hand opens this far above the goal surface


def seen(api, text):
    """The first base-frame point the pointer names for ``text``, or None."""
    for u, v in api.point_at(text, CAMERA):
        p = api.pixel_to_point(u, v, CAMERA)
        if p is not None:
            return p
    return None


def run(api):
    where = "where does the instruction put the object: " + api.instruction
    obj = seen(api, api.instruction)
    if obj is None:
        api.log("the pointer found no object")
        api.wait(1.0)
        return
    arm = "left" if obj[1] >= 0 else "right"
    lateral = LATERAL_M if arm == "left" else -LATERAL_M
    api.move_base(obj[0] - STANDOFF_M, obj[1] - lateral, 0.0)
    obj = seen(api, api.instruction) or obj
    x, y, z = obj
    api.close_gripper(arm)
    api.move_ee_to([x - 0.1, y, z + CLEAR_M], arm=arm)
    api.move_ee_to([x, y, z + 0.04], arm=arm)
    api.move_ee_to([x, y, z - GRASP_DEPTH_M], arm=arm, speed=0.08)
    state = api.get_state()
    api.log("grasp", holding=state["holding"][arm])
    if not state["holding"][arm]:
        api.open_gripper(arm)
        api.move_ee_to([x - 0.02, y, z + 0.1], arm=arm)
        api.close_gripper(arm)
        api.move_ee_to([x - 0.02, y, z - GRASP_DEPTH_M], arm=arm, speed=0.08)
    api.move_ee_by([0, 0, CLEAR_M], arm=arm)
    goal = seen(api, where)
    if goal is None:
        api.log("the pointer found no goal")
        return
    gx, gy, gz = goal
    api.log("goal", point=goal)
    api.move_ee_to([gx, gy, max(gz, z) + CLEAR_M], arm=arm, use_torso=abs(gy - y) > 0.4)
    api.move_ee_to([gx, gy, gz + RELEASE_M], arm=arm, speed=0.1)
    api.open_gripper(arm)
    api.move_ee_by([0, 0, 0.1], arm=arm)
    api.wait(2.0)
