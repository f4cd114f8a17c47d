"""The foundation: the benchmark's catalogue, the paper's counts and thresholds, the data schema.

Every other layer imports from here; this package imports nothing of bspatial.

* :mod:`bspatial.catalog.tasks`: the Table S2 task catalogue (``TaskSpec``, ``TASKS``, split counts);
* :mod:`bspatial.catalog.counts`: the paper's question counts (Table S1, Section 3.3);
"""
