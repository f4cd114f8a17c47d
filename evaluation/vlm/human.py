"""A person answers a suite's items, one at a time, into an ``eval-vlm`` run folder: the human baseline.

``bspatial human --data <repo or build folder> --config tiny --annotator NAME --out runs/human-NAME`` serves
the items on a local page (:mod:`.human_server`); this module is the session behind it. Each answer becomes
the per-sample row an ``eval-vlm`` run writes (the runner's own scoring functions build it, model
``human:NAME``) in ``<out>/<suite>-<config>/samples.jsonl``, so ``bspatial report`` scores the folder with the
same metrics and pools every ``human:`` run into one row (:func:`bspatial.evaluation.vlm.report.pool_human_runs`).

What a person answers, and how it is logged:

* VQA: the frames, the Appendix 15.1 blocks the model gets except the answer format (preamble, direction /
  locate / camera-distance rules: our conventions, e.g. "front" is deeper into the scene, are not everyday
  ones), the question and four buttons. The reply logged is the clicked letter (``raw_output`` ``"B"``).
* IR: the head frame, the instruction (with the layer hint where the prompt has it) and the target
  description; the person clicks the point. The click, in the image's pixels, is written as the prompt's
  JSON reply on the 0-1000 grid, rounded to integers as a model must (``{"results": {"target": {"x": ..,
  "y": ..}}}``), and scored by the same parser and rule as a model's reply.
* ``latency_s``: seconds from the first time this server showed the item to the answer (the page's timer
  shows the same clock; a server restart starts the current item's clock again).

Never sent to the page: the answer letter, the region spec (masks, geometry) or anything derived from them;
:meth:`HumanSession.view` builds the page's item from an explicit list of fields.

Resume: items are served in a fixed order (the suites in :data:`~.records.SUITES` order, rows in dataset
order); those already in ``samples.jsonl`` (or, malformed, in ``errors.jsonl``) are skipped, as the runner
skips them. A session holds each part folder's run lock (the runner's) for its whole life, appends one row per
answer with :func:`~.run_files.append_jsonl` (a hard kill loses at most the answer being written) and rewrites
``summary.json`` after every answer, so a killed session's folder is reportable as it stands.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bspatial.common.locks import process_lock_name, run_folder_lock
from bspatial.evaluation.vlm.backend_api import Response
from bspatial.evaluation.vlm.controls import Controls
from bspatial.evaluation.vlm.prompts import (IR_LAYER_HINT, TARGET_DESCRIPTIONS, VQA_BLOCKS, needs_layer_hint,
                                             vqa_blocks)
from bspatial.evaluation.vlm.records import SUITES, IRItem, VQAItem
from bspatial.evaluation.vlm.report import HUMAN_MODEL_PREFIX
from bspatial.evaluation.vlm.run_files import ERRORS_FILE, SAMPLES_FILE
from bspatial.common.jsonl import append_jsonl, logged_keys
# The runner's own steps, so a person's run is loaded, fingerprinted, validated and scored as a model's is.
from bspatial.evaluation.vlm.runner import (_arrow_rows, _check_fingerprint, _error_row, _fingerprint, _load,
                                            _local_cache_dir, _Pending, _scan, _score_ir, _score_vqa, _validate,
                                            part_dir)
from bspatial.evaluation.vlm.summary import write_summary
from bspatial.scoring.choice import LETTERS
from bspatial.scoring.point import POINT_SCALE

logger = logging.getLogger(__name__)

ANNOTATOR_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""An annotator name: it becomes the model ``human:<name>`` and, by default, the folder ``runs/human-<name>``."""
PAGE_VERSION = 1
"""Part of a human run's fingerprint: bump when what the page shows or how an answer becomes a reply changes."""


class StaleAnswerError(ValueError):
    """An answer to an item that is not the one being asked (answered already, or another page's)."""


@dataclass(frozen=True)
class Annotator:
    """The person, in the place of a backend in the run's fingerprint (:func:`~.runner._fingerprint`)."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not ANNOTATOR_PATTERN.fullmatch(self.name):
            raise ValueError(f"--annotator {self.name!r} must be 1-64 letters, digits, '_', '.' or '-', starting "
                             "with a letter or digit (it names the run's model, human:<name>)")

    @property
    def spec(self) -> str:
        return f"{HUMAN_MODEL_PREFIX}{self.name}"

    def identity(self) -> dict[str, Any]:
        return {"human": self.name, "page_version": PAGE_VERSION}

    def generation_settings(self) -> dict[str, Any]:
        return {"vqa_reply": "clicked letter", "ir_reply": f"click on the 0-{POINT_SCALE} grid, rounded"}


@dataclass
class _Part:
    """One suite/config of the session: its dataset, resume keys, log folder and summary header."""

    suite: str
    dataset: Any
    keys: list[str]
    folder: Path
    fingerprint: str
    meta: dict[str, Any]
    done: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _Current:
    part: _Part
    index: int
    item: VQAItem | IRItem


def suite_sources(data: str | Path, suite: str | None, config: str, split: str) -> list[tuple[str, str]]:
    """``[(suite, repo folder)]`` to serve: ``data`` is one suite's repo, or a ``bspatial build`` output folder
    holding ``vqa/`` and ``ir/`` (every suite found, or ``suite`` alone). Checks that each repo has ``config``.

    Raises:
        ValueError: ``data`` is not a folder, lacks the suite asked for, or a repo lacks ``config``; the message
            names the option and its value.
    """
    if suite is not None and suite not in SUITES:
        raise ValueError(f"--suite {suite!r} must be one of {list(SUITES)}")
    root = Path(data)
    if not root.is_dir():
        raise ValueError(f"--data {str(data)!r}: no such folder (give a suite repo folder, e.g. <build>/vqa, or a "
                         "`bspatial build` output folder holding vqa/ and ir/)")
    nested = [s for s in SUITES if (root / s).is_dir()]
    if nested:
        chosen = [s for s in nested if suite in (None, s)]
        if not chosen:
            raise ValueError(f"--suite {suite!r}: {root} holds only {nested}")
        sources = [(s, str(root / s)) for s in chosen]
    else:
        sources = [(suite, str(root))]
    for _, source in sources:
        _check_config(source, config)
    return [(name or _detect_suite(root, config, split), source) for name, source in sources]


def _check_config(source: str, config: str) -> None:
    import datasets

    try:
        names = datasets.get_dataset_config_names(source)
    except Exception as error:  # noqa: BLE001 - any reason the folder is no dataset repo is what the user needs
        raise ValueError(f"--data {source!r} is not a dataset repo folder ({type(error).__name__}: {error})") from None
    if config not in names:
        raise ValueError(f"--config {config!r}: {source} has no such config; it has {sorted(names)}")


def _detect_suite(root: Path, config: str, split: str) -> str:
    """The suite of a single repo, read from its config's columns (VQA rows have frames, IR rows a region)."""
    import datasets

    columns = datasets.load_dataset(str(root), config, split=split, cache_dir=_local_cache_dir(str(root))).column_names
    for suite, column in (("vqa", "frames"), ("ir", "region")):
        if column in columns:
            return suite
    raise ValueError(f"--data {str(root)!r}: config {config!r} is neither a vqa (frames) nor an ir (region) suite; "
                     f"its columns are {sorted(columns)}")


class HumanSession:
    """The items of one person's run, the next one to ask, and the logging of answers (module docstring).

    Use it as a context manager: it holds the part folders' run locks while open.

    Example (the fixture benchmark; an answer is logged as eval-vlm would log it)::

        with HumanSession(Annotator("ada"), "fixture/vqa", "general", "runs/human-ada") as session:
            item = session.view()                      # what the page shows: no answer in it
            session.answer(item["id"], letter="B")      # one row appended, summary rewritten
    """

    def __init__(self, annotator: Annotator, data: str | Path, config: str, out: str | Path, *,
                 suite: str | None = None, split: str = "test") -> None:
        self.annotator, self.config, self.out, self.split = annotator, config, Path(out), split
        self.sources = suite_sources(data, suite, config, split)
        self.parts: list[_Part] = []
        self._locks = contextlib.ExitStack()
        self._mutex = threading.Lock()  # the server answers requests on several threads
        self._shown_at: dict[str, float] = {}

    def __enter__(self) -> HumanSession:
        try:
            for suite, source in self.sources:
                self.parts.append(self._open_part(suite, source))
        except BaseException:
            self._locks.close()
            raise
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._locks.close()

    def _open_part(self, suite: str, source: str) -> _Part:
        dataset = _load(source, suite, self.config, self.split)
        data_hash, keys = _scan(dataset, None)
        folder = part_dir(self.out, suite, self.config)
        # The runner's lock, held until the session closes: a second page (or eval-vlm) on this folder is refused.
        self._locks.enter_context(run_folder_lock(folder, f"human --annotator {self.annotator.name} --suite {suite} "
                                                          f"--config {self.config}", name=process_lock_name()))
        fingerprint = _fingerprint(suite, data_hash, self.annotator, Controls())
        _check_fingerprint(folder, fingerprint, source, self.config, self.split)
        meta = {"suite": suite, "config": self.config, "data": source, "split": self.split,
                "model": self.annotator.spec, "fingerprint": fingerprint["fingerprint"], "n_items": len(keys),
                "limit": None, "blind": None, "circular": False}
        done = logged_keys(folder / SAMPLES_FILE, "id") | logged_keys(folder / ERRORS_FILE, "key")
        part = _Part(suite, dataset, keys, folder, fingerprint["fingerprint"][:16], meta, done)
        self._write_summary(part)
        logger.info("%s-%s: %d items, %d answered -> %s", suite, self.config, len(keys), len(done & set(keys)), folder)
        return part

    # ------------------------------------------------------------------ what the page shows

    def progress(self) -> dict[str, int]:
        return {"answered": sum(len(p.done & set(p.keys)) for p in self.parts),
                "total": sum(len(p.keys) for p in self.parts)}

    def view(self) -> dict[str, Any]:
        """The page's item: the next unanswered one, with only what a model sees (no answer, no region)."""
        with self._mutex:
            current = self._current()
            if current is None:
                return {"done": True, "annotator": self.annotator.name, "progress": self.progress()}
            item = current.item
            started = self._shown_at.setdefault(item.id, time.monotonic())
            shown: dict[str, Any] = {"done": False, "annotator": self.annotator.name, "progress": self.progress(),
                                     "id": item.id, "suite": current.part.suite,
                                     "elapsed_s": time.monotonic() - started}
            if isinstance(item, VQAItem):
                rules = [VQA_BLOCKS[n] for n in vqa_blocks(item.setting, item.category, item.subtype)
                         if n != "answer_format"]  # the buttons are the answer format
                return {**shown, "kind": "choice", "context": rules, "question": item.question,
                        "options": [{"letter": l, "text": t} for l, t in zip(LETTERS, item.options)],
                        "frames": len(item.frames)}
            hint = [IR_LAYER_HINT] if needs_layer_hint(item.instruction, item.target) else []
            return {**shown, "kind": "point", "context": hint, "question": item.instruction,
                    "target": f"Click the center of the target in the frame: {TARGET_DESCRIPTIONS[item.target]}.",
                    "frames": 1, "image_size": list(item.image.size)}

    def frame(self, item_id: str, k: int) -> bytes | None:
        """Encoded bytes of frame ``k`` of the item being asked (None for any other item or index)."""
        with self._mutex:
            current = self._current()
        if current is None or current.item.id != item_id:
            return None
        frames = current.item.frames if isinstance(current.item, VQAItem) else (current.item.image,)
        return frames[k].data if 0 <= k < len(frames) else None

    # ------------------------------------------------------------------ answers

    def answer(self, item_id: str, *, letter: str | None = None,
               point: tuple[float, float] | None = None) -> dict[str, Any]:
        """Log the answer to the item being asked and return its row.

        Args:
            item_id: the id the page showed (an answer to any other item is refused: no row is logged twice).
            letter: a VQA answer, A-D.
            point: an IR answer, ``(u, v)`` in the image's pixels (continuous, x right, y down).

        Raises:
            StaleAnswerError: ``item_id`` is not the item being asked.
            ValueError: the answer does not fit the item (no letter for VQA, a point outside the image, ...).
        """
        with self._mutex:
            current = self._current()
            if current is None or current.item.id != item_id:
                asked = None if current is None else current.item.id
                raise StaleAnswerError(f"item {item_id!r} is not the one being asked ({asked!r}); reload the page")
            item = current.item
            latency = time.monotonic() - self._shown_at.get(item.id, time.monotonic())
            if isinstance(item, VQAItem):
                row = _score_vqa([item], [Response(_letter(letter), latency)])[0]
            else:
                row = _score_ir([item], [Response(_point_reply(point, item.image.size), latency)])[0]
            row = {**row, "fingerprint": current.part.fingerprint}
            append_jsonl(current.part.folder / SAMPLES_FILE, [row])
            current.part.done.add(current.part.keys[current.index])
            self._write_summary(current.part)
            if self._current() is None:
                logger.info("all %d items answered; stop the server with Ctrl-C", self.progress()["total"])
            return row

    def _current(self) -> _Current | None:
        """The first item, in the fixed order, that is not logged; malformed rows go to errors.jsonl on the way."""
        for part in self.parts:
            for index, key in enumerate(part.keys):
                if key in part.done:
                    continue
                _, row = next(_arrow_rows(part.dataset, index, index + 1))
                items, bad = _validate([_Pending(index, key, row)], part.suite)
                if items:
                    return _Current(part, index, items[0])
                append_jsonl(part.folder / ERRORS_FILE, [_error_row(*bad[0])])
                part.done.add(key)
                self._write_summary(part)
        return None

    def _write_summary(self, part: _Part) -> None:
        complete = all(key in part.done for key in part.keys)
        write_summary(part.folder, part.meta, complete)


def _letter(letter: Any) -> str:
    if letter not in LETTERS:
        raise ValueError(f"letter must be one of {list(LETTERS)} for a VQA item, got {letter!r}")
    return letter


def _point_reply(point: Any, size: tuple[int, int]) -> str:
    """The prompt's JSON reply for a click at ``point`` (pixels) of a ``size`` (width, height) image."""
    try:
        u, v = (float(c) for c in point)
    except (TypeError, ValueError):
        raise ValueError(f"point must be (x, y) in pixels for an IR item, got {point!r}") from None
    width, height = size
    if not (math.isfinite(u) and math.isfinite(v) and 0 <= u <= width and 0 <= v <= height):
        raise ValueError(f"point {point!r} lies outside the {width}x{height} image")
    x, y = round(u * POINT_SCALE / width), round(v * POINT_SCALE / height)
    return json.dumps({"results": {"target": {"x": x, "y": y}}})


__all__ = ["ANNOTATOR_PATTERN", "Annotator", "HumanSession", "PAGE_VERSION", "StaleAnswerError", "suite_sources"]
