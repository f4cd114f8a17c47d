"""Dataset cards rendered from the templates in ``hub_cards/`` (construction issue, item 5).

``render_dataset_card(suite, ...)`` fills ``hub_cards/dataset_<suite>.md`` with the build's configs
(the README ``configs:`` YAML the Hub and ``load_dataset(<folder>)`` read), counts, data-quality table
and provenance. ``string.Template.substitute`` raises on a placeholder we do not fill, so a template
edit can never publish a card with a literal ``$name`` in it.

Example:
    >>> card = render_dataset_card("ir", configs=["all"], counts={"all": 3}, preset="tiny", seed=0,
    ...                            fingerprint="abc", version="0.1.0")
    >>> card.splitlines()[0], "- config_name: all" in card, "| all | 3 |" in card
    ('---', True, True)
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Mapping, Sequence

SPLIT = "test"
SUITES = ("vqa", "ir")


def _template_path(suite: str) -> Path:
    from bspatial.common.paths import data_root  # the checkout, or the wheel's share/ folder

    return data_root() / "hub_cards" / f"dataset_{suite}.md"


def configs_yaml(configs: Sequence[str]) -> str:
    """The README ``configs:`` entries: one parquet file per config under ``<config>/``."""
    lines = []
    for config in configs:
        lines += [f"- config_name: {config}", "  data_files:", f"  - split: {SPLIT}",
                  f"    path: {config}/{SPLIT}-00000-of-00001.parquet"]
    return "\n".join(lines)


def size_category(total: int) -> str:
    """The Hub's ``size_categories`` bucket of ``total`` items."""
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if total < limit:
            return label
    return "n>100K"


def render_dataset_card(suite: str, *, configs: Sequence[str], counts: Mapping[str, int], preset: str, seed: int,
                        fingerprint: str, version: str, quality_markdown: str = "",
                        template: str | Path | None = None) -> str:
    """The README of a built suite repo.

    Args:
        suite: "vqa" or "ir".
        configs: config names in the order the card lists them (the first is the load example's).
        counts: items per row of the counts table (configs, or tasks / categories).
        preset, seed, fingerprint, version: provenance.
        quality_markdown: the data-quality table (VQA); "not computed" when empty.
        template: another template file (tests); default ``hub_cards/dataset_<suite>.md``.

    Raises:
        ValueError: unknown suite or no configs; KeyError: the template names an unknown placeholder.
    """
    if suite not in SUITES:
        raise ValueError(f"suite must be one of {list(SUITES)}, got {suite!r}")
    if not configs:
        raise ValueError("configs must name at least one config, got none")
    text = Path(template or _template_path(suite)).read_text()
    table = "\n".join(["| config / part | items |", "|---|---|", *(f"| {k} | {n} |" for k, n in counts.items())])
    return string.Template(text).substitute(
        preset=preset, seed=seed, fingerprint=fingerprint, version=version, first_config=configs[0],
        configs_yaml=configs_yaml(configs), counts_table=table, size_category=size_category(sum(counts.values())),
        quality_table=quality_markdown or "not computed for this suite")
