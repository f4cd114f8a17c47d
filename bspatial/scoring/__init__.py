"""Pure scoring rules of BEHAVIOR-Spatial (paper Appendix 14, Table S4): one implementation each.

The `evaluate` modules in metrics/ and the evaluation harness both call these functions.

| module | rules |
|---|---|
| choice | four-option answer parsing (Appendix 15.1), never guessing |
| point | point parsing (Appendix 15.2 JSON on a 0-1000 scale, and forms real models emit) |
| vqa | VQA correctness, breakdowns, per-task means (Appendix 14) |
| circular | option rotations and the all-rotations-correct verdict (VLMEvalKit's CircularEval) |
| masks, geometry, ir_regions, ir | IR region specs (ir_regions) and strict / tolerant scoring (ir, Appendix 14) |
| ir_target | the oracle IR target pixel of a 3D box (Appendix 13.3) |
| ir_accuracy | IR predictions -> the bspatial_ir result |
| trace, action | episode traces, Table S4 outcome rules, strict / soft / wrong rates |
| stats | Wilson intervals, Spearman with average ranks, matched-pair contrasts |
| clustered | cluster-robust (CR1) intervals of mean scores: items sharing a scene / frame, task means, paired differences |

"""

from bspatial.scoring.action import ActionRates, EpisodeOutcome, action_rates, action_rates_from_traces, outcome_from_trace
from bspatial.scoring.choice import ChoiceParse, ParseStatus, parse_choice, parse_choices
from bspatial.scoring.circular import circular_verdict, rotate_choice
from bspatial.scoring.ir import IRScores, score_ir, score_ir_item
from bspatial.scoring.ir_regions import region_from_dict
from bspatial.scoring.ir_accuracy import ir_accuracy
from bspatial.scoring.point import PointParse, PointStatus, parse_point
from bspatial.scoring.stats import matched_pair_contrast, spearman, wilson_interval
from bspatial.catalog.tasks import get_task
from bspatial.scoring.trace import EpisodeTrace
from bspatial.scoring.vqa import score_vqa, vqa_accuracy

__all__ = [
    "ActionRates",
    "ChoiceParse",
    "EpisodeOutcome",
    "EpisodeTrace",
    "IRScores",
    "ParseStatus",
    "PointParse",
    "PointStatus",
    "action_rates",
    "action_rates_from_traces",
    "circular_verdict",
    "get_task",
    "ir_accuracy",
    "matched_pair_contrast",
    "outcome_from_trace",
    "parse_choice",
    "parse_choices",
    "parse_point",
    "region_from_dict",
    "rotate_choice",
    "score_ir",
    "score_ir_item",
    "score_vqa",
    "spearman",
    "vqa_accuracy",
    "wilson_interval",
]
