"""Our demos' LeRobot statistics as openpi normalisation statistics.

openpi trains on a LeRobot dataset after computing ``norm_stats.json`` itself (``scripts/compute_norm_stats.py``,
a histogram pass over the whole dataset); it reads the file from ``<assets dir>/<asset id>/norm_stats.json``
(``openpi.shared.normalize.load``). Our demos already carry the statistics in ``meta/stats.json`` (with exact
q01 / q99, :mod:`bspatial.construction.demonstrations.demos`), so this conversion makes that pass unnecessary and keeps an openpi
model on the same normalisation as ours.

openpi's format (``openpi/shared/normalize.py``)::

    {"norm_stats": {"state":   {"mean": [...], "std": [...], "q01": [...], "q99": [...]},
                    "actions": {"mean": [...], "std": [...], "q01": [...], "q99": [...]}}}

``state`` is our ``observation.state`` (84 dims, ``PROPRIO_LAYOUT``) and ``actions`` our ``action`` (23 dims, the
R1Pro layout): openpi's repack transforms name them so, and its ``Normalize`` slices the stats to the data's width.
pi0.5 uses the quantiles (``use_quantiles``), pi0 the mean and std; both are written.

Example:
    bspatial openpi-norm-stats demos --out assets/pi05_bspatial/bspatial
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from bspatial.catalog.schema import ACTION_DIM, ACTION_KEY, STATE_DIM, STATE_KEY

STATS_PATH = Path("meta") / "stats.json"
"""LeRobot v3's statistics file inside a dataset folder."""
NORM_STATS_FILE = "norm_stats.json"
"""openpi's file name (``openpi.shared.normalize.save`` / ``load``)."""
FEATURES: dict[str, tuple[str, int]] = {"state": (STATE_KEY, STATE_DIM), "actions": (ACTION_KEY, ACTION_DIM)}
"""openpi key -> (our LeRobot feature, its width)."""
FIELDS: tuple[str, ...] = ("mean", "std", "q01", "q99")
"""openpi ``NormStats`` fields, in its order."""


def _vector(stats: dict[str, Any], feature: str, name: str, width: int, path: Path) -> list[float]:
    if name not in stats:
        raise ValueError(f"{path}: {feature!r} has no {name!r} (fields: {sorted(stats)}); openpi needs {list(FIELDS)}")
    values = stats[name]
    if not isinstance(values, list) or len(values) != width:
        got = f"{len(values)} values" if isinstance(values, list) else repr(values)
        raise ValueError(f"{path}: {feature!r} {name!r} must hold {width} values, got {got}")
    bad = [i for i, v in enumerate(values) if not isinstance(v, (int, float)) or not math.isfinite(v)]
    if bad:
        raise ValueError(f"{path}: {feature!r} {name!r} is not finite at dims {bad[:10]} (first value "
                         f"{values[bad[0]]!r}); openpi would normalise with it")
    return [float(v) for v in values]


def convert_stats(stats: dict[str, Any], path: Path = STATS_PATH) -> dict[str, dict[str, dict[str, list[float]]]]:
    """openpi's ``{"norm_stats": {"state": ..., "actions": ...}}`` from a parsed LeRobot ``stats.json``."""
    out = {}
    for key, (feature, width) in FEATURES.items():
        if feature not in stats:
            raise ValueError(f"{path}: no statistics for {feature!r} (features: {sorted(stats)})")
        out[key] = {name: _vector(stats[feature], feature, name, width, path) for name in FIELDS}
    return {"norm_stats": out}


def write_norm_stats(dataset: str | Path, out: str | Path) -> Path:
    """Write ``<out>/norm_stats.json`` from ``<dataset>/meta/stats.json``; the path written.

    Raises:
        FileNotFoundError: no ``meta/stats.json`` in ``dataset``.
        ValueError: a feature or field openpi needs is missing, has the wrong width or is not finite; ``out``
            is (or lies under) a file.
    """
    from bspatial.common.files import atomic_write_text, require_folder_path

    path = Path(dataset) / STATS_PATH
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: {dataset} is not a LeRobot dataset folder (bspatial demos --out)")
    try:
        # NaN / Infinity tokens parse here (Python's json accepts them) and are then refused by name.
        stats = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON: {error}") from None
    target = require_folder_path(out) / NORM_STATS_FILE   # an --out that is a file is refused by name
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, json.dumps(convert_stats(stats, path), indent=2))
    return target
