"""eval-vlm --blind: the same items and prompts with the pictures taken away, as a run of its own."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from bspatial.cli import app
from bspatial.construction.items.records import VQARecord
from bspatial.evaluation.vlm.backend_chance import ChanceBackend
from bspatial.evaluation.vlm.fixtures import write_parquet_config, write_readme
from bspatial.evaluation.analysis.leaderboard import vlm_table
from bspatial.evaluation.vlm.report import load_run, write_report
from bspatial.evaluation.vlm.runner import (FINGERPRINT_FILE, SUMMARY_FILE, IncompatibleRunError, part_dir,
                                           run_suite)

# (width, height) of each item's frames: single-frame items of two sizes and a multi-frame item of mixed sizes,
# so "each frame's own size" is tested, not the fixture's one size.
FRAME_SIZES = {"small": [(40, 30)], "tall": [(24, 72)], "sequence": [(64, 48), (32, 80), (50, 50)]}


class Recorder(ChanceBackend):
    """Chance that keeps every request it was sent (what the model received)."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.requests = []

    def generate(self, requests):
        self.requests += requests
        return super().generate(requests)


class ImagesOnly(Recorder):
    """A backend that has not declared it answers requests without images."""

    accepts_text_only = False

    def __init__(self) -> None:
        super().__init__()
        self.spec = "images-only"


def _png(width: int, height: int, seed: int) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, size=(height, width, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def sized_repo(tmp_path_factory):
    """A VQA repo whose frames have the sizes of FRAME_SIZES."""
    repo = tmp_path_factory.mktemp("sized") / "vqa"
    rows = []
    for k, (name, sizes) in enumerate(FRAME_SIZES.items()):
        setting = "single_frame" if len(sizes) == 1 else "multi_frame_rotation"
        frames = tuple(_png(w, h, seed=10 * k + j) for j, (w, h) in enumerate(sizes))
        row = VQARecord(name, setting, "size", "object_relative", frames, "Which object is the largest?",
                        ("mug", "bowl", "plate", "apple"), "ABCD"[k]).to_row()
        rows.append({**row, "frames": [{"bytes": f, "path": None} for f in row["frames"]]})
    write_parquet_config(repo, "vqa", "general", rows)
    write_readme(repo, ("general",))
    return repo


def _decoded(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def test_grey_sends_a_uniform_grey_image_of_each_frames_own_size(sized_repo, tmp_path):
    seeing, blind = Recorder(), Recorder()
    run_suite(seeing, "vqa", "general", tmp_path / "seeing", data=str(sized_repo), progress=False)
    summary = run_suite(blind, "vqa", "general", tmp_path / "blind", data=str(sized_repo), progress=False, blind="grey")
    assert [r.id for r in blind.requests] == list(FRAME_SIZES)
    for request, seen in zip(blind.requests, seeing.requests):
        assert request.prompt == seen.prompt and request.options == seen.options  # only the pixels differ
        pixels = [_decoded(image) for image in request.images]
        assert [(p.shape[1], p.shape[0]) for p in pixels] == FRAME_SIZES[request.id]
        assert all((p == 128).all() for p in pixels)
        assert [(p.shape[1], p.shape[0]) for p in map(_decoded, seen.images)] == FRAME_SIZES[request.id]
        assert not any((p == 128).all() for p in map(_decoded, seen.images))
    assert summary["blind"] == "grey" and summary["n_scored"] == 3


def test_grey_applies_to_ir_items_too(repos, tmp_path):
    backend = Recorder()
    summary = run_suite(backend, "ir", "all", tmp_path, data=str(repos["ir"]), progress=False, blind="grey")
    assert summary["blind"] == "grey" and summary["n_scored"] == len(backend.requests) == 8
    for request in backend.requests:
        (pixels,) = [_decoded(image) for image in request.images]
        assert pixels.shape == (64, 64, 3) and (pixels == 128).all()  # the fixture's 64 x 64 frames


def test_none_sends_no_image_where_the_backend_allows_it_and_is_refused_by_name_where_not(sized_repo, tmp_path):
    backend = Recorder()
    summary = run_suite(backend, "vqa", "general", tmp_path / "none", data=str(sized_repo), progress=False, blind="none")
    assert summary["blind"] == "none" and [r.images for r in backend.requests] == [(), (), ()]
    refused = ImagesOnly()
    with pytest.raises(ValueError, match=r"--blind none sends requests without images, which backend 'images-only' "
                                         r"\(ImagesOnly\) does not accept; use --blind grey"):
        run_suite(refused, "vqa", "general", tmp_path / "refused", data=str(sized_repo), progress=False, blind="none")
    assert not refused.requests and not (tmp_path / "refused").exists()
    with pytest.raises(ValueError, match=r"--blind must be one of \['grey', 'none'\].*got 'black'"):
        run_suite("chance", "vqa", "general", tmp_path / "bad", data=str(sized_repo), progress=False, blind="black")


def test_a_transformers_model_answers_both_blind_modes(sized_repo, tmp_path):
    # The transformers backend declares accepts_text_only: a real (tiny Qwen3.5) model answers text-only requests.
    from bspatial.evaluation.vlm.backend_transformers import TransformersBackend
    from bspatial.evaluation.vlm.tiny_checkpoint import write_tiny_checkpoint

    backend = TransformersBackend(str(write_tiny_checkpoint(tmp_path / "tiny")), max_new_tokens=4)
    for mode in ("none", "grey"):
        summary = run_suite(backend, "vqa", "general", tmp_path / mode, data=str(sized_repo), progress=False, blind=mode)
        assert summary["blind"] == mode and summary["n_scored"] == 3 and summary["complete"]


def test_a_blind_run_is_fingerprinted_apart_from_the_seeing_run(repos, tmp_path):
    def run(out, blind=None):
        return run_suite("chance", "vqa", "task_navigation", out, data=str(repos["vqa"]), progress=False, blind=blind)

    seeing = run(tmp_path / "seeing")
    blind = run(tmp_path / "blind", "grey")
    assert seeing["fingerprint"] != blind["fingerprint"] and seeing["blind"] is None
    with pytest.raises(IncompatibleRunError, match=r"differing: blind: null \(stored\) vs \{\"mode\": \"grey\", "
                                                   r"\"grey_level\": 128\} \(now\)"):
        run(tmp_path / "seeing", "grey")
    with pytest.raises(IncompatibleRunError, match=r"differing: blind: \{\"mode\": \"grey\".* \(stored\) vs null"):
        run(tmp_path / "blind")
    with pytest.raises(IncompatibleRunError, match=r"differing: blind: .*\{\"mode\": \"none\"\} \(now\)"):
        run(tmp_path / "blind", "none")
    stored = json.loads((part_dir(tmp_path / "blind", "vqa", "task_navigation") / FINGERPRINT_FILE).read_text())
    assert stored["components"]["blind"] == {"mode": "grey", "grey_level": 128}
    # A seeing run adds no component: its fingerprint is the one it had before blind runs existed.
    stored = json.loads((part_dir(tmp_path / "seeing", "vqa", "task_navigation") / FINGERPRINT_FILE).read_text())
    assert set(stored["components"]) == {"version", "suite", "prompts", "data", "model", "generation"}


def _table1(path):
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_report_shows_a_blind_run_as_its_own_row_beside_its_model(repos, tmp_path):
    for name, model, blind in (("seeing", "chance:0", None), ("other", "chance:1", None), ("blind", "chance:0", "grey")):
        run_suite(model, "vqa", "general", tmp_path / name, data=str(repos["vqa"]), progress=False, blind=blind)
    written = write_report([tmp_path / "seeing", tmp_path / "other", tmp_path / "blind"], tmp_path / "report")
    rows = _table1(written["table1.csv"])
    assert [(r["run"], r["model"]) for r in rows] == [("seeing", "chance:0"), ("blind", "chance:0 (blind)"),
                                                      ("other", "chance:1")]
    summary = json.loads((part_dir(tmp_path / "blind", "vqa", "general") / SUMMARY_FILE).read_text())
    assert float(rows[1]["single_all"]) == pytest.approx(summary["cells"]["single_frame/all"]["accuracy"], abs=1e-4)
    assert "| blind | chance:0 (blind) |" in written["table1.md"].read_text()
    # The HTML leaderboard's Table 1 orders and labels its rows the same way.
    section = vlm_table("table1", [(name, load_run(tmp_path / name)) for name in ("seeing", "other", "blind")])
    ours = [(row.label, row.cells["model"].value) for row in section.rows if not row.reference]
    assert ours == [("seeing", "chance:0"), ("blind", "chance:0 (blind)"), ("other", "chance:1")]


def test_the_command_line_way(repos, tmp_path, monkeypatch):
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)  # the default run folders land under tmp_path/runs
    base = ["eval-vlm", "--model", "chance", "--suite", "vqa", "--config", "general", "--data", str(repos["vqa"]),
            "--no-progress"]
    for extra in ([], ["--blind"], ["--blind", "none"]):
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 0, result.output
    assert "vqa-general (blind: none):" in result.output
    for folder, mode in (("chance_0", None), ("chance_0-blind", "grey"), ("chance_0-blind-none", "none")):
        assert json.loads((tmp_path / "runs" / folder / "vqa-general" / SUMMARY_FILE).read_text())["blind"] == mode
    mixed = runner.invoke(app, [*base, "--blind", "--out", "runs/chance_0"])  # a bare --blind before another option
    assert mixed.exit_code == 2 and "refusing to mix" in mixed.output and "blind" in mixed.output
    bad = runner.invoke(app, [*base, "--blind", "black"])
    assert bad.exit_code == 2 and "--blind must be one of ['grey', 'none']" in bad.output
    result = runner.invoke(app, ["report", "runs/chance_0-blind", "runs/chance_0", "--out", "reports"])
    assert result.exit_code == 0, result.output
    assert [r["model"] for r in _table1(tmp_path / "reports" / "table1.csv")] == ["chance:0", "chance:0 (blind)"]
