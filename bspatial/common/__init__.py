"""Foundation utilities every layer may use; this package imports nothing of bspatial but itself.

* :mod:`bspatial.common.files`: atomic file writes and folder publishing (nothing half-written);
* :mod:`bspatial.common.seeds`: the one seed-derivation rule (stable across processes and runs);
* :mod:`bspatial.common.paths`: where the shipped data folders (``metrics/``, ``datasets/``,
  ``hub_cards/``) live, in a checkout or an installed wheel;
* :mod:`bspatial.common.lazy`: PEP 562 lazy package exports;
* :mod:`bspatial.common.locks`: one run per output folder (an exclusive lock naming its holder);
* :mod:`bspatial.common.distributed`: this process's rank under a launcher, and a barrier that waits;
* :mod:`bspatial.common.processes`: worker pools whose workers die with their parent;
* :mod:`bspatial.common.executors`: where a job plan runs: this process, local workers or Ray actors.
"""
