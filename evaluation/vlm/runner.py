"""Run a suite through a backend: prompts, batching, parsing and scoring, resumable per-sample logs.

A *run* is a folder (``--out runs/<name>``) holding one *part* per evaluated suite/config,
``<run>/<suite>-<config>/``:

=================  ==========================================================================
file               content
=================  ==========================================================================
fingerprint.json   hashes of prompts + data + model identity + generation settings; a run whose
                   fingerprint differs refuses to continue in this folder (IncompatibleRunError)
samples.jsonl      append-only, one JSON object per scored item (schema below), in dataset order
                   within a session (a resumed sharded run first merges what its ranks had logged)
errors.jsonl       append-only, one object per malformed row: ``key``, ``id``, ``row``, ``field``, ``error``
summary.json       aggregated metrics; rewritten atomically (temp file + rename) at the end of every
                   session, also after Ctrl-C (then ``"complete": false``)
=================  ==========================================================================

Resume: items whose id is in samples.jsonl (or key in errors.jsonl) are skipped; a line cut off by a
hard kill is dropped (the item is simply redone). Rows are flushed after every batch, so Ctrl-C loses
at most the batch in flight.

samples.jsonl rows: ``id``, ``setting`` / ``category`` / ``subtype`` (VQA) or ``target`` (IR),
``task``, ``variant``, ``raw_output`` (exactly as generated), ``output`` (``<think>`` reasoning
stripped), ``parsed`` (the letter, or the ``[x, y]`` point on the 0-1000 scale), ``parse_status``,
``parse_reason``, ``correct`` (VQA) or ``strict`` / ``tolerant`` / ``label`` / ``detail`` /
``point_px`` (IR), ``answer`` and ``options`` (VQA, so a row re-scores on its own),
``latency_s``, ``fingerprint`` (the part's combined hash, first 16 hex digits). A circular run
(:mod:`.controls`) logs one row per item: rotation 0's fields (the item as written) plus ``rotations`` (each
rotation's ``rotation`` index, ``options``, ``answer``, ``raw_output``, ``output``, ``parsed``,
``parse_status``, ``parse_reason``, ``correct``, ``latency_s``) and ``circular_correct``; its ``latency_s`` is
the item's total. All rotations of an item are asked in one batch and logged in one line, so a resumed run
never holds part of an item.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bspatial.common.distributed import Launch, barrier
from bspatial.common.files import atomic_write_text
from bspatial.common.locks import process_lock_name, run_folder_lock
from bspatial.evaluation.vlm.run_files import ERRORS_FILE, FINGERPRINT_FILE, SAMPLES_FILE, SUMMARY_FILE
from bspatial.common.jsonl import append_jsonl, logged_keys, read_jsonl
from bspatial.evaluation.vlm.summary import write_summary
from bspatial.evaluation.vlm.backend_api import Request, Response, VLMBackend
from bspatial.evaluation.vlm.backends import load_backend
from bspatial.evaluation.vlm.controls import Controls
from bspatial.evaluation.vlm.prompts import build_ir_prompt, build_vqa_prompt, prompts_fingerprint
from bspatial.evaluation.vlm.records import (
    IRItem,
    RecordError,
    VQAItem,
    check_columns,
    ir_item,
    row_id,
    vqa_item,
)
from bspatial.scoring.choice import strip_reasoning
from bspatial.scoring.ir import score_ir
from bspatial.scoring.point import parse_point
from bspatial.scoring.vqa import score_vqa

logger = logging.getLogger(__name__)

DEFAULT_DATA = {"vqa": "behavior-spatial/vqa", "ir": "behavior-spatial/ir"}
DEFAULT_SPLIT = "test"
FINGERPRINT_VERSION = 1  # bump when the meaning of a logged field changes
_HASH_BATCH = 256  # rows per Arrow batch when hashing / reading the dataset


class IncompatibleRunError(RuntimeError):
    """The run folder holds results of a different prompt / data / model / generation set-up."""


@dataclass(frozen=True)
class _Pending:
    index: int  # row index in the dataset
    key: str  # resume key: the id, or a unique stand-in for rows whose id is unusable / repeated
    row: dict[str, Any]


def part_dir(out: str | Path, suite: str, config: str) -> Path:
    """Where a suite/config's files live inside a run folder."""
    return Path(out) / f"{suite}-{config}"


def run_suite(
    model: str | VLMBackend,
    suite: str,
    config: str,
    out: str | Path,
    *,
    data: str | None = None,
    split: str = DEFAULT_SPLIT,
    batch_size: int = 8,
    limit: int | None = None,
    progress: bool = True,
    blind: str | None = None,
    circular: bool = False,
) -> dict[str, Any]:
    """Evaluate one suite/config, resuming what ``out`` already holds; returns the summary.

    Args:
        model: a backend, or a model spec for :func:`load_backend` (``"chance"``, ...).
        suite: ``"vqa"`` or ``"ir"``.
        config: the dataset config (``general``, ``task_manipulation``, ``task_navigation``; ``all`` or a task name for IR).
        out: the run folder; results go to ``out/<suite>-<config>/``.
        data: a local repo folder or Hub id (default ``behavior-spatial/<suite>``).
        split: the dataset split.
        batch_size: items per backend call (a circular run sends each item's rotations in the same call).
        limit: evaluate only the first ``limit`` rows (a later run without it continues).
        progress: show progress (a bar on a terminal, log lines in a log file: :mod:`bspatial.common.progress`).
        blind: ``"grey"`` or ``"none"`` for a blind run, None to show the frames (:mod:`.controls`).
        circular: ask each VQA item in every rotation of its options (:mod:`.controls`; VQA only).

    Raises:
        IncompatibleRunError: ``out`` holds this part made with another fingerprint.
        ValueError: bad arguments (also a control the suite or the backend cannot take), or the dataset lacks a
            schema column (also a remote backend's unusable server: ``backend_openai.ServerError``).
        BackendFailedError: the model stopped answering; what was logged stays, a rerun resumes.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    controls = Controls(blind, circular)
    backend = load_backend(model) if isinstance(model, str) else model
    controls.check(suite, backend)
    source = data or DEFAULT_DATA.get(suite, "")
    dataset = _load(source, suite, config, split)
    data_hash, keys = _scan(dataset, limit)
    folder = part_dir(out, suite, config)
    shard = _Shard(Launch.of_environment())
    # Held for the whole run: the fingerprint check and the resume scan cannot interleave with another run's.
    with run_folder_lock(folder, f"eval-vlm --model {backend.spec} --suite {suite} --config {config}{controls.flags}",
                         name=process_lock_name()):
        # Inside the lock: a remote backend's identity() is its first request to the server (it names the
        # served checkpoint), and a second run of this folder must be refused before it talks to anyone.
        fingerprint = _fingerprint(suite, data_hash, backend, controls)
        _check_fingerprint(folder, fingerprint, source, config, split)
        meta = {"suite": suite, "config": config, "data": source, "split": split, "model": backend.spec,
                "fingerprint": fingerprint["fingerprint"], "n_items": len(keys), "limit": limit,
                "blind": controls.blind, "circular": controls.circular}
        position = {key: i for i, key in enumerate(keys)}
        if shard.is_main:
            _merge_rank_files(folder, position)  # rows a killed sharded run left in its rank files
        shard.barrier()  # nobody reads the logs before they are merged
        done = logged_keys(folder / SAMPLES_FILE, "id") | logged_keys(folder / ERRORS_FILE, "key")
        todo = [i for i, key in enumerate(keys) if key not in done]
        logger.info("%s/%s: %d items, %d done, %d to run -> %s", suite, config, len(keys), len(keys) - len(todo), len(todo), folder)
        if shard.launch.world > 1:
            return _run_sharded(shard, dataset, keys, position, todo, suite, backend, controls, folder,
                                fingerprint["fingerprint"], batch_size, progress, meta)
        complete = False
        try:
            _run_pending(dataset, keys, todo, suite, backend, folder, fingerprint["fingerprint"], batch_size, progress,
                         controls=controls)
            complete = True
        finally:
            summary = write_summary(folder, meta, complete)
        return summary


# --------------------------------------------------------------------------- data parallel


@dataclass(frozen=True)
class _Shard:
    """This process's share of a sharded run (torchrun, ``accelerate launch``, SLURM: see
    :class:`bspatial.common.distributed.Launch`).

    Rank r takes every world-th pending item and appends to ``samples.rank<r>.jsonl`` /
    ``errors.rank<r>.jsonl``. After a real barrier (every rank finished its share), rank 0 merges the
    rank files into the main logs and writes the summary. A merge skips ids already in the main logs,
    so one cut short is redone safely; rank files a killed run left are merged at the start of the next
    run of the folder, sharded or not, before anyone decides what is left to do.
    """

    launch: Launch

    @property
    def is_main(self) -> bool:
        return self.launch.rank == 0

    def files(self, folder: Path) -> tuple[Path, Path]:
        return folder / f"samples.rank{self.launch.rank}.jsonl", folder / f"errors.rank{self.launch.rank}.jsonl"

    def barrier(self) -> None:
        barrier(self.launch)


def _run_sharded(shard, dataset, keys, position, todo, suite, backend, controls, folder, fingerprint, batch_size,
                 progress, meta) -> dict[str, Any]:
    shard.barrier()  # every rank has read the logs before any rank appends to its own
    rank, world = shard.launch.rank, shard.launch.world
    _run_pending(dataset, keys, todo[rank::world], suite, backend, folder, fingerprint, batch_size, progress,
                 shard.files(folder), controls)
    shard.barrier()  # every rank's file is complete: only now is a merge safe
    if shard.is_main:
        _merge_rank_files(folder, position)
        write_summary(folder, meta, True)
    shard.barrier()  # the summary exists
    return json.loads((folder / SUMMARY_FILE).read_text())


def _merge_rank_files(folder: Path, position: dict[str, int]) -> None:
    _merge(folder, SAMPLES_FILE, "samples.rank*.jsonl", "id", position)
    _merge(folder, ERRORS_FILE, "errors.rank*.jsonl", "key", position)


def _merge(folder: Path, main: str, pattern: str, field: str, position: dict[str, int]) -> None:
    """Append the rank files' rows missing from ``main`` (in dataset order), then delete the rank files."""
    parts = sorted(folder.glob(pattern))
    if not parts:
        return
    have = logged_keys(folder / main, field)
    for path in parts:
        logged_keys(path, field)  # drops a line a kill cut off, refuses a corrupt file
    rows = {row[field]: row for path in parts for row in read_jsonl(path) if row[field] not in have}
    ordered = sorted(rows.values(), key=lambda row: position.get(row[field], len(position)))
    append_jsonl(folder / main, ordered)
    logger.info("%s: merged %d rows from %s", folder / main, len(ordered), ", ".join(p.name for p in parts))
    for path in parts:
        path.unlink()


# --------------------------------------------------------------------------- data and fingerprint


def _load(source: str, suite: str, config: str, split: str):
    if suite not in DEFAULT_DATA:
        raise ValueError(f"suite must be one of {sorted(DEFAULT_DATA)}, got {suite!r}")
    import datasets

    try:
        dataset = datasets.load_dataset(source, config, split=split, cache_dir=_local_cache_dir(source))
    except (FileNotFoundError, ValueError, datasets.exceptions.DatasetNotFoundError) as error:
        raise ValueError(f"cannot load {suite} data {source!r} config {config!r} split {split!r}: {error}") from error
    except datasets.exceptions.DatasetGenerationError as error:  # e.g. a parquet file damaged mid-file
        raise ValueError(f"cannot read {suite} data {source!r} config {config!r} split {split!r}: "
                         f"{_unreadable_file(source, config) or error.__cause__ or error}") from error
    check_columns(suite, dataset.column_names)
    return dataset.with_format("arrow")


def _unreadable_file(source: str, config: str) -> str | None:
    """The first parquet file of a local repo's config that pyarrow cannot read, with pyarrow's reason."""
    import pyarrow.parquet as pq

    root = Path(source) / config
    for path in sorted(root.rglob("*.parquet")) if root.is_dir() else ():
        try:
            pq.read_table(path)
        except Exception as error:  # noqa: BLE001 - any reason it cannot be read is what the user needs
            return f"{path} is unreadable ({type(error).__name__}: {error})"
    return None


def _local_cache_dir(source: str) -> str | None:
    """A datasets cache folder keyed by a local repo's path and file stamps (None for Hub ids).

    ``datasets`` keys its cache of a local parquet repo by the folder's name and config, so two
    repos both named ``vqa`` (or one rewritten in place) could be served stale rows. Keying the
    cache folder by the resolved path and every file's size and mtime avoids that.
    """
    root = Path(source)
    if not root.is_dir():
        return None
    import datasets

    stamps = sorted(
        (str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()
    )
    digest = hashlib.sha256(json.dumps([str(root.resolve()), stamps]).encode()).hexdigest()[:20]
    return str(Path(datasets.config.HF_DATASETS_CACHE) / "bspatial-local" / digest)


def _arrow_rows(dataset, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Raw rows (images as undecoded ``{"bytes", "path"}``) with their indices."""
    stop = len(dataset) if stop is None else stop
    for begin in range(start, stop, _HASH_BATCH):
        table = dataset[begin : min(stop, begin + _HASH_BATCH)]
        for offset, row in enumerate(table.to_pylist()):
            yield begin + offset, row


def _scan(dataset, limit: int | None) -> tuple[str, list[str]]:
    """Content hash of the whole split, and the resume keys of the first ``limit`` rows."""
    digest = hashlib.sha256()
    keys: list[str] = []
    seen: set[str] = set()
    stop = len(dataset) if limit is None else min(limit, len(dataset))
    for index, row in _arrow_rows(dataset):
        digest.update(json.dumps(row, sort_keys=True, default=_hash_bytes).encode())
        if index < stop:
            item_id = row.get("id")
            usable = isinstance(item_id, str) and item_id.strip() and item_id not in seen
            keys.append(item_id if usable else f"{row_id(row)}#row{index}")
            seen.add(item_id if isinstance(item_id, str) else "")
    return digest.hexdigest(), keys


def _hash_bytes(value: Any) -> str:
    if isinstance(value, bytes):
        return hashlib.sha256(value).hexdigest()
    raise TypeError(f"unexpected value of type {type(value).__name__} in a dataset row")


def _fingerprint(suite: str, data_hash: str, backend: VLMBackend, controls: Controls) -> dict[str, Any]:
    components: dict[str, Any] = {
        "version": FINGERPRINT_VERSION,
        "suite": suite,
        "prompts": prompts_fingerprint(),
        "data": data_hash,
        "model": backend.identity(),
        "generation": backend.generation_settings(),
        **controls.fingerprint_components(),  # blind / circular; nothing for a seeing, plain run
    }
    combined = hashlib.sha256(json.dumps(components, sort_keys=True).encode()).hexdigest()
    return {"fingerprint": combined, "components": components}


def _check_fingerprint(folder: Path, fingerprint: dict[str, Any], source: str, config: str, split: str) -> None:
    path = folder / FINGERPRINT_FILE
    if not path.exists():
        if (folder / SAMPLES_FILE).exists():
            raise IncompatibleRunError(f"{folder} has {SAMPLES_FILE} but no {FINGERPRINT_FILE}; use a new --out folder")
        atomic_write_text(path, json.dumps({**fingerprint, "data_source": source, "config": config, "split": split}, indent=2))
        return
    stored = json.loads(path.read_text())
    if stored.get("fingerprint") == fingerprint["fingerprint"]:
        return
    old, new = stored.get("components", {}), fingerprint["components"]
    differing = [f"{k}: {json.dumps(old.get(k))} (stored) vs {json.dumps(new.get(k))} (now)"
                 for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]
    raise IncompatibleRunError(
        f"{folder} holds a run with a different set-up, refusing to mix results; differing: "
        + "; ".join(differing)
        + ". Evaluate into a new --out folder, or delete this one to start over."
    )


# --------------------------------------------------------------------------- the loop


def _run_pending(dataset, keys, todo, suite, backend, folder, fingerprint, batch_size, progress, files=None,
                 controls: Controls = Controls()) -> None:
    from bspatial.common.progress import progress_bar

    short = fingerprint[:16]
    samples_path, errors_path = files or (folder / SAMPLES_FILE, folder / ERRORS_FILE)
    with (
        open(samples_path, "a", encoding="utf-8") as samples,
        open(errors_path, "a", encoding="utf-8") as errors,
        progress_bar(len(todo), f"{suite}-{folder.name.split('-', 1)[1]}", "item", enabled=progress) as bar,
    ):
        for chunk in _chunks(dataset, keys, todo, batch_size):
            items, bad = _validate(chunk, suite)
            for pending, error in bad:
                errors.write(json.dumps(_error_row(pending, error)) + "\n")
            errors.flush()
            if items:
                rows = _ask_vqa(items, backend, controls) if suite == "vqa" else _ask_ir(items, backend, controls)
                samples.write("".join(json.dumps({**row, "fingerprint": short}) + "\n" for row in rows))
                samples.flush()
            bar.update(len(chunk))
        os.fsync(samples.fileno())
        os.fsync(errors.fileno())


def _chunks(dataset, keys: list[str], todo: list[int], size: int) -> Iterator[list[_Pending]]:
    """Pending rows in dataset order, ``size`` at a time, read in contiguous Arrow slices."""
    chunk: list[_Pending] = []
    wanted = set(todo)
    if not todo:
        return
    for index, row in _arrow_rows(dataset, todo[0], todo[-1] + 1):
        if index in wanted:
            chunk.append(_Pending(index, keys[index], row))
            if len(chunk) == size:
                yield chunk
                chunk = []
    if chunk:
        yield chunk


def _validate(chunk: list[_Pending], suite: str) -> tuple[list[VQAItem | IRItem], list[tuple[_Pending, RecordError]]]:
    items, bad = [], []
    parse = vqa_item if suite == "vqa" else ir_item
    for pending in chunk:
        try:
            if pending.key != pending.row.get("id"):
                raise RecordError(pending.row.get("id"), "id", "must be a unique non-empty string", pending.row.get("id"))
            items.append(parse(pending.row))
        except RecordError as error:
            bad.append((pending, error))
    return items, bad


def _error_row(pending: _Pending, error: RecordError) -> dict[str, Any]:
    logger.warning("malformed row %d: %s", pending.index, error)
    return {"key": pending.key, "id": row_id(pending.row), "row": pending.index, "field": error.field, "error": str(error)}


def _ask_vqa(items: Sequence[VQAItem], backend: VLMBackend, controls: Controls) -> list[dict[str, Any]]:
    """Log rows of a batch of VQA items: every view of every item (:meth:`Controls.views`) in one backend call."""
    views = [view for item in items for view in controls.views(item)]
    requests = [_request(view.item, controls, view.request_id) for view in views]
    return controls.fold(_score_vqa([view.item for view in views], _generate(backend, requests)))


def _ask_ir(items: Sequence[IRItem], backend: VLMBackend, controls: Controls) -> list[dict[str, Any]]:
    return _score_ir(items, _generate(backend, [_request(item, controls) for item in items]))


def _request(item: VQAItem | IRItem, controls: Controls = Controls(), request_id: str | None = None) -> Request:
    """The backend request of an item (as shown: options possibly rotated), its images as the controls say."""
    request_id = request_id or item.id
    if isinstance(item, VQAItem):
        prompt = build_vqa_prompt(item.setting, item.category, item.subtype, item.question, item.options)
        return Request(request_id, prompt, controls.images(item.frames), "choice", item.options)
    return Request(request_id, build_ir_prompt(item.instruction, item.target), controls.images((item.image,)), "point")


def _generate(backend: VLMBackend, requests: list[Request]) -> list[Response]:
    responses = backend.generate(requests)
    if len(responses) != len(requests):
        raise RuntimeError(f"backend {backend.spec!r} returned {len(responses)} responses for {len(requests)} requests")
    return responses


def _score_vqa(items: Sequence[VQAItem], responses: Sequence[Response]) -> list[dict[str, Any]]:
    texts = [r.text for r in responses]
    scores = score_vqa(texts, [i.answer for i in items], [i.options for i in items])
    rows = []
    for item, response, parse, correct in zip(items, responses, scores.parses, scores.correct):
        rows.append(
            {
                "id": item.id,
                "setting": item.setting,
                "category": item.category,
                "subtype": item.subtype,
                "task": item.task,
                "variant": item.variant,
                "answer": item.answer,
                "options": list(item.options),
                "raw_output": response.text,
                "output": strip_reasoning(response.text)[0],
                "parsed": parse.letter,
                "parse_status": parse.status.value,
                "parse_reason": parse.reason,
                "correct": bool(correct),
                "latency_s": response.latency_s,
            }
        )
    return rows


def _score_ir(items: Sequence[IRItem], responses: Sequence[Response]) -> list[dict[str, Any]]:
    parses = [parse_point(r.text) for r in responses]
    points = np.array([p.to_pixels(*i.image.size) or (math.nan, math.nan) for p, i in zip(parses, items)], dtype=float)
    scores = score_ir(points.reshape(-1, 2), [i.region for i in items])
    rows = []
    for k, (item, response, parse) in enumerate(zip(items, responses, parses)):
        rows.append(
            {
                "id": item.id,
                "task": item.task,
                "variant": item.variant,
                "target": item.target,
                "raw_output": response.text,
                "output": strip_reasoning(response.text)[0],
                "parsed": list(parse.xy) if parse.xy is not None else None,
                "point_px": None if parse.xy is None else [float(points[k, 0]), float(points[k, 1])],
                "parse_status": parse.status.value,
                "parse_reason": parse.reason,
                "strict": bool(scores.strict[k]),
                "tolerant": bool(scores.tolerant[k]),
                "label": str(scores.label[k]),
                "detail": str(scores.detail[k]),
                "latency_s": response.latency_s,
            }
        )
    return rows


__all__ = [
    "DEFAULT_DATA",
    "IncompatibleRunError",
    "part_dir",
    "read_jsonl",
    "run_suite",
    "write_summary",
]
