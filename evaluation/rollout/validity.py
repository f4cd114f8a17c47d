"""The action metrics' validity check: reference policies whose rates must land where their behaviour says.

A metric that a robot holding still can pass, or that cannot tell a wrong target from a stop short of the
right one, does not mean what it says. Each reference policy (a ``bspatial rollout --policy`` spec) has a
band per rate; :func:`ladder_rows` scores a run of the ladder and says, row by row, whether it is in band.
``benchmarks/ladder.py`` runs it on the held-out and prompt-probe manifests.

Example:
    >>> in_band("hold", "held_out", {"strict": 0.0, "soft": 1.5, "wrong": 0.0})
    True
    >>> in_band("scripted-stops-short", "prompt_probe", {"strict": 0.0, "soft": 40.0, "wrong": 0.0})
    False
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bspatial.common.tables import markdown_table
from bspatial.evaluation.rollout.tables import RATES, group_records, rates_of

Band = tuple[float, float]
_ANY: Band = (0.0, 100.0)

REFERENCE_BANDS: dict[str, dict[str, dict[str, Band]]] = {
    # policy -> split ("*" = every manipulation split) -> rate -> [low, high] percent (point estimates).
    "hold": {"*": {"strict": (0.0, 0.0), "soft": (0.0, 2.0), "wrong": (0.0, 0.0)}},
    # A random arm sweeping over a table of candidates touches one now and then, and the first contact decides
    # (Table S4): its commitments split over the candidates at chance (strict : wrong ~ 1 : K-1). Near 0, not 0.
    "random": {"*": {"strict": (0.0, 10.0), "soft": (0.0, 25.0), "wrong": (0.0, 35.0)}},
    "scripted": {"*": {"strict": (95.0, 100.0), "soft": (95.0, 100.0), "wrong": (0.0, 5.0)}},
    "scripted-wrong": {"*": {"strict": (0.0, 5.0), "soft": (0.0, 10.0), "wrong": (90.0, 100.0)}},
    "scripted-memorizer": {"prompt_probe": {"strict": (0.0, 5.0), "wrong": (90.0, 100.0)},
                           "held_out": {"strict": (0.0, 10.0), "wrong": (70.0, 100.0)}},
    "scripted-stops-short": {"*": {"strict": (0.0, 5.0), "soft": (90.0, 100.0), "wrong": (0.0, 5.0)}},
}
"""The reference ladder: never moves (strict 0, +Soft ~0), random (near 0, at chance), the oracle (strict >= 95),
a distractor pursued (wrong ~100), the training layout's target pursued (probe wrong ~100, held-out wrong high), the
instructed target approached without committing (+Soft ~100, strict 0)."""


def band(policy: str, split: str, rate: str) -> Band:
    """The band of ``rate`` for ``policy`` on ``split`` (the whole range where the ladder sets none)."""
    bands = REFERENCE_BANDS.get(policy, {})
    return bands.get(split, bands.get("*", {})).get(rate, _ANY)


def in_band(policy: str, split: str, rates: Mapping[str, float]) -> bool:
    """Whether every rate of a (policy, split) run lies in its band."""
    return all(band(policy, split, r)[0] <= rates[r] <= band(policy, split, r)[1] for r in RATES)


def ladder_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (policy, split) of the episode records: n, errors, each rate with its Wilson interval, and
    whether the row is in band. Episodes are grouped and pooled as Tables 4 / S5 do (a crashed episode is a
    failure; Spa-Bench conditions and not-applicable episodes are left out)."""
    order = {policy: i for i, policy in enumerate(REFERENCE_BANDS)}
    groups = group_records(records)
    rows = []
    for policy, split in sorted(groups, key=lambda key: (order.get(key[0], len(order)), key)):
        group = groups[(policy, split)]
        rates = rates_of(group)
        row: dict[str, Any] = {"policy": policy, "split": split, "n": rates.n,
                               "errors": sum(r.get("status") == "error" for r in group)}
        for name in RATES:
            value = getattr(rates, name)
            row[name] = value.rate
            row[f"{name}_ci"] = (value.low, value.high)
        row["in_band"] = in_band(policy, split, row)
        rows.append(row)
    return rows


def ladder_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The ladder as a Markdown table: each rate with its 95% Wilson interval and its band."""
    lines = []
    for row in rows:
        cells = []
        for name in RATES:
            low, high = band(row["policy"], row["split"], name)
            ci = row[f"{name}_ci"]
            cells.append(f"{row[name]:.1f} [{ci[0]:.1f}, {ci[1]:.1f}] (band {low:g}-{high:g})")
        lines.append((row["policy"], row["split"], row["n"], *cells, "yes" if row["in_band"] else "NO"))
    return markdown_table(("policy", "split", "n", "strict %", "+Soft %", "wrong %", "in band"), lines)
