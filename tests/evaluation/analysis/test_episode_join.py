"""``bspatial analyze join``: rollout episodes paired with the VLM's items on their own first frames.

The run folders are written by hand (an eval-vlm run with ``episode_aligned`` parts, a rollout run of one policy on
the held-out split), with outcomes chosen so that every expected number is a small fraction worked out below; none
is computed by the code under test.

Episodes (held-out, policy ``scripted``); soft / strict success by Table S4's reading (a crash is a failure):

    task          index seed outcome                 soft strict  VQA correct  IR tolerant  IR strict
    reach_plate   0     10   correct                 1    1       yes          yes          yes
    reach_plate   1     10   none, soft credit       1    0       yes          yes          no
    reach_plate   2     11   wrong                   0    0       no           no           no
    reach_dice    0     20   correct                 1    1       yes          yes          no
    reach_dice    1     21   correct but crashed     0    0       yes          no           no
    reach_dice    2     21   none, soft credit       1    0       no           yes          no
    place_saucer  0     30   wrong                   0    0       no           no           no
    place_saucer  1     31   correct                 1    1       (no item)    yes          yes

Extra items: VQA ``ep-held_out-reach_plate-0007`` (no such episode) and VQA / IR items of the prompt-probe split
(no prompt-probe rollout: not this group's to count).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from scipy.stats import chi2
from typer.testing import CliRunner

from bspatial.cli import app
from bspatial.evaluation.analysis.episode_join import join_runs

# (task, index, seed, outcome, soft_credit, status, vqa correct or None, ir tolerant, ir strict)
EPISODES = [
    ("reach_plate", 0, 10, "correct", False, "decided", True, True, True),
    ("reach_plate", 1, 10, "none", True, "timeout", True, True, False),
    ("reach_plate", 2, 11, "wrong", False, "decided", False, False, False),
    ("reach_dice", 0, 20, "correct", False, "decided", True, True, False),
    ("reach_dice", 1, 21, "correct", False, "error", True, False, False),
    ("reach_dice", 2, 21, "none", True, "timeout", False, True, False),
    ("place_saucer", 0, 30, "wrong", False, "decided", False, False, False),
    ("place_saucer", 1, 31, "correct", False, "decided", None, True, True),
]


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _write_part(folder: Path, rows: list[dict], complete: bool = True) -> None:
    folder.mkdir(parents=True)
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    tasks = sorted({r["task"] for r in rows})
    summary = {"model": "hand", "complete": complete, "per_task": {t: {"n": 1} for t in tasks}}
    (folder / "summary.json").write_text(json.dumps(summary))


def write_vlm_run(root: Path, vqa_task_override: dict[int, str] | None = None, complete: bool = True,
                  split: str = "held_out") -> Path:
    run = root / "vlm"
    vqa, ir = [], []
    for k, (task, index, _, _, _, _, correct, tolerant, strict) in enumerate(EPISODES):
        item_id = f"ep-{split}-{task}-{index:04d}"
        if correct is not None:
            vqa.append({"id": item_id, "task": (vqa_task_override or {}).get(k, task), "correct": correct})
        ir.append({"id": item_id, "task": task, "strict": strict, "tolerant": tolerant})
    if split == "held_out":   # the extra items of the module docstring
        vqa.append({"id": "ep-held_out-reach_plate-0007", "task": "reach_plate", "correct": True})
        vqa.append({"id": "ep-prompt_probe-reach_plate-0000", "task": "reach_plate", "correct": False})
        ir.append({"id": "ep-prompt_probe-reach_dice-0003", "task": "reach_dice", "strict": False, "tolerant": True})
    _write_part(run / "vqa-episode_aligned", vqa, complete)
    _write_part(run / "ir-episode_aligned", ir)
    return run


def write_rollout_run(root: Path, name: str = "rollout") -> Path:
    run = root / name
    (run / "episodes").mkdir(parents=True)
    (run / "rollout.json").write_text(json.dumps({"policy": "scripted", "split": "held_out", "seed": 0}))
    for task, index, seed, outcome, soft, status, *_ in EPISODES:
        record = {"task": task, "variant": "v", "seed": seed, "split": "held_out", "index": index,
                  "policy": "scripted", "condition": "spatial", "status": status, "outcome": outcome,
                  "soft_credit": soft, "detail": "", "steps": 3, "message": "", "trace": None, "ir": None}
        (run / "episodes" / f"{task}-{index:04d}.json").write_text(json.dumps(record))
    return run


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def runs(tmp_path) -> tuple[Path, Path]:
    return write_vlm_run(tmp_path), write_rollout_run(tmp_path)


@pytest.fixture
def report(runs, tmp_path) -> tuple[Path, str]:
    out = tmp_path / "out"
    result = invoke("analyze", "join", "--vlm", str(runs[0]), "--rollout", str(runs[1]), "--out", str(out))
    assert result.exit_code == 0, result.output
    return out, result.output


def _cells(out: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    return {(r["measure"], r["family"], r["success"]): r for r in _rows(out / "join.csv")}


def test_the_command_writes_three_files_and_prints_the_markdown(report):
    out, output = report
    for name in ("join.md", "join.csv", "join_pairs.csv"):
        assert (out / name).is_file()
    markdown = (out / "join.md").read_text()
    assert markdown.strip() in output and f"wrote {out / 'join.md'}" in output
    assert "| Policy | Split | Family | Success | n right | success if right | n wrong | success if wrong |" in markdown
    for section in ("### vqa (vqa-episode_aligned", "### ir_tolerant (ir-episode_aligned", "### ir_strict"):
        assert section in markdown


def test_conditional_success_rates_and_counts_pooled(report):
    cells = _cells(report[0])
    vqa_soft = cells[("vqa", "all", "soft")]
    # Right: reach_plate 0, 1, reach_dice 0, 1 (crashed) -> 3 of 4 succeed; wrong: reach_plate 2, reach_dice 2,
    # place_saucer 0 -> 1 of 3.
    assert (int(vqa_soft["n_right"]), int(vqa_soft["successes_right"])) == (4, 3)
    assert (int(vqa_soft["n_wrong"]), int(vqa_soft["successes_wrong"])) == (3, 1)
    assert float(vqa_soft["success_right"]) == pytest.approx(75.0)
    assert float(vqa_soft["success_wrong"]) == pytest.approx(100 / 3)
    vqa_strict = cells[("vqa", "all", "strict")]
    assert (vqa_strict["successes_right"], vqa_strict["successes_wrong"]) == ("2", "0")   # 2 of 4, 0 of 3
    tolerant = cells[("ir_tolerant", "all", "soft")]
    assert (tolerant["n_right"], tolerant["successes_right"], tolerant["n_wrong"], tolerant["successes_wrong"]) == (
        "5", "5", "3", "0")
    strict_ir = cells[("ir_strict", "all", "strict")]   # strict IR right: reach_plate 0, place_saucer 1, both succeed
    assert (strict_ir["n_right"], strict_ir["successes_right"], strict_ir["n_wrong"], strict_ir["successes_wrong"]) == (
        "2", "2", "6", "1")


def test_family_rows_and_the_pooled_row(report):
    cells = _cells(report[0])
    reach = cells[("vqa", "reach", "soft")]           # the six reach episodes: right 3/4, wrong 1/2
    assert (reach["n_right"], reach["successes_right"], reach["n_wrong"], reach["successes_wrong"]) == (
        "4", "3", "2", "1")
    placement = cells[("vqa", "directional_placement", "soft")]   # place_saucer 0 only (index 1 has no VQA item)
    assert (placement["n_right"], placement["n_wrong"], placement["successes_wrong"]) == ("0", "1", "0")
    assert placement["difference"] == placement["success_right"] == "" and placement["cmh_p"] == ""
    assert {family for _, family, _ in cells} == {"reach", "directional_placement", "all"}   # no container task here
    markdown = (report[0] / "join.md").read_text()
    assert "| scripted (upper reference) | held_out | reach | soft | 4 | 75.0 (3/4) | 2 | 50.0 (1/2) |" in markdown
    assert "| scripted (upper reference) | held_out | all | soft | 4 | 75.0 (3/4) | 3 | 33.3 (1/3) |" in markdown


def test_the_difference_is_compared_within_tasks(report):
    vqa_soft = _cells(report[0])[("vqa", "all", "soft")]
    # VQA, soft, per task (a, b, c, d) = right & success, right & failure, wrong & success, wrong & failure:
    # reach_plate (2, 0, 0, 1): n1 = 2, n2 = 1, n = 3, w = 2/3, d = 1 - 0 = 1;
    # reach_dice (1, 1, 1, 0): n1 = 2, n2 = 1, w = 2/3, d = 1/2 - 1 = -1/2; place_saucer: no right item, no weight.
    # Mantel-Haenszel: (2/3 - 1/3) / (4/3) = 1/4 (the pooled 3/4 - 1/3 = 5/12 mixes the tasks).
    # Sato: P = (n1² c - n2² a + n1 n2 (n2 - n1)/2) / n² = (0 - 2 - 1)/9 = -1/3 and (4 - 1 - 1)/9 = 2/9;
    # Q = (a (n2 - c) + c (n1 - a)) / 2n = 2/6 and 1/6; Var = (1/4 · (-1/9) + 1/2) / (4/3)² = 17/64.
    assert float(vqa_soft["difference"]) == pytest.approx(25.0)
    se = math.sqrt(17 / 64)
    assert float(vqa_soft["difference_se"]) == pytest.approx(100 * se, rel=1e-9)
    assert float(vqa_soft["difference_ci_low"]) == pytest.approx(100 * (0.25 - 1.959963984540054 * se), rel=1e-9)
    assert float(vqa_soft["difference_ci_high"]) == pytest.approx(100.0)   # 0.25 + 1.96 · 0.515 > 1: clipped
    assert vqa_soft["difference_tasks"] == "2"


def test_the_cmh_test_is_stratified_by_task(report):
    cells = _cells(report[0])
    # VQA, soft. reach_plate (a, b, c, d) = (2, 0, 0, 1), reach_dice = (1, 1, 1, 0): each E = 2·2/3, V = 2·1·2·1 /
    # (9·2) = 2/9. place_saucer has one episode: no information. Σa - ΣE = 3 - 8/3 = 1/3 < 1/2, so no
    # continuity correction: chi² = (1/9) / (4/9) = 1/4.
    vqa = cells[("vqa", "all", "soft")]
    assert float(vqa["cmh_chi2"]) == pytest.approx(0.25) and vqa["cmh_tasks"] == "2"
    assert float(vqa["cmh_p"]) == pytest.approx(chi2.sf(0.25, 1))
    # Tolerant IR, soft: (2, 0, 0, 1), (2, 0, 0, 1), place_saucer (1, 0, 0, 1): E = 4/3, 4/3, 1/2; V = 2/9, 2/9, 1/4.
    # Σa - ΣE = 5 - 19/6 = 11/6, corrected 4/3: chi² = (16/9) / (25/36) = 64/25.
    tolerant = cells[("ir_tolerant", "all", "soft")]
    assert float(tolerant["cmh_chi2"]) == pytest.approx(64 / 25) and tolerant["cmh_tasks"] == "3"
    assert float(tolerant["cmh_p"]) == pytest.approx(chi2.sf(64 / 25, 1))


def test_unpaired_episodes_and_items_are_counted_per_measure(report):
    cells = _cells(report[0])
    vqa = cells[("vqa", "all", "soft")]
    # place_saucer 1 has no VQA item; reach_plate 7 has no episode; the prompt-probe items are another split's.
    assert (vqa["episodes_without_item"], vqa["items_without_episode"]) == ("1", "1")
    ir = cells[("ir_tolerant", "all", "soft")]
    assert (ir["episodes_without_item"], ir["items_without_episode"]) == ("0", "0")
    assert ("- scripted (upper reference), held_out: 1 episode(s) without an item, 1 item(s) without an episode"
            in (report[0] / "join.md").read_text())


def test_pairs_file_has_one_row_per_paired_episode(report):
    pairs = _rows(report[0] / "join_pairs.csv")
    assert len(pairs) == 8   # every episode has an IR item
    by_key = {(p["task"], p["index"]): p for p in pairs}
    crashed = by_key[("reach_dice", "1")]
    assert (crashed["seed"], crashed["vqa"], crashed["ir_tolerant"], crashed["soft"], crashed["strict"]) == (
        "21", "1", "0", "0", "0")
    assert by_key[("place_saucer", "1")]["vqa"] == ""   # no item of that measure
    assert by_key[("reach_plate", "1")]["soft"] == "1" and by_key[("reach_plate", "1")]["strict"] == "0"


def test_task_level_rho_and_the_papers_rho(report):
    cells = _cells(report[0])
    # VQA per task (accuracy, soft success): plate (2/3, 2/3), dice (2/3, 2/3), saucer (0, 0): ranks equal, rho 1.
    assert float(cells[("vqa", "all", "soft")]["task_rho"]) == pytest.approx(1.0)
    assert cells[("vqa", "reach", "soft")]["task_rho"] == ""   # two tasks: no rho
    markdown = (report[0] / "join.md").read_text()
    assert ("- scripted (upper reference), held_out, soft success: ρ = 1.000 over 3 tasks; paper's Table 3 ρ: "
            "Baseline 0.713, LoRA VLM 0.616, IR 0.560, IR + first-frame IR 0.612, Attention map 0.608") in markdown
    assert "strict success: ρ = " in markdown and "paper's Table 3 ρ: n/a" in markdown   # Table 3 is soft only
    strict_section = markdown.split("### ir_strict")[1]
    assert "soft success: ρ = " in strict_section and "Baseline" not in strict_section   # no strict-IR column


def test_an_item_whose_task_differs_from_its_episode_is_refused(tmp_path):
    vlm = write_vlm_run(tmp_path, vqa_task_override={0: "reach_dice"})
    rollout = write_rollout_run(tmp_path)
    with pytest.raises(ValueError, match="item 'ep-held_out-reach_plate-0000' has task 'reach_dice' but its episode "
                                         r"in --rollout .* has task 'reach_plate'"):
        join_runs(vlm, [rollout])


def test_an_empty_join_is_an_error_naming_the_folders(tmp_path):
    vlm = write_vlm_run(tmp_path, split="prompt_probe")   # the same episodes' items, but of the other split
    rollout = write_rollout_run(tmp_path)
    result = invoke("analyze", "join", "--vlm", str(vlm), "--rollout", str(rollout), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "no rollout episode of --rollout" in result.output and str(vlm) in result.output
    assert str(rollout) in result.output
    assert not (tmp_path / "o").exists()


def test_a_run_without_aligned_parts_is_an_error(tmp_path):
    vlm = tmp_path / "vlm"
    _write_part(vlm / "vqa-task_manipulation", [{"id": "tm-1", "task": "reach_plate", "correct": True}])
    result = invoke("analyze", "join", "--vlm", str(vlm), "--rollout", str(write_rollout_run(tmp_path)))
    assert result.exit_code == 2
    assert "has no episode_aligned part" in result.output and "vqa-task_manipulation" in result.output


def test_an_incomplete_part_is_refused_unless_allowed(tmp_path):
    vlm = write_vlm_run(tmp_path, complete=False)
    rollout = write_rollout_run(tmp_path)
    with pytest.raises(ValueError, match="field 'complete' is False"):
        join_runs(vlm, [rollout])
    assert join_runs(vlm, [rollout], allow_incomplete=True).cells


def test_an_id_that_is_not_aligned_is_refused(tmp_path):
    vlm = write_vlm_run(tmp_path)
    with open(vlm / "ir-episode_aligned" / "samples.jsonl", "a") as handle:
        handle.write(json.dumps({"id": "tm-7", "task": "reach_plate", "strict": True, "tolerant": True}) + "\n")
    with pytest.raises(ValueError, match="row id 'tm-7' is not an episode-aligned id"):
        join_runs(vlm, [write_rollout_run(tmp_path)])


def test_the_leaderboard_shows_the_pooled_soft_rows_only_when_a_vlm_run_has_aligned_parts(runs, tmp_path):
    from bspatial.evaluation.analysis import leaderboard
    from bspatial.evaluation.analysis.site import build_page, episode_joins, load_runs

    vlm, rollout = load_runs(list(runs))
    joins, notes = episode_joins(vlm, rollout)
    assert len(joins) == 1 and notes == []
    table = leaderboard.episode_join_table(joins, {r.path: r.label for r in [*vlm, *rollout]})
    assert table.title == "Perception and action on the same episode"
    rows = {row.cells["measure"].value: row for row in table.ours}
    assert set(rows) == {"vqa", "ir_tolerant", "ir_strict"}   # pooled, soft: one row per measure
    assert rows["vqa"].cells["right"].value == pytest.approx(75.0)
    assert rows["vqa"].cells["wrong"].value == pytest.approx(100 / 3)
    assert rows["vqa"].cells["n_right"].value == 4 and rows["vqa"].cells["split"].value == "held_out"
    page = build_page(vlm, rollout, [], [], notes, [], joins)
    assert "episode_join" in [t.key for t in page.tables]
    plain = tmp_path / "plain"
    _write_part(plain / "vqa-task_manipulation", [{"id": "tm-1", "task": "reach_plate", "correct": True}])
    vlm_plain, _ = load_runs([plain, runs[1]])
    assert episode_joins(vlm_plain, rollout) == ([], [])
    assert "episode_join" not in [t.key for t in build_page(vlm_plain, rollout, [], [], [], [], []).tables]
