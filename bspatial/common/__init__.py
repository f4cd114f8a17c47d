"""Foundation utilities every layer may use; this package imports nothing of bspatial but itself.

* :mod:`bspatial.common.files`: atomic file writes and folder publishing (nothing half-written);
* :mod:`bspatial.common.seeds`: the one seed-derivation rule (stable across processes and runs);
* :mod:`bspatial.common.paths`: where the shipped data folders (``metrics/``, ``datasets/``,
  ``hub_cards/``) live, in a checkout or an installed wheel;
* :mod:`bspatial.common.lazy`: PEP 562 lazy package exports.
"""
