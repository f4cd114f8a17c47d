"""Scene generators of the 15 manipulation tasks (Table S2), one module per scene family.

Each generator is ``(spec, variant, rng) -> Layout``; :mod:`bspatial.tasks.registry` binds them to
their Table S2 rows. Nothing is registered at import time.
"""
