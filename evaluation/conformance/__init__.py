"""bspatial.evaluation.conformance: checks that nothing differs between the demonstrations and the rollouts.

* :mod:`.observations` - the observation a policy receives at step t through ``bspatial rollout``, ``lerobot-eval
  --env.type=bspatial`` and the openpi server, against the LeRobot dataset's frame t;
* the replay check runs through ``bspatial rollout --policy replay:<demos> --split training``
  (:mod:`bspatial.evaluation.rollout.policy_replay`; ``benchmarks/replay.py`` over many episodes).

The top of ``bspatial.evaluation``: it uses the rollout, the envs and the serving packages, and nothing imports it
but the benchmarks and the tests.
"""
