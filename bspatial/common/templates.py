"""Card templates (``hub_cards/*.md``): the one fill rule of dataset and model cards.

``string.Template.substitute`` raises on a placeholder we do not fill, so a template edit can never publish a
card with a literal ``$name`` in it.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "card.md"
    >>> _ = path.write_text("# $title")
    >>> fill_template(path, title="BEHAVIOR-Spatial")
    '# BEHAVIOR-Spatial'
    >>> fill_template(path)
    Traceback (most recent call last):
    ...
    KeyError: 'title'
"""

from __future__ import annotations

import string
from pathlib import Path


def fill_template(template: str | Path, **fields) -> str:
    """``template``'s text with every ``$placeholder`` filled (KeyError names one we were not given)."""
    return string.Template(Path(template).read_text()).substitute(**fields)
