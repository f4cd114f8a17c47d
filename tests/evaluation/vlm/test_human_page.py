"""``bspatial human``: a person answers the items on a local page, in a real headless chromium (as the HTML
leaderboard's test drives it), into an eval-vlm run folder that ``bspatial report`` scores and pools.

The expected numbers are known apart from the code under test: the answers clicked here are compared with the
dataset's ground truth (the answer letters, the target masks decoded from the region specs) with plain Python.
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from bspatial.evaluation.vlm.fixtures import write_parquet_config, write_readme
from bspatial.scoring.masks import rle_decode

pytestmark = [pytest.mark.slow, pytest.mark.subprocess, pytest.mark.browser]

LETTERS = "ABCD"
START_TIMEOUT_S = 180   # the server imports datasets and reads the parquet files on a busy 2-core machine
# What the page's item may carry: what a model sees, and the page's bookkeeping. Nothing answer-like.
ITEM_KEYS = {"done", "annotator", "progress", "id", "suite", "elapsed_s", "kind", "context", "question", "options",
             "frames", "target", "image_size"}


def invoke(*args: str):
    from bspatial.cli import app

    return CliRunner().invoke(app, list(args))


def _rows(repo: Path, config: str) -> list[dict]:
    return pq.read_table(repo / config / "test-00000-of-00001.parquet").to_pylist()


def _write_data(root: Path, vqa: list[dict], ir: list[dict]) -> Path:
    for suite, rows in (("vqa", vqa), ("ir", ir)):
        write_parquet_config(root / suite, suite, "tiny", rows)
        write_readme(root / suite, ("tiny",))
    return root


@pytest.fixture(scope="module")
def tiny(repos) -> dict[str, list[dict]]:
    """A ``tiny`` config per suite from the fixture benchmark: 3 single-frame and 1 multi-frame VQA item, 2 reach
    IR items of two tasks."""
    general = _rows(repos["vqa"], "general")
    vqa = [r for r in general if r["setting"] == "single_frame" and r["id"].endswith("-0")][:3]
    vqa += [r for r in general if r["setting"] == "multi_frame_rotation"][:1]
    ir = [r for r in _rows(repos["ir"], "all") if r["id"] in ("reach_dice-0", "reach_hardback-0")]
    assert len(vqa) == 4 and len(ir) == 2
    return {"vqa": vqa, "ir": ir}


@pytest.fixture(scope="module")
def data(tiny, tmp_path_factory) -> Path:
    """A `bspatial build`-shaped folder: vqa/ and ir/ repos with the config tiny."""
    return _write_data(tmp_path_factory.mktemp("human-data"), tiny["vqa"], tiny["ir"])


def _target(row: dict) -> np.ndarray:
    region = json.loads(row["region"])
    return np.logical_or.reduce([rle_decode(t) for t in region["targets"]])


def _hit_pixel(row: dict) -> tuple[int, int]:
    """(col, row) of a pixel in the middle of the item's target mask."""
    rows, cols = np.nonzero(_target(row))
    col, line = int(np.median(cols)), int(np.median(rows))
    assert _target(row)[line, col]
    return col, line


def _miss_pixel(row: dict) -> tuple[int, int]:
    """(col, row) of a pixel far from every target pixel (a top-right corner pixel of the fixture's frames)."""
    target = _target(row)
    col, line = target.shape[1] - 3, 2
    assert not target[line, col]
    return col, line


def _strict_and_tolerant(row: dict, point: tuple[float, float]) -> tuple[bool, bool]:
    """Appendix 14's reach rule by hand: in the target mask; or within 2% of the diagonal of a target pixel centre."""
    target = _target(row)
    height, width = target.shape
    u, v = point
    strict = bool(target[int(math.floor(v)), int(math.floor(u))])
    lines, cols = np.nonzero(target)
    nearest = np.sqrt((cols + 0.5 - u) ** 2 + (lines + 0.5 - v) ** 2).min()
    return strict, strict or bool(nearest <= 0.02 * math.hypot(width, height))


# ----------------------------------------------------------------------------- the server and the browser


class Server:
    """``bspatial human`` in its own process (so it can be killed), its log in a file."""

    def __init__(self, data: Path, out: Path, annotator: str, log: Path) -> None:
        self.log = log
        self.handle = open(log, "w", encoding="utf-8")
        command = [sys.executable, "-m", "bspatial.cli", "human", "--data", str(data), "--config", "tiny",
                   "--annotator", annotator, "--out", str(out), "--port", "0"]
        self.process = subprocess.Popen(command, stdout=self.handle, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for line in self.log.read_text().splitlines():
                if line.startswith("open http://"):
                    return line.split()[1]
            if self.process.poll() is not None:
                pytest.fail(f"bspatial human exited with {self.process.returncode}:\n{self.log.read_text()}")
            time.sleep(0.2)
        self.kill()
        pytest.fail(f"bspatial human did not start in {START_TIMEOUT_S} s:\n{self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL: no handler runs, no file is closed cleanly."""
        self.process.kill()
        self.process.wait()
        self.handle.close()


def _shown(driver, previous: str | None = None) -> str:
    """The id of the item the page shows, once it is not ``previous`` (waits for the page's fetch)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def ready(d):
        value = d.find_element(By.ID, "item").get_attribute("data-item-id")
        return value if value and value != previous else False

    return WebDriverWait(driver, 30).until(ready)


def _click_pixel(driver, col: int, line: int, size: tuple[int, int]) -> None:
    """Click the centre of image pixel (col, line) of the IR frame, as a person's mouse would."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    image = driver.find_element(By.ID, "point-image")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", image)
    box = image.rect
    dx = (col + 0.5) * box["width"] / size[0] - box["width"] / 2
    dy = (line + 0.5) * box["height"] / size[1] - box["height"] / 2
    ActionChains(driver).move_to_element_with_offset(image, round(dx), round(dy)).click().perform()


def _item_json(url: str) -> tuple[dict, str]:
    with urllib.request.urlopen(url + "api/item") as reply:
        text = reply.read().decode()
    return json.loads(text), text


def _samples(part: Path) -> list[dict]:
    return [json.loads(line) for line in (part / "samples.jsonl").read_text().splitlines()]


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _assert_no_answer(view: dict, text: str, page: str, rows: dict[str, dict]) -> None:
    assert set(view) <= ITEM_KEYS
    row = rows[view["id"]]
    for secret in ("answer", "region", "targets", "distractors", "counts", "correct"):
        assert f'"{secret}"' not in text
    if "region" in row:   # the mask's run lengths, in any form, are nowhere
        counts = json.dumps(json.loads(row["region"])["targets"][0]["counts"])
        assert counts not in text and counts not in page and counts.replace(" ", "") not in page
    else:
        assert 'data-answer' not in page and 'data-correct' not in page
        assert f'"{row["answer"]}"' not in text.replace(f'"letter": "{row["answer"]}"', "")


# ----------------------------------------------------------------------------- tests


def test_a_person_answers_in_the_browser_resumes_after_a_kill_and_the_report_scores_it(
        data, tiny, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out = tmp_path / "human-alice"
    rows = {r["id"]: r for r in tiny["vqa"] + tiny["ir"]}
    order = [r["id"] for r in tiny["vqa"]] + [r["id"] for r in tiny["ir"]]
    # VQA plan: right, wrong, right, right (the multi-frame item); IR: the first target hit, the second missed.
    wrong = {order[1]}
    chosen = {i: (LETTERS[(LETTERS.index(rows[i]["answer"]) + 1) % 4] if i in wrong else rows[i]["answer"])
              for i in order[:4]}
    pixels = {order[4]: _hit_pixel(rows[order[4]]), order[5]: _miss_pixel(rows[order[5]])}

    server = Server(data, out, "alice", tmp_path / "server-1.log")
    try:
        browser.get(server.url)
        assert browser.title == "BEHAVIOR-Spatial: human baseline"
        shown = _shown(browser)
        assert shown == order[0]
        view, text = _item_json(server.url)
        _assert_no_answer(view, text, browser.page_source, rows)
        assert view["question"] == rows[shown]["question"]
        assert [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#options button")] == \
            [f"{l}. {o}" for l, o in zip(LETTERS, rows[shown]["options"])]
        first = int(browser.find_element(By.ID, "timer").text.split()[0])
        time.sleep(1.5)
        assert int(browser.find_element(By.ID, "timer").text.split()[0]) > first   # the visible timer runs
        browser.find_element(By.CSS_SELECTOR, f'#options button[data-letter="{chosen[shown]}"]').click()
        shown = _shown(browser, shown)
        assert shown == order[1]

        browser.refresh()   # a reload shows the next unanswered item, not the one answered
        assert _shown(browser) == order[1]
        browser.find_element(By.CSS_SELECTOR, f'#options button[data-letter="{chosen[order[1]]}"]').click()
        assert _shown(browser, order[1]) == order[2]
        assert [r["id"] for r in _samples(out / "vqa-tiny")] == order[:2]

        server.kill()       # hard kill mid-session, then the same command again
        server = Server(data, out, "alice", tmp_path / "server-2.log")
        browser.get(server.url)
        assert _shown(browser) == order[2]
        locked = invoke("human", "--data", str(data), "--config", "tiny", "--annotator", "alice", "--out", str(out))
        assert locked.exit_code == 2 and "is in use by" in locked.output   # the runner's run-folder lock is held

        shown = order[2]
        for expected in order[2:4]:
            assert shown == expected
            browser.find_element(By.CSS_SELECTOR, f'#options button[data-letter="{chosen[shown]}"]').click()
            shown = _shown(browser, shown)
        for expected in order[4:]:
            assert shown == expected
            view, text = _item_json(server.url)
            _assert_no_answer(view, text, browser.page_source, rows)
            assert view["kind"] == "point" and browser.find_elements(By.CSS_SELECTOR, "#options button") == []
            _click_pixel(browser, *pixels[shown], tuple(view["image_size"]))
            if expected != order[-1]:
                shown = _shown(browser, shown)
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "done").is_displayed())
        assert _item_json(server.url)[0] == {"done": True, "annotator": "alice", "progress": {"answered": 6, "total": 6}}
        assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        server.kill()

    # Every item logged once, in the fixed order, as eval-vlm logs it.
    vqa, ir = _samples(out / "vqa-tiny"), _samples(out / "ir-tiny")
    assert [r["id"] for r in vqa] == order[:4] and [r["id"] for r in ir] == order[4:]
    assert [r["raw_output"] for r in vqa] == [chosen[i] for i in order[:4]]
    assert all(r["latency_s"] >= 0 for r in vqa + ir) and vqa[0]["latency_s"] >= 1.5
    for row in ir:
        assert tuple(int(math.floor(c)) for c in row["point_px"]) == pixels[row["id"]]   # the click, in pixels
    summary = json.loads((out / "vqa-tiny" / "summary.json").read_text())
    assert summary["model"] == "human:alice" and summary["complete"]

    # bspatial report scores the folder: accuracies recomputed here from the clicks and the ground truth.
    result = invoke("report", str(out), "--out", str(tmp_path / "report"))
    assert result.exit_code == 0, result.output
    right = {i: chosen[i] == rows[i]["answer"] for i in order[:4]}
    single = [right[i] for i in order[:4] if rows[i]["setting"] == "single_frame"]
    (table1,) = _csv(tmp_path / "report" / "table1.csv")
    assert table1["model"] == "human (1 annotator)"
    assert float(table1["single_all"]) == pytest.approx(100.0 * sum(single) / len(single), abs=1e-3)
    assert float(table1["multi_all"]) == pytest.approx(100.0 * right[order[3]], abs=1e-3)
    verdicts = [_strict_and_tolerant(rows[i], (c + 0.5, l + 0.5)) for i, (c, l) in pixels.items()]
    assert verdicts == [(True, True), (False, False)]   # the plan's premise, checked on the masks
    (table2,) = _csv(tmp_path / "report" / "table2.csv")
    # One item per task: the task mean is the mean of the two verdicts.
    assert float(table2["ir_strict"]) == pytest.approx(100.0 * np.mean([s for s, _ in verdicts]), abs=1e-3)
    assert float(table2["ir_tolerant"]) == pytest.approx(100.0 * np.mean([t for _, t in verdicts]), abs=1e-3)


def _answer_all(data: Path, name: str, out: Path, letter_of, pixel_of) -> None:
    """A person's whole run through the session the page talks to (no browser: the choices are given)."""
    from bspatial.evaluation.vlm.human import Annotator, HumanSession

    with HumanSession(Annotator(name), data, "tiny", out) as session:
        while not (view := session.view())["done"]:
            if view["kind"] == "choice":
                session.answer(view["id"], letter=letter_of(view["id"]))
            else:
                col, line = pixel_of(view["id"])
                session.answer(view["id"], point=(col + 0.5, line + 0.5))


def test_report_pools_annotators_into_one_human_row(data, tiny, tmp_path):
    rows = {r["id"]: r for r in tiny["vqa"] + tiny["ir"]}
    wrong = lambda i: LETTERS[(LETTERS.index(rows[i]["answer"]) + 1) % 4]  # noqa: E731
    _answer_all(data, "ada", tmp_path / "human-ada", lambda i: rows[i]["answer"], lambda i: _hit_pixel(rows[i]))
    _answer_all(data, "bob", tmp_path / "human-bob", wrong, lambda i: _miss_pixel(rows[i]))
    chance = tmp_path / "chance"
    result = invoke("eval-vlm", "--model", "chance", "--suite", "vqa", "--config", "tiny", "--data", str(data / "vqa"),
                    "--out", str(chance), "--no-progress")
    assert result.exit_code == 0, result.output

    result = invoke("report", str(tmp_path / "human-ada"), str(chance), str(tmp_path / "human-bob"),
                    "--out", str(tmp_path / "report"))
    assert result.exit_code == 0, result.output
    table1 = _csv(tmp_path / "report" / "table1.csv")
    assert [(r["run"], r["model"]) for r in table1] == [("human", "human (2 annotators)"), ("chance", "chance:0")]
    # ada is right on every VQA item and hits every IR target, bob is wrong on all: pooled, half of the answers.
    n_single = sum(rows[i]["setting"] == "single_frame" for i in rows if "answer" in rows[i])
    intervals = {(r["model"], r["column"]): r for r in _csv(tmp_path / "report" / "intervals.csv")}
    single = intervals[("human (2 annotators)", "single_all")]
    assert int(single["n"]) == 2 * n_single and float(single["accuracy"]) == pytest.approx(50.0)
    assert int(intervals[("human (2 annotators)", "multi_all")]["n"]) == 2
    strict = intervals[("human (2 annotators)", "ir_strict")]
    assert int(strict["n"]) == 2 * len(tiny["ir"]) and float(strict["accuracy"]) == pytest.approx(50.0)
    assert "| human | human (2 annotators) |" in (tmp_path / "report" / "table1.md").read_text()

    # The HTML leaderboard pools them the same way (each annotator's logs keep their own card).
    result = invoke("report", "--html", str(tmp_path / "human-ada"), str(chance), str(tmp_path / "human-bob"),
                    "--out", str(tmp_path / "site"))
    assert result.exit_code == 0, result.output
    page = (tmp_path / "site" / "index.html").read_text()
    table1 = page[page.index('<table id="table1"'):page.index("</table>", page.index('<table id="table1"'))]
    assert table1.count('data-row="human"') == 1 and "human (2 annotators)" in table1
    assert 'data-row="human-ada"' not in table1 and 'data-row="human-bob"' not in table1


def test_what_the_page_gets_does_not_depend_on_the_answer(tiny, tmp_path):
    """The same items with other answers (each letter moved on, each target mask swapped with its distractor's)
    give the page the very same items."""
    from bspatial.evaluation.vlm.human import Annotator, HumanSession

    moved = [dict(r, answer=LETTERS[(LETTERS.index(r["answer"]) + 1) % 4]) for r in tiny["vqa"]]
    swapped = []
    for row in tiny["ir"]:
        region = json.loads(row["region"])
        region["targets"], region["distractors"] = region["distractors"], region["targets"]
        swapped.append(dict(row, region=json.dumps(region)))
    views = []
    for name, (vqa, ir) in {"truth": (tiny["vqa"], tiny["ir"]), "other": (moved, swapped)}.items():
        root = _write_data(tmp_path / name, vqa, ir)
        seen = []
        with HumanSession(Annotator("ada"), root, "tiny", tmp_path / f"run-{name}") as session:
            while not (view := session.view())["done"]:
                seen.append({k: v for k, v in view.items() if k != "elapsed_s"})
                frames = [session.frame(view["id"], k) for k in range(view["frames"])]
                seen.append(frames)
                session.answer(view["id"], **({"letter": "A"} if view["kind"] == "choice" else {"point": (1.0, 1.0)}))
        views.append(seen)
    assert len(views[0]) == 2 * 6 and views[0] == views[1]


@pytest.mark.parametrize("option, value, expected", [
    ("--config", "nope", "--config 'nope'"),
    ("--data", "missing-folder", "--data '"),
    ("--annotator", "a b", "--annotator 'a b'"),
])
def test_bad_input_names_the_option_and_value_and_exits_non_zero(data, tmp_path, option, value, expected):
    arguments = {"--data": str(data), "--config": "tiny", "--annotator": "ada", "--out": str(tmp_path / "run")}
    arguments[option] = str(tmp_path / value) if option == "--data" else value
    result = invoke("human", *(x for pair in arguments.items() for x in pair))
    assert result.exit_code == 2
    assert expected in result.output and "error:" in result.output
    if option == "--data":
        assert str(tmp_path / value) in result.output
    assert not (tmp_path / "run" / "vqa-tiny" / "samples.jsonl").exists()
