"""Model cards of BEHAVIOR-Spatial-VLA exports: ``README.md`` from ``hub_cards/model_vla.md``.

Every ``pretrained_model/`` export (each checkpoint's and the final one) carries ``training_run.json``: the run's
record (training config and data fingerprint, :func:`bspatial.modeling.train.run_record`), the step, the process
count and whether it is a checkpoint or the final export. The card is rendered from that file and the export's
``config.json`` alone, so it can be rendered again later: ``bspatial model-card <export> --rollout <run>`` (the
evaluation layer reads the rollout run) adds the per-protocol success rates as ``model-index`` metrics.

The front matter is built as data and written by ``yaml.safe_dump``, never by pasting strings into YAML, so any
preset name, path or task name stays valid YAML; ``string.Template.substitute`` refuses a template placeholder
this module does not fill (the dataset cards' rule, :func:`bspatial.common.templates.fill_template`).

Not remote code (a checkpoint does not carry this file).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bspatial.common.files import atomic_write_text
from bspatial.common.templates import fill_template

from .tiny_backbone import OFFLINE_BACKBONES
from .training_config import TINY_BACKBONE

TEMPLATE = "model_vla.md"  # hub_cards/model_vla.md
CARD_FILE = "README.md"
TRAINING_RECORD_FILE = "training_run.json"
TRAINING_RECORD_FORMAT = 1
KINDS = ("checkpoint", "final")
# The Hub's model-index task type for closed-loop control (its task list has "robotics").
TASK_TYPE = "robotics"
BENCHMARK_DATASET = "behavior-spatial"
# Split -> the protocol's name on the card (paper Sec. 5.1; Table 4 held-out / prompt-probe, Table S11 navigation).
PROTOCOL_NAMES = {"held_out": "held-out instructions", "prompt_probe": "prompt-probe instructions",
                  "navigation": "navigation"}
# Rate -> (model-index metric type, display name). Soft credit: target-directed progress (Table S4).
METRICS = {"soft": ("soft_success", "Soft success (%)"), "strict": ("strict_success", "Strict success (%)")}


@dataclass(frozen=True)
class ProtocolResult:
    """One protocol's pooled success in a rollout run (percent over episodes, as Table 4 / S11 pool them).

    Attributes:
        split: "held_out", "prompt_probe" or "navigation".
        episodes: how many episodes the rates pool.
        rates: rate name ("soft", "strict") -> percent, rounded to 0.1 as the rollout tables round them;
            navigation has "strict" only (binary success).
        source: the rollout run folder.
    """

    split: str
    episodes: int
    rates: Mapping[str, float]
    source: str

    def __post_init__(self):
        if self.split not in PROTOCOL_NAMES:
            raise ValueError(f"split must be one of {sorted(PROTOCOL_NAMES)}, got {self.split!r}")
        if "strict" not in self.rates or set(self.rates) - set(METRICS):
            raise ValueError(f"rates must hold 'strict' (and may hold 'soft'), got {sorted(self.rates)}")


def training_record(run: Mapping, step: int, processes: int, kind: str) -> dict:
    """What ``training_run.json`` of an export holds (``run`` is the run folder's ``run_config.json`` record)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return {"format": TRAINING_RECORD_FORMAT, "kind": kind, "step": int(step), "processes": int(processes),
            "run": dict(run)}


def read_training_record(export_dir: str | os.PathLike) -> dict:
    """The export's ``training_run.json``; the error names the export when it has none (not a training export)."""
    path = Path(export_dir) / TRAINING_RECORD_FILE
    if not path.is_file():
        raise ValueError(f"{export_dir} has no {TRAINING_RECORD_FILE}: not a pretrained_model/ export of "
                         "`bspatial train` (its card needs the run's config and data fingerprint)")
    try:
        return json.loads(path.read_text())
    except ValueError as error:
        raise ValueError(f"{str(path)!r} is not valid JSON ({error})") from None


def write_card_files(export_dir: str | os.PathLike, record: Mapping,
                     results: Sequence[ProtocolResult] = ()) -> Path:
    """Write ``training_run.json`` and ``README.md`` into ``export_dir`` (atomically, each file whole)."""
    export_dir = Path(export_dir)
    atomic_write_text(export_dir / TRAINING_RECORD_FILE, json.dumps(record, indent=2) + "\n")
    return write_model_card(export_dir, results)


def write_model_card(export_dir: str | os.PathLike, results: Sequence[ProtocolResult] = (),
                     perception: str = "") -> Path:
    """Render the card of ``export_dir`` (from its ``training_run.json`` and ``config.json``) into its README.md."""
    path = Path(export_dir) / CARD_FILE
    atomic_write_text(path, render_model_card(export_dir, results, perception=perception))
    return path


def render_model_card(export_dir: str | os.PathLike, results: Sequence[ProtocolResult] = (),
                      template: str | os.PathLike | None = None, perception: str = "") -> str:
    """The card text of an export; ``results`` become model-index metrics and the Evaluation table; ``perception``
    (Markdown, rendered by the evaluation layer, which modeling may not import) follows that table.

    Raises:
        ValueError: the export lacks ``training_run.json`` / ``config.json``, or two results share a split.
    """
    export_dir = Path(export_dir)
    record = read_training_record(export_dir)
    config_path = export_dir / "config.json"
    if not config_path.is_file():
        raise ValueError(f"{export_dir} has no config.json: not a pretrained_model/ export")
    model = json.loads(config_path.read_text())
    splits = [r.split for r in results]
    if len(set(splits)) != len(splits):
        raise ValueError(f"one result per protocol: splits {splits} repeat")
    run = record["run"]
    config, data = run["training_config"], run["data"]
    offline = config["backbone"] in OFFLINE_BACKBONES   # built here at random, not a Hub model
    title = _title(config["name"], record)
    fields = {
        "title": title,
        "variant_tags_yaml": _yaml_items(_variant_tags(config, model)),
        "datasets_yaml": _yaml({"datasets": [data["repo_id"]]}) if data.get("repo_id") else "",
        "base_model_yaml": "" if offline else _yaml({"base_model": config["backbone"]}),
        "model_index_yaml": _yaml(_model_index(title, results)),
        "export_line": _export_line(record, data),
        "chunk_size": model["chunk_size"], "action_dim": model["action_dim"],
        "num_inference_steps": model["num_inference_steps"],
        "variant_summary": _variant_summary(config, model),
        "evaluation_section": _evaluation_section(results) + (f"\n\n{perception.strip()}" if perception else ""),
        "evaluation_caveat": ("other splits, simulators or controllers are not covered by these numbers." if results
                              else "no rollout run has been attached to this card, so it reports no success rate."),
        "preset": config["name"], "step": record["step"], "max_steps": config["max_steps"],
        "processes": record["processes"], "batch_size": config["batch_size"],
        "training_table": _training_table(config),
        "model_summary": (f"ir_mode `{model['ir_mode']}`, first_frame_anchor {model['first_frame_anchor']}, "
                          f"state_dim {model['state_dim']}, cameras {', '.join(model['camera_names'])}"),
        "dataset_name": data.get("repo_id") or f"local LeRobot folder `{data['root']}`",
        "episodes": data["episodes"], "fingerprint": data["fingerprint"],
        "load_path": "<this folder or its Hub repo id>",
        "backbone_caveat": (
            "This export's backbone is the offline random tiny Qwen3.5 (`backbone: tiny`): a test and demo model "
            "whose actions carry no meaning." if config["backbone"] == TINY_BACKBONE else
            f"This export's backbone is the offline Qwen3.5-shaped `{config['backbone']}` model, initialised at random "
            "and trained only on the demonstrations named here (no pretrained vision or language)." if offline else
            f"The vision-language backbone ({config['backbone']}) keeps its own limitations and licence."),
    }
    if template is None:
        from bspatial.common.paths import data_root  # the checkout, or the wheel's share/ folder

        template = data_root() / "hub_cards" / TEMPLATE
    return fill_template(template, **fields)


# ---- pieces ---------------------------------------------------------------------------------------

def _yaml(value) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True).rstrip("\n")


def _yaml_items(items: Sequence[str]) -> str:
    # Extra items of the template's `tags:` list (an empty line when none: YAML ignores it).
    return _yaml(list(items)) if items else ""


def _title(preset: str, record: Mapping) -> str:
    step = record["step"]
    where = f"checkpoint at step {step}" if record["kind"] == "checkpoint" else f"final, step {step}"
    return f"BEHAVIOR-Spatial-VLA `{preset}` ({where})"


def _export_line(record: Mapping, data: Mapping) -> str:
    kind = ("an intermediate checkpoint" if record["kind"] == "checkpoint" else "the final export")
    return (f"this is {kind} of the run, at step {record['step']}, trained on data with fingerprint "
            f"`{data['fingerprint']}`.")


def _variant_tags(config: Mapping, model: Mapping) -> list[str]:
    tags = []
    if config["vlm_adapter"] == "lora":
        tags.append("lora")
    if model["ir_mode"] != "none":
        tags.append(f"ir-{model['ir_mode'].replace('_', '-')}")
    if config.get("instruction_source", "instruction") != "instruction":
        tags.append("language-blanked")
    if model["first_frame_anchor"]:
        tags.append("first-frame-anchor")
    return tags


def _variant_summary(config: Mapping, model: Mapping) -> str:
    adapters = {"lora": "LoRA on the backbone", "full": "backbone trained in full", "frozen": "frozen backbone"}
    parts = [adapters[config["vlm_adapter"]],
             "expert initialised from a checkpoint (DROID-style)" if config["expert_init"] == "checkpoint"
             else "expert trained from scratch",
             "no IR image" if model["ir_mode"] == "none" else f"{model['ir_mode']} IR image"]
    if model["first_frame_anchor"]:
        parts.append("first-frame anchor")
    return ", ".join(parts)


def _model_index(title: str, results: Sequence[ProtocolResult]) -> list[dict]:
    entries = [{
        "task": {"type": TASK_TYPE, "name": f"Closed-loop {PROTOCOL_NAMES[r.split]}"},
        "dataset": {"type": BENCHMARK_DATASET, "name": f"BEHAVIOR-Spatial {r.split}", "split": r.split},
        "metrics": [{"type": METRICS[rate][0], "name": METRICS[rate][1], "value": float(value)}
                    for rate, value in r.rates.items()],
    } for r in results]
    if not entries:
        # No rollout run yet: the task and benchmark the policy is for, without a metric value.
        entries = [{"task": {"type": TASK_TYPE, "name": "Closed-loop manipulation"},
                    "dataset": {"type": BENCHMARK_DATASET, "name": "BEHAVIOR-Spatial held_out", "split": "held_out"},
                    "metrics": []}]
    return [{"name": title, "results": entries}]


def _evaluation_section(results: Sequence[ProtocolResult]) -> str:
    if not results:
        return ("No rollout run is attached. Run `bspatial rollout` with this folder as `--policy`, then "
                "`bspatial model-card` with `--rollout` to add the success rates here and to `model-index`.")
    rows = ["| protocol | episodes | soft success (%) | strict success (%) | rollout run |", "|---|---|---|---|---|"]
    for r in results:
        soft = f"{r.rates['soft']:.1f}" if "soft" in r.rates else "-"
        rows.append(f"| {PROTOCOL_NAMES[r.split]} | {r.episodes} | {soft} | {r.rates['strict']:.1f} | `{r.source}` |")
    return ("Pooled over episodes (Table 4 / Table S11 pooling; a crashed episode counts as a failure); navigation "
            "success is binary (the strict rate).\n\n" + "\n".join(rows))


def _training_table(config: Mapping) -> str:
    rows = ["| field | value |", "|---|---|"]
    rows += [f"| {name} | `{json.dumps(value)}` |" for name, value in config.items()]
    return "\n".join(rows)


__all__ = ["CARD_FILE", "ProtocolResult", "TRAINING_RECORD_FILE", "read_training_record", "render_model_card",
           "training_record", "write_card_files", "write_model_card"]
