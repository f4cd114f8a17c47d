"""VQA question generation: general (single- and multi-frame) and task-grounded (manipulation, navigation)."""
