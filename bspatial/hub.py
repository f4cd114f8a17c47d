"""Offline Hub seeding: make the bare names of our evaluate modules and datasets load without a network.

`evaluate.load("bspatial_ir")` first asks the Hub for ``evaluate-metric/bspatial_ir`` and, when that
fails (``HF_EVALUATE_OFFLINE=1`` or no network), falls back to evaluate's dynamic-module cache at
``$HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--<name>/<64-hex hash>/<name>.py``
(evaluate 0.4.6, ``CachedEvaluationModuleFactory``). evaluate has no public call that writes that
cache entry for a local module (``evaluate.load("metrics/bspatial_ir")`` caches it under the plain
name, which the bare-name lookup never reads), so this module writes the layout itself. It is the
one place that knows it; if evaluate changes the layout, only this file changes.

``evaluate.load("<path to metrics/bspatial_ir>")`` works without any seeding.

Datasets: with ``HF_HUB_OFFLINE=1``, ``load_dataset("behavior-spatial/vqa", "<config>")`` falls back
to datasets' cache builder, which reads prepared Arrow files at
``$HF_DATASETS_CACHE/behavior-spatial___vqa/<config>/<version>/<hash>/`` (``dataset_info.json`` +
``vqa-<split>.arrow``; datasets 4.8, ``CachedDatasetModuleFactory``). :func:`install_datasets`
prepares each config of a built repo with datasets' own builder in a scratch cache and moves the
result there. ``load_dataset("<repo dir>", "<config>")`` works without any seeding.

EnvHub: LeRobot's ``make_env("behavior-spatial/envhub", trust_remote_code=True)`` takes Hub ids only and fetches
``env.py`` with ``hf_hub_download``, which offline reads the Hub cache's layout
(``$HF_HUB_CACHE/models--behavior-spatial--envhub/refs/main`` naming a snapshot folder that holds the files;
huggingface-hub 1.x). :func:`install_envhub` writes that layout from the package's ``envhub/`` folder.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from pathlib import Path

from bspatial.common.files import atomic_write_text, publish_folder, remove_stale_staging, staging_folder
from bspatial.common.locks import run_folder_lock
from bspatial.common.paths import data_root
from bspatial.common.registry import unknown_name

logger = logging.getLogger(__name__)

METRIC_NAMES = ("bspatial_vqa", "bspatial_ir", "bspatial_action")
HUB_NAMESPACE = "behavior-spatial"  # load_dataset("behavior-spatial/<suite>")
SUITES = ("vqa", "ir")
ENVHUB_REPO = f"{HUB_NAMESPACE}/envhub"
"""The EnvHub repo id of our env.py (``make_env("behavior-spatial/envhub", trust_remote_code=True)``)."""
SEEDING_PURPOSE = "seeding"  # staging folders of a seeding: .<digest>.seeding-<8 chars> beside the target
# evaluate's canonical metrics live under this Hub namespace; the cache folder name joins it with "--".
_CANONICAL_NAMESPACE = "evaluate-metric"


def metric_script(name: str) -> Path:
    """Path of the evaluate module script of one of our metrics.

    Example:
        >>> metric_script("bspatial_ir").name
        'bspatial_ir.py'
    """
    if name not in METRIC_NAMES:
        raise unknown_name("metric", name, METRIC_NAMES)
    script = data_root() / "metrics" / name / f"{name}.py"
    if not script.is_file():
        raise FileNotFoundError(f"metric script missing: {script}")
    return script


def install_metrics(modules_cache: str | os.PathLike | None = None) -> list[Path]:
    """Seed evaluate's module cache so ``evaluate.load("<name>")`` works offline for our metrics.

    Args:
        modules_cache: evaluate's ``HF_MODULES_CACHE``; defaults to evaluate's own setting
            (``$HF_MODULES_CACHE`` or ``$HF_HOME/modules``).

    Returns:
        The installed script paths. Re-running replaces nothing that is identical and adds a new
        hash folder when a script changed (evaluate picks the newest).
    """
    from evaluate.loading import init_dynamic_modules  # heavy import, only for this command

    dynamic_root = Path(init_dynamic_modules(hf_modules_cache=modules_cache))
    installed = []
    for name in METRIC_NAMES:
        installed.append(_install_one(dynamic_root, name, metric_script(name)))
    return installed


def _install_one(dynamic_root: Path, name: str, script: Path) -> Path:
    code = script.read_bytes()
    digest = hashlib.sha256(code).hexdigest()  # evaluate only accepts 64-character folder names
    module_dir = dynamic_root / "metrics" / f"{_CANONICAL_NAMESPACE}--{name}"
    target = module_dir / digest / script.name
    if target.is_file() and target.read_bytes() == code:
        os.utime(target)  # evaluate loads the most recently modified hash folder
        logger.info("%s already installed at %s", name, target)
        return target
    for folder in (dynamic_root / "metrics", module_dir):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").touch(exist_ok=True)
    # Write into a temporary sibling and rename, so a concurrent load never sees half a module.
    staging = Path(tempfile.mkdtemp(prefix=f".{digest}.", dir=module_dir))
    (staging / "__init__.py").touch()
    shutil.copyfile(script, staging / script.name)
    try:
        staging.rename(module_dir / digest)
    except OSError:  # another process installed the same hash first
        shutil.rmtree(staging, ignore_errors=True)
    logger.info("installed %s at %s", name, target)
    return target


def install_datasets(build_dir: str | os.PathLike, cache_dir: str | os.PathLike | None = None) -> list[Path]:
    """Seed the datasets cache from a build (``bspatial build --out DIR``: ``DIR/vqa``, ``DIR/ir``).

    Afterwards, in a fresh process with ``HF_HUB_OFFLINE=1``,
    ``load_dataset("behavior-spatial/<suite>", "<config>", split="test")`` loads by bare id.

    Args:
        build_dir: a build folder holding Hub-shaped repos named after the suites.
        cache_dir: datasets' ``HF_DATASETS_CACHE``; defaults to datasets' own setting.

    Returns:
        The seeded cache folders, one per suite and config.
    """
    import datasets  # heavy import, only for this command

    root = Path(build_dir)
    repos = {suite: root / suite for suite in SUITES if (root / suite / "README.md").is_file()}
    if not repos:
        raise FileNotFoundError(f"{root}: no built suite repos ({', '.join(SUITES)}/README.md); run `bspatial build` first")
    cache_root = Path(cache_dir or datasets.config.HF_DATASETS_CACHE)
    seeded = []
    for suite, repo in repos.items():
        for config in datasets.get_dataset_config_names(str(repo)):
            seeded.append(_seed_config(repo, suite, config, cache_root))
    return seeded


def _seed_config(repo: Path, suite: str, config: str, cache_root: Path) -> Path:
    import datasets

    with tempfile.TemporaryDirectory(prefix="bspatial-seed-") as scratch:
        builder = datasets.load_dataset_builder(str(repo), config, cache_dir=scratch)
        builder.download_and_prepare()
        prepared = Path(builder.cache_dir)
        version, digest = prepared.parts[-2:]
        target = cache_root / f"{HUB_NAMESPACE}___{suite}" / config / version / digest
        target.parent.mkdir(parents=True, exist_ok=True)
        # One seeding of a target at a time; whatever staging folder of it is found then is a killed run's.
        with run_folder_lock(target.parent, f"hub install {suite}/{config}", name=f".{target.name}.lock"):
            remove_stale_staging(target, SEEDING_PURPOSE)
            # The cache builder looks for "<dataset name>-<split>.arrow" with the Hub name's last part.
            staging = staging_folder(target, SEEDING_PURPOSE)
            for file in prepared.iterdir():
                name = file.name.replace(f"{builder.dataset_name}-", f"{suite}-", 1) if file.suffix == ".arrow" else file.name
                shutil.copyfile(file, staging / name)
            # datasets' hash for a local repo does not change with its contents, so a rebuild lands on
            # the same folder: swap it in so a reader never sees a mix.
            publish_folder(staging, target)
    logger.info("seeded %s/%s/%s at %s", HUB_NAMESPACE, suite, config, target)
    return target


def install_envhub(hub_cache: str | os.PathLike | None = None) -> Path:
    """Seed the Hub cache with the EnvHub repo (``envhub/``: env.py and its card); returns the snapshot folder.

    The snapshot is named by a hash of the files (a stand-in commit id: the cache only needs ``refs/main`` to name
    a folder), so reinstalling the same files is a no-op and changed files get a new snapshot.
    """
    from huggingface_hub import constants

    source = data_root() / "envhub"
    files = sorted(p for p in source.iterdir() if p.is_file() and p.suffix in (".py", ".md"))
    if not any(p.name == "env.py" for p in files):
        raise FileNotFoundError(f"{source}: no env.py; reinstall behavior-spatial")
    digest = hashlib.sha1(b"".join(p.name.encode() + b"\0" + p.read_bytes() for p in files)).hexdigest()
    repo = Path(hub_cache or constants.HF_HUB_CACHE) / f"models--{ENVHUB_REPO.replace('/', '--')}"
    snapshot = repo / "snapshots" / digest
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    with run_folder_lock(repo, "hub install envhub", name=".envhub.lock"):
        remove_stale_staging(snapshot, SEEDING_PURPOSE)
        if not snapshot.is_dir():
            staging = staging_folder(snapshot, SEEDING_PURPOSE)
            for file in files:
                shutil.copyfile(file, staging / file.name)
            publish_folder(staging, snapshot)
        atomic_write_text(repo / "refs" / "main", digest)
    logger.info("seeded %s at %s", ENVHUB_REPO, snapshot)
    return snapshot
