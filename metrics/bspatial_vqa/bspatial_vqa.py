"""BEHAVIOR-Spatial VQA accuracy: four-option spatial questions, parsed without guessing."""

import datasets
import evaluate

# evaluate (0.4.6) reads a "# From: <spec>" comment on an import line as what to pip install when the
# import fails, line by line: without it a copied module would say "pip install bspatial" (no such package).
from bspatial.citation import CITATION as _CITATION  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial
from bspatial.citation import HOMEPAGE  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial
from bspatial.scoring.vqa import vqa_accuracy  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial

_DESCRIPTION = """
Accuracy of four-option spatial VQA answers (BEHAVIOR-Spatial-VQA). Raw model text is parsed into an
option letter (the interface of the paper's Appendix 15.1: "C.front"); answers that cannot be read
unambiguously are scored incorrect and counted as unparseable, never guessed. Results are
percentages, pooled over questions, with breakdowns by setting, category, subtype and task, and the
unweighted mean of per-task accuracies (the paper's task-grounded manipulation aggregate).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): raw model outputs, one per question.
    references (`list` of `str`): answer letters, each one of "A", "B", "C", "D".
    options (`list` of `list` of `str`, optional): the four option texts of each question; lets an
        answer given as option text ("front-left") parse.
    settings (`list` of `str`, optional): "single_frame", "multi_frame_rotation",
        "multi_frame_navigation", "task_manipulation" or "task_navigation" per question.
    categories (`list` of `str`, optional): "direction", "distance" or "size" per question.
    subtypes (`list` of `str`, optional): "object_relative", "robot_arm_relative",
        "camera_relative", "locate" or "ordinal" per question.
    tasks (`list` of `str`, optional): task (or activity) name per question.
    Per-question keyword arguments are not buffered by `add_batch`: pass them, for all questions,
    to `compute`.

Returns:
    accuracy (`float`): percent correct, pooled over questions.
    n (`int`): number of questions (no predictions at all raises ValueError: there is nothing to score).
    unparseable (`int`), unparseable_rate (`float`): answers that could not be read.
    setting/<s>, category/<c>, subtype/<t>, task/<name>, <setting>/<category> (`float`): percent
        correct within each group, with n/<key> counts.
    task_mean_accuracy (`float`): unweighted mean of per-task accuracies, when tasks are given.

Examples:
    >>> import evaluate
    >>> vqa = evaluate.load("metrics/bspatial_vqa")  # or "bspatial_vqa" after `bspatial hub install`
    >>> result = vqa.compute(
    ...     predictions=["C. front-left", "The answer is (B).", "I cannot tell.", "back-right"],
    ...     references=["C", "A", "D", "D"],
    ...     options=[["front", "back", "front-left", "back-right"]] * 4,
    ...     categories=["direction", "direction", "distance", "direction"],
    ... )
    >>> result["accuracy"], result["unparseable"], result["category/direction"]
    (50.0, 1, 66.66666666666667)
"""



@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BspatialVQA(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            reference_urls=[HOMEPAGE],
        )

    def _compute(self, predictions, references, options=None, settings=None, categories=None, subtypes=None, tasks=None):
        return vqa_accuracy(
            predictions, references, options=options, settings=settings, categories=categories, subtypes=subtypes, tasks=tasks
        )
