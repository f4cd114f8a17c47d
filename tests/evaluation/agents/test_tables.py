"""Tables 5 and S6 of agent runs beside the paper's rows (Markdown / CSV and the leaderboard's sections)."""

from __future__ import annotations

import csv
import json

from bspatial.evaluation.agents.evaluate import EVALUATION_MANIFEST
from bspatial.evaluation.agents.tables import table5_rows, tableS6_rows, write_agent_tables
from bspatial.reference import load_table

ORACLE, CHANCE = "agent:scripted+oracle", "agent:scripted+chance"


def rec(policy, task, outcome, soft=False, status="decided", index=0):
    return {"policy": policy, "split": "held_out", "task": task, "outcome": outcome, "soft_credit": soft,
            "status": status, "index": index, "condition": "spatial"}


RECORDS = [rec(ORACLE, "reach_plate", "correct"), rec(ORACLE, "reach_plate", "none", soft=True),
           rec(ORACLE, "reach_plate", "wrong"), rec(ORACLE, "reach_plate", "none"),
           rec(CHANCE, "reach_plate", "wrong"), rec(CHANCE, "reach_plate", "none", status="error"),
           rec("scripted", "reach_plate", "correct")]   # a rollout policy's record: not an agent row


def test_table5_puts_the_oracle_row_first_the_chance_row_last_then_the_paper():
    rows = table5_rows(RECORDS)
    assert [r["source"] for r in rows] == ["ours", "ours"] + ["paper"] * 5
    top, bottom = rows[0], rows[1]
    assert top["writer"] == "scripted writer, oracle pointer (privileged: simulator segmentation) (upper reference)"
    assert (top["n"], top["soft"], top["strict"], top["wrong"]) == (4, "50.0 [15.0, 85.0]", "25.0 [4.6, 69.9]",
                                                                    "25.0 [4.6, 69.9]")
    assert bottom["writer"] == "scripted writer, chance pointer (lower bound)" and bottom["strict"].startswith("0.0 ")
    paper = {r["writer"]: r for r in rows[2:]}
    for ref in load_table("table5_code_as_policy"):
        row = paper[f"{ref['writer']} ({ref['group']})"]
        assert (row["soft"], row["strict"], row["wrong"]) == (ref["soft"], ref["strict"], ref["wrong"])


def test_tableS6_cells_are_whole_percent_soft_over_strict():
    rows = {r["task"]: r for r in tableS6_rows(RECORDS)}
    ours = "scripted writer, oracle pointer (privileged: simulator segmentation) (upper reference)"
    assert rows["reach_plate"][ours] == "50 / 25 (n=4)" and rows["reach_plate"]["N"] == 31
    assert rows["reach_dice"][ours] == "-"
    assert rows["POOLED"][ours] == "50.0 / 25.0 (n=4)"
    assert rows["reach_plate"]["GPT-6 (paper)"] == "65 / 61"


def test_written_tables_and_the_leaderboard_sections(tmp_path):
    from bspatial.evaluation.analysis.leaderboard import code_as_policy_tables
    from bspatial.evaluation.analysis.site import load_runs

    run = tmp_path / "evaluation-held_out"
    (run / "episodes").mkdir(parents=True)
    for i, r in enumerate(RECORDS[:4]):
        (run / "episodes" / f"reach_plate-{i:04d}.json").write_text(json.dumps({**r, "index": i}))
    (run / EVALUATION_MANIFEST).write_text(json.dumps({"policy": ORACLE}))
    written = write_agent_tables([run], tmp_path / "tables")
    table5 = list(csv.DictReader(written["table5.csv"].read_text().splitlines()))
    assert table5[0]["strict"] == "25.0 [4.6, 69.9]" and len(table5) == 6
    assert "| Task | N |" in written["table_s6.md"].read_text()

    _, rollout = load_runs([run])                       # the leaderboard reads agent evaluations as runs
    t5, s6 = code_as_policy_tables(rollout[0].records)
    ours = [row for row in t5.rows if not row.reference]
    assert len(ours) == 1 and ours[0].cells["strict"].value == 25.0 and ours[0].cells["n"].value == 4
    pooled = [row for row in s6.rows if not row.reference and row.cells["task"].value == "POOLED"]
    assert pooled[0].cells["soft"].value == 50.0
