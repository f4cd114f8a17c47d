"""The vla-eval benchmark class and config writer, without a model server: what they refuse and what they send."""

import json

import anyio
import numpy as np
import pytest

from bspatial.evaluation.envs.vla_eval_benchmark import BSpatialBenchmark
from bspatial.evaluation.envs.vla_eval_config import vla_eval_config
from bspatial.reference import load_table


@pytest.mark.slow   # plans every held-out episode (7 s)
def test_each_task_plays_its_table_s2_count():
    # Independent counts: the paper's Table S2 (as shipped in bspatial.reference), not the split planner.
    s2 = {row["task"]: row for row in load_table("tableS2_tasks")}
    config = vla_eval_config("held_out")
    counts = {entry["params"]["tasks"][0]: entry["episodes_per_task"] for entry in config["benchmarks"]}
    assert counts == {task: int(row["n_heldout"]) for task, row in s2.items()
                      if row["family"] != "navigation" and int(row["n_heldout"] or 0)}
    assert sum(counts.values()) == 469
    capped = vla_eval_config("held_out", ["reach_plate"], n_episodes=5)["benchmarks"]
    assert [(b["name"], b["episodes_per_task"]) for b in capped] == [("bspatial_held_out_reach_plate", 5)]


@pytest.mark.parametrize("kwargs, message", [
    (dict(split="held-out"), "unknown split 'held-out' (did you mean 'held_out'?)"),
    (dict(tasks=["move_to_oven"]), "unknown task 'move_to_oven'; known tasks for split 'held_out'"),
    (dict(n_episodes=0), "n_episodes must be an int >= 1, got 0"),
    (dict(render="vulkan"), "render must be 'cpu' or 'gpu', got 'vulkan'"),
    (dict(params={"split": "navigation"}), "params must not set ['split']"),
])
def test_the_config_writer_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError) as error:
        vla_eval_config(**kwargs)
    assert message in str(error.value)


@pytest.mark.parametrize("kwargs, message", [
    (dict(split="probe"), "unknown split 'probe'"),
    (dict(tasks=["reach_moon"]), "unknown task 'reach_moon'"),
    (dict(camera_names=["top"]), "cameras must be distinct names from ['head', 'left_wrist', 'right_wrist'], got ['top']"),
    (dict(image_size=0), "image_size must be an int in 1..720, got 0"),
    (dict(perturbation="camera+fog"), "perturbation: unknown condition 'fog'"),
])
def test_the_benchmark_refuses_bad_params_before_any_episode(kwargs, message):
    with pytest.raises(ValueError) as error:
        BSpatialBenchmark(**kwargs)
    assert message in str(error.value)


def test_a_server_that_wants_no_wrist_image_gets_the_head_camera_only():
    assert BSpatialBenchmark(tasks=["reach_plate"], send_wrist_image=False).cameras == ("head",)
    assert BSpatialBenchmark(tasks=["reach_plate"]).cameras == ("head", "left_wrist", "right_wrist")
    metadata = BSpatialBenchmark(tasks=["reach_plate", "reach_tool"], max_steps=7).get_metadata()
    assert metadata["max_steps"] == 7 and metadata["max_episodes_per_task"] == 31   # reach_plate's 31 < reach_tool's 32


@pytest.mark.sim
def test_an_episode_sends_the_b1k_keys_and_refuses_a_short_action():
    bench = BSpatialBenchmark(tasks=["reach_plate"], camera_names=["head"], image_size=32, max_steps=2)

    async def play():
        await bench.start_episode({**bench.get_tasks()[0], "episode_idx": 3})
        observation = await bench.get_observation()
        with pytest.raises(ValueError, match=r"action must hold 23 values \(R1Pro layout\), got shape \(7,\)"):
            await bench.apply_action({"actions": np.zeros(7)})
        for _ in range(2):
            await bench.apply_action({"actions": np.zeros(23, np.float32)})
        return observation, await bench.is_done(), await bench.get_result()

    try:
        observation, done, result = anyio.run(play)
    finally:
        bench.cleanup()
    assert sorted(observation) == ["images", "states", "task_description"]
    assert observation["images"]["head"].shape == (32, 32, 3) and observation["images"]["head"].dtype == np.uint8
    assert observation["states"].shape == (84,) and observation["task_description"].startswith("Reach the ")
    assert done and result == {"success": False, "soft": False, "wrong": False, "outcome": "none",
                               "status": "timeout", "episode_index": 3}


@pytest.mark.sim
def test_a_perturbed_benchmark_episode_carries_its_draws_in_the_record(tmp_path):
    bench = BSpatialBenchmark(tasks=["reach_plate"], camera_names=["head"], image_size=32, max_steps=1,
                              record_dir=str(tmp_path), perturbation="light")

    async def play():
        await bench.start_episode({**bench.get_tasks()[0], "episode_idx": 0})
        await bench.apply_action({"actions": np.zeros(23, np.float32)})
        return await bench.get_result()

    try:
        anyio.run(play)
    finally:
        bench.cleanup()
    (record,) = [json.loads(f.read_text()) for f in (tmp_path / "episodes").glob("*.json")]
    assert record["condition"] == "light" and set(record["perturbation"]["light"]) == {
        "intensity", "colour", "tilt_deg", "azimuth_deg"}
