"""`bspatial sim gallery` through a real subprocess (bad input through the typer app in-process): one PNG per listed category and room type, a contact
sheet and the coverage table; same seed, same bytes; unknown names exit non-zero naming them."""

import subprocess
import sys
from pathlib import Path

from PIL import Image

from bspatial.construction.gallery import VIEW_SIZE, write_gallery

BSPATIAL = str(Path(sys.executable).parent / "bspatial")
CATEGORIES = ("mug", "banana", "box_of_cereal")   # three families: revolve, composed, labelled (printed)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BSPATIAL, "sim", "gallery", *args], capture_output=True, text=True, timeout=300)


def test_gallery_writes_one_png_per_listed_category_and_room(tmp_path):
    out = tmp_path / "gallery"
    result = _run("--out", str(out), "--categories", ",".join(CATEGORIES), "--rooms", "kitchen")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (out / "objects").iterdir()) == sorted(f"{c}.png" for c in CATEGORIES)
    assert [p.name for p in (out / "rooms").iterdir()] == ["kitchen.png"]
    for path in [*(out / "objects").iterdir(), out / "rooms" / "kitchen.png"]:
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width == 2 * VIEW_SIZE   # near | far side by side
    with Image.open(out / "contact_sheet.png") as sheet:
        assert sheet.format == "PNG"
    table = (out / "categories.md").read_text()
    assert "| mug | revolve |" in table and "| banana | composed |" in table and "| box_of_cereal | labelled |" in table
    assert "3 of 3 wear a procedural mesh" in table
    assert not [p for p in out.rglob("*") if p.name.startswith(".")]   # no temporary files left behind


def test_same_seed_same_bytes(tmp_path):
    a = write_gallery(tmp_path / "a", categories=["teapot"], rooms=[], seed=3)
    b = write_gallery(tmp_path / "b", categories=["teapot"], rooms=[], seed=3)
    c = write_gallery(tmp_path / "c", categories=["teapot"], rooms=[], seed=4)
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    assert (tmp_path / "a" / "objects" / "teapot.png").read_bytes() != (tmp_path / "c" / "objects" / "teapot.png").read_bytes()


def test_unknown_category_exits_non_zero_naming_it(tmp_path):
    from typer.testing import CliRunner

    from bspatial.cli import app

    result = CliRunner().invoke(app, ["sim", "gallery", "--out", str(tmp_path / "g"), "--categories", "mug,flying_saucer",
                                      "--rooms", "none"])
    assert result.exit_code == 2
    assert "flying_saucer" in result.output
    assert not (tmp_path / "g" / "objects" / "mug.png").exists()
