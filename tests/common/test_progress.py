import logging
import os
import subprocess
import sys

import pytest

from bspatial.common.progress import LogProgress, log_interval, progress_bar, quiet_library_progress

pytestmark = [pytest.mark.subprocess]


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_log_lines_come_at_intervals_and_on_close(caplog):
    clock = FakeClock()
    caplog.set_level(logging.INFO, logger="bspatial.progress")
    bar = LogProgress(4, "episodes", "episode", interval=30, clock=clock)
    clock.now += 10
    bar.update()                      # 10 s after the start: too early for a line
    clock.now += 30
    bar.update()                      # 40 s: a line, 2 of 4 done, 40 s per 2 -> 40 s left
    clock.now += 5
    bar.update()                      # 45 s: 5 s after the last line
    bar.close()
    bar.close()                       # a second close logs nothing
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["episodes: 2/4 episode (50%), 0:00:40 elapsed, ~0:00:40 left",
                     "episodes: 3/4 episode (75%), 0:00:45 elapsed, ~0:00:15 left"]


def test_without_a_total_the_line_counts_only(caplog):
    clock = FakeClock()
    caplog.set_level(logging.INFO, logger="bspatial.progress")
    with LogProgress(None, "items", "item", interval=1, clock=clock) as bar:
        clock.now += 3725
        bar.update(7)
    assert [r.getMessage() for r in caplog.records] == ["items: 7 item, 1:02:05 elapsed"] * 2


def test_not_a_terminal_gives_log_lines_and_disabled_gives_nothing(capsys):
    # pytest captures stderr, so it is not a terminal here.
    assert isinstance(progress_bar(3, "x"), LogProgress)
    with progress_bar(3, "x", enabled=False) as bar:
        bar.update()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("raw", ["0", "-5", "soon"])
def test_a_bad_interval_is_refused_by_name(monkeypatch, raw):
    monkeypatch.setenv("BSPATIAL_PROGRESS_SECONDS", raw)
    with pytest.raises(ValueError, match=f"BSPATIAL_PROGRESS_SECONDS must be a positive number .* {raw!r}"):
        log_interval()


def test_library_bars_are_switched_off_for_children_but_a_users_choice_stays(monkeypatch):
    monkeypatch.delenv("HF_DATASETS_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "0")
    quiet_library_progress()
    child = subprocess.run([sys.executable, "-c", "import datasets; print(datasets.is_progress_bar_enabled())"],
                           capture_output=True, text=True, check=True, env=dict(os.environ))
    assert child.stdout.strip() == "False"
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "0"


def test_a_rollout_logged_to_a_file_has_progress_lines_and_no_bars(tmp_path):
    # The real command, stderr to a file (not a terminal), a line after every episode.
    log = tmp_path / "rollout.log"
    env = {**os.environ, "BSPATIAL_PROGRESS_SECONDS": "0.001"}
    env.pop("HF_DATASETS_DISABLE_PROGRESS_BARS", None)
    with open(log, "w") as err:
        subprocess.run([sys.executable, "-m", "bspatial.cli", "rollout", "--policy", "scripted", "--split", "held_out",
                        "--task", "reach_plate", "--n-episodes", "2", "--max-steps", "5", "--workers", "1",
                        "--out", str(tmp_path / "run")], stderr=err, stdout=subprocess.DEVNULL, env=env, check=True)
    text = log.read_text()
    assert "\r" not in text
    assert "episodes: 1/2 episode (50%)" in text and "episodes: 2/2 episode (100%)" in text
