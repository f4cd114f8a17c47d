"""Learning diagnostics (issue 33): the references read straight from the data, the prompts really swapped."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset

pytestmark = pytest.mark.usefixtures("one_torch_thread")

INSTRUCTIONS = ("Reach the largest plate from the countertop.", "Reach the smallest plate from the countertop.")
FRAMES = 40


@pytest.fixture(scope="module")
def demos_root(tmp_path_factory):
    """Two episodes of one task (reach_plate) with two instructions, as ``bspatial demos`` writes them."""
    root = tmp_path_factory.mktemp("diagnostics") / "demos"
    build_tiny_lerobot_dataset(root, tasks=INSTRUCTIONS, episodes_per_task=1, frames_per_episode=FRAMES, state_dim=8)
    for path in sorted((root / "meta" / "episodes").rglob("*.parquet")):
        table = pq.read_table(path)
        pq.write_table(table.append_column("task_name", pa.array(["reach_plate"] * table.num_rows)), path)
    return root


@pytest.fixture(scope="module")
def checkpoint(demos_root, tmp_path_factory):
    import torch

    from bspatial.modeling.train import build_policy, export_pretrained
    from bspatial.modeling.training_config import get_preset
    from bspatial.modeling.training_data import dataset_metadata

    torch.manual_seed(0)
    model, processor, _ = build_policy(get_preset("tiny", task_column="task_name"), dataset_metadata(demos_root))
    # The expert's residual gates start closed (adaLN-Zero), so a fresh expert reads nothing of the prefix; a
    # trained one has opened them. Random modulation weights stand in for training.
    with torch.no_grad():
        for name, parameter in model.action_expert.named_parameters():
            if "norm" in name and parameter.dim() == 2:
                parameter.normal_(0.0, 0.5)
    path = tmp_path_factory.mktemp("ckpt") / "pretrained_model"
    export_pretrained(model.eval(), processor, path)
    return path


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
    assert np.isfinite(d.open_loop["policy"]) and np.isfinite(d.open_loop["mean"])
    # A network whose gates are open reads every prompt token: three prompts, three losses, different chunks.
    assert set(d.loss) == {"instruction", "bare", "swapped"}
    assert len({round(v, 9) for v in d.loss.values()}) == 3
    assert d.instruction_effect > 0


def test_diagnosis_is_repeatable(demos_root, checkpoint):
    from bspatial.modeling.diagnostics import diagnose

    first, second = (diagnose(checkpoint, demos_root, "tiny", frames_per_episode=2) for _ in range(2))
    assert first == second
