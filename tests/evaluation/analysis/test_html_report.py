"""``bspatial report --html``: the static leaderboard, opened from file:// in a real headless chromium.

The expected numbers are known apart from the report code: the paper's rows are read from the CSV text
here; our VLM cells are recomputed from the run's per-sample logs with plain Python; our rollout cells
come from episode files written here with chosen outcomes, and their Wilson 95% intervals are the
published values for those counts (2/3: [20.8, 93.9]; 3/7: [15.8, 75.0]; 1/2: [9.5, 90.5]).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from typer.testing import CliRunner

pytestmark = [pytest.mark.slow, pytest.mark.subprocess, pytest.mark.browser]

TABLES = Path(__file__).resolve().parents[3] / "bspatial" / "reference" / "tables"
POLICY = "my-policy"
MODEL = "chance:4"


def invoke(*args: str):
    from bspatial.cli import app

    return CliRunner().invoke(app, list(args))

# (split, task, outcome, soft_credit, failure_mode) of the hand-made rollout run.
EPISODES = (
    ("held_out", "reach_dice", "correct", False, "success"),
    ("held_out", "reach_dice", "correct", False, "success"),
    ("held_out", "reach_dice", "none", True, "missed_target"),
    ("held_out", "reach_hardback", "correct", False, "success"),
    ("held_out", "reach_tool", "wrong", False, "wrong_object"),
    ("held_out", "reach_tool", "none", False, "no_action"),
    ("held_out", "place_carving_knife", "none", True, "transport_failure"),
    ("navigation", "move_to_bathroom", "correct", False, "success"),
    ("navigation", "move_to_bathroom", "none", False, "navigation_failure"),
)


def _episode(index: int, split: str, task: str, outcome: str, soft: bool, mode: str) -> dict:
    trace = None
    if split == "navigation":
        end = [3.5, -1.0, 0.0] if outcome == "correct" else [-1.0, 0.5, 0.0]
        trace = {"base_poses": [[-2.0, 0.0, 0.3], [0.5, -0.5, 0.0], end]}
    return {"task": task, "variant": "", "seed": index, "split": split, "index": index, "policy": POLICY,
            "condition": "spatial", "instruction": "", "status": "decided", "outcome": outcome, "soft_credit": soft,
            "detail": "", "failure_mode": mode, "steps": 3, "message": "", "trace": trace, "ir": None, "spawn": None}


def write_rollout_run(root: Path) -> Path:
    """A rollout run folder (rollout.json + episodes/) holding :data:`EPISODES`."""
    run = root / "hand-rollout"
    (run / "episodes").mkdir(parents=True)
    (run / "rollout.json").write_text(json.dumps({"policy": POLICY, "split": "held_out", "seed": 0}))
    for i, (split, task, outcome, soft, mode) in enumerate(EPISODES):
        (run / "episodes" / f"{task}-{i:04d}.json").write_text(json.dumps(_episode(i, split, task, outcome, soft, mode)))
    return run


def _csv(name: str) -> list[dict[str, str]]:
    with open(TABLES / f"{name}.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _samples(part: Path) -> list[dict]:
    return [json.loads(line) for line in (part / "samples.jsonl").read_text().splitlines()]


def _task_mean(rows: list[dict], field: str) -> float:
    by_task: dict[str, list[bool]] = {}
    for row in rows:
        by_task.setdefault(row["task"], []).append(bool(row[field]))
    return sum(100.0 * sum(v) / len(v) for v in by_task.values()) / len(by_task)


@pytest.fixture(scope="module")
def site(vlm_run, tmp_path_factory) -> Path:
    """The site of the conftest's VLM run, a general-VQA run made here, and the hand-made rollout run."""
    from bspatial.evaluation.vlm.fixtures import write_fixture_repos

    root = tmp_path_factory.mktemp("report")
    repos = write_fixture_repos(root / "fixture")
    general = root / "general-run"
    result = invoke("eval-vlm", "--model", MODEL, "--suite", "vqa", "--config", "general", "--data", str(repos["vqa"]),
                    "--out", str(general), "--no-progress")
    assert result.exit_code == 0, result.output
    rollout = write_rollout_run(root)
    out = root / "site"
    result = invoke("report", "--html", str(vlm_run), str(general), str(rollout), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert f"wrote {out / 'index.html'}" in result.output
    return out


def _cell(driver, table: str, row: str, column: str):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, f'table#{table} tr[data-row="{row}"] td[data-column="{column}"]')


def _value(driver, table: str, row: str, column: str) -> float:
    return float(_cell(driver, table, row, column).get_attribute("data-value"))


def test_page_loads_offline_with_expected_numbers(site, vlm_run, browser, tmp_path):
    from selenium.webdriver.common.by import By

    browser.get((site / "index.html").as_uri())
    assert browser.title == "BEHAVIOR-Spatial leaderboard"
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []

    # The paper's rows, as the CSV prints them, marked as reference.
    gpt = next(r for r in _csv("table1_vlm_vqa") if r["model"] == "GPT-6 Astra")
    assert _value(browser, "table1", "paper:GPT-6 Astra", "single_all") == float(gpt["single_all"])
    row = browser.find_element(By.CSS_SELECTOR, 'table#table1 tr[data-row="paper:GPT-6 Astra"]')
    assert "reference" in row.get_attribute("class").split()
    assert row.find_element(By.CSS_SELECTOR, "span.badge").text == "paper"
    dot = next(r for r in _csv("table4_policies") if r["policy"] == "+ dot IR")
    assert _value(browser, "table4", "paper:+ dot IR", "held_out_soft") == float(dot["heldout_soft"])
    fable = next(r for r in _csv("tableS6_code_as_policy_per_task") if r["writer"] == "Fable 5.1" and r["task"] == "POOLED")
    cells = browser.find_elements(By.CSS_SELECTOR, 'table#tableS6 tr[data-row="paper:Fable 5.1"] td[data-column="soft"]')
    assert float(fable["soft"]) in [float(c.get_attribute("data-value")) for c in cells]

    # Our VLM runs: recomputed from their per-sample logs.
    general = _samples(site.parent / "general-run" / "vqa-general")
    single = [r["correct"] for r in general if r["setting"] == "single_frame"]
    assert _value(browser, "table1", "general-run", "single_all") == pytest.approx(100.0 * sum(single) / len(single))
    ir = _samples(vlm_run / "ir-all")
    assert _value(browser, "table2", vlm_run.name, "ir_strict") == pytest.approx(_task_mean(ir, "strict"))
    vqa = _samples(vlm_run / "vqa-task_manipulation")
    assert _value(browser, "table2", vlm_run.name, "task_all") == pytest.approx(_task_mean(vqa, "correct"))

    # Our rollout run: chosen outcomes, Wilson intervals as published.
    strict = _cell(browser, "table4", POLICY, "held_out_strict")
    assert float(strict.get_attribute("data-value")) == pytest.approx(300 / 7)
    assert strict.find_element(By.CSS_SELECTOR, "span.ci").text == "[15.8, 75.0]"
    assert _value(browser, "table4", POLICY, "held_out_soft") == pytest.approx(500 / 7)
    assert _cell(browser, "table4", POLICY, "prompt_probe_soft").text == "—"
    dice = [r for r in browser.find_elements(By.CSS_SELECTOR, f'table#tableS9 tr[data-row="{POLICY}"]')
            if r.find_element(By.CSS_SELECTOR, 'td[data-column="task"]').text == "reach_dice"]
    (dice,) = dice
    assert float(dice.find_element(By.CSS_SELECTOR, 'td[data-column="strict"]').get_attribute("data-value")) == \
        pytest.approx(200 / 3)
    assert dice.find_element(By.CSS_SELECTOR, 'td[data-column="strict"] span.ci').text == "[20.8, 93.9]"
    nav = [r for r in browser.find_elements(By.CSS_SELECTOR, f'table#tableS11 tr[data-row="{POLICY}"]')
           if r.find_element(By.CSS_SELECTOR, 'td[data-column="task"]').text == "move_to_bathroom"]
    assert nav[0].find_element(By.CSS_SELECTOR, 'td[data-column="success"]').text == "50.0 [9.5, 90.5]"

    # Code-as-policy: the paper's rows only, and the caption says we have none.
    caption = browser.find_element(By.CSS_SELECTOR, "#section-table5 p.caption").text
    assert "no runs" in caption
    assert browser.find_elements(By.CSS_SELECTOR, "table#table5 tbody tr:not(.reference)") == []

    # Figures load from the folder (file://), logs are links to copied files.
    images = browser.find_elements(By.CSS_SELECTOR, "figure img")
    names = {Path(urlparse(i.get_attribute("src")).path).name for i in images}
    assert {"figure_s9_0_vqa.png", "tableS9_strict.png", "failure_modes.png",
            "navigation_single_floor_house_bedroom.png"} <= names
    assert all(browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", i)
               for i in images)
    links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "details.run p.logs a")]
    files = [Path(unquote(urlparse(h).path)) for h in links]
    assert any(f.name == "samples.jsonl" for f in files) and any(f.name == "episodes.jsonl" for f in files)
    assert all(f.is_file() and f.is_relative_to(site) for f in files)
    episodes = next(f for f in files if f.name == "episodes.jsonl").read_text().splitlines()
    assert len(episodes) == len(EPISODES)

    shot = tmp_path / "leaderboard.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


def test_clicking_a_header_sorts_the_table(site, browser):
    from selenium.webdriver.common.by import By

    browser.get((site / "index.html").as_uri())
    header = browser.find_element(By.CSS_SELECTOR, 'table#table4 th[data-column="held_out_strict"]')

    def column() -> list[float | None]:
        cells = browser.find_elements(By.CSS_SELECTOR, 'table#table4 tbody td[data-column="held_out_strict"]')
        return [None if c.get_attribute("data-value") is None else float(c.get_attribute("data-value")) for c in cells]

    before = column()
    assert before != sorted(before)   # the page's order (ours first, then the paper's) is not sorted
    header.click()
    assert header.get_attribute("data-sort") == "ascending"
    assert column() == sorted(before)
    header.click()
    assert header.get_attribute("data-sort") == "descending"
    assert column() == sorted(before, reverse=True)
    labels = browser.find_elements(By.CSS_SELECTOR, "table#table4 tbody td.label")
    browser.find_element(By.CSS_SELECTOR, 'table#table4 th[data-column="label"]').click()
    texts = [l.text.lower() for l in browser.find_elements(By.CSS_SELECTOR, "table#table4 tbody td.label")]
    assert texts == sorted(l.text.lower() for l in labels)
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_bad_inputs_name_the_path_and_exit_2(tmp_path):
    rollout = write_rollout_run(tmp_path)
    stray = tmp_path / "not-a-run"
    stray.mkdir()
    result = invoke("report", "--html", str(rollout), str(stray), "--out", str(tmp_path / "site"))
    assert result.exit_code == 2
    assert f"run {stray} is neither a rollout run folder" in result.output
    assert not (tmp_path / "site").exists()

    others = tmp_path / "my-files"
    others.mkdir()
    (others / "keep.txt").write_text("mine")
    result = invoke("report", "--html", str(rollout), "--out", str(others))
    assert result.exit_code == 2
    assert f"--out {others} is a non-empty folder that is not a report site" in result.output
    assert (others / "keep.txt").read_text() == "mine" and sorted(p.name for p in others.iterdir()) == ["keep.txt"]


def test_a_rebuild_replaces_the_site_whole(tmp_path):
    rollout = write_rollout_run(tmp_path)
    out = tmp_path / "site"
    assert invoke("report", "--html", str(rollout), "--out", str(out)).exit_code == 0
    (out / "figures" / "stale.png").write_bytes(b"old")
    first = (out / "index.html").read_text()
    assert invoke("report", "--html", str(rollout), "--out", str(out)).exit_code == 0
    assert not (out / "figures" / "stale.png").exists()      # the old folder was swapped out, not merged into
    assert (out / "index.html").read_text() == first         # same runs, same page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hand-rollout", "site"]   # no staging folder left


def test_a_build_killed_midway_leaves_the_old_site_and_the_rerun_cleans_up(tmp_path):
    """SIGKILL while the new site is being staged: the old site stays whole at --out; the rerun removes the
    staging folder and publishes the new one."""
    import os
    import signal
    import subprocess
    import sys
    import time

    rollout = write_rollout_run(tmp_path)
    out = tmp_path / "site"
    assert invoke("report", "--html", str(rollout), "--out", str(out)).exit_code == 0
    old = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    command = [sys.executable, "-m", "bspatial.cli", "report", "--html", str(rollout), "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".site.building-*")) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert process.poll() is None, "the report finished before it could be killed while staging"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert list(tmp_path.glob(".site.building-*"))          # killed while staging
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == old
    assert invoke("report", "--html", str(rollout), "--out", str(out)).exit_code == 0
    assert not list(tmp_path.glob(".site.*")) and (out / "index.html").is_file()
