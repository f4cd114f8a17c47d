"""The one seed-derivation rule: a stable 32-bit seed from named parts.

Python's ``hash`` changes between processes (``PYTHONHASHSEED``), so every place that turns names into
seeds (a task, a variant, a draw index, a training step) uses CRC-32 of the parts joined with "/":
the same parts give the same seed in every process, on every machine, in every run.

Example:
    >>> derive_seed(0, "reach_plate", "largest", 3)
    1512348195
    >>> derive_seed("reach_plate") == derive_seed("reach_plate")
    True
"""

from __future__ import annotations

import zlib


def derive_seed(*parts: object) -> int:
    """CRC-32 of ``"/".join(str(p) for p in parts)``: a seed in ``[0, 2**32)``."""
    if not parts:
        raise ValueError("derive_seed needs at least one part, got none")
    return zlib.crc32("/".join(str(p) for p in parts).encode())
