"""vla-eval run configs for BEHAVIOR-Spatial: ``bspatial vla-eval-config`` (no vla-eval import needed to write one).

vla-eval plays ``episodes_per_task`` episodes of every task of a benchmark entry, while our splits hold a different
number of episodes per task (Table S2). So a config holds one benchmark entry per task, each with that task's count
(or the ``--n-episodes`` cap): ``vla-eval run`` then plays exactly the episodes ``bspatial rollout`` plays.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

BENCHMARK_IMPORT = "bspatial.evaluation.envs.vla_eval_benchmark:BSpatialBenchmark"
"""vla-eval's import string of :class:`~bspatial.evaluation.envs.vla_eval_benchmark.BSpatialBenchmark`."""
DEFAULT_SERVER = "ws://localhost:8000"
SERVER_TIMEOUT_S = 300.0
"""vla-eval's per-request timeout: the first inference of a CPU-served policy loads lazily, well above its 30 s."""


def vla_eval_config(split: str = "held_out", tasks: Sequence[str] | None = None, *, n_episodes: int | None = None,
                    server: str = DEFAULT_SERVER, output_dir: str = "results/vla-eval",
                    record_dir: str | None = "results/vla-eval/bspatial-records", render: str = "cpu",
                    params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The config dict: one benchmark entry per task of ``split`` (``tasks``, default all), each playing the
    task's manifest entries 0..n-1 (n = its Table S2 count, or ``n_episodes`` when smaller).

    ``params`` are the benchmark's other arguments (``camera_names``, ``image_size``, ``send_state``,
    ``max_steps``, ``policy_label``), the same in every entry.

    Example:
        >>> config = vla_eval_config("held_out", ["reach_plate", "reach_tool"], n_episodes=32)
        >>> [(b["name"], b["episodes_per_task"]) for b in config["benchmarks"]]
        [('bspatial_held_out_reach_plate', 31), ('bspatial_held_out_reach_tool', 32)]

    Raises:
        ValueError: unknown split or task, ``n_episodes`` < 1, or a render other than cpu / gpu.
    """
    from bspatial.evaluation.rollout.plan import plan_episodes, resolve_tasks

    if n_episodes is not None and (isinstance(n_episodes, bool) or not isinstance(n_episodes, int) or n_episodes < 1):
        raise ValueError(f"n_episodes must be an int >= 1, got {n_episodes!r}")
    if render not in ("cpu", "gpu"):
        raise ValueError(f"render must be 'cpu' or 'gpu', got {render!r}")
    extra = dict(params or {})
    reserved = sorted(set(extra) & {"split", "tasks", "record_dir"})
    if reserved:
        raise ValueError(f"params must not set {reserved}: they are this function's own arguments")
    entries = []
    for task in resolve_tasks(split, tasks):
        count = len(plan_episodes(split, [task], n_episodes))
        entry_params = {"split": split, "tasks": [task], **extra}
        if record_dir is not None:
            entry_params["record_dir"] = record_dir
        entries.append({"benchmark": BENCHMARK_IMPORT, "name": f"bspatial_{split}_{task}", "episodes_per_task": count,
                        "params": entry_params})
    return {"server": {"url": server, "timeout": SERVER_TIMEOUT_S}, "output_dir": output_dir, "render": render,
            "benchmarks": entries}


def write_vla_eval_config(config: dict[str, Any], out: str | Path) -> Path:
    """Write ``config`` as YAML to ``out`` (atomically); returns the path."""
    import yaml

    from bspatial.common.files import atomic_write_text

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    header = ("# vla-eval run config for BEHAVIOR-Spatial, written by `bspatial vla-eval-config`.\n"
              "# Run: vla-eval run --no-docker -c <this file>  (a model server listening at server.url)\n")
    atomic_write_text(out, header + yaml.safe_dump(config, sort_keys=False))
    return out


__all__ = ["BENCHMARK_IMPORT", "DEFAULT_SERVER", "vla_eval_config", "write_vla_eval_config"]
