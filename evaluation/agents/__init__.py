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

Program development (``bspatial agents develop / evaluate / tables``, :mod:`~bspatial.evaluation.agents.cli`):

* :mod:`~bspatial.evaluation.agents.prompts`: the writer's system prompt and requests.
* :mod:`~bspatial.evaluation.agents.writers`: the scripted reference writer (its programs in
  :mod:`~bspatial.evaluation.agents.programs`) and writers behind an OpenAI-compatible server.
* :mod:`~bspatial.evaluation.agents.pointers`: the privileged oracle pointer and the other pointing models.
* :mod:`~bspatial.evaluation.agents.screening`: the mock API over a recorded scene and the screening rules.
* :mod:`~bspatial.evaluation.agents.records`: an agent episode as a result record, and its feedback.
* :mod:`~bspatial.evaluation.agents.develop`: the writer loop, validation and freezing, resumable.
* :mod:`~bspatial.evaluation.agents.evaluate`: frozen programs on held-out episodes.
* :mod:`~bspatial.evaluation.agents.tables`: Tables 5 and S6 beside the paper's rows.
"""
