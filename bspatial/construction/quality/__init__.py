"""The validity rules: the quality report, the answerability audit, the blind priors and prior-balanced sampling."""
