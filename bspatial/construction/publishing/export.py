"""Records -> Hub-shaped repos: the ``datasets/`` builders write each config as parquet, with its card.

Each config becomes ``<suite>/<config>/test-00000-of-00001.parquet``, and so does ``tiny``, the stratified
subset of the others (:mod:`~bspatial.construction.publishing.subsets`; not the build preset ``tiny``); the README is the card rendered
from ``hub_cards/`` (:mod:`~bspatial.construction.publishing.cards`) with its ``configs:`` header, and the VQA card
carries the data-quality report (:mod:`~bspatial.construction.quality.report`) that every build also logs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import sys
from pathlib import Path
from typing import Mapping

from bspatial.construction.publishing.aligned_records import ALIGNED_CONFIG, aligned_count_key, coverage_markdown
from bspatial.construction.publishing.presets import BUILD_SCHEMA_VERSION, Preset
from bspatial.construction.publishing.subsets import TINY_CONFIG

logger = logging.getLogger(__name__)


SPLIT = "test"


def builder_module(suite: str):
    """Import ``datasets/bspatial_<suite>/bspatial_<suite>.py`` by path (``datasets/`` is not a package)."""
    from bspatial.common.paths import data_root  # the checkout, or the wheel's share/ folder

    path = data_root() / "datasets" / f"bspatial_{suite}" / f"bspatial_{suite}.py"
    spec = importlib.util.spec_from_file_location(f"bspatial_{suite}_builder", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # datasets re-imports the builder's module by name
    spec.loader.exec_module(module)
    return module


def quality_report(records: Path) -> dict[str, str]:
    """The data-quality report of the VQA records and the IR answerability audit, logged and returned as Markdown
    per suite (``{"vqa": ..., "ir": ...}``, for the dataset cards).

    Raises:
        QualityFailure: the answer-share, prior-baseline or text-probe check fails on a line (category, or task
            or subtype within one) of at least ``quality.GATE_MIN_ITEMS`` items, or (``AuditFailure``) an item
            validity rule is broken by more than 1% of a config's items (VQA or IR).
    """
    from bspatial.construction.quality.audit import audit, check
    from bspatial.construction.quality.ir_audit import ir_audit
    from bspatial.construction.quality.probe import probe_predictions
    from bspatial.construction.quality.report import QualityFailure, quality_report

    rows, ir_rows = ([json.loads(line) for line in (records / f"{suite}.jsonl").read_text(encoding="utf-8").splitlines()]
                     for suite in ("vqa", "ir"))
    config_of = builder_module("vqa").config_of_row
    report = quality_report(rows, config_of=config_of, probe=probe_predictions)
    # A leak the prior baseline (with its world-knowledge priors) or the text probe finds fails the build too,
    # except in the episode-aligned config: its items are the episodes' own, one each, so its answers follow the
    # protocols (e.g. every held-out and probe episode of a two-side placement task asks for the side training
    # did not show) and cannot be rebalanced. Its lines stay in the report; the join tests within tasks, where a
    # per-task prior is constant and carries no association.
    exempt = (ALIGNED_CONFIG,)
    markdown = report.to_markdown(exempt=exempt)
    log = logger.info if report.ok else logger.warning
    log("data-quality report (%s):\n%s", "pass" if report.ok else "FAIL: the templates may leak answers", markdown)
    logger.info("text probe, model chosen per test fold: %s", dict(report.probe_models))
    answerability = audit(rows, config_of=config_of)
    (logger.info if answerability.ok else logger.error)("answerability audit (%s):\n%s",
                                                        "pass" if answerability.ok else "FAIL",
                                                        answerability.to_markdown())
    ir_builder = builder_module("ir")
    grounding = ir_audit(ir_rows, config_of=lambda row: ALIGNED_CONFIG if ir_builder.is_aligned(row) else "all")
    (logger.info if grounding.ok else logger.error)("IR answerability audit (%s):\n%s",
                                                    "pass" if grounding.ok else "FAIL", grounding.to_markdown())
    check(answerability)   # a rule broken by more than 1% of a config's items fails the build
    check(grounding)
    failures = report.failures(exempt=exempt)
    if failures:
        raise QualityFailure(f"data-quality report: {failures}")
    audited = "rules recomputed from the metadata with the audit's own geometry; the build fails above 1% per config " \
              "and rule; per task or subtype below"
    return {"vqa": f"{markdown}\n\nAnswerability audit ({audited}):\n\n{answerability.to_markdown()}\n\n"
                   f"{answerability.parts_markdown()}",
            "ir": f"Answerability audit ({audited}):\n\n{grounding.to_markdown()}\n\n{grounding.parts_markdown()}"}


def export_repos(records: Path, stage: Path, cache: Path, counts: dict, preset: Preset, seed: int, fingerprint: str,
            quality: Mapping[str, str] | None = None) -> None:
    import pyarrow.parquet as pq

    vqa_mod, ir_mod = builder_module("vqa"), builder_module("ir")
    # A config with no rows is left out (datasets cannot prepare an empty split), and so is a suite
    # with no config (e.g. a VQA-only preset writes no ir/ repo).
    any_task_vqa = any(counts["vqa"].get(t) for t in preset.tasks)
    aligned = {suite: [ALIGNED_CONFIG] if any(counts[suite].get(aligned_count_key(t)) for t in preset.tasks) else []
               for suite in ("vqa", "ir")}
    plan = {
        "vqa": (vqa_mod.BspatialVQA, (["task_manipulation"] if any_task_vqa else []) + (
            ["general_single_frame", "general_multi_frame"] if preset.general is not None else []) + (
            ["task_navigation"] if any(k.startswith("task_navigation/") for k in counts["vqa"]) else [])
            + aligned["vqa"]),
        "ir": (ir_mod.BspatialIR, (["all"] if any(counts["ir"].get(t) for t in ir_mod.TASKS) else [])
               + [t for t in ir_mod.TASKS if counts["ir"].get(t)] + aligned["ir"]),
    }
    for suite, (cls, configs) in plan.items():
        if not configs:
            logger.info("%s: no records, no repo written", suite)
            continue
        repo = stage / suite
        for config in configs:
            builder = cls(config_name=config, data_dir=str(records), cache_dir=str(cache / suite))
            builder.download_and_prepare()
            table = builder.as_dataset(split=SPLIT).data.table
            path = repo / config / f"{SPLIT}-00000-of-00001.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, path)
        # Tiny is a subset of the paper-count configs: an aligned item belongs to its episode, not to a sample.
        sampled = [c for c in configs if c != ALIGNED_CONFIG]
        tiny = write_tiny(repo, suite, sampled, seed) if sampled else NO_TINY
        aligned_table = (coverage_markdown(counts["aligned"], suite) if aligned[suite] else NO_ALIGNED)
        _write_card(repo, suite, [*configs, *([TINY_CONFIG] if sampled else [])], counts, preset, seed, fingerprint,
                    (quality or {}).get(suite, ""), tiny, aligned_table)


def write_tiny(repo: Path, suite: str, configs: list[str], seed: int) -> str:
    """Write ``<repo>/tiny/``: the stratified subset (:mod:`~bspatial.construction.publishing.subsets`) of ``configs``'
    parquet files, rows copied unchanged in config and file order; returns its composition as Markdown.

    The VQA configs are disjoint (one observation setting each), so tiny draws from all of them; IR's per-task
    configs repeat rows of ``all``, so tiny draws from ``all`` alone.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from bspatial.construction.publishing.subsets import IR_STRATA, VQA_STRATA, composition, composition_markdown, row_key, \
        stratified_ids

    sources, columns = (configs, VQA_STRATA) if suite == "vqa" else (["all"], IR_STRATA)
    paths = {c: repo / c / f"{SPLIT}-00000-of-00001.parquet" for c in sources}
    # Strata from the small columns first: the frames (most of a build's bytes) are read once, config by config.
    items = [(row["id"], row_key(c, row, columns)) for c, path in paths.items()
             for row in pq.read_table(path, columns=["id", *columns]).to_pylist()]
    picked = stratified_ids(items, seed=seed)
    kept = [table.filter(pc.is_in(table["id"], value_set=pa.array(sorted(picked))))
            for table in (pq.read_table(path) for path in paths.values())]
    path = repo / TINY_CONFIG / f"{SPLIT}-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.concat_tables(kept), path)
    logger.info("%s/%s: %d of %d items", suite, TINY_CONFIG, len(picked), len(items))
    return composition_markdown(composition(items, picked), columns)


def build_fingerprint(preset: Preset, seed: int) -> str:
    import bspatial

    text = json.dumps({"preset": preset.__dict__, "seed": seed, "schema": BUILD_SCHEMA_VERSION,
                       "version": getattr(bspatial, "__version__", "0")}, sort_keys=True, default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plain(value):
    """JSON form of the preset's nested values (the general plan is a dataclass, counts are tuples)."""
    import dataclasses

    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else list(value)


NO_TINY = "This build has no `tiny` config: its items are episode-aligned only (each belongs to its episode)."
NO_ALIGNED = "none: this build has no `episode_aligned` config (another preset than `aligned`)."


def _write_card(repo: Path, suite: str, configs: list[str], counts: dict, preset: Preset, seed: int,
                fingerprint: str, quality: str = "", tiny: str = "", aligned: str = "") -> None:
    import bspatial
    from bspatial.construction.publishing.cards import render_dataset_card

    card = render_dataset_card(suite, configs=configs, counts=counts[suite], preset=preset.name, seed=seed,
                               fingerprint=fingerprint, version=getattr(bspatial, "__version__", "0"),
                               quality_markdown=quality, tiny_markdown=tiny, aligned_markdown=aligned)
    (repo / "README.md").write_text(card)
