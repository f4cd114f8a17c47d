"""The validity ladder: each reference policy lands in its band on a few episodes of every manipulation family."""

import pytest

from bspatial.evaluation.rollout.episodes import load_results
from bspatial.evaluation.rollout.runner import run_rollouts
from bspatial.evaluation.rollout.validity import band, in_band, ladder_markdown, ladder_rows

pytestmark = [pytest.mark.slow, pytest.mark.sim]

# One task per Table S4 family: contact reach (size, distance), soda base proximity, directional and container
# placement.
FAMILY_TASKS = ["reach_plate", "reach_dice", "reach_soda_can", "place_carving_knife", "place_bowl_in_cabinet"]


def test_bands_follow_the_behaviours():
    assert band("hold", "held_out", "soft") == (0.0, 2.0)
    assert band("scripted-memorizer", "prompt_probe", "wrong") == (90.0, 100.0)
    assert band("scripted-memorizer", "held_out", "wrong") == (70.0, 100.0)
    assert band("a checkpoint", "held_out", "soft") == (0.0, 100.0)   # no band for a policy under test
    assert not in_band("scripted", "held_out", {"strict": 80.0, "soft": 90.0, "wrong": 0.0})


@pytest.mark.parametrize("policy,tasks", [
    ("scripted-wrong", FAMILY_TASKS), ("scripted-memorizer", FAMILY_TASKS),
    # Soda's stop comes before the base nears any can, which a nearby distractor can make too early for the
    # approach rule: it is checked on its own below.
    ("scripted-stops-short", [t for t in FAMILY_TASKS if t != "reach_soda_can"]),
])
def test_reference_policies_land_in_their_bands_on_the_prompt_probe(tmp_path, policy, tasks):
    run_rollouts(policy, "prompt_probe", tasks, tmp_path, n_episodes=1)
    rows = ladder_rows(load_results(tmp_path))
    assert len(rows) == 1 and rows[0]["n"] == len(tasks) and rows[0]["errors"] == 0
    assert rows[0]["in_band"], ladder_markdown(rows)


def test_stopping_short_of_a_soda_can_never_commits(tmp_path):
    run_rollouts("scripted-stops-short", "held_out", ["reach_soda_can"], tmp_path, n_episodes=4)
    results = load_results(tmp_path)
    assert [r["outcome"] for r in results] == ["none"] * 4
    assert any(r["soft_credit"] for r in results)   # where no distractor is in the way, the approach counts


def test_the_ladder_refuses_navigation_for_manipulation_references(tmp_path):
    with pytest.raises(ValueError, match="is a manipulation reference"):
        run_rollouts("scripted-wrong", "navigation", ["move_to_bar"], tmp_path)


@pytest.mark.parametrize("task", ["reach_plate", "reach_dice", "reach_tool", "reach_hardback", "reach_soda_can"])
def test_the_memorized_target_is_what_the_generator_names_on_the_training_scene(task):
    # Prompt-probe scenes are the training scenes (byte-identical), so the generator's own target for the
    # training variant is an independent answer for what the memorizer must pursue there.
    from bspatial.construction.splits import split_episodes
    from bspatial.tasks import sample_instance
    from bspatial.tasks.experts.references import memorized_instance

    for entry in split_episodes("prompt_probe", [task], limit=3):
        probe = sample_instance(task, entry.variant, entry.seed)
        trained = sample_instance(task, entry.training_variant, entry.seed)
        assert memorized_instance(probe, entry.training_variant).target == trained.target != probe.target
