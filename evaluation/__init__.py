"""bspatial.evaluation: VLM harness, rollouts, agents, analysis and reports."""
