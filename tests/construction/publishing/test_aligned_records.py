"""The episode-aligned items (issue 32 item 1): one IR query and task VQA item per held-out / prompt-probe episode,
made from the episode's own first frame, in their own config and apart from the paper-count configs."""

import io
import json

import numpy as np
import pytest

from bspatial.construction.publishing.build import build
from bspatial.construction.publishing.presets import Preset, get_preset
from bspatial.construction.splits import aligned_episode_key, split_episodes
from bspatial.evaluation.vlm import records

pytestmark = [pytest.mark.slow, pytest.mark.sim]

TASKS = ("reach_plate", "place_carving_knife")
PER_SPLIT = 2
PRESET = Preset("aligned-test", TASKS, 0, 0, 0, aligned_splits=("held_out", "prompt_probe"), aligned_limit=PER_SPLIT)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("aligned") / "out"
    build(PRESET, out, 0)
    return out


def _load(built, suite):
    import datasets

    column = "frames" if suite == "vqa" else "image"
    ds = datasets.load_dataset(str(built / suite), "episode_aligned", split="test")
    feature = datasets.List(datasets.Image(decode=False)) if suite == "vqa" else datasets.Image(decode=False)
    return list(ds.cast_column(column, feature))


def _episodes():
    return [e for split in ("held_out", "prompt_probe") for e in split_episodes(split, list(TASKS), limit=PER_SPLIT)]


def test_every_episode_has_its_ir_query_and_the_ids_name_it(built):
    rows = _load(built, "ir")
    for row in rows:
        records.ir_item(row)   # the harness reads every row
    by_key = {aligned_episode_key(r["id"]): r for r in rows}
    # These two tasks' frames all qualify (the build's log says so for seed 0): one query per episode, no other.
    assert sorted(by_key) == sorted((e.split, e.task, e.index) for e in _episodes())
    for episode in _episodes():
        row = by_key[episode.split, episode.task, episode.index]
        meta = json.loads(row["metadata"])
        assert meta["episode"] == {"task": episode.task, "variant": episode.variant, "seed": episode.seed,
                                   "split": episode.split, "index": episode.index,
                                   "training_variant": episode.training_variant}
        assert row["variant"] == episode.variant


def test_the_instruction_is_the_rollouts(built):
    from bspatial.tasks import sample_instance

    for row in _load(built, "ir"):
        episode = json.loads(row["metadata"])["episode"]
        assert row["instruction"] == sample_instance(episode["task"], episode["variant"], episode["seed"]).instruction


def test_the_frame_is_the_one_the_gymnasium_env_starts_the_episode_with(built):
    """An independent path to the episode's first frame: the env's reset (lerobot-eval's), rendered at 720 px."""
    from PIL import Image

    from bspatial.evaluation.envs.env import BSpatialEnv

    rows = {r["id"]: r for r in _load(built, "ir")}
    for item_id in ("ep-held_out-reach_plate-0001", "ep-prompt_probe-place_carving_knife-0000"):
        split, task, index = aligned_episode_key(item_id)
        env = BSpatialEnv(task, split, n_episodes=PER_SPLIT, cameras=("head",), image_size=720)
        try:
            obs, info = env.reset(options={"episode_index": index})
        finally:
            env.close()
        assert info["episode_index"] == index
        image = np.asarray(Image.open(io.BytesIO(rows[item_id]["image"]["bytes"])).convert("RGB"))
        assert np.array_equal(obs["pixels"]["head"], image), item_id


def test_vqa_items_are_the_episodes_and_pass_the_harness(built):
    from bspatial.tasks import sample_instance

    rows = _load(built, "vqa")
    assert rows, "no aligned VQA item at all"
    keys = {(e.split, e.task, e.index): e for e in _episodes()}
    for row in rows:
        records.vqa_item(row)
        episode = keys[aligned_episode_key(row["id"])]
        assert (row["task"], row["variant"], row["setting"]) == (episode.task, episode.variant, "task_manipulation")
        meta = json.loads(row["metadata"])
        assert meta["seed"] == episode.seed
        # No decoy: every object the question's frame shows is one of the episode's own scene.
        scene = {o.name for o in sample_instance(episode.task, episode.variant, episode.seed).scene.objects}
        assert set(meta["objects"]) <= scene, set(meta["objects"]) - scene


def test_the_build_holds_only_the_aligned_config_and_its_card_counts_the_episodes(built):
    for suite in ("vqa", "ir"):
        assert sorted(p.name for p in (built / suite).iterdir() if p.is_dir()) == ["episode_aligned"]
        card = (built / suite / "README.md").read_text()
        assert "- config_name: episode_aligned" in card and "config_name: tiny" not in card
        # The coverage table: every task and split with its episode count.
        for task in TASKS:
            for split in ("held_out", "prompt_probe"):
                assert any(line.startswith(f"| {task} | {split} | {PER_SPLIT} |") for line in card.splitlines()), \
                    (suite, task, split)
        assert f"| **all** | held_out | {PER_SPLIT * len(TASKS)} |" in card


def test_a_policys_own_points_are_scored_on_its_episodes_items_and_joined_with_its_episodes(built, tmp_path):
    """``eval-vlm --model policy-point:<run>`` then ``analyze join``, through the CLI, on a rollout run written by
    hand for the two held-out reach_plate episodes: episode 0 points at the pixel deepest inside its IR item's
    target mask and succeeds, episode 1 at the frame's corner farthest from its target and fails. By hand: IR strict
    right on episode 0 only, so success if right 1/1 and if wrong 0/1; the items with no episode in the run (the
    knife's, the probe's) get no point."""
    from scipy.ndimage import distance_transform_edt
    from typer.testing import CliRunner

    from bspatial.cli import app
    from bspatial.construction.splits import aligned_item_id

    items = {r["id"]: records.ir_item(r) for r in _load(built, "ir")}
    run = tmp_path / "rollout"
    (run / "episodes").mkdir(parents=True)
    (run / "rollout.json").write_text(json.dumps({"policy": "ckpt", "split": "held_out", "seed": 0}))
    ids = []
    for k, episode in enumerate(split_episodes("held_out", ["reach_plate"], limit=PER_SPLIT)):
        ids.append(aligned_item_id(episode))
        region = items[ids[-1]].region
        mask = region.targets[0].to_array()
        (w, h), (vs, us) = region.image_size, np.nonzero(mask)
        if k == 0:
            v, u = np.unravel_index(distance_transform_edt(mask).argmax(), mask.shape)
        else:
            u, v = max(((0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)),
                       key=lambda c: (c[0] - us.mean()) ** 2 + (c[1] - vs.mean()) ** 2)
        record = {"task": episode.task, "variant": episode.variant, "seed": episode.seed, "split": "held_out",
                  "index": episode.index, "policy": "ckpt", "condition": "spatial", "status": "decided",
                  "outcome": "correct" if k == 0 else "wrong", "soft_credit": False, "detail": "", "steps": 3,
                  "message": "", "trace": None, "ir": None,
                  "pointed": {"camera": "head", "xy": [(u + 0.5) / w * 1000, (v + 0.5) / h * 1000]}}
        (run / "episodes" / f"{episode.key}.json").write_text(json.dumps(record))
    vlm, report = tmp_path / "vlm", tmp_path / "join"
    result = CliRunner().invoke(app, ["eval-vlm", "--model", f"policy-point:{run}", "--suite", "ir", "--config",
                                      "episode_aligned", "--data", str(built / "ir"), "--out", str(vlm),
                                      "--no-progress"])
    assert result.exit_code == 0, result.output
    samples = {r["id"]: r for r in map(json.loads, (vlm / "ir-episode_aligned" / "samples.jsonl").open())}
    assert len(samples) == len(items)
    assert [samples[i]["strict"] for i in ids] == [True, False]
    assert not any(r["strict"] or r["tolerant"] for i, r in samples.items() if i not in ids)
    result = CliRunner().invoke(app, ["analyze", "join", "--vlm", str(vlm), "--rollout", str(run), "--out",
                                      str(report)])
    assert result.exit_code == 0, result.output
    import csv

    with open(report / "join.csv", newline="") as handle:
        cells = {(r["measure"], r["family"], r["success"]): r for r in csv.DictReader(handle)}
    cell = cells["ir_strict", "all", "soft"]
    assert (cell["n_right"], cell["successes_right"], cell["n_wrong"], cell["successes_wrong"]) == ("1", "1", "1", "0")


def test_the_builders_keep_aligned_rows_out_of_the_paper_configs(tmp_path):
    """A records folder with one paper-count and one aligned row: each config sees its own."""
    import datasets

    from bspatial.construction.items.records import IRRecord, VQARecord
    from bspatial.construction.publishing.export import builder_module

    (tmp_path / "images").mkdir()
    from PIL import Image

    Image.new("RGB", (4, 4)).save(tmp_path / "images" / "x.png")
    region = {"kind": "reach", "image_size": [4, 4], "target": "a", "accepted": {"a": {"counts": [16], "size": [4, 4]}},
              "distractors": {}}
    vqa, ir = [], []
    for item_id, meta in (("tm-a", {}), ("ep-held_out-reach_plate-0000", {"episode": {"split": "held_out"}})):
        vqa.append(VQARecord(item_id, "task_manipulation", "size", "object_relative", ("images/x.png",), "Which?",
                             ("a", "b", "c", "d"), "A", task="reach_plate", variant="largest", metadata=meta).to_row())
        ir.append({**IRRecord(item_id, "reach_plate", "Reach it.", "images/x.png", region, variant="largest").to_row(),
                   "metadata": json.dumps(meta)})
    (tmp_path / "vqa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in vqa))
    (tmp_path / "ir.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ir))
    for suite, configs in (("vqa", ("task_manipulation", "episode_aligned")), ("ir", ("all", "reach_plate",
                                                                                      "episode_aligned"))):
        module = builder_module(suite)
        cls = module.BspatialVQA if suite == "vqa" else module.BspatialIR
        for config in configs:
            builder = cls(config_name=config, data_dir=str(tmp_path), cache_dir=str(tmp_path / "cache" / suite / config))
            builder.download_and_prepare()
            ids = builder.as_dataset(split="test")["id"]
            assert ids == (["ep-held_out-reach_plate-0000"] if config == "episode_aligned" else ["tm-a"]), (suite, config)


def test_the_aligned_preset_covers_every_manipulation_episode_and_nothing_else():
    from bspatial.catalog.tasks import MANIPULATION_EVAL_TASKS

    preset = get_preset("aligned")
    assert preset.tasks == MANIPULATION_EVAL_TASKS and preset.aligned_splits == ("held_out", "prompt_probe")
    assert preset.aligned_limit is None and preset.general is None
    assert not any(preset.count(field, t) for field in ("vqa_per_task", "ir_per_task", "navigation_per_task")
                   for t in preset.tasks)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("aligned_splits", ("navigation",), "aligned_splits must be among"),
    ("aligned_limit", 0, "aligned_limit must be an int >= 1"),
])
def test_bad_aligned_settings_name_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        Preset("bad", ("reach_plate",), 0, 0, **{field: value})
