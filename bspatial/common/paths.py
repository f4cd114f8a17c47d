"""Where the shipped data folders live: ``metrics/``, ``datasets/`` and ``hub_cards/``.

An editable install (``pip install -e``) runs from the checkout; a wheel install ships the folders as
data files under ``<prefix>/share/behavior-spatial`` (see setup.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

SHARE_SUBDIR = Path("share") / "behavior-spatial"


def data_root() -> Path:
    """The folder holding ``metrics/``, ``datasets/`` and ``hub_cards/``: the source checkout, else the install prefix."""
    checkout = Path(__file__).resolve().parents[2]
    for root in (checkout, Path(sys.prefix) / SHARE_SUBDIR):
        if (root / "metrics").is_dir():
            return root
    raise FileNotFoundError(
        f"cannot find the metrics/ folder next to the package ({checkout}) or under "
        f"{Path(sys.prefix) / SHARE_SUBDIR}; reinstall behavior-spatial"
    )
