"""A vla-eval model server that replays a ``bspatial demos`` demonstration's recorded actions (test double of a
policy, run as ``python replay_model_server.py --args.demos=<folder> --port <p>``).

vla-eval sends the episode's task at EPISODE_START (``task_name``, ``episode_idx``: the training manifest's entry),
which names the demonstration; every observation is answered with the action recorded at that step. The replay
check (``bspatial rollout --policy replay:``) shows such a replay reproduces the demonstration's outcome, so an
episode served this way must be scored correct: the positive control of the vla-eval path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from vla_eval.model_servers.predict import PredictModelServer
from vla_eval.specs import RAW, DimSpec

from bspatial.construction.splits import training_entry
from bspatial.evaluation.rollout.policy_replay import check_spec, recorded_actions


class DemoReplayServer(PredictModelServer):
    """Answers step ``t`` of an episode with its demonstration's action ``t`` (the last one past the end)."""

    def __init__(self, demos: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.demos = check_spec(demos)
        self._actions: dict[str, np.ndarray] = {}

    async def on_episode_start(self, config: dict[str, Any], ctx) -> None:
        task = config["task"]
        entry = training_entry(task["task_name"], int(task["episode_idx"]))
        actions = recorded_actions(self.demos).get((entry.task, entry.seed))
        if not isinstance(actions, np.ndarray):
            raise ValueError(f"no replayable demonstration of {entry.task} entry {entry.index}: {actions}")
        self._actions[ctx.session_id] = actions
        await super().on_episode_start(config, ctx)

    def predict(self, obs: dict[str, Any], ctx) -> dict[str, Any]:
        actions = self._actions[ctx.session_id]
        return {"actions": actions[min(ctx.step, len(actions) - 1)]}

    def get_action_spec(self) -> dict[str, DimSpec]:
        return {"actions": RAW}

    def get_observation_spec(self) -> dict[str, DimSpec]:
        return {}


if __name__ == "__main__":
    from vla_eval.model_servers.serve import run_server

    run_server(DemoReplayServer)
