"""The ``image_tokens`` pointing readout (a soft-argmax over the head-frame image tokens) and cue pretraining."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from bspatial.modeling import BSpatialVLAForActionPrediction
from bspatial.modeling.modeling_bspatial_vla import PREFIX_KEYS, BSpatialPointReadout, image_token_centres
from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset
from bspatial.modeling.tiny_backbone import tiny_policy_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def readout_config(**overrides):
    return tiny_policy_config(camera_names=["head"], ir_mode="dot", point_loss_weight=1.0,
                              point_readout="image_tokens", **overrides)


def test_token_centres_are_the_merged_grid_cells_row_by_row_and_only_head_frame_slots_count():
    # Two samples, slots [head, wrist]: a 4 x 4 patch grid merges (2) to 2 x 2 tokens; the wrist's 2 x 4 to 1 x 2.
    grid = torch.tensor([[1, 4, 4], [1, 2, 4], [1, 4, 4], [1, 2, 4]])
    types = torch.tensor([[0, 1, 1, 1, 1, 0, 1, 1, 0],
                          [1, 1, 1, 1, 0, 1, 1, 0, 0]])
    centres, in_frame = image_token_centres(types, grid, merge_size=2, slot_in_frame=[True, False])
    # By hand: cells of width 1 in [-1, 1] have centres -0.5 / 0.5; the wrist's one row has y = 0.
    head = [[-0.5, -0.5], [0.5, -0.5], [-0.5, 0.5], [0.5, 0.5]]
    wrist = [[-0.5, 0.0], [0.5, 0.0]]
    assert centres[0, 1:5].tolist() == head and centres[0, 6:8].tolist() == wrist
    assert centres[1, 0:4].tolist() == head and centres[1, 5:7].tolist() == wrist
    assert in_frame[0].tolist() == [False, True, True, True, True, False, False, False, False]
    assert in_frame[1].tolist() == [True, True, True, True, False, False, False, False, False]
    short = torch.zeros_like(types)
    short[0, :7] = 1
    with pytest.raises(ValueError, match="7 image tokens in the prompt, 12 in image_grid_thw"):
        image_token_centres(short, grid, merge_size=2, slot_in_frame=[True, False])


def test_the_vision_tower_orders_its_tokens_as_the_centres_say(processor):
    """The centres assume Qwen's row-by-row token order: a bright square in one quadrant changes that token most."""
    config = readout_config()
    model = BSpatialVLAForActionPrediction(config).eval()
    blank = np.zeros((64, 64, 3), np.uint8)
    quadrants = [(0, 0), (0, 32), (32, 0), (32, 32)]   # (row, col) of the square's top-left pixel
    features = []
    for corner in [None, *quadrants]:
        image = blank.copy()
        if corner is not None:
            image[corner[0]:corner[0] + 32, corner[1]:corner[1] + 32] = 255
        vision = processor.image_processor(images=[torch.from_numpy(image).permute(2, 0, 1)], return_tensors="pt")
        with torch.no_grad():
            features.append(model.image_features(vision["pixel_values"], vision["image_grid_thw"]))
    assert features[0].shape[0] == 4   # 64 px, patch 16, merge 2: a 2 x 2 token grid
    centres, _ = image_token_centres(torch.ones(1, 4, dtype=torch.long), vision["image_grid_thw"], 2, [True])
    for (row, col), feature in zip(quadrants, features[1:], strict=True):
        changed = int((feature - features[0]).norm(dim=-1).argmax())
        x, y = centres[0, changed].tolist()
        assert (y > 0) == (row > 0) and (x > 0) == (col > 0), (row, col, changed)


def test_the_readout_is_a_soft_argmax_over_the_in_frame_tokens():
    readout = BSpatialPointReadout(hidden_size=4, eps=1e-6)
    with torch.no_grad():
        readout.key_proj.weight.copy_(torch.eye(4) * 100.0)
        readout.key_proj.bias.zero_()
        readout.query.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0]))
        readout.offset_proj.weight.zero_()
        readout.offset_proj.bias.copy_(torch.tensor([0.1, -0.2]))
    tokens = torch.tensor([[[4.0, 0, 0, 0], [0, 4.0, 0, 0], [0, 0, 4.0, 0]]])   # token 0 matches the query
    centres = torch.tensor([[[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5]]])
    # Scores 200 / 0 / 0 (RMS-normed tokens are 2 * e_i; the key scales them by 100; / sqrt(4)): all weight on one.
    point = readout(tokens, centres, torch.tensor([[True, True, True]]))
    assert point[0].tolist() == pytest.approx([-0.5 + 0.1, -0.5 - 0.2], abs=1e-6)
    # Out-of-frame tokens take no weight, however well they match: equal weights on the two left.
    point = readout(tokens, centres, torch.tensor([[False, True, True]]))
    assert point[0].tolist() == pytest.approx([0.5 + 0.1, 0.0 - 0.2], abs=1e-6)


def test_the_image_tokens_readout_reads_the_ir_image(processor):
    from bspatial.modeling import BSpatialVLAProcessor

    torch.manual_seed(0)
    config = readout_config()
    model = BSpatialVLAForActionPrediction(config).eval()
    assert hasattr(model.action_expert, "point_readout") and not hasattr(model.action_expert, "point_head")
    # The query starts at unit scale (the policy's 0.02 init left the scores flat: CPU_REACH_NOTES).
    assert 0.7 < float(model.action_expert.point_readout.query.detach().std()) < 1.3
    proc = BSpatialVLAProcessor.from_model_config(config, processor.image_processor, processor.tokenizer,
                                                  {k: {"q01": [-1.0] * d, "q99": [1.0] * d}
                                                   for k, d in (("observation.state", config.state_dim),
                                                                ("action", config.action_dim))})
    head = torch.zeros(2, 3, 64, 64, dtype=torch.uint8)
    points = []
    for cue in ([[30.0, 30.0], [30.0, 30.0]], [[30.0, 30.0], [190.0, 190.0]]):
        batch = proc({"observation.images.rgb.head": head, "observation.state": torch.zeros(2, config.state_dim),
                      "task": ["reach the plate"] * 2, "observation.ir_target": torch.tensor(cue)})
        with torch.no_grad():
            points.append(model.encode_prefix(*(batch[k] for k in PREFIX_KEYS)).point)
    # Same images, same point (bit for bit); the second sample's cue moved, so its point moves and the first's not.
    assert torch.equal(points[0][0], points[1][0]) and not torch.equal(points[0][1], points[1][1])


@pytest.mark.parametrize(("overrides", "message"), [
    ({"point_readout": "mean_pool"}, r"point_readout must be one of \('last_token', 'image_tokens'\), got 'mean_pool'"),
    ({"point_readout": "image_tokens"}, r"point_readout='image_tokens' needs pointing co-training"),
    ({"point_readout": "image_tokens", "point_loss_weight": 1.0, "max_context_frames": 2}, r"and no context frames"),
])
def test_a_bad_point_readout_is_refused_by_name(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny_policy_config(**overrides)


def test_cue_pretrain_steps_need_the_image_tokens_readout():
    from bspatial.modeling.training_config import get_preset

    with pytest.raises(ValueError, match=r"cue_pretrain_steps=5 needs an IR policy with the image_tokens"):
        get_preset("tiny_dot_ir", cue_pretrain_steps=5)
    with pytest.raises(ValueError, match=r"cue_pretrain_steps must be a non-negative integer, got -1"):
        get_preset("tiny", cue_pretrain_steps=-1)


def test_training_runs_the_cue_pretraining_first_and_it_moves_only_the_tower_and_the_readout(tmp_path,
                                                                                         fresh_accelerate_state):
    from bspatial.modeling.cue_pretraining import pretrain_cue
    from bspatial.modeling.train import CUE_PRETRAINING_FILE, build_policy, train
    from bspatial.modeling.training_config import get_preset
    from bspatial.modeling.training_data import build_dataset, dataset_metadata

    root = tmp_path / "demos"
    build_tiny_lerobot_dataset(root, tasks=("Reach the largest plate.",), episodes_per_task=1, frames_per_episode=12,
                               state_dim=84, ir_targets=True, cameras=("head",))
    for path in sorted((root / "meta" / "episodes").rglob("*.parquet")):
        table = pq.read_table(path)
        pq.write_table(table.append_column("task_name", pa.array(["reach_plate"] * table.num_rows)), path)
    overrides = {"model_overrides": {"camera_names": ["head"], "ir_mode": "dot", "point_loss_weight": 1.0,
                                     "point_readout": "image_tokens"}, "task_column": "task_name", "batch_size": 4}
    config = get_preset("tiny_dot_ir", cue_pretrain_steps=3, **overrides)
    model, processor, _ = build_policy(config, dataset_metadata(root))
    dataset, _ = build_dataset(root, config, chunk_size=model.config.chunk_size)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    flags = [p.requires_grad for p in model.parameters()]
    result = pretrain_cue(model, processor, dataset, 3, batch_size=4, lr=1e-2, log_every=1, frames=6)
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and all(n.startswith(("vlm.visual.", "action_expert.point_readout.")) for n in changed), changed
    assert any(n.startswith("vlm.visual.") for n in changed)
    assert len(result.losses) == 3 and 0 < result.final_error_px < 224 * 2 ** 0.5
    assert [p.requires_grad for p in model.parameters()] == flags   # the frozen tower is frozen again
    with pytest.raises(ValueError, match="cue pretraining needs an IR policy with the image_tokens pointing readout"):
        pretrain_cue(BSpatialVLAForActionPrediction(tiny_policy_config()), processor, dataset, 1, batch_size=1,
                     lr=1e-3)

    run = train("tiny_dot_ir", str(root), str(tmp_path / "run"), max_steps=1, cue_pretrain_steps=2, **overrides)
    recorded = json.loads((tmp_path / "run" / CUE_PRETRAINING_FILE).read_text())
    assert recorded["steps"] == 2 and recorded["last_loss"] > 0
    assert run.last_step == 1
