"""The cue ladder's bands: scored against the wrong cue's goal, the scripted-wrong reference (which pursues exactly
that goal) followed the cue in every episode and the instruction-reading expert in none, in each manipulation
family; and a record's own cue (``--ir wrong``) is the one recomputed for the references."""

import pytest

from bspatial.evaluation.rollout.cue_ladder import cue_of, followed_cue, wrong_cue
from bspatial.evaluation.rollout.episodes import load_results
from bspatial.evaluation.rollout.ir import IRSettings
from bspatial.evaluation.rollout.plan import RunSettings
from bspatial.evaluation.rollout.runner import run_rollouts

pytestmark = [pytest.mark.slow, pytest.mark.sim]

FAMILIES = ["reach_plate", "place_carving_knife", "place_bowl_in_cabinet"]   # reach, directional, container


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    out = tmp_path_factory.mktemp("references")
    for policy in ("scripted", "scripted-wrong"):
        summary = run_rollouts(policy, "held_out", FAMILIES, out / policy, RunSettings(seed=3), n_episodes=2)
        assert summary.errors == 0
    return {policy: load_results(out / policy) for policy in ("scripted", "scripted-wrong")}


def test_scripted_wrong_follows_the_wrong_cue_and_the_expert_never_does(references):
    for policy, expected in (("scripted-wrong", True), ("scripted", False)):
        for record in references[policy]:
            cue = wrong_cue(record, run_seed=3)
            assert followed_cue(record, cue) is expected, (policy, record["task"], record["index"], cue)
    # The cue is never the instructed goal: the instruction-reading expert succeeds where the cue fails.
    assert all(r["outcome"] == "correct" for r in references["scripted"])


def test_a_cue_of_another_run_seed_can_differ_and_is_then_not_followed(references):
    """The wrong target is drawn per run seed (as scripted-wrong's): with three plates a different seed can pick
    the other distractor, which scripted-wrong (seed 3) did not reach."""
    reach = [r for r in references["scripted-wrong"] if r["task"] == "reach_plate"]
    differing = [(r, cue) for r in reach for seed in range(20)
                 if (cue := wrong_cue(r, seed)) != wrong_cue(r, 3)]
    assert differing, "no seed draws another distractor: the cue would not depend on the seed"
    assert all(followed_cue(r, cue) is False for r, cue in differing)


def test_a_wrong_cue_run_records_its_cue_and_it_is_the_recomputed_one(tmp_path, tiny_dot_anchor_checkpoint):
    run_rollouts(str(tiny_dot_anchor_checkpoint), "held_out", ["reach_plate"], tmp_path,
                 RunSettings(seed=3, max_steps=12, ir=IRSettings("wrong")), n_episodes=2)
    for record in load_results(tmp_path):
        assert record["ir"]["source"] == "wrong"
        assert cue_of(record, run_seed=3) == record["ir"]["cue"] == wrong_cue(record, run_seed=3)
        assert followed_cue(record, record["ir"]["cue"]) in (True, False)


def test_the_ladder_table_puts_the_policy_between_its_bands(tmp_path, tiny_dot_anchor_checkpoint):
    import csv
    import io

    from bspatial.evaluation.rollout.tables import write_tables

    runs = []
    for rung in ("oracle", "wrong"):
        runs.append(tmp_path / rung)
        run_rollouts(str(tiny_dot_anchor_checkpoint), "held_out", ["reach_plate"], runs[-1],
                     RunSettings(seed=3, max_steps=12, ir=IRSettings(rung)), n_episodes=2)
    for reference in ("scripted", "scripted-wrong"):
        runs.append(tmp_path / reference)
        run_rollouts(reference, "held_out", ["reach_plate"], runs[-1], RunSettings(seed=3), n_episodes=2)
    written = write_tables(runs, tmp_path / "tables")
    rows = list(csv.DictReader(io.StringIO(written["cue_ladder.csv"].read_text())))
    assert {r["task"] for r in rows} == {"reach_plate", "POOLED"}
    by = {(r["policy"].split(" ")[0], r["cue"]): r for r in rows if r["task"] == "POOLED"}
    checkpoint = next(p for p, cue in by if cue == "wrong")
    assert set(by) == {(checkpoint, "oracle"), (checkpoint, "wrong"), ("scripted", "none"), ("scripted-wrong", "none")}
    assert all(by[k]["n"] == "2" for k in by)
    # The bands: the cue follower reaches the cue's goal every time, the instruction reader never.
    assert by["scripted-wrong", "none"]["followed_cue"].startswith("100.0 ")
    assert by["scripted", "none"]["followed_cue"].startswith("0.0 ")
    assert by[checkpoint, "oracle"]["followed_cue"] == "-"   # no wrong cue on that rung
    assert by[checkpoint, "wrong"]["followed_cue"] != "-"
    # Table 4 is the paper's protocol: the wrong-cue episodes stay out of it (2 oracle episodes in the row).
    table4 = list(csv.DictReader(io.StringIO(written["table4.csv"].read_text())))
    assert [r["held_out_n"] for r in table4 if r["policy"].startswith(checkpoint)] == ["2"]
