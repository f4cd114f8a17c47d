"""Code-as-policy agents (paper Section 4.4, Appendix 16.5): the agent API and the sandbox programs run in.

* :mod:`~bspatial.evaluation.agents.api`: the host-side API over a running episode (perception, geometry,
  blocking motion primitives), with no privileged poses, identities or segmentation.
* :mod:`~bspatial.evaluation.agents.geometry`: the base frame and camera pixel / ray / depth geometry.
* :mod:`~bspatial.evaluation.agents.motion`: the motion primitives and their failure reasons.
* :mod:`~bspatial.evaluation.agents.sandbox`: runs ``run(api)`` in a confined child process, the API
  reached over a pipe (:mod:`~bspatial.evaluation.agents.child` is the child's side,
  :mod:`~bspatial.evaluation.agents.confine` its kernel confinement).
* :mod:`~bspatial.evaluation.agents.episode`: one scored episode of a program (sandbox, then hold still).
* :mod:`~bspatial.evaluation.agents.hostile_suite`: the programs of ``hostile/`` that attack the sandbox,
  each with the outcome it must get (the README's reliability table, ``benchmarks/agent_sandbox.py``).
"""
