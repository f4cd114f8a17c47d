"""BEHAVIOR-Spatial IR accuracy: does a predicted point land on the instructed target or placement region?"""

import datasets
import evaluate

# evaluate (0.4.6) reads a "# From: <spec>" comment on an import line as what to pip install when the
# import fails, line by line: without it a copied module would say "pip install bspatial" (no such package).
from bspatial.citation import CITATION as _CITATION  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial
from bspatial.citation import HOMEPAGE  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial
from bspatial.scoring.ir_accuracy import ir_accuracy  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial
from bspatial.scoring.validation import check_not_empty  # From: behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial

_DESCRIPTION = """
Point-grounding accuracy on BEHAVIOR-Spatial-IR (paper Appendix 14). A prediction is raw model text
(the Appendix 15.2 JSON {"results": {"target": {"x": .., "y": ..}}} on a 0-1000 scale, or the forms
real models emit) or an [x, y] point in pixels. Reach tasks: correct inside an accepted target mask,
wrong inside a non-target candidate, none otherwise; tolerant scoring also accepts points within 2%
of the image diagonal of the target (reach tasks only). Directional placement: the camera ray through
the point meets the countertop; correct on the instructed side along the robot-right axis at least
0.17 m from the reference. Container placement: the ray's entry height into the container must lie
within +-0.05 m of the instructed compartment's band. Unparseable answers are none, never guessed.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`, or `list` of `[x, y]` pixel points): one per query.
    references (`list` of `str`): region specs as JSON strings (the `region` column of the
        behavior-spatial/ir dataset; format documented in the metric card and in
        `bspatial.scoring.ir`).
    tasks (`list` of `str`, optional): task per query; defaults to the regions' `task` fields.
        Not buffered by `add_batch`: pass it to `compute`.

Returns:
    strict_accuracy, tolerant_accuracy (`float`): percent of queries correct.
    n, correct, wrong, none, unparseable (`int`): counts (labels are the strict assignment); no
        predictions at all raises ValueError (there is nothing to score).
    task/<name>/strict, task/<name>/tolerant (`float`) and task_mean_strict_accuracy,
        task_mean_tolerant_accuracy (`float`): per-task and unweighted task means, when tasks are known.

Examples:
    >>> import evaluate, json
    >>> import numpy as np
    >>> from bspatial.scoring.masks import rle_encode
    >>> target = np.zeros((100, 100), bool); target[40:60, 10:30] = True
    >>> other = np.zeros((100, 100), bool); other[40:60, 70:90] = True
    >>> region = json.dumps({"kind": "reach", "image_size": [100, 100], "task": "reach_dice",
    ...     "targets": [rle_encode(target)], "distractors": [rle_encode(other)]})
    >>> ir = evaluate.load("metrics/bspatial_ir")  # or "bspatial_ir" after `bspatial hub install`
    >>> result = ir.compute(
    ...     predictions=['{"results": {"target": {"x": 200, "y": 500}}}', '(800, 500)', 'no idea'],
    ...     references=[region] * 3,
    ... )
    >>> result["strict_accuracy"], result["correct"], result["wrong"], result["none"], result["unparseable"]
    (33.33333333333333, 1, 1, 1, 1)
"""



@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BspatialIR(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        # Two input forms: raw model text, or points already in pixels.
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
                datasets.Features(
                    {"predictions": datasets.Sequence(datasets.Value("float64")), "references": datasets.Value("string")}
                ),
            ],
            reference_urls=[HOMEPAGE],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of predictions and references (the first batch must not be empty).

        """
        # evaluate appends the inputs description to this docstring, so it needs one. It picks one of
        # the two input forms from the first row of the first batch and fails with an IndexError when
        # that batch is empty: say what is wrong instead. Once the form is chosen (self.writer exists),
        # evaluate itself skips empty batches.
        if self.writer is None and predictions is not None:
            check_not_empty("predictions", predictions)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, references, tasks=None):
        return ir_accuracy(predictions, references, tasks=tasks)
