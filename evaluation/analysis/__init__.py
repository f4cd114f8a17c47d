"""bspatial.evaluation.analysis: how perception scores relate to policy success (Sec. 5.3.3, Table 3,
Table S11, Figure S9).

* :mod:`.perception` - per-task VQA / IR scores of an ``eval-vlm`` run folder, with their per-item rows;
* :mod:`.success` - per-task soft / strict success of ``rollout`` run folders, with their per-episode rows;
* :mod:`.join` - the tasks both sides have (the others dropped and listed);
* :mod:`.bootstrap` - percentile intervals of Spearman's rho over tasks and over items / episodes;
* :mod:`.correlate` - every perception measure against every policy: rho and both intervals;
* :mod:`.report` - the Table 3 layout (and the Table S11 pairing) as Markdown and CSV;
* :mod:`.episode_join` - each rollout episode paired with the VLM's item on its own first frame (the
  ``episode_aligned`` config): success when right vs wrong, the within-task difference, a task-stratified test;
* :mod:`.episode_join_report` - that join as join.md, join.csv and join_pairs.csv;
* :mod:`.cli` - the ``bspatial analyze correlate`` / ``rollouts`` / ``join`` command functions;
* :mod:`.plots` - the report's figures (Figure S9 scatters, per-task rate bars with Wilson intervals,
  failure-mode stacks, Figure S6-style navigation maps) as PNG and SVG;
* :mod:`.leaderboard` - the HTML leaderboard's tables: our runs' rows beside the paper's reference rows;
* :mod:`.html` - the static page (inline CSS, a vanilla-JS sort; works from ``file://``);
* :mod:`.site` - ``bspatial report --html``: the site folder, built in a staging folder and published whole.

Importing this package imports nothing heavy.
"""
