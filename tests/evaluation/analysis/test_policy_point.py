"""``policy-point:<runs>``: a policy's recorded first-observation points replayed as episode-aligned IR answers.

The rollout runs are written by hand; every expected reply is the recorded point as the IR prompt's JSON, rounded to
the 0-1000 grid by hand below.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bspatial.evaluation.vlm.backend_api import Request
import bspatial.evaluation.analysis.policy_point  # noqa: F401  (registers the kind)
from bspatial.evaluation.vlm.backends import load_backend


def write_run(root: Path, name: str, episodes: list[tuple], policy: str = "ckpt", split: str = "held_out") -> Path:
    """A rollout run folder: ``episodes`` (task, index, pointed or None, condition)."""
    run = root / name
    (run / "episodes").mkdir(parents=True)
    (run / "rollout.json").write_text(json.dumps({"policy": policy, "split": split, "seed": 0}))
    for task, index, pointed, condition in episodes:
        record = {"task": task, "variant": "v", "seed": 100 + index, "split": split, "index": index, "policy": policy,
                  "condition": condition, "status": "decided", "outcome": "correct", "soft_credit": False,
                  "detail": "", "steps": 3, "message": "", "trace": None, "ir": None, "pointed": pointed}
        (run / "episodes" / f"{task}-{index:04d}-{condition}.json").write_text(json.dumps(record))
    return run


def point(item_id: str) -> Request:
    return Request(item_id, "Point at the target.", (), "point")


def test_each_aligned_item_gets_its_own_episodes_point(tmp_path):
    held = write_run(tmp_path, "held", [("reach_plate", 0, {"camera": "head", "xy": [250.4, 600.6]}, "spatial"),
                                        ("reach_plate", 1, {"camera": "head", "xy": [999.5, 0.2]}, "spatial"),
                                        # another condition's episode (a paraphrase) is not the aligned item's
                                        ("reach_plate", 2, {"camera": "head", "xy": [5.0, 5.0]}, "paraphrase")])
    probe = write_run(tmp_path, "probe", [("reach_dice", 3, {"camera": "head", "xy": [10.0, 20.0]}, "spatial")],
                      split="prompt_probe")
    backend = load_backend(f"policy-point:{held},{probe}")
    replies = [r.text for r in backend.generate([point("ep-held_out-reach_plate-0000"),
                                                 point("ep-held_out-reach_plate-0001"),
                                                 point("ep-prompt_probe-reach_dice-0003"),
                                                 point("ep-held_out-reach_plate-0002"),      # paraphrase only
                                                 point("ep-prompt_probe-reach_plate-0000")])]  # not rolled out
    assert [json.loads(t)["results"]["target"] if t else None for t in replies] == [
        {"x": 250, "y": 601}, {"x": 1000, "y": 0}, {"x": 10, "y": 20}, None, None]
    assert backend.identity()["policy"] == "ckpt" and backend.identity()["episodes"] == 3


def test_the_runner_scores_a_replayed_point_like_any_models(tmp_path):
    """Through ``eval-vlm``'s own parsing: the reply parses to the recorded point."""
    from bspatial.scoring.point import parse_point

    run = write_run(tmp_path, "held", [("reach_plate", 0, {"camera": "head", "xy": [250.4, 600.6]}, "spatial")])
    (reply,) = load_backend(f"policy-point:{run}").generate([point("ep-held_out-reach_plate-0000")])
    assert parse_point(reply.text).xy == (250, 601)


@pytest.mark.parametrize("episodes, policies, message", [
    ([("reach_plate", 0, None, "spatial")], None, "no episode of"),
    ([("reach_plate", 0, {"camera": "wrist_left", "xy": [1, 2]}, "spatial")], None, "pointed in camera 'wrist_left'"),
    ([("reach_plate", 0, {"camera": "head", "xy": [1, 2]}, "spatial")], ("a", "b"), "several policies ['a', 'b']"),
])
def test_runs_it_cannot_replay_are_refused_by_name(tmp_path, episodes, policies, message):
    runs = ([write_run(tmp_path, p, episodes, policy=p) for p in policies] if policies
            else [write_run(tmp_path, "run", episodes)])
    with pytest.raises(ValueError, match=re.escape(message)):
        load_backend("policy-point:" + ",".join(map(str, runs)))


def test_it_answers_point_requests_of_aligned_items_only(tmp_path):
    run = write_run(tmp_path, "held", [("reach_plate", 0, {"camera": "head", "xy": [1, 2]}, "spatial")])
    backend = load_backend(f"policy-point:{run}")
    with pytest.raises(ValueError, match="answers IR point items only"):
        backend.generate([Request("ep-held_out-reach_plate-0000", "q", (), "choice", ("a", "b", "c", "d"))])
    with pytest.raises(ValueError, match="'ir-reach_plate-1' is not an episode-aligned item"):
        backend.generate([point("ir-reach_plate-1")])
    with pytest.raises(ValueError, match="not a rollout run folder"):
        load_backend(f"policy-point:{tmp_path}")
