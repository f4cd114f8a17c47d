"""The VLM evaluation harness: Appendix 15 prompts, model backends, resumable runs, Table 1 / 2 reports.

Entry points: :func:`bspatial.evaluation.vlm.runner.run_suite` (one suite/config into a run folder),
:func:`bspatial.evaluation.vlm.backends.load_backend` (model specs), :func:`bspatial.evaluation.vlm.report.write_report`.
Modules are imported on use; this package imports nothing heavy.
"""
