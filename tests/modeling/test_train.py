import json

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoProcessor

from bspatial.modeling import BSpatialVLAForActionPrediction, BSpatialVLAProcessor
from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset
from bspatial.modeling.train import checkpoint_dir, latest_checkpoint, read_metrics, train
from bspatial.modeling.training_config import PRESETS, get_preset
from bspatial.modeling.training_data import (FirstFrameAnchorDataset, StepBatchSampler, nested_task_subset,
                                             task_balanced_weights)

# Shared fixtures of tests/modeling/conftest.py: one torch thread, a fresh Accelerate state per test.
pytestmark = [pytest.mark.usefixtures("one_torch_thread", "fresh_accelerate_state"), pytest.mark.slow]


@pytest.fixture(scope="module")
def dataset_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("lerobot") / "tiny"
    build_tiny_lerobot_dataset(root, frames_per_episode=40)
    return root


@pytest.fixture(scope="module")
def ir_root(tmp_path_factory):
    # Two episodes (one per task) with per-frame oracle IR targets (NaN on frames 3, 10, 17).
    root = tmp_path_factory.mktemp("lerobot_ir") / "tiny_ir"
    build_tiny_lerobot_dataset(root, episodes_per_task=1, frames_per_episode=20, ir_targets=True)
    return root


def test_presets_follow_table_s3():
    rows = {p.name: (p.batch_size, p.peak_lr, p.max_steps) for p in PRESETS}
    assert rows["pi05_qwen_frozen"] == (256, 4e-4, 100_000)
    assert rows["pi05_qwen_lora"] == (128, 2.8e-4, 110_000)
    assert rows["pi05_qwen_droid_init"] == (256, 4e-4, 90_000)
    assert rows["pi05_qwen_navigation"] == (512, 4.2e-4, 60_000)
    for preset in PRESETS:
        if not preset.name.startswith(("tiny", "cpu_")):  # tiny: tests; cpu_: CPU-sized (training_config.py)
            assert (preset.adam_betas, preset.weight_decay, preset.grad_clip_norm, preset.warmup_steps,
                    preset.mixed_precision) == ((0.9, 0.95), 0.0, 1.0, 4000, "bf16")
    assert get_preset("pi05_qwen_attn_map_ir").model_overrides == {"ir_mode": "attn_map"}
    # The data-scaling study (Section 5, Appendix 16.9) subsets the dot-IR policy's demonstrations.
    for fraction in (0.5, 0.3):
        scaled = get_preset(f"pi05_qwen_dot_ir_data{round(fraction * 100)}")
        assert (scaled.data_fraction, scaled.model_overrides) == (fraction, {"ir_mode": "dot"})
    with pytest.raises(ValueError, match=r"unknown preset 'nope'; known presets: .*pi05_qwen_attn_map_ir"):
        get_preset("nope")
    with pytest.raises(ValueError, match="data_fraction must lie in"):
        get_preset("tiny", data_fraction=0.0)


def test_nested_task_subsets_are_deterministic_nested_and_per_task():
    tasks = {i: f"task{i % 3}" for i in range(30)}  # 10 episodes per task
    thirty, fifty = nested_task_subset(tasks, 0.3, seed=1), nested_task_subset(tasks, 0.5, seed=1)
    assert thirty == nested_task_subset(tasks, 0.3, seed=1)
    assert set(thirty) <= set(fifty)
    assert [sum(tasks[e] == f"task{k}" for e in thirty) for k in range(3)] == [3, 3, 3]
    assert [sum(tasks[e] == f"task{k}" for e in fifty) for k in range(3)] == [5, 5, 5]
    assert nested_task_subset(tasks, 0.3, seed=2) != thirty
    assert len(nested_task_subset({0: "a", 1: "b"}, 0.3)) == 2  # at least one episode per task


def test_sampling_is_uniform_over_tasks_and_reproducible_per_step():
    episodes = np.array([0] * 90 + [1] * 10)  # task a has 9x the frames of task b
    weights = task_balanced_weights(episodes, {0: "a", 1: "b"})
    assert weights[:90].sum().item() == pytest.approx(0.5) and weights[90:].sum().item() == pytest.approx(0.5)
    full = list(StepBatchSampler(weights, 1000, seed=0, start_step=0, max_steps=3))
    assert np.mean(np.array(full[0]) >= 90) == pytest.approx(0.5, abs=0.06)
    assert list(StepBatchSampler(weights, 1000, seed=0, start_step=2, max_steps=3))[0] == full[2]
    shards = [list(StepBatchSampler(weights, 1000, 0, 0, 3, process_index=i, num_processes=2))[1] for i in range(2)]
    assert shards[0] + shards[1] == full[1]


def test_resumed_run_matches_uninterrupted_and_reloads(tmp_path, dataset_root):
    full = train("tiny", str(dataset_root), str(tmp_path / "full"))
    assert full.last_step == 4 and len(full.losses) == 4 and all(np.isfinite(full.losses))
    from accelerate.state import AcceleratorState, PartialState

    interrupted = train("tiny", str(dataset_root), str(tmp_path / "resumed"), stop_at_step=2)
    assert interrupted.last_step == 2 and interrupted.pretrained_dir is None
    assert latest_checkpoint(tmp_path / "resumed").name == "step_000000002"
    AcceleratorState._reset_state(True)
    PartialState._reset_state()
    resumed = train("tiny", str(dataset_root), str(tmp_path / "resumed"), resume=True)
    assert resumed.last_step == 4
    assert interrupted.losses + resumed.losses == full.losses  # exact continuation, bit for bit
    assert [r["step"] for r in read_metrics(tmp_path / "resumed")] == [1, 2, 3, 4]
    assert [r["loss"] for r in read_metrics(tmp_path / "resumed")] == pytest.approx(full.losses)
    config = json.loads((tmp_path / "full" / "training_config.json").read_text())
    assert config["adam_betas"] == [0.9, 0.95] and config["name"] == "tiny"

    model = AutoModel.from_pretrained(full.pretrained_dir)
    processor = AutoProcessor.from_pretrained(full.pretrained_dir)
    assert isinstance(model, BSpatialVLAForActionPrediction) and isinstance(processor, BSpatialVLAProcessor)
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    item = LeRobotDataset("local/tiny", root=dataset_root, return_uint8=True)[5]
    observation = {k: v for k, v in item.items() if k.startswith("observation.") or k == "task"}
    actions = processor.unnormalize_actions(model.sample_actions(processor(observation)))
    assert actions.shape == (1, 32, 23) and torch.isfinite(actions).all()


def test_resume_without_checkpoint_raises(tmp_path, dataset_root):
    with pytest.raises(FileNotFoundError, match="holds no complete checkpoint"):
        train("tiny", str(dataset_root), str(tmp_path / "empty"), resume=True)


def test_train_command(tmp_path, dataset_root):
    import typer
    from typer.testing import CliRunner

    from bspatial.modeling.train_cli import train_command

    app = typer.Typer()
    app.command()(train_command)
    listing = CliRunner().invoke(app, [str(dataset_root), str(tmp_path), "--preset", "help"])
    assert listing.exit_code == 0 and "pi05_qwen_lora" in listing.output and "110000" in listing.output
    result = CliRunner().invoke(app, [str(dataset_root), str(tmp_path / "run"), "--max-steps", "1"])
    assert result.exit_code == 0, result.output
    assert "trained 1 steps" in result.output and (tmp_path / "run" / "pretrained_model" / "config.json").exists()
    bad = CliRunner().invoke(app, [str(dataset_root), str(tmp_path / "bad"), "--preset", "nope"])
    assert bad.exit_code != 0 and "known presets" in bad.output


def reset_accelerate():
    from accelerate.state import AcceleratorState, PartialState

    AcceleratorState._reset_state(True)
    PartialState._reset_state()


def open_dataset(root, **kwargs):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    return LeRobotDataset(f"local/{root.name}", root=root, return_uint8=True, **kwargs)


def row_of(dataset, episode, frame):
    """The dataset row of (episode, frame), found from the per-frame columns (not episode metadata)."""
    columns = dataset.hf_dataset.with_format("numpy")
    episodes, frames = np.asarray(columns["episode_index"]), np.asarray(columns["frame_index"])
    hits = np.flatnonzero((episodes == episode) & (frames == frame))
    assert len(hits) == 1
    return int(hits[0])


def hwc(image):
    return image.permute(1, 2, 0).numpy()


def observation(dataset, row, with_anchor=False):
    """A policy observation from a dataset frame; the anchor built as a rollout would, from frame 0."""
    from bspatial.modeling.ir_rendering import render_first_frame_anchor

    item = dataset[row]
    obs = {k: v for k, v in item.items() if k.startswith("observation.") or k == "task"}
    if with_anchor:
        first = dataset[row_of(dataset, int(item["episode_index"]), 0)]
        anchor = render_first_frame_anchor(hwc(first["observation.images.rgb.head"]), first["observation.ir_target"])
        obs["observation.images.anchor"] = torch.from_numpy(anchor).permute(2, 0, 1)
    return obs


# What each tiny variant must be: (vlm_adapter, expert_init, model_overrides, image slots after the cameras).
VARIANTS = {
    "frozen": ("frozen", "fresh", {}, []),
    "lora": ("lora", "fresh", {}, []),
    "droid_init": ("frozen", "checkpoint", {}, []),
    "dot_ir": ("frozen", "fresh", {"ir_mode": "dot"}, ["ir"]),
    "dot_ir_anchor": ("frozen", "fresh", {"ir_mode": "dot", "first_frame_anchor": True}, ["ir", "anchor"]),
    "attn_map_ir": ("frozen", "fresh", {"ir_mode": "attn_map"}, ["ir"]),
}


def test_every_paper_variant_has_a_tiny_preset():
    for variant, (adapter, init, overrides, _) in VARIANTS.items():
        tiny, paper = get_preset(f"tiny_{variant}"), get_preset(f"pi05_qwen_{variant}")
        assert (tiny.vlm_adapter, tiny.expert_init, dict(tiny.model_overrides)) == (adapter, init, overrides)
        assert (paper.vlm_adapter, paper.expert_init, dict(paper.model_overrides)) == (adapter, init, overrides)
        assert (tiny.backbone, tiny.batch_size, tiny.mixed_precision) == ("tiny", 2, "no")


@pytest.fixture(scope="module")
def donor(tmp_path_factory):
    """A DROID-style donor checkpoint: same shapes, different (seeded) expert weights."""
    from bspatial.modeling.tiny_backbone import tiny_policy_config

    torch.manual_seed(7)
    path = tmp_path_factory.mktemp("donor")
    BSpatialVLAForActionPrediction(tiny_policy_config()).save_pretrained(path)
    return path


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_trains_a_few_steps_and_predicts(tmp_path, ir_root, donor, variant, caplog):
    adapter, _, overrides, extra_images = VARIANTS[variant]
    kwargs = {"init_expert_from": str(donor)} if variant == "droid_init" else {}
    with caplog.at_level("INFO", logger="bspatial.modeling.train"):
        result = train(f"tiny_{variant}", str(ir_root), str(tmp_path / variant), max_steps=2, **kwargs)
    assert result.last_step == 2 and len(result.losses) == 2 and all(np.isfinite(result.losses))
    model = AutoModel.from_pretrained(result.pretrained_dir)
    processor = AutoProcessor.from_pretrained(result.pretrained_dir)
    assert isinstance(model, BSpatialVLAForActionPrediction)  # LoRA is merged into a plain policy
    assert model.config.ir_mode == overrides.get("ir_mode", "none")
    assert model.config.first_frame_anchor == overrides.get("first_frame_anchor", False)
    assert processor.image_names == ["head", "left_wrist", "right_wrist", *extra_images]
    expert = sum(p.numel() for p in model.action_expert.parameters())
    if adapter == "lora":  # adapters on both towers train besides the expert
        assert result.trainable_parameters > expert
    else:  # frozen VLM: exactly the expert trains
        assert result.trainable_parameters == expert
    if variant == "droid_init":
        assert any("expert init from" in r.message and "0 missing" in r.message for r in caplog.records)
    dataset = open_dataset(ir_root)
    obs = observation(dataset, row_of(dataset, 1, 12), with_anchor="anchor" in extra_images)
    actions = processor.unnormalize_actions(model.sample_actions(processor(obs)))
    assert actions.shape == (1, 32, 23) and torch.isfinite(actions).all()


def test_droid_init_starts_from_the_donor_expert(tmp_path, ir_root, donor):
    result = train("tiny_droid_init", str(ir_root), str(tmp_path / "run"), max_steps=2, stop_at_step=1,
                   init_expert_from=str(donor))
    # Warmup starts at lr 0, so after the first step the expert is still exactly the donor's.
    assert read_metrics(tmp_path / "run")[0]["lr"] == 0.0
    donor_state = AutoModel.from_pretrained(donor).action_expert.state_dict()
    for key, value in result.model.action_expert.state_dict().items():
        assert torch.equal(value, donor_state[key]), key
    reset_accelerate()
    with pytest.raises(ValueError, match="'tiny_droid_init' initialises the expert from a checkpoint"):
        train("tiny_droid_init", str(ir_root), str(tmp_path / "no_donor"), max_steps=1)


def test_anchor_is_the_dot_marked_first_frame_of_each_episode(ir_root):
    from bspatial.modeling.ir_rendering import DOT_COLOR, render_dot_ir, target_or_none

    dataset = open_dataset(ir_root)
    anchored = FirstFrameAnchorDataset(dataset, "observation.images.rgb.head")
    assert len(anchored) == len(dataset) == 40
    anchors = []
    for episode in (0, 1):
        first = dataset[row_of(dataset, episode, 0)]
        target = target_or_none(first["observation.ir_target"])
        assert target is not None  # frame 0 of the tiny dataset always has a valid target
        expected = render_dot_ir(hwc(first["observation.images.rgb.head"]), target)
        assert expected[target[1], target[0]].tolist() == list(DOT_COLOR)
        for frame in (0, 12, 19):  # the first, a middle and the last frame all carry the same anchor
            row = row_of(dataset, episode, frame)
            item = anchored[row]
            anchor = item["observation.images.anchor"]
            assert anchor.dtype == torch.uint8 and anchor.shape == (3, 224, 224)
            assert np.array_equal(hwc(anchor), expected), (episode, frame)
            assert torch.equal(item["observation.images.rgb.head"], dataset[row]["observation.images.rgb.head"])
        current = dataset[row_of(dataset, episode, 12)]
        current_ir = render_dot_ir(hwc(current["observation.images.rgb.head"]),
                                   target_or_none(current["observation.ir_target"]))
        assert not np.array_equal(expected, current_ir)  # the anchor is not the current frame's dot IR
        anchors.append(expected)
    assert not np.array_equal(anchors[0], anchors[1])
    assert anchored.anchor(1) is anchored.anchor(1)  # rendered once per episode, then cached
    # DataLoader workers (spawn) receive a pickled copy (with an empty cache): it must serve items there.
    import pickle

    copy = pickle.loads(pickle.dumps(anchored))
    assert np.array_equal(hwc(copy[row_of(dataset, 1, 5)]["observation.images.anchor"]), anchors[1])
    # An episode-filtered dataset (nested data subsets) maps the first frame to its own rows.
    only_second = FirstFrameAnchorDataset(open_dataset(ir_root, episodes=[1]), "observation.images.rgb.head")
    assert len(only_second) == 20
    assert np.array_equal(hwc(only_second[7]["observation.images.anchor"]), anchors[1])


def test_ir_variants_need_the_oracle_target_feature(tmp_path, dataset_root):
    with pytest.raises(ValueError, match=r"the first-frame anchor needs the features \['observation.ir_target'\]"):
        FirstFrameAnchorDataset(open_dataset(dataset_root), "observation.images.rgb.head")
    with pytest.raises(ValueError, match=r"ir_mode='dot' renders the IR image from the per-frame feature "
                                         r"'observation.ir_target'"):
        train("tiny_dot_ir", str(dataset_root), str(tmp_path / "run"), max_steps=1)


def test_bspatial_train_cli_trains_the_anchor_variant(tmp_path, ir_root):
    from typer.testing import CliRunner

    from bspatial.cli import app

    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["train", str(ir_root), str(out), "--preset", "tiny_dot_ir_anchor",
                                      "--max-steps", "2"])
    assert result.exit_code == 0, result.output
    assert "trained 2 steps" in result.output
    assert AutoModel.from_pretrained(out / "pretrained_model").config.first_frame_anchor is True


def test_intermediate_checkpoints_hold_a_loadable_policy(tmp_path, dataset_root):
    full = train("tiny", str(dataset_root), str(tmp_path / "full"))  # 4 steps, checkpoints at 2 and 4
    reset_accelerate()
    # The same run stopped at step 2: its in-memory model is the policy of step 2.
    at_two = train("tiny", str(dataset_root), str(tmp_path / "at_two"), stop_at_step=2)
    assert at_two.last_step == 2
    exported = checkpoint_dir(tmp_path / "full", 2) / "pretrained_model"
    model = AutoModel.from_pretrained(exported)
    processor = AutoProcessor.from_pretrained(exported)
    obs = observation(open_dataset(dataset_root), 25)
    inputs = processor(obs)
    noise = torch.randn(1, 32, 23, generator=torch.Generator().manual_seed(5))
    actions = model.sample_actions(inputs, noise=noise)
    assert actions.shape == (1, 32, 23) and torch.isfinite(actions).all()
    expected = at_two.model.eval().sample_actions(at_two.processor(obs), noise=noise)
    torch.testing.assert_close(actions, expected, atol=1e-6, rtol=1e-5)
    # ... and it is the step-2 policy, not the final one the run went on to train.
    final = full.model.eval().sample_actions(inputs, noise=noise)
    assert not torch.allclose(actions, final, atol=1e-4)
    # The run's final pretrained_model is the last checkpoint's export.
    last = checkpoint_dir(tmp_path / "full", 4) / "pretrained_model" / "model.safetensors"
    assert last.read_bytes() == (full.pretrained_dir / "model.safetensors").read_bytes()
    assert not list((tmp_path / "full").rglob("*.tmp"))  # no half-written folder left behind


def test_state_dropout_zeroes_whole_samples_at_the_rate_on_any_process_split():
    from bspatial.modeling.train import _drop_state

    state = torch.arange(1, 4 * 64 * 3 + 1, dtype=torch.float32).reshape(4, 64, 3)   # no zero entry
    assert torch.equal(_drop_state(state[0], 0.0, 0, 7, 64, slice(0, 64)), state[0])
    dropped = torch.cat([_drop_state(state[i], 0.5, 0, step, 64, slice(0, 64)) for i, step in enumerate(range(4))])
    zero_rows = (dropped == 0).all(dim=1)
    kept = ~zero_rows
    assert ((dropped == 0).any(dim=1) == zero_rows).all()          # a sample loses its whole state or nothing
    assert torch.equal(dropped[kept], state.reshape(-1, 3)[kept])   # the others are untouched
    assert 0.4 < zero_rows.float().mean() < 0.6                     # 256 draws at rate 0.5
    halves = torch.cat([_drop_state(state[0][:32], 0.5, 0, 0, 64, slice(0, 32)),
                        _drop_state(state[0][32:], 0.5, 0, 0, 64, slice(32, 64))])
    assert torch.equal(halves, dropped[:64])                        # two processes drop what one drops


@pytest.mark.parametrize("rate", [-0.1, 1.0])
def test_a_bad_state_dropout_is_refused_by_name(rate):
    with pytest.raises(ValueError, match=f"state_dropout must lie in \\[0, 1\\), got {rate}"):
        get_preset("tiny", state_dropout=rate)


def test_relative_action_stats_are_the_quantiles_of_chunk_differences(tmp_path, dataset_root):
    import pandas as pd

    from bspatial.modeling.training_data import relative_action_quantiles

    frames = pd.concat(pd.read_parquet(p) for p in sorted((dataset_root / "data").rglob("*.parquet")))
    differences = []
    for _, episode in frames.groupby("episode_index"):
        actions = np.stack(episode["action"].to_numpy())[:, [3, 10]]
        states = np.stack(episode["observation.state"].to_numpy())[:, [0, 2]]
        for t in range(len(episode)):
            for k in range(4):
                if t + k < len(episode):
                    differences.append(actions[t + k] - states[t])
    low, high = relative_action_quantiles(dataset_root, [3, 10], [0, 2], chunk_size=4)
    np.testing.assert_allclose(low, np.quantile(differences, 0.01, axis=0), rtol=1e-6)
    np.testing.assert_allclose(high, np.quantile(differences, 0.99, axis=0), rtol=1e-6)
    run = train("tiny", str(dataset_root), str(tmp_path / "relative"), max_steps=1,
                model_overrides={"relative_action_dims": [3, 10], "relative_state_dims": [0, 2]})
    saved = AutoProcessor.from_pretrained(run.pretrained_dir)
    chunk = run.model.config.chunk_size
    low, high = relative_action_quantiles(dataset_root, [3, 10], [0, 2], chunk_size=chunk)
    assert [saved.stats["action"]["q01"][d] for d in (3, 10)] == pytest.approx(low)
    assert [saved.stats["action"]["q99"][d] for d in (3, 10)] == pytest.approx(high)
    assert saved.relative_action_dims == [3, 10] and saved.relative_state_dims == [0, 2]


def test_instruction_dropout_blanks_a_fixed_seeded_share_of_frames(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bspatial.catalog.tasks import bare_task_name
    from bspatial.modeling.training_data import build_dataset, episode_tasks, dataset_metadata

    dataset_root = tmp_path / "named"
    build_tiny_lerobot_dataset(dataset_root, frames_per_episode=40)
    for path in sorted((dataset_root / "meta" / "episodes").rglob("*.parquet")):   # as bspatial demos writes it
        table = pq.read_table(path)
        pq.write_table(table.append_column("task_name", pa.array(["reach_plate"] * table.num_rows)), path)

    names = episode_tasks(dataset_metadata(dataset_root).episodes, "task_name")
    recorded, _ = build_dataset(dataset_root, get_preset("tiny", task_column="task_name"), chunk_size=4)
    half, _ = build_dataset(dataset_root, get_preset("tiny", task_column="task_name", instruction_dropout=0.5), 4)
    again, _ = build_dataset(dataset_root, get_preset("tiny", task_column="task_name", instruction_dropout=0.5), 4)
    other, _ = build_dataset(dataset_root, get_preset("tiny", task_column="task_name", instruction_dropout=0.5,
                                                      seed=1), 4)
    frames = range(0, len(recorded), 2)
    blanked = []
    for i in frames:
        item = half[i]
        bare = bare_task_name(names[int(item["episode_index"])])
        assert item["task"] in (recorded[i]["task"], bare)
        blanked.append(item["task"] == bare)
        assert again[i]["task"] == item["task"]   # the same frames in every build (and worker)
    assert 0.3 < np.mean(blanked) < 0.7, np.mean(blanked)   # about half of the sampled frames
    assert [other[i]["task"] for i in frames] != [half[i]["task"] for i in frames]   # the seed picks the set


@pytest.mark.parametrize(("fields", "message"), [
    ({"instruction_dropout": 1.0}, r"instruction_dropout must lie in \[0, 1\), got 1.0"),
    ({"instruction_dropout": -0.2}, r"instruction_dropout must lie in \[0, 1\), got -0.2"),
    ({"instruction_dropout": 0.5, "instruction_source": "task_name"}, "every frame already has the bare task name"),
])
def test_a_bad_instruction_dropout_is_refused_by_name(fields, message):
    with pytest.raises(ValueError, match=message):
        get_preset("tiny", **fields)


def test_a_finished_run_is_reused_only_for_its_own_config(tmp_path, dataset_root):
    from bspatial.modeling.train import RUN_CONFIG_FILE, finished_run_differences

    run = tmp_path / "run"
    train("tiny", str(dataset_root), str(run), max_steps=1)
    assert finished_run_differences(run, get_preset("tiny", max_steps=1), dataset_root) == []
    differences = finished_run_differences(run, get_preset("tiny_dot_ir", max_steps=1), dataset_root)
    assert any(d.startswith("name: recorded 'tiny' vs given 'tiny_dot_ir'") for d in differences)
    assert finished_run_differences(run, get_preset("tiny", max_steps=2), dataset_root) == [
        "max_steps: recorded 1 vs given 2"]
    # A record written before a field existed holds that field's default.
    record = json.loads((run / RUN_CONFIG_FILE).read_text())
    del record["training_config"]["instruction_dropout"]
    (run / RUN_CONFIG_FILE).write_text(json.dumps(record))
    assert finished_run_differences(run, get_preset("tiny", max_steps=1), dataset_root) == []
    assert finished_run_differences(run, get_preset("tiny", max_steps=1, instruction_dropout=0.5), dataset_root) == [
        "instruction_dropout: recorded 0.0 vs given 0.5"]
    assert finished_run_differences(tmp_path / "none", get_preset("tiny"), dataset_root)[0].endswith(
        "is missing: the run's config cannot be checked")


def test_cue_decoys_move_the_cue_of_a_seeded_share_and_drop_those_actions(ir_root):
    from bspatial.modeling.training_data import build_dataset

    overrides = {**get_preset("tiny_dot_ir").model_overrides, "point_loss_weight": 1.0}
    plain, _ = build_dataset(ir_root, get_preset("tiny_dot_ir", model_overrides=overrides), chunk_size=4)
    decoyed, _ = build_dataset(ir_root, get_preset("tiny_dot_ir", model_overrides=overrides, cue_decoys=0.4), 4)
    moved = 0
    for i in range(len(plain)):
        real, item = plain[i], decoyed[i]
        if bool(torch.as_tensor(item["action_is_pad"]).all()):   # a decoy: a pixel of the grid, no action loss
            moved += 1
            target = torch.as_tensor(item["observation.ir_target"])
            assert torch.isfinite(target).all() and ((0 <= target) & (target < 224)).all()
            assert not torch.equal(target, torch.as_tensor(real["observation.ir_target"]))
            assert torch.equal(torch.as_tensor(item["action"]), torch.as_tensor(real["action"]))   # still the demo's
        else:   # the other frames are untouched
            for key in ("observation.ir_target", "action", "action_is_pad"):
                torch.testing.assert_close(torch.as_tensor(item[key]), torch.as_tensor(real[key]), equal_nan=True)
    assert 0.2 < moved / len(plain) < 0.6, moved   # 40 frames at a share of 0.4


def test_cue_decoys_need_an_ir_policy_that_points(dataset_root):
    from bspatial.modeling.training_data import CueDecoys, build_dataset

    with pytest.raises(ValueError, match=r"cue_decoys=0.3 needs an IR policy with pointing co-training"):
        get_preset("tiny", cue_decoys=0.3)
    with pytest.raises(ValueError, match=r"cue_decoys must lie in \[0, 1\), got 1.0"):
        get_preset("tiny", cue_decoys=1.0)
    dataset, _ = build_dataset(dataset_root, get_preset("tiny"), chunk_size=4)
    with pytest.raises(ValueError, match="cue decoys replace the oracle IR target, and the dataset has none"):
        CueDecoys(dataset, 0.3)
