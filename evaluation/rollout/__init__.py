"""bspatial.evaluation.rollout: closed-loop policy evaluation.

* :mod:`.controller` - the Appendix 16.3 receding-horizon controller (pure numpy);
* :mod:`.plan` - the episodes of a split (from the manifests) and the run's settings;
* :mod:`.policies` - scripted, random and checkpoint policies (the predictor behind a checkpoint);
* :mod:`.episodes` - one episode from instance to result file, and reading result files back;
* :mod:`.runner` - ``run_rollouts``: plan, resume, run in this process or in spawned workers;
* :mod:`.ir` - oracle (Appendix 13.3) and VLM-predicted (Appendix 16.7) IR images for IR checkpoints;
* :mod:`.tables` - result files -> Table 4, per-task (S5-style) and Table S11 layouts, Markdown + CSV;
* :mod:`.cli` - the ``bspatial rollout`` command function.

Importing this package imports nothing heavy (no mujoco, no torch).
"""
