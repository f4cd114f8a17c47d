"""bspatial.evaluation.rollout: closed-loop policy evaluation (issue 7).

* :mod:`.controller` - the Appendix 16.3 receding-horizon controller (pure numpy);
* :mod:`.runner` - ``run_rollouts``: episodes of a split under a policy, one resumable result file each;
* :mod:`.ir` - oracle (Appendix 13.3) and VLM-predicted (Appendix 16.7) IR images for IR checkpoints;
* :mod:`.tables` - result files -> Table 4, per-task (S5-style) and Table S11 layouts, Markdown + CSV;
* :mod:`.cli` - the ``bspatial rollout`` command function.

Importing this package imports nothing heavy (no mujoco, no torch).
"""
