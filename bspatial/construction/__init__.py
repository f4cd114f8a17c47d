"""Benchmark construction: spatial calculator, templates, filters, IR labels, splits."""
