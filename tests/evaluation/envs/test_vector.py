"""Vector envs give the one-env episodes: ``gymnasium.make_vec`` through our vector entry point (sync and async,
both autoreset modes) and through gymnasium's own vectorization, compared record for record (traces byte-equal)
with one ``BSpatialEnv`` playing the same entries with the same actions."""

import warnings

import gymnasium as gym
import numpy as np
import pytest

from bspatial.evaluation.envs import BSpatialEnv, register_envs
from bspatial.evaluation.envs.vector import make_vector_env
from bspatial.evaluation.rollout.episodes import load_results

from .conftest import TASK, same_episodes
from .fixed_actions import fixed_action as _action

pytestmark = [pytest.mark.slow, pytest.mark.sim, pytest.mark.subprocess]

STEPS = 10
ENV_KWARGS = dict(max_steps=STEPS, cameras=["head"], image_size=32)


@pytest.fixture(scope="module")
def one_env_records(tmp_path_factory):
    """Entries 0, 1, 2 played one after another by one env."""
    out = tmp_path_factory.mktemp("one-env")
    env = BSpatialEnv(TASK, record_dir=out, **ENV_KWARGS)
    try:
        for entry in range(3):
            env.reset(options={"episode_index": entry})
            for step in range(STEPS + 1):
                *_, terminated, truncated, _ = env.step(_action(entry, step))
                if terminated or truncated:
                    break
    finally:
        env.close()
    return {r["index"]: r for r in load_results(out)}


def _play(vec, until: set[int], seed=None, max_calls: int = 4 * STEPS) -> list[list[int]]:
    """Step ``vec`` with each copy's (entry, step) action until the records of ``until`` are written; returns the
    entries each copy started, in order."""
    _, info = vec.reset(seed=seed)
    started = [[int(e)] for e in info["episode_index"]]
    record_dir = vec.get_attr("record_dir")[0]
    for _ in range(max_calls):
        actions = np.stack([_action(int(e), int(s)) for e, s in zip(info["episode_index"], info["step"])])
        _, _, _, _, info = vec.step(actions)
        for copy, (entry, step) in enumerate(zip(info["episode_index"], info["step"])):
            if step == 0:   # an autoreset began another episode
                started[copy].append(int(entry))
        if (record_dir / "episodes").is_dir() and until <= {r["index"] for r in load_results(record_dir)}:
            return started
    pytest.fail(f"entries {sorted(until)} not all finished after {max_calls} steps")


@pytest.mark.parametrize("vectorization, autoreset", [("sync", "NextStep"), ("async", "SameStep")])
def test_make_vec_walks_the_split_and_plays_the_one_env_episodes(one_env_records, tmp_path, vectorization, autoreset):
    register_envs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # gymnasium warns when a vector env declares no autoreset mode
        vec = gym.make_vec("bspatial/ReachPlate-v0", num_envs=2, vectorization=vectorization,
                           autoreset_mode=autoreset, record_dir=tmp_path, **ENV_KWARGS)
    try:
        assert vec.metadata["autoreset_mode"] == gym.vector.AutoresetMode(autoreset)
        # Unseeded: copy 0 plays entries 0, 2, 4, ... (its autoresets), copy 1 entries 1, 3, ...: no entry twice.
        started = _play(vec, until={0, 1, 2})
    finally:
        vec.close()
    assert [entries[:2] for entries in started] == [[0, 2], [1, 3]]
    assert all(entries == list(range(copy, 2 * len(entries), 2)) for copy, entries in enumerate(started))
    played = {r["index"]: r for r in load_results(tmp_path)}
    assert {0, 1, 2} <= set(played)
    same_episodes([played[i] for i in range(3)], [one_env_records[i] for i in range(3)])


def test_gymnasiums_own_async_vectorization_with_seeds(one_env_records, tmp_path):
    register_envs()
    vec = gym.make_vec("bspatial/ReachPlate-v0", num_envs=2, vectorization_mode="async",
                       vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP, "context": "forkserver"},
                       record_dir=tmp_path, **ENV_KWARGS)
    try:
        assert vec.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
        _play(vec, until={1, 2}, seed=1)   # seeds 1 and 2: entries 1 and 2
    finally:
        vec.close()
    played = {r["index"]: r for r in load_results(tmp_path)}
    same_episodes([played[1], played[2]], [one_env_records[1], one_env_records[2]])


@pytest.mark.parametrize("kwargs, message", [
    (dict(num_envs=0), "num_envs must be an int >= 1, got 0"),
    (dict(vectorization="ray"), "vectorization must be one of ('sync', 'async'), got 'ray'"),
    (dict(autoreset_mode="sometimes"), "'sometimes' is not a valid AutoresetMode"),
    (dict(episode_stride=3), "episode_stride is set per copy by the vector env; got episode_stride=3"),
    (dict(cameras=["top"]), "cameras must be distinct names from"),
])
def test_bad_vector_arguments_are_refused_before_any_worker(kwargs, message):
    with pytest.raises(ValueError) as error:
        make_vector_env(TASK, **{"num_envs": 2, **kwargs})
    assert message in str(error.value)
