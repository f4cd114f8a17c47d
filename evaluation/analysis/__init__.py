"""bspatial.evaluation.analysis: how perception scores relate to policy success (Sec. 5.3.3, Table 3,
Table S11, Figure S9).

* :mod:`.perception` - per-task VQA / IR scores of an ``eval-vlm`` run folder, with their per-item rows;
* :mod:`.success` - per-task soft / strict success of ``rollout`` run folders, with their per-episode rows;
* :mod:`.join` - the tasks both sides have (the others dropped and listed);
* :mod:`.bootstrap` - percentile intervals of Spearman's rho over tasks and over items / episodes;
* :mod:`.correlate` - every perception measure against every policy: rho and both intervals;
* :mod:`.report` - the Table 3 layout (and the Table S11 pairing) as Markdown and CSV;
* :mod:`.cli` - the ``bspatial analyze correlate`` command function.

Importing this package imports nothing heavy.
"""
