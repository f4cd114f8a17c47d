"""Learning diagnostics (issue 33): the references read straight from the data, the prompts really swapped."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset

pytestmark = [pytest.mark.usefixtures("one_torch_thread"), pytest.mark.slow]

INSTRUCTIONS = ("Reach the largest plate from the countertop.", "Reach the smallest plate from the countertop.")
FRAMES = 40


@pytest.fixture(scope="module")
def demos_root(tmp_path_factory):
    """Two episodes of one task (reach_plate) with two instructions, as ``bspatial demos`` writes them."""
    root = tmp_path_factory.mktemp("diagnostics") / "demos"
    build_tiny_lerobot_dataset(root, tasks=INSTRUCTIONS, episodes_per_task=1, frames_per_episode=FRAMES, state_dim=84)
    for path in sorted((root / "meta" / "episodes").rglob("*.parquet")):
        table = pq.read_table(path)
        pq.write_table(table.append_column("task_name", pa.array(["reach_plate"] * table.num_rows)), path)
    return root


def _checkpoint(root, path, preset):
    import torch

    from bspatial.modeling.train import build_policy, export_pretrained
    from bspatial.modeling.training_config import get_preset
    from bspatial.modeling.training_data import dataset_metadata

    torch.manual_seed(0)
    model, processor, _ = build_policy(get_preset(preset, task_column="task_name"), dataset_metadata(root))
    # The expert's residual gates start closed (adaLN-Zero), so a fresh expert reads nothing of the prefix; a
    # trained one has opened them. Random modulation weights stand in for training.
    with torch.no_grad():
        for name, parameter in model.action_expert.named_parameters():
            if "norm" in name and parameter.dim() == 2:
                parameter.normal_(0.0, 0.5)
    export_pretrained(model.eval(), processor, path)
    return path


@pytest.fixture(scope="module")
def checkpoint(demos_root, tmp_path_factory):
    return _checkpoint(demos_root, tmp_path_factory.mktemp("ckpt") / "pretrained_model", "tiny")


def test_swapped_instruction_is_the_other_one_of_the_task(demos_root):
    from bspatial.modeling.diagnostics import swapped_instructions
    from bspatial.modeling.training_data import dataset_metadata

    assert swapped_instructions(dataset_metadata(demos_root).episodes) == {0: INSTRUCTIONS[1], 1: INSTRUCTIONS[0]}


def test_frame_indices_are_evenly_spaced_from_each_episode_start():
    from bspatial.modeling.diagnostics import frame_indices

    assert frame_indices({0: 40, 1: 8}, {0: 0, 1: 40}, 4) == [0, 10, 20, 30, 40, 42, 44, 46]


def test_diagnosis_references_match_the_recorded_actions(demos_root, checkpoint):
    from bspatial.modeling.diagnostics import diagnose

    d = diagnose(checkpoint, demos_root, "tiny", frames_per_episode=4, batch_size=64)
    assert (d.frames, d.episodes, d.trained_prompt) == (8, 2, "instruction")
    # The frozen reference, computed here from the data parquet: hold a_t over a_t .. a_t+31 (the chunk stops at
    # the episode's end), pooled over every recorded step of every picked frame.
    table = pq.read_table(next((demos_root / "data").rglob("*.parquet"))).to_pydict()
    actions, episode = np.asarray(table["action"], dtype=np.float64), np.asarray(table["episode_index"])
    diffs, ends = [], []
    for e in (0, 1):
        rows = actions[episode == e]
        for t in (0, 10, 20, 30):
            chunk = rows[t:t + 32]
            diffs.append(np.abs(chunk - rows[t]))
            if t + 32 <= FRAMES:
                ends.append(np.abs(chunk[-1] - rows[t]))
    assert d.open_loop["frozen"] == pytest.approx(np.concatenate(diffs).mean(), rel=1e-5)
    assert d.open_loop["frozen_end"] == pytest.approx(np.stack(ends).mean(), rel=1e-5)
    assert all(np.isfinite(d.open_loop[k]) for k in ("policy", "hold", "mean")) and -1 <= d.direction_cosine <= 1
    # A network whose gates are open reads every prompt token: three prompts, three losses, different chunks.
    assert set(d.loss) == {"instruction", "bare", "swapped"}
    assert len({round(v, 9) for v in d.loss.values()}) == 3
    assert d.instruction_effect > 0
    assert d.cue_effect is None   # no IR cue to move


def test_cue_effect_of_a_dot_ir_checkpoint(tmp_path):
    from bspatial.modeling.diagnostics import diagnose

    root = tmp_path / "demos"
    build_tiny_lerobot_dataset(root, tasks=INSTRUCTIONS, episodes_per_task=1, frames_per_episode=FRAMES, state_dim=84,
                               ir_targets=True)
    for path in sorted((root / "meta" / "episodes").rglob("*.parquet")):
        table = pq.read_table(path)
        pq.write_table(table.append_column("task_name", pa.array(["reach_plate"] * table.num_rows)), path)
    d = diagnose(_checkpoint(root, tmp_path / "ckpt", "tiny_dot_ir"), root, "tiny_dot_ir", frames_per_episode=4)
    assert d.cue_effect > 0   # the dot drawn at another episode's point changes the chunk of an open-gated expert


def test_image_and_state_effects_tell_a_prefix_blind_policy_from_a_reading_one(demos_root, checkpoint, tmp_path):
    """With the expert's cross-attention output zeroed, nothing of the image-and-text prefix reaches the actions:
    image and instruction effects are exactly 0 while the state still moves the chunk; the open-gated
    checkpoint's images do move it."""
    import torch
    from transformers import AutoModel, AutoProcessor

    from bspatial.modeling.diagnostics import diagnose

    model = AutoModel.from_pretrained(checkpoint)
    with torch.no_grad():
        for layer in model.action_expert.layers:
            layer.cross_attn.o_proj.weight.zero_()
    blind = tmp_path / "prefix_blind"
    model.save_pretrained(blind)
    AutoProcessor.from_pretrained(checkpoint).save_pretrained(blind)
    cut, reading = (diagnose(path, demos_root, "tiny", frames_per_episode=4) for path in (blind, checkpoint))
    assert cut.image_effect == 0 and cut.instruction_effect == 0 and cut.state_effect > 0
    assert reading.image_effect > 0 and reading.state_effect > 0


def test_diagnosis_is_repeatable(demos_root, checkpoint):
    from bspatial.modeling.diagnostics import diagnose

    first, second = (diagnose(checkpoint, demos_root, "tiny", frames_per_episode=2) for _ in range(2))
    assert first == second


def _state_with_joints(torso, left, right):
    from bspatial.catalog.schema import PROPRIO_SLICES, STATE_DIM

    state = np.full((1, STATE_DIM), 9.0, dtype=np.float32)   # 9: any dim the hold must not read
    state[0, PROPRIO_SLICES["torso_qpos"]] = torso
    state[0, PROPRIO_SLICES["left_arm_qpos"]] = left
    state[0, PROPRIO_SLICES["right_arm_qpos"]] = right
    return state


def test_hold_reference_keeps_the_joints_where_the_state_has_them_and_the_base_at_rest():
    from bspatial.modeling.diagnostics import hold_chunk

    recorded = np.arange(2 * 23, dtype=np.float32).reshape(1, 2, 23)   # two steps; grippers at dims 14 and 22
    hold = hold_chunk(_state_with_joints(0.1, 0.2, 0.3), recorded)
    expected = np.array([0, 0, 0] + [0.1] * 4 + [0.2] * 7 + [14] + [0.3] * 7 + [22], dtype=np.float32)
    np.testing.assert_allclose(hold, np.stack([expected, expected])[None])


def test_motion_direction_is_one_when_the_joints_move_the_recorded_way_and_minus_one_when_opposite():
    from bspatial.modeling.diagnostics import direction_cosines, hold_chunk

    state = _state_with_joints(0.0, 0.0, 0.0)
    recorded = hold_chunk(state, np.zeros((1, 3, 23), dtype=np.float32))
    recorded[0, -1, 7:14] = 0.5                                   # the left arm moves; the right arm stays
    twice = recorded.copy()
    twice[0, -1, 7:14] = 1.0                                      # same direction, twice as far
    opposite = recorded.copy()
    opposite[0, -1, 7:14] = -0.2
    no_pad = np.zeros((1, 3), dtype=bool)
    assert direction_cosines(twice, recorded, state, no_pad) == pytest.approx([1.0])
    assert direction_cosines(opposite, recorded, state, no_pad) == pytest.approx([-1.0])
    assert direction_cosines(twice, recorded, state, np.array([[False, False, True]])) == []   # cut chunk: skipped


def test_validation_reads_every_preset_without_its_training_augmentations():
    from bspatial.modeling.diagnostics import validation_config
    from bspatial.modeling.training_config import PRESETS

    augmented = [p.name for p in PRESETS if p.instruction_dropout or p.cue_decoys or p.instruction_source != "instruction"]
    assert {"cpu_reach_dot_ir", "cpu_reach_attn_map_ir", "cpu_reach_blind_language"} <= set(augmented)
    for preset in PRESETS:
        config = validation_config(preset.name)
        assert (config.instruction_dropout, config.cue_decoys, config.instruction_source, config.data_fraction) == \
            (0.0, 0.0, "instruction", 1.0), preset.name
        assert dict(config.model_overrides) == dict(preset.model_overrides)   # the model is the preset's
