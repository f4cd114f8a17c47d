"""BEHAVIOR-Spatial under allenai's vla-evaluation-harness: the real ``vla-eval run --no-docker`` against real
vla-eval model servers, compared episode by episode with ``bspatial rollout``.

* vla-eval's own LeRobot model server (``vla_eval.model_servers.lerobot``) serving the ACT of conftest.py plays
  the held-out entries ``bspatial rollout --policy lerobot:<ckpt>#select_action`` plays, with the same traces byte
  for byte (the server buffers ``predict_action_chunk``'s first ``n_action_steps`` actions, which is what ACT's
  ``select_action`` executes), and our Table 4 is written from the run.
* The positive control: a model server replaying the recorded demonstration (replay_model_server.py) makes a strict
  success, which reaches vla-eval's ``success`` metric and our record.
"""

import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from bspatial.evaluation.rollout.episodes import load_results

from .conftest import BIN, EVAL_STEPS, OFFLINE, TASK, rollout_records, run_command, same_episodes

pytestmark = [pytest.mark.slow, pytest.mark.subprocess, pytest.mark.sim]

SERVER_START_S = 180


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _model_server(args: list, log: Path):
    """A vla-eval model server process (``args`` after the interpreter, ``--port`` added); yields its ws:// URL
    once its /health answers."""
    port = _free_port()
    with open(log, "w") as out:
        server = subprocess.Popen([sys.executable, *map(str, args), "--port", str(port)], env=OFFLINE, stdout=out,
                                  stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            assert server.poll() is None, f"the model server exited:\n{log.read_text()[-3000:]}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"no /health after {SERVER_START_S} s:\n{log.read_text()[-3000:]}"
            time.sleep(0.5)
        yield f"ws://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def _vla_eval(tmp_path: Path, url: str, *config_args) -> tuple[dict, Path]:
    """``bspatial vla-eval-config <config_args>`` then ``vla-eval run --no-docker``: (its one benchmark's
    aggregate, our record folder)."""
    config, results, records = tmp_path / "config.yaml", tmp_path / "results", tmp_path / "records"
    run_command([BIN / "bspatial", "vla-eval-config", "--out", config, "--server", url, "--output-dir", results,
                 "--record-dir", records, *config_args], tmp_path)
    run_command([BIN / "vla-eval", "run", "--no-docker", "-c", config], tmp_path)
    aggregate, = results.glob("*_aggregate.json")
    return json.loads(aggregate.read_text()), records


def _episodes(aggregate: dict) -> list[dict]:
    task, = aggregate["tasks"]
    return sorted(task["episodes"], key=lambda e: e["episode_id"])


def test_vla_eval_lerobot_server_plays_the_rollouts_episodes(act_checkpoint, tmp_path):
    image_keys = json.dumps({cam: f"observation.images.rgb.{cam}" for cam in ("head", "left_wrist", "right_wrist")})
    server = ["-m", "vla_eval.model_servers.lerobot", "--args.policy_type=act",
              f"--args.checkpoint={act_checkpoint / 'pretrained_model'}", "--args.device=cpu",
              f"--args.image_keys={image_keys}"]
    with _model_server(server, tmp_path / "server.log") as url:
        aggregate, records = _vla_eval(tmp_path, url, "--task", TASK, "--n-episodes", 2, "--max-steps", EVAL_STEPS,
                                       "--policy-label", "act-vla-eval")
    rollout = rollout_records("--policy", f"lerobot:{act_checkpoint}#select_action", "--n-episodes", 2,
                              "--max-steps", EVAL_STEPS, "--out", tmp_path / "rollout")
    played = load_results(records)
    assert {r["policy"] for r in played} == {"act-vla-eval"}
    same_episodes(played, rollout, ignore=("policy", "protocol"))
    episodes = _episodes(aggregate)
    assert [e["metrics"]["episode_index"] for e in episodes] == [0, 1]
    assert [e["metrics"]["success"] for e in episodes] == [r["outcome"] == "correct" for r in rollout]
    assert [e["metrics"]["outcome"] for e in episodes] == [r["outcome"] for r in rollout]
    assert [e["steps"] for e in episodes] == [r["steps"] for r in rollout]
    table = (records / "tables" / "table4.csv").read_text()
    assert "act-vla-eval" in table   # our Table 4, written when the run ended, labelled by the config


def test_a_replayed_demonstration_is_a_success_in_vla_eval_and_in_our_record(lerobot_root, tmp_path):
    provenance = json.loads((lerobot_root / "demos" / "meta" / "bspatial_demos.json").read_text())
    assert [e["training_index"] for e in provenance["episodes"]] == [0]   # the entry vla-eval's episode 0 plays
    server = [Path(__file__).with_name("replay_model_server.py"), f"--args.demos={lerobot_root / 'demos'}"]
    with _model_server(server, tmp_path / "server.log") as url:
        aggregate, records = _vla_eval(tmp_path, url, "--split", "training", "--task", TASK, "--n-episodes", 1)
    episode, = _episodes(aggregate)
    record, = load_results(records)
    assert episode["metrics"]["success"] is True and episode["metrics"]["soft"] is True
    assert record["outcome"] == "correct" and record["status"] == "decided"
    assert episode["steps"] == record["steps"] < 200   # decided early: vla-eval stopped when the env said done
    assert aggregate["mean_success"] == 1.0


def test_the_config_is_what_vla_eval_loads(tmp_path):
    from vla_eval.cli.config_loader import load_config
    from vla_eval.config import EvalConfig

    run_command([BIN / "bspatial", "vla-eval-config", "--out", tmp_path / "c.yaml", "--split", "prompt_probe",
                 "--camera", "head", "--image-size", 96], tmp_path)
    loaded = load_config(str(tmp_path / "c.yaml"))
    entries = [EvalConfig.from_dict(b) for b in loaded["benchmarks"]]
    # Table S2: 700 prompt-probe episodes over the 14 evaluated manipulation tasks.
    assert len(entries) == 14 and sum(e.episodes_per_task for e in entries) == 700
    assert {e.benchmark for e in entries} == {"bspatial.evaluation.envs.vla_eval_benchmark:BSpatialBenchmark"}
    assert all(e.params["camera_names"] == ["head"] and e.params["image_size"] == 96 for e in entries)
    assert loaded["render"] == "cpu" and yaml.safe_load((tmp_path / "c.yaml").read_text()) == loaded
