"""The record's ``pointed``: a checkpoint's pointing head on the episode's first observation (what
``eval-vlm --model policy-point:<run>`` replays on the episode-aligned IR items)."""

from __future__ import annotations

import pytest

from bspatial.evaluation.rollout.episodes import load_results
from bspatial.evaluation.rollout.plan import RunSettings
from bspatial.evaluation.rollout.runner import BatchSettings, run_rollouts

pytestmark = [pytest.mark.sim]
SETTINGS = RunSettings(max_steps=8)


def _pointed(checkpoint, out, **kwargs) -> list:
    summary = run_rollouts(str(checkpoint), "held_out", ["reach_plate"], out, SETTINGS, n_episodes=2, **kwargs)
    assert summary.errors == 0, summary.first_error
    return [r["pointed"] for r in load_results(out)]


def test_a_pointing_checkpoint_records_its_point_on_each_episodes_first_frame(tiny_point_checkpoint, tiny_checkpoint,
                                                                              tmp_path):
    pointed = _pointed(tiny_point_checkpoint, tmp_path / "point")
    for p in pointed:
        assert p["camera"] == "head" and len(p["xy"]) == 2 and all(0.0 <= v <= 1000.0 for v in p["xy"]), p
    assert pointed[0]["xy"] != pointed[1]["xy"]   # each episode's own frame and instruction
    assert _pointed(tiny_checkpoint, tmp_path / "none") == [None, None]   # no head, no point


@pytest.mark.slow
@pytest.mark.subprocess
def test_batched_inference_records_the_same_points(tiny_point_checkpoint, tmp_path):
    one = _pointed(tiny_point_checkpoint, tmp_path / "one")
    batched = _pointed(tiny_point_checkpoint, tmp_path / "batched", workers=2, batch=BatchSettings(max_wait_s=1.0))
    assert batched == one
