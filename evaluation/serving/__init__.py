"""bspatial.evaluation.serving: our policies behind other ecosystems' serving protocols.

* :mod:`.protocol` - openpi's websocket policy protocol: the msgpack-numpy wire format, the observation keys
  we send and accept, the 23-dim action layout the replies carry (shared with the ``openpi:`` rollout client,
  :mod:`bspatial.evaluation.serving.policy_openpi`);
* :mod:`.server` - ``bspatial serve-policy <checkpoint>``: a BSpatialVLA checkpoint as an openpi policy server;
* :mod:`.policy_openpi` - the other way round, ``bspatial rollout --policy openpi:ws://...``: any openpi server
  drives the simulator (found by name in the rollout's ``EXTERNAL_POLICIES``; the rollout never imports it);
* :mod:`.norm_stats` - LeRobot ``meta/stats.json`` of our demos -> openpi ``norm_stats.json``;
* :mod:`.cli` - the ``serve-policy`` and ``openpi-norm-stats`` command functions.

Importing this package imports nothing heavy (no torch, no websockets).
"""
