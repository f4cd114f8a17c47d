"""Where the shipped data folders live: ``metrics/``, ``datasets/`` and ``hub_cards/``.

An editable install (``pip install -e``) runs from the checkout; a wheel install ships the folders as
data files under ``<prefix>/share/behavior-spatial`` (see setup.py).
"""

from __future__ import annotations

import re
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


def folder_name(spec: str) -> str:
    """A model or policy spec as a default run-folder name: every run of characters other than letters,
    digits, ``.``, ``_`` and ``-`` becomes one ``_`` (no ``:``, ``/`` or ``#`` in a path).

    Example:
        >>> folder_name("openpi:ws://127.0.0.1:8000")
        'openpi_ws_127.0.0.1_8000'
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec)
