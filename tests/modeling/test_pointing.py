"""Pointing co-training (``point_loss_weight``): the VLM predicts the target pixel and the expert reads it."""

import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from transformers import AutoModel, AutoProcessor

from bspatial.modeling import BSpatialVLAForActionPrediction, BSpatialVLAProcessor
from bspatial.modeling.modeling_bspatial_vla import PREFIX_KEYS
from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset, make_batch
from bspatial.modeling.tiny_backbone import tiny_policy_config

pytestmark = [pytest.mark.usefixtures("one_torch_thread"), pytest.mark.slow]


@pytest.fixture
def pointing(processor):
    torch.manual_seed(0)
    config = tiny_policy_config(point_loss_weight=2.0)
    return BSpatialVLAForActionPrediction(config), make_batch(config, processor, batch_size=2, seed=0)


def test_point_loss_is_the_weighted_squared_error_over_the_rows_with_a_target(pointing):
    model, batch = pointing
    noise, time = torch.zeros(2, 32, 23), torch.tensor([0.3, 0.6])
    with torch.no_grad():
        point = model.encode_prefix(*(batch.get(k) for k in PREFIX_KEYS)).point
        plain = model(**batch, noise=noise, time=time)
        target = torch.tensor([[0.5, -0.25], [float("nan"), float("nan")]])   # the second row has no target
        out = model(**batch, noise=noise, time=time, point_target=target)
        none = model(**batch, noise=noise, time=time, point_target=torch.full((2, 2), float("nan")))
    assert point.shape == (2, 2)
    squared = (point[0, 0].item() - 0.5) ** 2 + (point[0, 1].item() + 0.25) ** 2   # row 0 only
    assert out.point_loss.item() == pytest.approx(squared, rel=1e-5)
    assert out.loss.item() == pytest.approx(plain.loss.item() + 2.0 * squared, rel=1e-5)
    assert plain.point_loss is None and none.point_loss.item() == 0.0
    with pytest.raises(ValueError, match=r"point_target must have shape \(2, 2\), got \(2, 3\)"):
        model(**batch, point_target=torch.zeros(2, 3))


def test_the_expert_reads_the_predicted_point(pointing):
    model, batch = pointing
    noise, time = torch.zeros(2, 32, 23), torch.tensor([0.3, 0.6])
    with torch.no_grad():
        for name, parameter in model.action_expert.named_parameters():   # open the adaLN-Zero gates
            if "norm" in name and parameter.dim() == 2:
                parameter.normal_(0.0, 0.5)
        model.action_expert.point_proj.weight.normal_(0.0, 1.0)   # as training grows it from the 0.02 init
        before = model(**batch, noise=noise, time=time).velocity
        again = model(**batch, noise=noise, time=time).velocity
        model.action_expert.point_head.bias += 1.0   # moves only the predicted point
        after = model(**batch, noise=noise, time=time).velocity
    # Deterministic on CPU: the same inputs give the same bits, so any change comes from the point token.
    assert torch.equal(before, again) and not torch.equal(before, after)


def test_without_pointing_the_model_keeps_its_earlier_weights(tiny_config):
    names = set(BSpatialVLAForActionPrediction(tiny_config).state_dict())
    assert not any("point" in n for n in names)
    expert = BSpatialVLAForActionPrediction(tiny_config).action_expert
    assert expert.position_embedding.num_embeddings == tiny_config.chunk_size + 1   # [state, a_1, ..., a_32]
    pointing = BSpatialVLAForActionPrediction(tiny_policy_config(point_loss_weight=1.0)).action_expert
    assert pointing.position_embedding.num_embeddings == tiny_config.chunk_size + 2   # [state, point, a_1, ...]


@pytest.mark.parametrize("weight", [-1.0, float("nan"), float("inf"), True, "1"])
def test_a_bad_point_loss_weight_is_refused_by_name(weight):
    with pytest.raises(ValueError, match=r"point_loss_weight must be a finite number >= 0, got"):
        tiny_policy_config(point_loss_weight=weight)


def test_the_processor_maps_the_oracle_pixel_to_minus_one_one():
    targets = torch.tensor([[0.0, 0.0], [112.0, 168.0], [224.0, 56.0], [float("nan"), float("nan")]])
    out = BSpatialVLAProcessor.point_targets(targets)
    expected = [[-1.0, -1.0], [0.0, 0.5], [1.0, -0.5]]   # x / 224 * 2 - 1 by hand
    assert out[:3].tolist() == expected and torch.isnan(out[3]).all()


def test_training_logs_the_point_loss_and_the_diagnosis_measures_the_point(tmp_path, fresh_accelerate_state):
    from bspatial.modeling.diagnostics import diagnose
    from bspatial.modeling.train import read_metrics, train
    from bspatial.modeling.training_config import get_preset

    root = tmp_path / "demos"
    build_tiny_lerobot_dataset(root, tasks=("Reach the largest plate.", "Reach the smallest plate."),
                               episodes_per_task=1, frames_per_episode=20, state_dim=84, ir_targets=True)
    for path in sorted((root / "meta" / "episodes").rglob("*.parquet")):
        table = pq.read_table(path)
        pq.write_table(table.append_column("task_name", pa.array(["reach_plate"] * table.num_rows)), path)
    run = train("tiny_dot_ir", str(root), str(tmp_path / "run"), max_steps=2, task_column="task_name", batch_size=8,
                model_overrides={**get_preset("tiny_dot_ir").model_overrides, "point_loss_weight": 1.0})
    logged = read_metrics(tmp_path / "run")
    assert [m["step"] for m in logged] == [1, 2]
    # Targets uniform over the grid, a fresh head near the centre: the squared error of two [-1, 1] coordinates.
    assert all(0.05 < m["point_loss"] < 4.0 for m in logged), logged
    model = AutoModel.from_pretrained(run.pretrained_dir)
    assert model.config.point_loss_weight == 1.0 and model.config.ir_mode == "dot"
    assert hasattr(model.action_expert, "point_head")
    assert isinstance(AutoProcessor.from_pretrained(run.pretrained_dir), BSpatialVLAProcessor)
    d = diagnose(run.pretrained_dir, root, "tiny_dot_ir", frames_per_episode=4)
    # 8 frames, every 7th target missing: the errors are distances on the 224 grid, at most its diagonal.
    diagonal = 224 * math.sqrt(2)
    assert 0 < d.point_error < diagonal and 0 < d.point_error_centroid < diagonal
    # The dot moved to another frame's point: distances to that point and to the frame's own target (they differ:
    # the fixture's targets are drawn independently per frame).
    assert 0 < d.point_to_moved_cue < diagonal and 0 < d.point_to_true_target < diagonal
    assert d.point_to_moved_cue != d.point_to_true_target
    targets = np.stack([np.asarray(r) for r in pq.read_table(next((root / "data").rglob("*.parquet")))
                        .column("observation.ir_target").to_pylist()])
    assert np.isnan(targets).any()   # the fixture really has frames without a target (masked, not scored)
