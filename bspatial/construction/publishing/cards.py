"""Dataset cards rendered from the templates in ``hub_cards/``.

``render_dataset_card(suite, ...)`` fills ``hub_cards/dataset_<suite>.md`` with the build's configs
(the README ``configs:`` YAML the Hub and ``load_dataset(<folder>)`` read), counts, data-quality table
and provenance. ``render_demos_card(info, provenance)`` fills ``hub_cards/dataset_demos.md`` for a LeRobot
demonstration set from its ``meta/info.json`` and ``meta/bspatial_demos.json``. ``string.Template.substitute``
raises on a placeholder we do not fill, so a template edit can never publish a card with a literal ``$name`` in it.

Example:
    >>> card = render_dataset_card("ir", configs=["all"], counts={"all": 3}, preset="tiny", seed=0,
    ...                            fingerprint="abc", version="0.1.0")
    >>> card.splitlines()[0], "- config_name: all" in card, "| all | 3 |" in card
    ('---', True, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from bspatial.common.tables import markdown_table
from bspatial.common.templates import fill_template

SPLIT = "test"
SUITES = ("vqa", "ir")
DEMOS_TEMPLATE = "demos"   # hub_cards/dataset_demos.md


def _template_path(suite: str) -> Path:
    from bspatial.common.paths import data_root  # the checkout, or the wheel's share/ folder

    return data_root() / "hub_cards" / f"dataset_{suite}.md"


def configs_yaml(configs: Sequence[str]) -> str:
    """The README ``configs:`` entries: one parquet file per config under ``<config>/``."""
    lines = []
    for config in configs:
        lines += [f"- config_name: {config}", "  data_files:", f"  - split: {SPLIT}",
                  f"    path: {config}/{SPLIT}-00000-of-00001.parquet"]
    return "\n".join(lines)


def size_category(total: int) -> str:
    """The Hub's ``size_categories`` bucket of ``total`` items."""
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if total < limit:
            return label
    return "n>100K"


def render_dataset_card(suite: str, *, configs: Sequence[str], counts: Mapping[str, int], preset: str, seed: int,
                        fingerprint: str, version: str, quality_markdown: str = "", tiny_markdown: str = "",
                        aligned_markdown: str = "", template: str | Path | None = None) -> str:
    """The README of a built suite repo.

    Args:
        suite: "vqa" or "ir".
        configs: config names in the order the card lists them (the first is the load example's).
        counts: items per row of the counts table (configs, or tasks / categories).
        preset, seed, fingerprint, version: provenance.
        quality_markdown: the data-quality table (VQA: every category and task-or-subtype line with its n, chance,
            prior baseline, text probe, intervals and check); "not computed" when empty.
        tiny_markdown: the composition of the ``tiny`` config (:mod:`~bspatial.construction.publishing.subsets`);
            "not computed" when empty.
        aligned_markdown: the ``episode_aligned`` config's coverage (episodes, items, reasons), or what the build
            lacks; "not computed" when empty.
        template: another template file (tests); default ``hub_cards/dataset_<suite>.md``.

    Raises:
        ValueError: unknown suite or no configs; KeyError: the template names an unknown placeholder.
    """
    if suite not in SUITES:
        raise ValueError(f"suite must be one of {list(SUITES)}, got {suite!r}")
    if not configs:
        raise ValueError("configs must name at least one config, got none")
    table = "\n".join(["| config / part | items |", "|---|---|", *(f"| {k} | {n} |" for k, n in counts.items())])
    return fill_template(
        template or _template_path(suite), preset=preset, seed=seed, fingerprint=fingerprint, version=version,
        first_config=configs[0],
        configs_yaml=configs_yaml(configs), counts_table=table, size_category=size_category(sum(counts.values())),
        quality_table=quality_markdown or "not computed for this suite",
        tiny_table=tiny_markdown or "composition not computed", aligned_table=aligned_markdown or "not computed")


# ----------------------------------------------------------------------------- LeRobot demonstrations


def _layout_table(groups: Mapping[str, slice], names: Sequence[str]) -> str:
    return markdown_table(("index", "part", "names"), [(f"{sl.start}:{sl.stop}", f"`{group}`", ", ".join(names[sl]))
                                               for group, sl in groups.items()])


def _suite_of(tasks: Sequence[str]) -> str:
    from bspatial.catalog.tasks import NAVIGATION_TASKS

    navigation = [t in NAVIGATION_TASKS for t in tasks]
    return "navigation" if all(navigation) else "manipulation" if not any(navigation) else "manipulation and navigation"


def demos_build_command(provenance: Mapping) -> str:
    """The ``bspatial demos`` command line that records a set like the one ``provenance`` describes."""
    from bspatial.catalog.tasks import NAVIGATION_TASKS
    from bspatial.tasks import task_names

    tasks = list(provenance["tasks"])
    if tasks == list(task_names()):
        selection = "--suite manipulation"
    elif tasks == list(NAVIGATION_TASKS):
        selection = "--suite navigation"
    else:
        selection = " ".join(f"--task {t}" for t in tasks)
    flags = [flag for key, flag in (("paperback_prefix", "--paperback-prefix"), ("spa_withheld", "--spa-withheld"))
             if provenance.get(key)]
    return " ".join(["bspatial demos --out DIR", selection, f"--episodes-per-task {provenance['episodes_per_task']}",
                     f"--seed {provenance['seed']}", f"--split {provenance['split']}", *flags])


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"


def _span(values: Sequence[int], unit: str) -> str:
    return f"{min(values)}-{max(values)} {unit}" if min(values) != max(values) else f"{values[0]} {unit}"


def _context_summary(episodes: Sequence[Mapping]) -> str:
    counts = [int(row["context_frames"]["frames"]) for row in episodes if row.get("context_frames")]
    if not counts:
        return "This set has no navigation episode, so no context frames."
    return f"In this set {len(counts)} of {len(episodes)} episodes have context frames ({_span(counts, 'frames each')})."


def render_demos_card(info: Mapping, provenance: Mapping, template: str | Path | None = None) -> str:
    """The README of a recorded demonstration set (``hub_cards/dataset_demos.md``).

    Args:
        info: the set's ``meta/info.json``.
        provenance: its ``meta/bspatial_demos.json`` (``bspatial.construction.demonstrations.demos``): tasks, build arguments,
            the kept episodes (task, variant, length, settle, base ramp, IR validity) and the rejected attempts.
        template: another template file (tests).

    Raises:
        ValueError: no episode; KeyError: the template names an unknown placeholder.
    """
    from bspatial import __version__
    from bspatial.catalog.schema import ACTION_NAMES, ACTION_SLICES, PROPRIO_SLICES, STATE_NAMES

    episodes = list(provenance["episodes"])
    if not episodes:
        raise ValueError("a demonstration card needs at least one episode, got none")
    features = info["features"]
    videos = {k: f for k, f in features.items() if f["dtype"] == "video"}
    video_info = next(iter(videos.values())).get("info", {}) if videos else {}
    cameras = markdown_table(("camera", "feature", "resolution (H x W)", "fps", "codec"), [
        (key.rsplit(".", 1)[-1], f"`{key}`", f"{f['shape'][0]} x {f['shape'][1]}",
         f.get("info", {}).get("video.fps", info["fps"]), f.get("info", {}).get("video.codec", "?"))
        for key, f in videos.items()])
    per_task: dict[str, dict] = {}
    for row in episodes:
        entry = per_task.setdefault(row["task_name"], {"episodes": 0, "frames": 0, "variants": set()})
        entry["episodes"] += 1
        entry["frames"] += int(row["length"])
        entry["variants"].add(row["variant"] or "-")
    rejected: dict[str, int] = {}
    for row in provenance.get("rejected", []):
        rejected[row["task_name"]] = rejected.get(row["task_name"], 0) + 1
    tasks = markdown_table(("task", "episodes", "frames", "variants", "rejected attempts"), [
        (f"`{t}`", e["episodes"], e["frames"], ", ".join(sorted(e["variants"])), rejected.get(t, 0))
        for t, e in per_task.items()])
    feature_rows = [(f"`{k}`", f["dtype"], str(tuple(f["shape"])),
                     f"{len(f['names'])} names (below)" if k in ("observation.state", "action") else
                     ", ".join(f["names"]) if f.get("names") else "-") for k, f in features.items()]
    recording = provenance["recording"]
    settle = [int(row["settle"]["steps"]) for row in episodes]
    valid = sum(int(row["ir_valid_frames"]) for row in episodes)
    frames = sum(int(row["length"]) for row in episodes)
    return fill_template(
        template or _template_path(DEMOS_TEMPLATE), suite=_suite_of(provenance["tasks"]),
        size_category=size_category(frames), total_episodes=info["total_episodes"], total_frames=info["total_frames"],
        fps=info["fps"], codebase_version=info["codebase_version"], robot_type=info.get("robot_type") or "unknown",
        mujoco_version=_version("mujoco"), lerobot_version=_version("lerobot"), version=__version__,
        rejected=sum(rejected.values()), cameras_table=cameras, tasks_table=tasks,
        features_table=markdown_table(("feature", "dtype", "shape", "names"), feature_rows),
        state_table=_layout_table(PROPRIO_SLICES, STATE_NAMES), action_table=_layout_table(ACTION_SLICES, ACTION_NAMES),
        ir_fill="(" + ", ".join(f"{v:g}" for v in recording["ir_target_fill"]) + ")",
        valid_summary=f"In this set {valid} of {frames} frames ({valid / frames:.1%}) have a valid target.",
        context_summary=_context_summary(episodes),
        settle_tol=f"{recording['gripper_settle_tol']:g}", settle_max_steps=recording["gripper_settle_max_steps"],
        settle_summary=_span(settle, "settle steps per episode here"),
        base_accel=f"{recording['base_max_accel_m_s2']:g}", yaw_accel=f"{recording['base_max_yaw_accel_rad_s2']:g}",
        max_dv=f"{max(float(row['base_ramp']['max_dv']) for row in episodes):.4f}",
        max_dw=f"{max(float(row['base_ramp']['max_dw']) for row in episodes):.4f}",
        codec=video_info.get("video.codec", "?"), crf=video_info.get("video.crf", "?"),
        repo_id=provenance.get("repo_id", "behavior-spatial/demos"), build_command=demos_build_command(provenance))
