"""BEHAVIOR-Spatial action outcomes: strict / soft / wrong-target rates over episodes with Wilson intervals."""

import datasets
import evaluate

# evaluate (0.4.6) reads a "# From: <spec>" comment on an import line as what to pip install when the
# import fails, line by line: without it a copied module would say "pip install bspatial" (no such package).
from bspatial.citation import CITATION as _CITATION  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial
from bspatial.citation import HOMEPAGE  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial
from bspatial.scoring.action import action_rates  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial
from bspatial.scoring.validation import check_not_empty  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial

_DESCRIPTION = """
Robot-action rates of BEHAVIOR-Spatial (paper Section 5.1, Table S4). Each episode has an outcome:
"correct" (strict success: the instructed target or location), "wrong" (committed to a
non-instructed candidate or location) or "none"; a "none" episode may carry soft credit
(target-consistent progress under the task family's rule). Rates are percentages pooled over
episodes: strict = correct / n, soft = (correct + soft-credited none) / n (the paper's "+Soft"),
wrong = wrong / n, each with a Wilson 95% interval, overall and per task. Navigation episodes are
"correct" or "none" without soft credit. Episode traces are turned into outcomes by
`bspatial.scoring.action.outcome_from_trace`.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): episode outcomes, each "correct", "wrong" or "none".
    references (`list` of `str`): the task of each episode (a BEHAVIOR-Spatial task name).
    soft_credit (`list` of `bool`, optional): soft credit per episode (only on "none" outcomes).
        Not buffered by `add_batch`: pass it to `compute`.

Returns:
    strict, soft, wrong (`float`): pooled percent over episodes, with <rate>_ci_low / <rate>_ci_high.
    n (`int`): number of episodes (no episodes at all raises ValueError: there is nothing to score).
    <task>/strict, <task>/soft, <task>/wrong (`float`): per-task percent, with CI keys alike.

Examples:
    >>> import evaluate
    >>> action = evaluate.load("metrics/bspatial_action")  # or "bspatial_action" after `bspatial hub install`
    >>> result = action.compute(
    ...     predictions=["correct", "none", "wrong", "none"],
    ...     references=["reach_dice"] * 4,
    ...     soft_credit=[False, True, False, False],
    ... )
    >>> result["strict"], result["soft"], result["wrong"], result["n"]
    (25.0, 50.0, 25.0, 4)
"""



@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BspatialAction(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            reference_urls=[HOMEPAGE],
        )

    def _compute(self, predictions, references, soft_credit=None):
        # action_rates calls the outcomes "outcomes"; name the argument the caller passed.
        check_not_empty("predictions", predictions)
        return action_rates(predictions, references, soft_credit=soft_credit).to_flat_dict()
