"""`bspatial openpi-norm-stats`: a LeRobot dataset's meta/stats.json -> openpi's norm_stats.json.

The stats.json is written by lerobot itself (LeRobotDataset.create / add_frame / save_episode / finalize) with our
demos' state and action features; the output is read with a model of openpi's schema (openpi/shared/normalize.py:
``_NormStatsDict(norm_stats: dict[str, NormStats(mean, std, q01=None, q99=None)])``; openpi itself needs jax and
is not installable here) and compared with stats.json as read here and with the frames themselves.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pydantic
import pytest
from typer.testing import CliRunner

from bspatial.cli import app

N_FRAMES = 40


@pydantic.dataclasses.dataclass
class NormStats:   # openpi.shared.normalize.NormStats, with lists for numpydantic's arrays
    mean: list[float]
    std: list[float]
    q01: list[float] | None = None
    q99: list[float] | None = None


class NormStatsFile(pydantic.BaseModel):   # openpi.shared.normalize._NormStatsDict
    model_config = pydantic.ConfigDict(extra="forbid")
    norm_stats: dict[str, NormStats]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A LeRobot v3 dataset of two episodes with the demos' observation.state / action features."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from bspatial.construction.demonstrations.demos import demo_features

    features = {k: v for k, v in demo_features().items() if k in ("observation.state", "action")}
    root = tmp_path_factory.mktemp("lerobot") / "demos"
    data = LeRobotDataset.create("local/demos", fps=30, features=features, root=root, use_videos=False)
    rng = np.random.default_rng(0)
    frames = {"observation.state": rng.normal(0.5, 2.0, (N_FRAMES, 84)).astype(np.float32),
              "action": rng.uniform(-1.0, 1.0, (N_FRAMES, 23)).astype(np.float32)}
    for episode in range(2):
        for i in range(episode * N_FRAMES // 2, (episode + 1) * N_FRAMES // 2):
            data.add_frame({"observation.state": frames["observation.state"][i], "action": frames["action"][i],
                            "task": "Reach the plate."})
        data.save_episode()
    data.finalize()
    return root, frames


def _convert(dataset_root, out):
    return CliRunner().invoke(app, ["openpi-norm-stats", str(dataset_root), "--out", str(out)])


def test_norm_stats_load_with_openpis_schema_and_equal_the_lerobot_stats(dataset, tmp_path):
    root, frames = dataset
    out = tmp_path / "assets" / "pi05_bspatial" / "bspatial"
    result = _convert(root, out)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(out / "norm_stats.json")

    raw = json.loads((out / "norm_stats.json").read_text())
    loaded = NormStatsFile(**raw).norm_stats   # as openpi.shared.normalize.deserialize_json reads it
    assert set(loaded) == {"state", "actions"}
    for key in loaded:
        assert set(raw["norm_stats"][key]) == {"mean", "std", "q01", "q99"}

    lerobot = json.loads((root / "meta" / "stats.json").read_text())
    for ours, theirs in (("observation.state", "state"), ("action", "actions")):
        for field in ("mean", "std", "q01", "q99"):
            assert getattr(loaded[theirs], field) == lerobot[ours][field], (theirs, field)
        # And they are the statistics of the frames (lerobot's mean and std are exact).
        np.testing.assert_allclose(loaded[theirs].mean, frames[ours].mean(axis=0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(loaded[theirs].std, frames[ours].std(axis=0), rtol=1e-4, atol=1e-5)
    assert len(loaded["state"].mean) == 84 and len(loaded["actions"].q99) == 23


def test_non_finite_or_missing_statistics_are_refused_by_name(dataset, tmp_path):
    root, _ = dataset
    stats = json.loads((root / "meta" / "stats.json").read_text())
    bad = tmp_path / "bad"
    (bad / "meta").mkdir(parents=True)
    stats["action"]["q01"][5] = math.nan
    (bad / "meta" / "stats.json").write_text(json.dumps(stats))   # json writes NaN, as it does for lerobot
    result = _convert(bad, tmp_path / "out")
    assert result.exit_code == 2
    assert "'action' 'q01' is not finite at dims [5]" in result.output
    assert not (tmp_path / "out" / "norm_stats.json").exists()

    del stats["observation.state"]
    (bad / "meta" / "stats.json").write_text(json.dumps(stats))
    result = _convert(bad, tmp_path / "out")
    assert result.exit_code == 2 and "no statistics for 'observation.state'" in result.output

    result = _convert(tmp_path / "nowhere", tmp_path / "out")
    assert result.exit_code == 2 and "is not a LeRobot dataset folder" in result.output
