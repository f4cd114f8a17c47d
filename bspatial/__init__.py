"""BEHAVIOR-Spatial: spatial VQA, point grounding (IR) and robot action suites on shared scenes.

Kept import-light on purpose: `bspatial --help` and the scoring functions must not pull in torch,
transformers or mujoco.
"""

__version__ = "0.1.0"
