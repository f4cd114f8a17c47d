"""Fixtures of the lmms-eval task tests: the real lmms-eval in its own cached venv, a local OpenAI-compatible
server whose replies depend only on what it is sent, and the fixture benchmark in the built suite's layout.

The lmms-eval environment
-------------------------
lmms-eval 0.7.3 cannot share ``.venv``: it resolves ``packaging`` 26 where lerobot pins ``packaging<26``, and it
imports ``filelock._api``, which filelock 4 (lerobot's resolution) no longer has. So the tests build a venv of
its own, once, with the interpreter ``.venv`` was made from, and reuse it (``BSPATIAL_TEST_VENVS``, default
``~/.cache/bspatial/test-venvs``, the cache the lerobot-doctor test uses too):

* ``pip install lmms-eval==0.7.3 'filelock<4'`` with lmms-eval's full dependency resolution: the environment a
  user gets, except for one thing. torch (with torchvision, triton and the CUDA wheels it pulls: several GB,
  minutes to download) is not installed again: a ``.pth`` file puts a folder of symlinks to ``.venv``'s own
  torch distributions at the end of ``sys.path``. Only those distributions are exposed, not ``.venv``'s
  site-packages, so every other module (filelock, packaging, datasets, transformers ...) is lmms-eval's
  resolution; pip sees the linked ``*.dist-info`` and counts torch as installed, and a constraints file pins
  it to ``.venv``'s version so that a resolution wanting another torch fails instead of downloading one.
* ``pip install --no-deps -e <this checkout>``: how a user adds bspatial to an lmms-eval environment (its own
  requirements pin lerobot, which conflicts); the task hooks import only bspatial's prompt and scoring
  modules. Editable, so the env follows the working tree: no copy of the task folder or of bspatial lives in
  it, which is why the env's key holds what its contents depend on (lmms-eval's version and requirements,
  the interpreter, the linked torch, the checkout's path) and not a hash of the task folder.

First creation installs about 130 packages from PyPI (1.6 GB on disk; measured on this machine kind: 3 min 35 s
for the pip step with nothing cached, 2 min 17 s for the whole creation with pip's cache warm); later runs only
check a stamp. The venv is built under a staging name and renamed into place, so its console scripts name the
staging path: run it as ``python -m lmms_eval``. Without PyPI the fixture fails with pip's reason (never a
silent skip); ``BSPATIAL_SKIP_LMMS_EVAL=1`` skips these tests on purpose.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

LMMS_EVAL_VERSION = "0.7.3"
# lmms-eval 0.7.3's evaluator imports filelock._api (_enable_reentrant_filelocks); its metadata does not
# bound filelock, and filelock 4 removed that module.
EXTRA_REQUIREMENTS = ("filelock<4",)
# The distributions linked from .venv rather than installed: torch, torchvision and the binary wheels torch
# requires (found from torch's metadata at run time, so a torch upgrade in .venv is followed).
TORCH_ROOTS = ("torch", "torchvision")
_BINARY_PREFIXES = ("nvidia-", "cuda-", "triton")
INSTALL_TIMEOUT_S = 1800
RUN_TIMEOUT_S = 600
SKIP_VARIABLE = "BSPATIAL_SKIP_LMMS_EVAL"
REPO = Path(__file__).resolve().parents[3]
SERVED_NAME = "bspatial-echo"  # lmms-eval's openai model treats names containing o1 / o3 / o4 / gpt-5 specially


# ----------------------------------------------------------------------------- the lmms-eval venv


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def torch_distributions() -> list[importlib.metadata.Distribution]:
    """``.venv``'s torch, torchvision and the installed binary distributions they require, transitively.

    Requirements behind extras count when installed: torch asks for ``cuda-toolkit[cublas, ...]``, whose
    extras are the nvidia-* wheels.
    """
    found: dict[str, importlib.metadata.Distribution] = {}
    todo = list(TORCH_ROOTS)
    while todo:
        name = _canonical(todo.pop())
        if name in found:
            continue
        found[name] = dist = importlib.metadata.distribution(name)
        for requirement in dist.requires or ():
            required = _canonical(re.split(r"[\s\[<>=!~;(]", requirement, maxsplit=1)[0])
            if (required.startswith(_BINARY_PREFIXES) or required in TORCH_ROOTS) and _installed(required):
                todo.append(required)
    return sorted(found.values(), key=lambda d: _canonical(d.metadata["Name"]))


def _installed(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def base_interpreter() -> Path:
    """The interpreter ``.venv`` was created from (venvs made by it share its stdlib and ABI)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    python = Path(sys.base_prefix) / "bin" / version
    if not python.exists():
        raise RuntimeError(f"the base interpreter of {sys.prefix} is not at {python}")
    return python


def env_key() -> dict[str, object]:
    """What the venv's contents depend on; its hash names the venv folder."""
    return {
        "lmms_eval": LMMS_EVAL_VERSION,
        "extra": list(EXTRA_REQUIREMENTS),
        "python": [str(base_interpreter()), sys.version],
        "torch": [f"{d.metadata['Name']}=={d.version}@{d.locate_file('')}" for d in torch_distributions()],
        "checkout": str(REPO),
    }


def _bspatial_stamp() -> str:
    # The editable install follows the tree, except for the package layout setup.py / setup.cfg declare.
    return hashlib.sha256(b"".join((REPO / name).read_bytes() for name in ("setup.py", "setup.cfg", "pyproject.toml"))).hexdigest()


def _run(command: Sequence[str], what: str, timeout: float = INSTALL_TIMEOUT_S) -> None:
    # Nothing of this process's interpreter set-up may leak into the new venv's (its own site-packages only).
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    done = subprocess.run(list(command), capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode:
        noise = "neither a file nor a directory"  # the machine's pip config names absent local index folders
        tail = "\n".join(line for line in (done.stdout + done.stderr).splitlines() if noise not in line)[-3000:]
        raise RuntimeError(f"creating the lmms-eval test environment failed at: {what} (exit {done.returncode}); "
                           f"the first run needs PyPI. Set {SKIP_VARIABLE}=1 to skip these tests.\n{tail}")


def _link_torch(venv: Path) -> None:
    """A folder of symlinks to .venv's torch distributions, appended to the venv's sys.path by a .pth file."""
    overlay = venv / "torch-from-project-venv"
    overlay.mkdir()
    for dist in torch_distributions():
        for file in dist.files or ():
            top = file.parts[0]
            if top == ".." or top.endswith(".pth") or (overlay / top).exists():
                continue  # console scripts live outside site-packages; namespace folders (nvidia/) link once
            (overlay / top).symlink_to(Path(dist.locate_file(top)))
    site = next((venv / "lib").glob("python3.*/site-packages"))
    # A relative entry: site.addpackage joins it with the site-packages folder, so the venv can be renamed.
    (site / "zz_torch_from_project_venv.pth").write_text(os.path.relpath(overlay, site) + "\n")


def _create(venv: Path) -> None:
    started = time.monotonic()
    _run([str(base_interpreter()), "-m", "venv", str(venv)], "python -m venv")
    _link_torch(venv)
    python = str(venv / "bin" / "python")
    constraints = venv / "torch-constraints.txt"
    constraints.write_text("".join(f"{d.metadata['Name']}=={d.version}\n" for d in torch_distributions()))
    _run([python, "-m", "pip", "install", "--quiet", "-c", str(constraints), f"lmms-eval=={LMMS_EVAL_VERSION}",
          *EXTRA_REQUIREMENTS], f"pip install lmms-eval=={LMMS_EVAL_VERSION}")
    _install_bspatial(venv)
    _run([python, "-c", "import torch, lmms_eval.evaluator, lmms_eval.models.chat.openai, bspatial.scoring.vqa"],
         "importing lmms-eval and bspatial in the new environment", timeout=600)
    (venv / "created.json").write_text(json.dumps({**env_key(), "seconds": round(time.monotonic() - started, 1)}, indent=1))


def _install_bspatial(venv: Path) -> None:
    # --no-build-isolation: the env has setuptools (torch requires it), so a reinstall needs no index.
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
          "-e", str(REPO)], "pip install --no-deps -e <checkout>", timeout=600)
    (venv / "bspatial-stamp").write_text(_bspatial_stamp())


def lmms_eval_env() -> Path:
    """The cached venv (created on first use, under a lock so parallel runs build it once)."""
    root = Path(os.environ.get("BSPATIAL_TEST_VENVS", Path.home() / ".cache" / "bspatial" / "test-venvs"))
    digest = hashlib.sha256(json.dumps(env_key(), sort_keys=True).encode()).hexdigest()[:12]
    venv = root / f"lmms-eval-{LMMS_EVAL_VERSION}-{digest}"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / "created.json").exists():
            staging = root / f".{venv.name}.building"
            shutil.rmtree(staging, ignore_errors=True)  # a build cut short (we hold the lock)
            shutil.rmtree(venv, ignore_errors=True)
            try:
                _create(staging)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            staging.rename(venv)  # complete or absent; run only through `python -m`, so no script names staging
        elif (venv / "bspatial-stamp").read_text() != _bspatial_stamp():
            _install_bspatial(venv)
    return venv


@pytest.fixture(scope="session")
def lmms_python() -> Path:
    """The lmms-eval venv's interpreter."""
    if os.environ.get(SKIP_VARIABLE) == "1":
        pytest.skip(f"{SKIP_VARIABLE}=1")
    return lmms_eval_env() / "bin" / "python"


@pytest.fixture(scope="session")
def run_lmms(lmms_python) -> Callable[[Sequence[str], Path], subprocess.CompletedProcess]:
    """``run_lmms(args, tmp)``: the lmms-eval venv's python with ``args``, offline, its caches under ``tmp``."""

    def run(args: Sequence[str], tmp: Path) -> subprocess.CompletedProcess:
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")}
        env = {**keep, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp / "hf"),
               "PYTHONNOUSERSITE": "1", "WANDB_MODE": "disabled", "TOKENIZERS_PARALLELISM": "false"}
        return subprocess.run([str(lmms_python), *args], env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)

    return run


# ----------------------------------------------------------------------------- the model server


def _options_from_prompt(prompt: str) -> list[str]:
    match = re.search(r"^Options: A\.(.*) B\.(.*) C\.(.*) D\.(.*)$", prompt, re.MULTILINE)
    if match is None:
        raise ValueError(f"no Appendix 15.1 options line in the prompt: {prompt[-200:]!r}")
    return list(match.groups())


# Reply forms real models produce, parsed and unparseable alike. The <analysis> form is the one lmms-eval's
# default --reasoning_tags would rewrite to a parseable letter; bspatial's parser finds no answer in it.
REPLY_FORMS = (
    "{letter}.{text}",
    "({lower})",
    "The answer is {letter}.",
    "<think>{other} looks closer at first.</think>{letter}",
    "{text}",
    "**{letter}**",
    "I cannot tell from these images.",
    "<analysis>{other}</analysis> {letter}",
    "{letter} or {other}",
    "<think>still comparing {letter} and {other}",
)


class ContentEchoBackend:
    """A VLM backend whose reply is a function of the prompt text and the decoded pixels of the images, in
    order, and nothing else (not the request id, batch or arrival order): two harnesses that send the same
    item get the same reply, and any difference in prompt, frames or frame order shows up as a different one.
    It records what it was sent, per phase."""

    spec = "content-echo"
    forms = REPLY_FORMS

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[tuple[str, tuple[str, ...], int]] = []  # (prompt, frame digests, reply form)

    def identity(self) -> dict[str, str]:
        return {"kind": "content-echo"}

    def generation_settings(self) -> dict[str, str]:
        return {}

    def take_seen(self) -> list[tuple[str, tuple[str, ...], int]]:
        """What was sent since the last call, with the index in :data:`REPLY_FORMS` of each reply."""
        with self.lock:
            seen, self.seen = self.seen, []
        return seen

    def generate(self, requests: Sequence, max_new_tokens: int | None = None) -> list:
        from bspatial.evaluation.vlm.backend_api import Response

        out = []
        for request in requests:
            pixels = [image.convert("RGB") for image in request.images_pil()]
            frames = tuple(hashlib.sha256(f"{p.size}".encode() + p.tobytes()).hexdigest() for p in pixels)
            digest = hashlib.sha256("\x00".join((request.prompt, *frames)).encode()).digest()
            options = _options_from_prompt(request.prompt)
            letter, other = "ABCD"[digest[0] % 4], "ABCD"[(digest[0] + 1 + digest[2] % 3) % 4]
            form = digest[1] % len(REPLY_FORMS)
            text = REPLY_FORMS[form].format(letter=letter, lower=letter.lower(), other=other, text=options["ABCD".index(letter)])
            with self.lock:
                self.seen.append((request.prompt, frames, form))
            out.append(Response(text=text, latency_s=0.0))
        return out


@dataclass(frozen=True)
class EchoServer:
    url: str  # the API root, .../v1
    name: str  # the served model name
    backend: ContentEchoBackend


@pytest.fixture(scope="module")
def echo_server() -> Iterator[EchoServer]:
    """bspatial's OpenAI-compatible server (evaluation/vlm/serve.py) over :class:`ContentEchoBackend`, in this
    process, so the test reads what it received."""
    from bspatial.evaluation.vlm.serve import ChatCompletionServer

    backend = ContentEchoBackend()
    with ChatCompletionServer(backend, SERVED_NAME) as server:
        yield EchoServer(server.base_url, SERVED_NAME, backend)


# ----------------------------------------------------------------------------- the suite


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """The fixture benchmark's VQA rows as a built suite: the four configs of datasets/bspatial_vqa (the
    fixture's mixed ``general`` config split by setting into general_single_frame / general_multi_frame)."""
    import pyarrow.parquet as pq

    from bspatial.evaluation.lmms_eval_tasks import VQA_CONFIGS
    from bspatial.evaluation.vlm.fixtures import SPLIT, write_fixture_repos, write_parquet_config, write_readme

    fixture = write_fixture_repos(tmp_path_factory.mktemp("fixture"))["vqa"]

    def rows(config: str) -> list[dict]:
        return pq.read_table(fixture / config / f"{SPLIT}-00000-of-00001.parquet").to_pylist()

    general = rows("general")
    parts = {
        "general_single_frame": [r for r in general if r["setting"] == "single_frame"],
        "general_multi_frame": [r for r in general if r["setting"].startswith("multi_frame")],
        "task_manipulation": rows("task_manipulation"),
        "task_navigation": rows("task_navigation"),
    }
    repo = tmp_path_factory.mktemp("suite") / "vqa"
    for config in VQA_CONFIGS:
        write_parquet_config(repo, "vqa", config, parts[config])
    write_readme(repo, VQA_CONFIGS)
    return repo
