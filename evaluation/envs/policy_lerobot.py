"""LeRobot policies in ``bspatial rollout``: ``--policy lerobot:<checkpoint>[#option,...]``.

Any LeRobot ``PreTrainedPolicy`` (ACT, diffusion, pi0 / pi0.5, SmolVLA, ...) saved by ``lerobot-train`` or
``save_pretrained``: ``<checkpoint>`` is its folder (``config.json``, ``model.safetensors`` and the saved
``policy_preprocessor.json`` / ``policy_postprocessor.json`` pipelines; a lerobot-train checkpoint folder holding
``pretrained_model/`` works too), or a Hub repo id found in the local Hub cache. It is loaded the way
``lerobot-eval`` loads it (``PreTrainedConfig.from_pretrained``, the policy class's ``from_pretrained``,
``make_pre_post_processors`` with the saved pipelines, the device override) and sees the observation
lerobot-eval builds from :class:`bspatial.evaluation.envs.BSpatialEnv`: the same env observation
(:func:`bspatial.evaluation.envs.env_observation`), LeRobot's own ``preprocess_observation``, the env's key
renaming (:func:`bspatial.evaluation.envs.lerobot_env.env_preprocessor`), the instruction as ``"task"``.

Two ways to turn the policy into actions:

* default, the Appendix 16.3 chunk controller (:class:`~bspatial.evaluation.rollout.controller.ChunkedPolicy`, the
  controller our checkpoints run under, with ``--latency-steps`` / ``--threaded``): each plan is the
  policy's ``predict_action_chunk`` on the current observation, unnormalised by its postprocessor. Policies that
  read a history of observations (``n_obs_steps > 1``, e.g. diffusion's default 2) are refused in this mode;
* ``#select_action``: the policy's own ``select_action`` every step (its action queue / temporal ensembling),
  exactly what ``lerobot-eval`` executes, so a rollout and ``lerobot-eval --env.type=bspatial`` on the same
  episodes play the same actions and get the same traces.

``#device=<torch device>`` overrides the device saved in the checkpoint's config (e.g. a GPU-trained policy
evaluated on CPU). The policy's randomness (diffusion / flow-matching noise) is seeded per episode from
``--seed`` and the scene seed, as for our checkpoints.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bspatial.catalog.schema import ACTION_DIM, ACTION_KEY, CAMERAS, STATE_DIM, STATE_KEY, image_key
from bspatial.evaluation.rollout.plan import episode_noise_seed

logger = logging.getLogger(__name__)

SELECT_ACTION = "select_action"
"""Option: run the policy's own ``select_action`` (as lerobot-eval) instead of the chunk controller."""
DEVICE_OPTION = "device"
CHECKPOINT_FILES: tuple[str, ...] = ("config.json", "model.safetensors", "policy_preprocessor.json",
                                     "policy_postprocessor.json")
"""What ``lerobot-train`` saves in ``pretrained_model/`` and this module loads (the processors carry the
normalisation statistics: a checkpoint without them cannot be run as trained)."""
PRETRAINED_SUBFOLDER = "pretrained_model"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class LeRobotSpec:
    """A parsed ``lerobot:`` target."""

    folder: Path
    select_action: bool = False
    device: str | None = None

    def __str__(self) -> str:
        options = ([SELECT_ACTION] if self.select_action else []) + ([f"device={self.device}"] if self.device else [])
        return str(self.folder) + (f"#{','.join(options)}" if options else "")


def parse_target(target: str) -> tuple[str, bool, str | None]:
    """``(checkpoint, select_action, device)`` of ``<checkpoint>[#option,...]``.

    Raises:
        ValueError: an empty checkpoint or an unknown option (naming it and the known ones).
    """
    checkpoint, _, options = target.partition("#")
    if not checkpoint.strip():
        raise ValueError("policy 'lerobot:' needs a checkpoint: lerobot:<folder or hub id>[#select_action][#device=cpu]")
    select, device = False, None
    for option in (o.strip() for o in options.replace("#", ",").split(",") if o.strip()):
        if option == SELECT_ACTION:
            select = True
        elif option.startswith(f"{DEVICE_OPTION}=") and option.partition("=")[2]:
            device = option.partition("=")[2]
        else:
            raise ValueError(f"policy lerobot:{target}: unknown option {option!r}; options: {SELECT_ACTION}, "
                             f"{DEVICE_OPTION}=<torch device>")
    return checkpoint.strip(), select, device


def _resolve_folder(checkpoint: str) -> Path:
    path = Path(checkpoint).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file() and (path / PRETRAINED_SUBFOLDER / "config.json").is_file():
            path = path / PRETRAINED_SUBFOLDER   # a lerobot-train checkpoint folder (checkpoints/<step>/)
        return path.resolve()
    if path.exists():
        raise ValueError(f"policy lerobot:{checkpoint} is a file; expected a LeRobot checkpoint folder")
    if _REPO_ID.match(checkpoint):
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        try:   # the local Hub cache only: a rollout never downloads behind the user's back
            return Path(snapshot_download(checkpoint, local_files_only=True))
        except LocalEntryNotFoundError:
            raise ValueError(f"policy lerobot:{checkpoint}: no such folder, and no Hub repo of that id in the local "
                             f"cache (download it first: hf download {checkpoint})") from None
    raise ValueError(f"policy lerobot:{checkpoint}: no such folder")


def _check_features(name: str, config: dict[str, Any]) -> None:
    inputs = config.get("input_features") or {}
    known = [image_key(c) for c in CAMERAS]
    for key, feature in inputs.items():
        kind, shape = feature.get("type"), tuple(feature.get("shape") or ())
        if kind == "VISUAL" and key not in known:
            raise ValueError(f"policy {name} reads image {key!r}, which the simulator does not render; its cameras "
                             f"are {', '.join(known)} (the keys of `bspatial demos`)")
        if key == STATE_KEY and shape != (STATE_DIM,):
            raise ValueError(f"policy {name} reads {STATE_KEY} of shape {shape}; the simulator's state has "
                             f"({STATE_DIM},) (bspatial.catalog.schema.PROPRIO_LAYOUT)")
        if kind != "VISUAL" and key != STATE_KEY:
            logger.warning("policy %s lists input %r, which the simulator does not provide; a policy that reads it "
                           "will fail", name, key)
    action = tuple(((config.get("output_features") or {}).get(ACTION_KEY) or {}).get("shape") or ())
    if action != (ACTION_DIM,):
        raise ValueError(f"policy {name} outputs action of shape {action}; the robot takes ({ACTION_DIM},) "
                         "(bspatial.catalog.schema.ACTION_SLICES)")


def _check_device(name: str, device: str) -> None:
    kind = device.split(":")[0]
    if kind == "cpu":
        return
    import torch

    available = {"cuda": torch.cuda.is_available(),
                 "mps": getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()}
    if not available.get(kind, False):
        raise ValueError(f"policy {name} runs on device {device!r}, which this machine lacks; add #device=cpu")


def resolve(target: str) -> LeRobotSpec:
    """The checked checkpoint of a ``lerobot:`` target (no torch unless the device needs checking).

    Raises:
        ValueError: naming the spec and what is wrong (no folder, not a LeRobot checkpoint, a missing file,
            images / state / action the simulator does not have, a history policy under the chunk controller,
            an absent device).
    """
    checkpoint, select, device = parse_target(target)
    folder = _resolve_folder(checkpoint)
    name = f"lerobot:{checkpoint}"
    missing = [f for f in CHECKPOINT_FILES if not (folder / f).is_file()]
    if missing:
        raise ValueError(f"policy {name} is not a LeRobot policy checkpoint: {folder} lacks {', '.join(missing)} "
                         "(what lerobot-train saves in pretrained_model/)")
    try:
        config = json.loads((folder / "config.json").read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"policy {name}: config.json is not JSON ({error})") from None
    if not isinstance(config, dict) or not config.get("type"):
        raise ValueError(f"policy {name}: config.json has no policy 'type' (got keys "
                         f"{sorted(config) if isinstance(config, dict) else type(config).__name__}); not a LeRobot policy")
    _check_features(name, config)
    if not select and int(config.get("n_obs_steps", 1)) > 1:
        raise ValueError(f"policy {name} ({config['type']}) reads a history of n_obs_steps={config['n_obs_steps']} "
                         f"observations, which the chunk controller does not keep; run it with its own queue: "
                         f"lerobot:{checkpoint}#{SELECT_ACTION}")
    if not select and _horizon(config) is None:
        raise ValueError(f"policy {name} ({config['type']}) declares no action chunk (chunk_size / n_action_steps); "
                         f"run it with lerobot:{checkpoint}#{SELECT_ACTION}")
    _check_device(name, device or str(config.get("device") or "cpu"))
    return LeRobotSpec(folder, select, device)


def check_spec(target: str) -> str:
    """The normalised target (absolute folder, options) of a ``lerobot:`` spec, checked before any episode."""
    return str(resolve(target))


def _horizon(config: dict[str, Any]) -> int | None:
    """Rows of ``predict_action_chunk``'s output: ``chunk_size`` (ACT, pi0, pi0.5, SmolVLA) or, for diffusion,
    whose chunk is cut to the executed steps, ``n_action_steps``."""
    value = config.get("chunk_size") or config.get("n_action_steps")
    return int(value) if value else None


class PolicyInputs:
    """The env side of a policy's inputs, built without its weights: the cameras it reads, and the observation as
    lerobot-eval hands it to a policy's own preprocessor (a batch of one)."""

    def __init__(self, spec: LeRobotSpec) -> None:
        import lerobot.policies  # noqa: F401  (registers the policy config types from_pretrained looks up)
        from lerobot.configs.policies import PreTrainedConfig

        from bspatial.evaluation.envs.lerobot_env import env_preprocessor

        self.config = PreTrainedConfig.from_pretrained(str(spec.folder))
        self.cameras = tuple(c for c in CAMERAS if image_key(c) in self.config.image_features)
        self.env_preprocessor = env_preprocessor(self.cameras)
        self.horizon = _horizon(json.loads((spec.folder / "config.json").read_text()))

    def __call__(self, observation, backend) -> dict[str, Any]:
        from lerobot.envs.utils import preprocess_observation

        from bspatial.evaluation.envs.env import env_observation

        frames = {cam: (observation.images.get(cam) or backend.render(cam, rgb_only=True)).rgb for cam in self.cameras}
        batch = preprocess_observation(env_observation(frames, observation.state.proprio))
        batch["task"] = [observation.instruction]
        return self.env_preprocessor(batch)


class LoadedPolicy:
    """A LeRobot policy with its saved processors, ready to map our observations to actions."""

    def __init__(self, spec: LeRobotSpec) -> None:
        import torch
        from lerobot.policies.factory import get_policy_class, make_pre_post_processors

        self.spec, folder = spec, str(spec.folder)
        self.inputs = PolicyInputs(spec)
        config = self.inputs.config
        if spec.device:
            config.device = spec.device
        config.pretrained_path = Path(folder)
        self.torch, self.config = torch, config
        self.policy = get_policy_class(config.type).from_pretrained(folder, config=config)
        self.policy.to(config.device).eval()
        saved = json.loads((spec.folder / "policy_preprocessor.json").read_text())
        overrides = ({"device_processor": {"device": str(config.device)}}   # as lerobot-eval: run where the model is
                     if any(s.get("registry_name") == "device_processor" for s in saved.get("steps", [])) else {})
        self.preprocessor, self.postprocessor = make_pre_post_processors(
            config, pretrained_path=folder, preprocessor_overrides=overrides)
        self.cameras, self.horizon = self.inputs.cameras, self.inputs.horizon

    @property
    def model(self):
        """The loaded network (what a batching server touches on start: loaded already)."""
        return self.policy

    def batch(self, observation, backend) -> dict[str, Any]:
        """The policy's inputs for ``observation``, built as lerobot-eval builds them from the env."""
        return self.preprocessor(self.inputs(observation, backend))

    def actions(self, action) -> np.ndarray:
        """Robot-unit actions (float32, as lerobot-eval hands them to the env) of a normalised policy output."""
        return self.postprocessor(action).to("cpu").numpy()[0]

    def infer_batch(self, raws: list[dict[str, Any]], noises: list[Any]) -> list[np.ndarray]:
        """One chunk per :class:`PolicyInputs` batch of one, in one ``predict_action_chunk`` call: what a batching
        server runs (:mod:`bspatial.evaluation.rollout.batching`). ``noises`` are unused: a LeRobot policy draws
        its own (see :func:`batch_refusal`)."""
        torch = self.torch
        batch = {key: _collate([raw[key] for raw in raws], torch) for key in raws[0]}
        with torch.inference_mode():
            chunks = self.postprocessor(self.policy.predict_action_chunk(self.preprocessor(batch))).to("cpu").numpy()
        return [chunks[i] for i in range(len(raws))]


def _collate(values: list[Any], torch) -> Any:
    """One key of several batches of one: tensors stacked on the batch axis, the instructions' lists joined; the
    transition's other fields (``action`` None, ``next.reward`` 0.0, ``info``: the same in every request at
    inference) taken from the first."""
    if isinstance(values[0], torch.Tensor):
        return torch.cat(values)
    if isinstance(values[0], list):
        return sum(values, [])
    return values[0]


_LOADED: dict[str, LoadedPolicy] = {}   # one loaded checkpoint per process and spec


class LeRobotChunkPredictor:
    """``observation -> (horizon, 23)`` chunk for :class:`~bspatial.evaluation.rollout.controller.ChunkedPolicy`."""

    def __init__(self, loaded: LoadedPolicy, backend) -> None:
        self.loaded, self.backend = loaded, backend

    def __call__(self, observation) -> np.ndarray:
        return self.infer(self.prepare(observation))

    def prepare(self, observation) -> dict[str, Any]:
        """Renders and preprocesses (simulator thread)."""
        return self.loaded.batch(observation, self.backend)

    def infer(self, inputs: dict[str, Any]) -> np.ndarray:
        """The model only (may run on a worker thread while the simulator steps)."""
        with self.loaded.torch.inference_mode():
            return self.loaded.actions(self.loaded.policy.predict_action_chunk(inputs))


class LeRobotStepPolicy:
    """The policy's own ``select_action`` every step (``#select_action``): what lerobot-eval executes."""

    def __init__(self, loaded: LoadedPolicy, backend) -> None:
        self.loaded, self.backend = loaded, backend
        self.inference_ms: list[float] = []   # each select_action (a queue pop or a chunk prediction)

    def __call__(self, observation) -> np.ndarray:
        from bspatial.evaluation.rollout.timing import timed_call

        batch = self.loaded.batch(observation, self.backend)
        with self.loaded.torch.inference_mode():
            return self.loaded.actions(timed_call(self.loaded.policy.select_action, self.inference_ms)(batch))


class ServedChunkPredictor:
    """The chunk controller's predictor when a batching server holds the policy: the worker builds the env-side
    inputs (renders) and the server answers the chunk (:mod:`bspatial.evaluation.rollout.batching`)."""

    def __init__(self, inputs: PolicyInputs, backend, client) -> None:
        self.inputs, self.backend, self.client = inputs, backend, client

    def __call__(self, observation) -> np.ndarray:
        return self.infer(self.prepare(observation))

    def prepare(self, observation) -> dict[str, Any]:
        return self.inputs(observation, self.backend)

    def infer(self, inputs: dict[str, Any]) -> np.ndarray:
        return self.client.infer(inputs, None)[0]   # (chunk, point): a lerobot policy has no pointing head


_INPUTS: dict[str, PolicyInputs] = {}   # a batched run's workers: the env side only, per process and spec

DETERMINISTIC_TYPES: tuple[str, ...] = ("act",)
"""LeRobot policy types whose ``predict_action_chunk`` draws no noise at inference (ACT: its VAE is not sampled
at inference): their batched rollouts are the unbatched ones."""


def batch_refusal(target: str) -> str | None:
    """Why ``target`` (normalised) cannot be served in batches, or None.

    ``#select_action`` is refused: its action queue belongs to one episode and one policy object, while a batching
    server serves one policy to every worker's episodes, each at its own step. A policy that samples (diffusion,
    pi0 / pi0.5, SmolVLA) is served, with a warning: its noise then comes from the server's generator, drawn in
    the order requests arrive, not from each episode's seed."""
    spec = resolve(target)
    if spec.select_action:
        return (f"policy lerobot:{target} runs its own select_action (one action queue per episode); batched "
                "inference serves the chunk controller: drop #select_action")
    kind = json.loads((spec.folder / "config.json").read_text())["type"]
    if kind not in DETERMINISTIC_TYPES:
        logger.warning("policy lerobot:%s (%s) samples its actions: batched, its noise comes from the server's "
                       "generator in arrival order, so episodes are reproducible only unbatched", target, kind)
    return None


def load_batch_predictor(target: str) -> LoadedPolicy:
    """What a batching server holds for ``target``: the loaded policy (its :meth:`LoadedPolicy.infer_batch`)."""
    loaded = LoadedPolicy(resolve(target))
    loaded.torch.manual_seed(0)   # a sampling policy's server-side noise: seeded, though not per episode
    return loaded


def make_policy(target: str, backend, instance, settings, inference=None):
    """The per-step policy of one episode (``instance`` loaded into ``backend``); ``target`` is normalised.
    ``inference`` (a :class:`~bspatial.evaluation.rollout.batching.ServerAddress`): the chunks come from that
    server, and this process never loads the weights."""
    from bspatial.evaluation.rollout.controller import ChunkedPolicy

    if inference is not None:
        from bspatial.evaluation.rollout.batching import InferenceClient

        if target not in _INPUTS:
            _INPUTS[target] = PolicyInputs(resolve(target))
        inputs = _INPUTS[target]
        return ChunkedPolicy(ServedChunkPredictor(inputs, backend, InferenceClient.of(inference)),
                             backend.hold_action(), latency_steps=settings.latency_steps, threaded=settings.threaded,
                             horizon=inputs.horizon, action_dim=ACTION_DIM)
    if target not in _LOADED:   # checked by check_spec before the run; loaded once per process
        _LOADED[target] = LoadedPolicy(resolve(target))
    loaded = _LOADED[target]
    spec = loaded.spec
    loaded.policy.reset()   # clears action queues / observation history, as lerobot-eval does per rollout
    loaded.torch.manual_seed(episode_noise_seed(settings.seed, instance.seed))
    if spec.select_action:
        if settings.latency_steps or settings.threaded:
            raise ValueError(f"policy lerobot:{target} runs its own select_action; --latency-steps / --threaded "
                             "apply to the chunk controller only")
        return LeRobotStepPolicy(loaded, backend)
    return ChunkedPolicy(LeRobotChunkPredictor(loaded, backend), backend.hold_action(),
                         latency_steps=settings.latency_steps, threaded=settings.threaded,
                         horizon=loaded.horizon, action_dim=ACTION_DIM)


__all__ = ["CHECKPOINT_FILES", "DETERMINISTIC_TYPES", "SELECT_ACTION", "LeRobotSpec", "batch_refusal", "check_spec",
           "load_batch_predictor", "make_policy", "parse_target", "resolve"]


def protocol(target: str) -> str:
    """``select_action`` with ``#select_action``, else the chunk controller (:data:`~bspatial.evaluation.rollout.
    policies.PROTOCOLS`)."""
    return "select_action" if parse_target(target)[1] else "chunk_controller"
