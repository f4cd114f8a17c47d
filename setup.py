"""Package discovery for the one `bspatial` namespace (metadata and dependencies live in setup.cfg).

setup.cfg cannot enumerate sub-packages of the remapped folders (modeling/ -> bspatial.modeling,
evaluation/ -> bspatial.evaluation), so this file finds them; everything else stays declarative.
The data folders datasets/, metrics/, hub_cards/ and envhub/ are shipped as data files (under share/behavior-spatial/),
never as importable packages: a top-level `datasets` package would shadow Hugging Face `datasets`.
"""

from pathlib import Path

from setuptools import find_packages, setup

ROOTS = {"bspatial": "bspatial", "bspatial.modeling": "modeling", "bspatial.evaluation": "evaluation"}


def _packages() -> list[str]:
    found = []
    for namespace, folder in ROOTS.items():
        found.append(namespace)
        found += [f"{namespace}.{sub}" for sub in find_packages(folder)]
    # bspatial's own find also sees nothing of modeling/ or evaluation/, so no duplicates arise.
    return sorted(set(found))


def _data_files() -> list[tuple[str, list[str]]]:
    entries = []
    for top in ("datasets", "metrics", "hub_cards", "envhub"):
        if not Path(top).is_dir():
            continue
        for folder in sorted(p for p in Path(top).rglob("*") if p.is_dir()) + [Path(top)]:
            files = [str(f) for f in sorted(folder.iterdir()) if f.is_file() and f.suffix != ".pyc"]
            if files:
                entries.append((f"share/behavior-spatial/{folder}", files))
    return entries


setup(packages=_packages(), package_dir=ROOTS, data_files=_data_files())
