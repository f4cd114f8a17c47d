"""Folder publishing and the leftovers of killed runs: every state a kill can leave is recovered.

A kill cannot be aimed at one line, so the tests build the file-system states a kill leaves at each point
of :func:`publish_folder` (a staging folder, the old folder moved aside with or without the new one in
place, a cut atomic write) and check what the next run of the same output does with them.
"""

import logging
import tempfile

import pytest

from bspatial.common.files import (NotAFolderError, atomic_write_text, publish_folder, remove_stale_staging,
                                   remove_stale_temp_files, require_folder_path, staging_folder)


def make(folder, text):
    folder.mkdir(parents=True)
    (folder / "data.txt").write_text(text)
    return folder


def test_publish_replaces_an_existing_folder_and_leaves_no_sibling(tmp_path):
    out = make(tmp_path / "out", "old")
    stage = staging_folder(out)
    (stage / "data.txt").write_text("new")
    assert publish_folder(stage, out) == out
    assert (out / "data.txt").read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_publish_refuses_to_replace_a_file(tmp_path):
    (tmp_path / "out").write_text("a file")
    stage = make(tmp_path / "stage", "new")
    with pytest.raises(NotAFolderError, match=f"{tmp_path / 'out'} is a file"):
        publish_folder(stage, tmp_path / "out")
    assert (tmp_path / "out").read_text() == "a file" and (stage / "data.txt").read_text() == "new"


def test_a_stale_staging_folder_is_removed_and_logged(tmp_path, caplog):
    out = make(tmp_path / "out", "old")
    stale = staging_folder(out)
    (stale / "half.txt").write_text("half")
    others = [make(tmp_path / ".outer.building-abcdefgh", "x"), make(tmp_path / ".out.building-notours", "x"),
              make(tmp_path / "other", "x")]
    with caplog.at_level(logging.WARNING):
        assert remove_stale_staging(out) == [stale]
    assert f"removed stale {stale}" in caplog.text
    assert not stale.exists() and all(p.exists() for p in others) and (out / "data.txt").read_text() == "old"


def test_a_kill_between_moving_the_old_aside_and_the_new_in_restores_the_old(tmp_path, caplog):
    out = tmp_path / "out"
    aside = make(tmp_path / ".out.old-4242", "old")    # the fallback's first rename done, the second not
    stale = make(staging_folder(out) / "out", "new, maybe incomplete").parent
    with caplog.at_level(logging.WARNING):
        assert sorted(remove_stale_staging(out)) == sorted([stale])
    assert (out / "data.txt").read_text() == "old" and not aside.exists() and not stale.exists()
    assert f"restored {out}" in caplog.text


def test_a_kill_after_the_new_folder_is_in_removes_the_old(tmp_path):
    out = make(tmp_path / "out", "new")
    aside = make(tmp_path / ".out.old-4242", "old")
    assert remove_stale_staging(out) == [aside]
    assert (out / "data.txt").read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_temp_files_of_cut_atomic_writes_are_removed_and_results_kept(tmp_path):
    atomic_write_text(tmp_path / "a.json", "{}")
    _, cut = tempfile.mkstemp(prefix=".b.json.", suffix=".tmp", dir=tmp_path)   # what atomic_write leaves if killed
    (tmp_path / ".lock").write_text("")
    assert [p.name for p in remove_stale_temp_files(tmp_path)] == [cut.rsplit("/", 1)[1]]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "a.json"]


def test_an_output_path_on_or_under_a_file_is_refused_by_name(tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("x")
    with pytest.raises(NotAFolderError, match=f"^{taken} is a file, not a folder"):
        require_folder_path(taken)
    with pytest.raises(NotAFolderError, match=f"^{taken} is a file, so the folder {taken / 'a' / 'b'} cannot be made"):
        require_folder_path(taken / "a" / "b")
    assert require_folder_path(tmp_path / "new" / "deep") == tmp_path / "new" / "deep"
    assert isinstance(NotAFolderError("x"), ValueError)   # the commands report ValueErrors as usage errors


def test_an_atomic_write_gets_the_mode_a_plain_open_would(tmp_path):
    import os

    plain = tmp_path / "plain.json"
    plain.write_text("{}")
    written = atomic_write_text(tmp_path / "atomic.json", "{}")
    assert os.stat(written).st_mode & 0o777 == os.stat(plain).st_mode & 0o777   # not mkstemp's 0600
