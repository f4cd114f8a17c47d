"""Call a host method that is not part of the API (teleport the base) through the proxy's private call."""
# expect: raised | not part of|must be one of the agent API


def run(api):
    api._call("_base_pose")
    api._call("motor.sim.set_base_pose", 0.0, 0.0, 0.0)
