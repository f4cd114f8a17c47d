"""The build: presets, the per-task records, export to Hub-shaped repos and their cards."""
