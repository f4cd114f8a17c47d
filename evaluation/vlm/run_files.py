"""The files of a run part (see :mod:`bspatial.evaluation.vlm.runner`): names and the part folders. The
append-only logs are :mod:`bspatial.common.jsonl`'s."""

from __future__ import annotations

from pathlib import Path

SAMPLES_FILE = "samples.jsonl"
ERRORS_FILE = "errors.jsonl"
SUMMARY_FILE = "summary.json"
FINGERPRINT_FILE = "fingerprint.json"


def part_folders(path: str | Path) -> dict[str, Path]:
    """A run folder's part folders by name (``<suite>-<config>``, those with a summary), or ``{name: path}``
    when ``path`` is itself a part folder; ``{}`` when it is neither."""
    path = Path(path)
    if (path / SUMMARY_FILE).is_file():
        return {path.name: path}
    return {p.parent.name: p.parent for p in sorted(path.glob(f"*/{SUMMARY_FILE}"))}
