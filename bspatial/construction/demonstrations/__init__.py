"""Scripted-expert demonstrations as a LeRobot dataset, their context frames and the step budgets."""
