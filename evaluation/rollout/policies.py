"""The policies a rollout can run: the scripted experts, the random reference, and BSpatialVLA checkpoints.

``policy_spec`` is ``"scripted"`` (the privileged experts of :mod:`bspatial.tasks.experts`; navigation: the
grid-A* expert), ``"random"`` (uniform joint targets and small base velocities, redrawn every
:data:`RANDOM_HOLD_STEPS` steps, seeded per episode), ``"hold"`` (never moves), one of
:data:`REFERENCE_BEHAVIOURS` (:mod:`bspatial.tasks.experts.references`) or a checkpoint folder (model +
processor driven through the Appendix 16.3 controller; IR checkpoints get their IR image from the run's IR
source, :mod:`bspatial.evaluation.rollout.ir`; navigation checkpoints the episode's scene-context frames,
:mod:`bspatial.evaluation.rollout.context`), or another ecosystem's policy (:data:`EXTERNAL_POLICIES`:
``lerobot:<checkpoint>``, ``openpi:ws://host:port``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from bspatial.catalog.schema import CONTROL_HZ, STATE_KEY, TASK_KEY, image_key
from bspatial.evaluation.rollout.plan import RunSettings, episode_noise_seed, episode_rng
from bspatial.sim.backend import SimBackend


REFERENCE_BEHAVIOURS: tuple[str, ...] = ("scripted-wrong", "scripted-memorizer", "scripted-stops-short")
"""Expert-built references of the action metrics (:mod:`bspatial.tasks.experts.references`; manipulation only):
a distractor pursued, the training layout's target pursued, the instructed target approached without committing."""
POLICY_KINDS: tuple[str, ...] = ("scripted", "random", "hold", *REFERENCE_BEHAVIOURS)
"""Built-in policies (``hold``: the robot never moves, the lower reference of the soft rules); any other spec
must be a BSpatialVLA checkpoint folder."""
EXTERNAL_POLICIES: dict[str, str] = {
    "lerobot": "bspatial.evaluation.envs.policy_lerobot",   # lerobot:<checkpoint folder>
    "openpi": "bspatial.evaluation.serving.policy_openpi",     # openpi:ws://<host>:<port>
    "replay": "bspatial.evaluation.rollout.policy_replay",     # replay:<demos folder> (the replay check)
}
"""``<kind>:<target>`` specs: policies of other ecosystems (and the demonstrations' replay), one module per kind,
imported by name only when used: the LeRobot and openpi adapters live with the env and the server they mirror
(``envs``, ``serving``, which build on this package), so this registry is the rollout's only tie to them. Each module provides ``check_spec(target) -> str`` (the normalised target; ``ValueError``
naming what is wrong, before any episode), ``make_policy(target, backend, instance, settings)`` (the per-step
policy) and ``protocol(target) -> str`` (one of :data:`PROTOCOLS`)."""
PROTOCOLS: tuple[str, ...] = ("chunk_controller", "select_action", "per_step")
"""How a policy's outputs become the executed actions (the ``protocol`` of every result record):

* ``chunk_controller``: the Appendix 16.3 controller (:class:`~bspatial.evaluation.rollout.controller.ChunkedPolicy`:
  a 32-step chunk per plan, replanning 10 steps before it runs out, ensembling up to 3 committed plans, the gripper
  from the newest plan); our checkpoints, openpi servers and LeRobot policies by default. **The benchmark's tables
  use this one**: it is the paper's (Appendix 16.3), it treats every chunk policy alike whatever its own runtime,
  and it is what a robot runs when inference is slower than control;
* ``select_action``: a LeRobot policy's own ``select_action`` every step (its action queue or temporal ensembling),
  what ``lerobot-eval`` executes (``lerobot:<ckpt>#select_action``), to reproduce a lerobot-eval number;
* ``per_step``: a callable that chooses every step's action itself (scripted experts, references, random, hold,
  a replayed demonstration)."""
CHECKPOINT_MODEL_TYPE = "bspatial_vla"
"""``model_type`` in a checkpoint's config.json (``BSpatialVLAConfig.model_type``)."""
RANDOM_BASE_SPEED_M_S = 0.1
"""Random policy: |vx|, |vy| bound (m/s); small next to the 1.0 m/s base limit (bspatial.sim.robot.BASE_MAX_SPEED)."""
RANDOM_YAW_RATE_RAD_S = 0.2
"""Random policy: |wz| bound (rad/s)."""
RANDOM_HOLD_STEPS = 15
"""Random policy: a drawn target is held this many steps (0.5 s at 30 Hz) so the PD joints can follow it."""
RANDOM_JOINT_SPEED_RAD_S = 0.5
"""Random policy: commanded joint positions move towards the drawn target at most this fast."""


def check_policy_spec(policy_spec: str) -> str:
    """A built-in policy (:data:`POLICY_KINDS`) or a BSpatialVLA checkpoint folder, checked before any episode.

    Raises:
        ValueError: naming the spec and why it is not a policy (no such folder, no config.json, another
            model type); every episode of such a run would crash.
    """
    if policy_spec in POLICY_KINDS:
        return policy_spec
    external = _external(policy_spec)
    if external is not None:
        kind, module, target = external
        return f"{kind}:{module.check_spec(target)}"
    path = Path(policy_spec)
    known = (f"known policy specs: {', '.join(POLICY_KINDS)}, {', '.join(f'{k}:...' for k in EXTERNAL_POLICIES)}, "
             "or a BSpatialVLA checkpoint folder")
    if (kind := _lerobot_type(path)) is not None:   # a LeRobot checkpoint runs through the lerobot: kind
        known = f"it is a LeRobot {kind!r} policy checkpoint: run it as lerobot:{policy_spec}; {known}"
    if not (path / "config.json").is_file():
        why = "no such folder" if not path.exists() else "no config.json in it"
        raise ValueError(f"policy {policy_spec!r} is not a behavior-spatial checkpoint ({why}); {known}")
    try:
        model_type = json.loads((path / "config.json").read_text()).get("model_type")
    except (json.JSONDecodeError, AttributeError) as error:
        raise ValueError(f"policy {policy_spec!r}: config.json is not a JSON object ({error}); {known}") from None
    if model_type != CHECKPOINT_MODEL_TYPE:
        raise ValueError(f"policy {policy_spec!r} is not a behavior-spatial checkpoint (config.json model_type="
                         f"{model_type!r}, expected {CHECKPOINT_MODEL_TYPE!r}); {known}")
    return str(path.resolve())


def _lerobot_type(path: Path) -> str | None:
    """LeRobot's policy ``type`` in the config.json of ``path`` (or of lerobot-train's ``<step>/pretrained_model/``)."""
    for config in (path / "config.json", path / "pretrained_model" / "config.json"):
        try:
            kind = json.loads(config.read_text()).get("type")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(kind, str) and kind:
            return kind
    return None


def _external(policy_spec: str):
    """``(kind, module, target)`` of an :data:`EXTERNAL_POLICIES` spec, else None."""
    kind, sep, target = policy_spec.partition(":")
    if not sep or kind not in EXTERNAL_POLICIES:
        return None
    import importlib

    return kind, importlib.import_module(EXTERNAL_POLICIES[kind]), target


def policy_protocol(policy_spec: str) -> str:
    """The :data:`PROTOCOLS` entry of a checked policy spec.

    Example:
        >>> policy_protocol("scripted"), policy_protocol("/runs/ckpt"), policy_protocol("replay:/data/demos")
        ('per_step', 'chunk_controller', 'per_step')
    """
    if policy_spec in POLICY_KINDS:
        return "per_step"
    external = _external(policy_spec)
    if external is not None:
        _, module, target = external
        return module.protocol(target)
    return "chunk_controller"


def checkpoint_ir_mode(policy_spec: str) -> str:
    """``config.ir_mode`` of a checkpoint folder read from its config.json (no torch); "none" for built-ins
    and external policies (they get no IR image from the run)."""
    if policy_spec in POLICY_KINDS or _external(policy_spec) is not None:
        return "none"
    config = json.loads((Path(policy_spec) / "config.json").read_text())
    return str(config.get("ir_mode", "none"))


def resolve_ir(policy_spec: str, split: str, ir: str | None = None, ir_model: str | None = None):
    """The run's :class:`~bspatial.evaluation.rollout.ir.IRSettings`, checked against the policy and split.

    ``ir=None`` means: ``"oracle"`` for an IR checkpoint on a manipulation split, ``"none"`` otherwise.
    Only IR checkpoints take an IR source, and navigation has no IR target (the paper's navigation policy
    has no IR variant); an explicit source for anything else is refused.

    Raises:
        ValueError: naming the bad field and value.
    """
    from bspatial.evaluation.rollout.ir import IR_CHECKPOINT_MODES, IRSettings
    from bspatial.evaluation.vlm.backends import parse_spec

    takes_ir = checkpoint_ir_mode(policy_spec) in IR_CHECKPOINT_MODES and split != "navigation"
    if ir is None:
        ir = "oracle" if takes_ir else "none"
    settings = IRSettings(ir, ir_model)
    if settings.source != "none" and not takes_ir:
        why = ("navigation tasks have no IR target" if split == "navigation" else
               f"policy {policy_spec!r} has no IR image slot (ir_mode={checkpoint_ir_mode(policy_spec)!r})")
        raise ValueError(f"ir={settings.source!r} needs a checkpoint with ir_mode in {IR_CHECKPOINT_MODES} on a "
                         f"manipulation split; {why}")
    if settings.model is not None:
        parse_spec(settings.model)  # an unknown backend kind is refused before any simulator starts
    return settings


class RandomPolicy:
    """Uniform joint targets within the limits, uniform grippers, small base velocities; seeded.

    Each drawn target is held :data:`RANDOM_HOLD_STEPS` steps; the commanded joint positions move towards
    it at :data:`RANDOM_JOINT_SPEED_RAD_S` from the robot's joint positions at the first step (a jump
    straight to a random target would fling the arms through the scene in a few steps).
    """

    def __init__(self, rng: np.random.Generator) -> None:
        from bspatial.catalog.schema import ACTION_DIM, ACTION_SLICES
        from bspatial.sim.robot import ARM_RANGE, TORSO_RANGE

        low, high = np.empty(ACTION_DIM), np.empty(ACTION_DIM)
        base = np.array([RANDOM_BASE_SPEED_M_S, RANDOM_BASE_SPEED_M_S, RANDOM_YAW_RATE_RAD_S])
        low[ACTION_SLICES["base"]], high[ACTION_SLICES["base"]] = -base, base
        low[ACTION_SLICES["torso"]], high[ACTION_SLICES["torso"]] = np.array(TORSO_RANGE).T
        for side in ("left", "right"):
            low[ACTION_SLICES[f"{side}_arm"]], high[ACTION_SLICES[f"{side}_arm"]] = np.array(ARM_RANGE).T
            low[ACTION_SLICES[f"{side}_gripper"]], high[ACTION_SLICES[f"{side}_gripper"]] = -1.0, 1.0
        self.joints = np.zeros(ACTION_DIM, dtype=bool)
        for part in ("torso", "left_arm", "right_arm"):
            self.joints[ACTION_SLICES[part]] = True
        self.slices = ACTION_SLICES
        self.rng, self.low, self.high = rng, low, high
        self.target: np.ndarray | None = None
        self.command: np.ndarray | None = None

    def __call__(self, observation) -> np.ndarray:
        if self.command is None:
            state, s = observation.state, self.slices
            self.command = np.zeros_like(self.low)
            self.command[s["torso"]] = state.torso_qpos
            self.command[s["left_arm"]], self.command[s["right_arm"]] = state.left_arm_qpos, state.right_arm_qpos
        if self.target is None or observation.step % RANDOM_HOLD_STEPS == 0:
            self.target = self.rng.uniform(self.low, self.high)
        step = RANDOM_JOINT_SPEED_RAD_S / CONTROL_HZ
        j = self.joints
        self.command[j] += np.clip(self.target[j] - self.command[j], -step, step)
        self.command[~j] = self.target[~j]
        return self.command.copy()


class CheckpointPredictor:
    """A BSpatialVLA checkpoint + processor: observation -> (32, 23) chunk in robot units.

    The state is the backend's proprioceptive vector (:data:`bspatial.catalog.schema.PROPRIO_LAYOUT`); the
    cameras are ``config.camera_names``, rendered only when a chunk is requested.
    """

    def __init__(self, path: str) -> None:
        import torch
        from transformers import AutoConfig, AutoProcessor

        import bspatial.modeling  # noqa: F401  (registers the auto classes)
        from bspatial.catalog.schema import STATE_DIM

        self.torch, self.path = torch, path
        config = AutoConfig.from_pretrained(path)
        self.processor = AutoProcessor.from_pretrained(path)
        if config.state_dim != STATE_DIM:
            raise ValueError(f"checkpoint {path!r} has state_dim={config.state_dim}; the simulator's proprioceptive "
                             f"state has {STATE_DIM} dims")
        self.cameras = list(config.camera_names)
        self.ir_mode, self.anchor = config.ir_mode, bool(config.first_frame_anchor)
        # The IR cue is drawn on the camera the processor draws it on (saved with the checkpoint).
        self.ir_camera = self.processor.ir_source_camera
        # ... with the radius it draws it with (saved with the processor; older checkpoints: the paper's).
        self.ir_dot_radius = self.processor.ir_dot_radius
        # Navigation policies (Section 4.1) take the episode's scene-context frames in every batch.
        self.max_context_frames = int(getattr(config, "max_context_frames", 0))
        self.horizon, self.action_dim = config.chunk_size, config.action_dim
        self.generator = torch.Generator()
        self.last_batch: dict[str, Any] | None = None  # the raw inputs of the latest chunk (logs, tests)
        self._model = None

    @property
    def model(self):
        """The network, loaded at its first use: a rollout worker whose inference is served elsewhere
        (:mod:`bspatial.evaluation.rollout.batching`) builds inputs only and never loads the weights."""
        if self._model is None:
            from transformers import AutoModel

            self._model = AutoModel.from_pretrained(self.path).eval()
        return self._model

    def reseed(self, seed: int) -> None:
        self.generator.manual_seed(int(seed))

    def _image(self, rgb: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(rgb)).permute(2, 0, 1)[None]

    def __call__(self, observation, render: Callable[[str], Any], ir=None, context=None) -> np.ndarray:
        """One chunk from ``observation``; ``ir`` (an :class:`~bspatial.evaluation.rollout.ir.IRConditioner`)
        is required by IR checkpoints and adds ``observation.images.ir`` (and ``.anchor``); ``context``
        (the episode's ``(1, K, 3, H, W)`` uint8 frames, :func:`~bspatial.evaluation.rollout.context.episode_context`)
        is required by checkpoints with ``max_context_frames > 0``."""
        return self.infer(self.prepare(observation, render, ir, context))

    def prepare(self, observation, render: Callable[[str], Any], ir=None, context=None) -> dict[str, Any]:
        """The model inputs of ``observation``: renders cameras and the IR image (simulator thread only)."""
        return self.processor(self.raw_inputs(observation, render, ir, context))

    def raw_inputs(self, observation, render: Callable[[str], Any], ir=None, context=None) -> dict[str, Any]:
        """The processor's inputs of ``observation`` (a batch of one: state, instruction, uint8 images)."""
        from bspatial.modeling.processing_bspatial_vla import CONTEXT_IMAGE_KEY

        torch = self.torch
        batch: dict[str, Any] = {STATE_KEY: torch.as_tensor(observation.state.proprio, dtype=torch.float32)[None],
                                 TASK_KEY: observation.instruction}
        frames = {}
        for cam in self.cameras:
            frames[cam] = observation.images.get(cam) or render(cam)
            batch[image_key(cam)] = self._image(frames[cam].rgb)
        if self.ir_mode != "none":
            if ir is None:
                raise ValueError(f"checkpoint has ir_mode={self.ir_mode!r}: an IR conditioner is required")
            for name, image in ir.images(frames[self.ir_camera]).items():
                batch[f"observation.images.{name}"] = self._image(image)
        if self.max_context_frames:
            if context is None:   # never context-free: the policy was trained with the frames
                raise ValueError(f"checkpoint has max_context_frames={self.max_context_frames}: the episode's "
                                 f"scene-context frames are required")
            batch[CONTEXT_IMAGE_KEY] = context
        elif context is not None:
            raise ValueError("context frames given for a checkpoint with max_context_frames=0")
        self.last_batch = batch
        return batch

    def infer(self, inputs: dict[str, Any]) -> np.ndarray:
        """(horizon, action_dim) chunk in robot units from :meth:`prepare`'s inputs; touches no simulator
        state, so it may run in another thread while the simulator steps."""
        normalized = self.model.sample_actions(inputs, generator=self.generator)
        return self.processor.unnormalize_actions(normalized, inputs["state"])[0].numpy()

    def point(self, inputs: dict[str, Any]) -> list[float] | None:
        """The pointing head's point (``config.predicts_point``) for :meth:`prepare`'s inputs, as ``[x, y]`` on the
        IR prompt's 0-1000 scale of the image the head was trained to point in (:attr:`ir_camera`'s); None for a
        checkpoint without the head. One more VLM pass: the rollout asks it on the episode's first chunk only."""
        from bspatial.modeling.modeling_bspatial_vla import PREFIX_KEYS
        from bspatial.modeling.ir_rendering import IR_IMAGE_SIZE
        from bspatial.scoring.point import POINT_SCALE

        if not self.model.config.predicts_point:
            return None
        with self.torch.no_grad():
            point = self.model.encode_prefix(*(inputs.get(k) for k in PREFIX_KEYS)).point
        pixels = self.processor.point_pixels(point[0].float().numpy())
        return [round(float(v) / IR_IMAGE_SIZE * POINT_SCALE, 2) for v in pixels]

    def draw_noise(self):
        """The flow-matching noise :meth:`infer` would draw next (this episode's generator, one chunk)."""
        return self.torch.randn((1, self.horizon, self.action_dim), generator=self.generator,
                                dtype=self.torch.float32)

    def infer_batch(self, raws: Sequence[dict[str, Any]], noises: Sequence[Any]) -> list[np.ndarray]:
        """One chunk per (raw inputs, noise) pair, in one forward pass: the raw batches of one are collated (the
        processor pads the instructions), the noises stacked. What a batching server runs
        (:mod:`bspatial.evaluation.rollout.batching`)."""
        torch = self.torch
        batch: dict[str, Any] = {}
        for key in raws[0]:
            values = [raw[key] for raw in raws]
            batch[key] = list(values) if key == TASK_KEY else torch.cat(values)
        inputs = self.processor(batch)
        normalized = self.model.sample_actions(inputs, noise=torch.cat(list(noises)))
        chunks = self.processor.unnormalize_actions(normalized, inputs["state"]).numpy()
        return [chunks[i] for i in range(len(raws))]


_PREDICTORS: dict[str, CheckpointPredictor] = {}  # one loaded checkpoint per process


class FirstPoint:
    """The pointing head's point on an episode's first observation, ``{"camera", "xy"}`` on the 0-1000 scale: the
    record's "pointed", the policy's own grounding on the frame its episode-aligned IR item shows. One per episode,
    for local and batched inference alike (:class:`EpisodePredictor`, ``batching.RemoteEpisodePredictor``)."""

    def __init__(self, camera: str) -> None:
        self.camera = camera
        self.pointed: dict[str, Any] | None = None
        self._asked = False

    def ask(self) -> bool:
        """True for the episode's first chunk request (the one whose point is kept), False after."""
        first, self._asked = not self._asked, True
        return first

    def keep(self, xy: list[float] | None) -> None:
        """Keep the head's point (None: a checkpoint without the head, nothing to keep)."""
        if xy is not None:
            self.pointed = {"camera": self.camera, "xy": xy}


class EpisodePredictor:
    """``observation -> chunk`` for one episode: the shared checkpoint, this episode's renderer and IR.

    Attributes:
        predictor: the process's :class:`CheckpointPredictor`.
        conditioner: the episode's :class:`~bspatial.evaluation.rollout.ir.IRConditioner` (IR checkpoints), else None.
        context: the episode's ``(1, K, 3, H, W)`` uint8 scene-context frames (checkpoints with
            ``max_context_frames > 0``), rendered once and fed with every chunk request; else None.
    """

    def __init__(self, predictor: CheckpointPredictor, backend: SimBackend, conditioner=None, context=None) -> None:
        self.predictor, self.backend, self.conditioner, self.context = predictor, backend, conditioner, context
        self.first_point = FirstPoint(predictor.ir_camera)

    @property
    def pointed(self) -> dict[str, Any] | None:
        return self.first_point.pointed

    def render(self, camera: str):
        """A policy camera: RGB only (a policy reads no depth or segmentation; one render pass, the same pixels)."""
        return self.backend.render(camera, rgb_only=True)

    def __call__(self, observation) -> np.ndarray:
        return self.infer(self.prepare(observation))

    def prepare(self, observation) -> dict[str, Any]:
        return self.predictor.prepare(observation, self.render, self.conditioner, self.context)

    def infer(self, inputs: dict[str, Any]) -> np.ndarray:
        if self.first_point.ask():
            self.first_point.keep(self.predictor.point(inputs))
        return self.predictor.infer(inputs)


def make_policy(policy_spec: str, backend: SimBackend, instance, settings: RunSettings = RunSettings(), *,
                training_variant: str = "", inference=None):
    """The per-step policy for one episode (``instance`` already loaded into ``backend``, the world reset).

    ``settings.ir`` (:class:`~bspatial.evaluation.rollout.ir.IRSettings`, default no IR) conditions IR checkpoints;
    ``training_variant`` (the manifest's) is what ``scripted-memorizer`` pursues. ``inference`` (a
    :class:`~bspatial.evaluation.rollout.batching.ServerAddress`) has a checkpoint's chunks computed by that server.
    """
    from bspatial.evaluation.rollout.ir import NO_IR, make_conditioner
    from bspatial.tasks.perturbations import split_condition

    ir = NO_IR if settings.ir is None else settings.ir
    language = split_condition(settings.condition)[0]
    if policy_spec == "hold" or (policy_spec == "scripted" and language == "no_intervention"):
        # Never moves: the spawn pose is commanded at every step. (The privileged expert knows that a
        # no-intervention goal already holds: its reference behaviour is to stay still.)
        hold = backend.hold_action()
        return lambda observation: hold.copy()
    if policy_spec == "scripted":
        from bspatial.tasks.experts import make_expert   # every family, navigation's grid-A* expert included
        return make_expert(backend, instance)
    if policy_spec == "random":
        return RandomPolicy(episode_rng(settings.seed, instance.seed))
    if policy_spec in REFERENCE_BEHAVIOURS:
        return _reference_behaviour(policy_spec, backend, instance, episode_rng(settings.seed, instance.seed), training_variant)
    external = _external(policy_spec)
    if external is not None:
        _, module, target = external
        if inference is not None:   # only kinds that serve batches get here (batch_refusal)
            return module.make_policy(target, backend, instance, settings, inference=inference)
        return module.make_policy(target, backend, instance, settings)
    from bspatial.evaluation.rollout.controller import ChunkedPolicy

    if policy_spec not in _PREDICTORS:
        _PREDICTORS[policy_spec] = CheckpointPredictor(policy_spec)
    predictor = _PREDICTORS[policy_spec]
    predictor.reseed(episode_noise_seed(settings.seed, instance.seed))
    conditioner = None
    if predictor.ir_mode != "none":
        # The wrong cue's target is drawn as scripted-wrong draws its goal: the same first draw of the episode's rng.
        conditioner = make_conditioner(ir, predictor.ir_mode, predictor.anchor, backend, instance,
                                       predictor.ir_dot_radius, episode_rng(settings.seed, instance.seed))
    elif ir.source != "none":
        raise ValueError(f"ir={ir.source!r} given for checkpoint {policy_spec!r}, which has ir_mode='none'")
    context = None
    if predictor.max_context_frames:
        from bspatial.evaluation.rollout.context import episode_context

        context = episode_context(backend, instance, predictor.max_context_frames)
    episode = EpisodePredictor(predictor, backend, conditioner, context)
    if inference is not None:
        from bspatial.evaluation.rollout.batching import InferenceClient, RemoteEpisodePredictor

        episode = RemoteEpisodePredictor(episode, InferenceClient.of(inference))
    else:
        predictor.model   # loaded before the episode: its first chunk's latency is inference, not loading
    return ChunkedPolicy(episode, backend.hold_action(), latency_steps=settings.latency_steps,
                         threaded=settings.threaded, horizon=predictor.horizon, action_dim=predictor.action_dim)


def batch_refusal(policy_spec: str) -> str | None:
    """Why a checked policy spec cannot have its inference served in batches
    (:mod:`bspatial.evaluation.rollout.batching`), or None: our checkpoints and ``lerobot:`` policies under the
    chunk controller can."""
    if policy_spec in POLICY_KINDS:
        return f"policy {policy_spec!r} is built in: it has no model to batch"
    external = _external(policy_spec)
    if external is None:
        return None
    kind, module, target = external
    if not hasattr(module, "batch_refusal"):
        return f"policy {policy_spec!r} ({kind}:) has no model in this process to batch" + (
            " (an openpi server batches on its own side)" if kind == "openpi" else "")
    return module.batch_refusal(target)


def load_batch_predictor(policy_spec: str):
    """What a batching server holds for a batchable spec: an object with ``model`` (the loaded weights) and
    ``infer_batch(raws, noises)``."""
    external = _external(policy_spec)
    if external is None:
        return CheckpointPredictor(policy_spec)
    _, module, target = external
    return module.load_batch_predictor(target)


def _reference_behaviour(policy_spec: str, backend: SimBackend, instance, rng: np.random.Generator,
                         training_variant: str):
    from bspatial.tasks.experts import make_expert
    from bspatial.tasks.experts.references import StopsShort, memorized_instance, wrong_target_instance

    if policy_spec == "scripted-stops-short":
        return StopsShort(backend, instance, make_expert(backend, instance))
    pursued = (wrong_target_instance(instance, rng) if policy_spec == "scripted-wrong"
               else memorized_instance(instance, training_variant))
    return make_expert(backend, pursued)
