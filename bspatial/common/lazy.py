"""Lazy package exports: names resolve to their submodule on first access (PEP 562).

Packages such as :mod:`bspatial.sim` and :mod:`bspatial.tasks` re-export names of submodules that
import mujoco or build registries; importing them eagerly would make ``bspatial --help`` slow. One implementation of the ``__getattr__`` they share.

Example:
    >>> names, getattr_ = lazy_exports("json", {"decoder": ("JSONDecoder",)})
    >>> names, getattr_("JSONDecoder").__name__
    (['JSONDecoder'], 'JSONDecoder')
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping, Sequence


def lazy_exports(package: str, exports: Mapping[str, Sequence[str]]) -> tuple[list[str], Callable[[str], Any]]:
    """``(__all__, __getattr__)`` for ``package``: ``exports`` maps submodule -> the names it provides."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return sorted(where), __getattr__
