"""The metric folders as evaluate Spaces: the widget app loads its own module, the requirements resolve to
the right distribution, and a copied module without our package names the right install."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
METRICS = ("bspatial_vqa", "bspatial_ir", "bspatial_action")
INSTALL = "behavior-spatial @ git+https://github.com/behavior-spatial/behavior-spatial"


def _install_requires() -> dict[str, Requirement]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    lines = [line.strip() for line in config["options"]["install_requires"].splitlines() if line.strip()]
    return {Requirement(line).name: Requirement(line) for line in lines}


@pytest.mark.parametrize("name", METRICS)
def test_requirements_name_our_distribution_and_agree_with_the_package(name):
    lines = [line.split("#", 1)[0].strip() for line in (ROOT / "metrics" / name / "requirements.txt").read_text().splitlines()]
    requirements = {r.name: r for r in map(Requirement, filter(None, lines))}
    assert requirements["behavior-spatial"].url == INSTALL.split(" @ ", 1)[1]
    ours = _install_requires()
    for library in ("evaluate", "datasets"):
        assert requirements[library].specifier == ours[library].specifier, library


@pytest.mark.parametrize("name", METRICS)
def test_a_copied_module_without_our_package_names_the_right_install(name, tmp_path):
    shutil.copytree(ROOT / "metrics" / name, tmp_path / name)
    code = ("import sys, evaluate\n"
            "sys.modules['bspatial'] = None  # as on a machine without behavior-spatial installed\n"
            f"evaluate.load({str(tmp_path / name / (name + '.py'))!r})\n")
    env = dict(os.environ, HF_EVALUATE_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode != 0
    assert f"pip install {INSTALL}" in done.stderr and "pip install bspatial" not in done.stderr


@pytest.mark.parametrize("name", METRICS)
def test_the_space_app_loads_its_module_and_hands_it_to_the_gradio_widget(name, tmp_path):
    import evaluate  # noqa: F401  (a hard dependency: a missing one fails here)
    try:
        import gradio  # noqa: F401
        pytest.skip("gradio is installed: the app would start a server")
    except ImportError:
        pass
    shutil.copytree(ROOT / "metrics" / name, tmp_path / name)
    env = dict(os.environ, HF_EVALUATE_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    done = subprocess.run([sys.executable, str(tmp_path / name / "app.py")], capture_output=True, text=True,
                          env=env, timeout=120)
    # The module loaded (its cache folder exists) and the widget was reached: only gradio is missing.
    assert done.returncode != 0 and "No module named 'gradio'" in done.stderr, done.stderr[-2000:]
    assert any((tmp_path / "hf").rglob(f"{name}.py"))
