"""Training configuration of BEHAVIOR-Spatial-VLA: Table S3's settings and the named presets.

The model config (:mod:`configuration_bspatial_vla`) describes architecture only; optimizer, schedule,
data and logging live here, in one explicit list of presets (:data:`PRESETS`).

Not remote code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from bspatial.catalog.schema import ACTION_DIM, ACTION_SLICES, CONTEXT_FRAMES, PROPRIO_SLICES, STATE_DIM
from bspatial.common.registry import by_name, lookup

# Table S3 common settings: AdamW betas (0.9, 0.95), no weight decay, clipping at 1.0, bf16 without
# EMA, 4k linear warmup steps, cosine schedule, action horizon 32.
ADAM_BETAS = (0.9, 0.95)
WEIGHT_DECAY = 0.0
GRAD_CLIP_NORM = 1.0
WARMUP_STEPS = 4000
BACKBONE = "Qwen/Qwen3.5-4B"  # paper Section 4
TINY_BACKBONE = "tiny"  # the offline random tiny Qwen3.5 of tiny_backbone (tests, demo)
SMALL_BACKBONE = "small"  # the offline random small Qwen3.5 of tiny_backbone (the CPU presets below)
# What trains in the VLM: nothing (the paper's baseline), LoRA adapters (+LoRA-VLM, Appendix C.1), or every
# weight ("full": ours, for backbones initialised from scratch, which a frozen VLM would leave random).
VLM_ADAPTERS = ("frozen", "lora", "full")
# What the prompt's task text is: the frame's instruction, or its episode's bare task name
# (bspatial.catalog.tasks.bare_task_name; the language-blanked reference policy).
INSTRUCTION_SOURCES = ("instruction", "task_name")
# The R1Pro actions that are joint-position targets and the state entries they command (R1Pro layouts):
# what a preset predicts relative to the state (``BSpatialVLAConfig.relative_action_dims``, openpi DeltaActions).
JOINT_ACTION_STATE = (("torso", "torso_qpos"), ("left_arm", "left_arm_qpos"), ("right_arm", "right_arm_qpos"))
RELATIVE_JOINT_DIMS = {
    "relative_action_dims": [i for a, _ in JOINT_ACTION_STATE for i in range(*ACTION_SLICES[a].indices(ACTION_DIM))],
    "relative_state_dims": [i for _, s in JOINT_ACTION_STATE for i in range(*PROPRIO_SLICES[s].indices(STATE_DIM))],
}
# Policy images are 224 x 224 (Appendix 13.3); Qwen's resize keeps 224 (7 x 32) unchanged.
POLICY_IMAGE_PIXELS = 224 * 224


@dataclass(frozen=True)
class TrainingConfig:
    """Optimisation, schedule, data and logging for one run (the model config is separate).

    Args:
        name: preset name.
        batch_size: global batch (all processes together) per optimiser step (Table S3).
        peak_lr: learning rate after warmup (Table S3).
        max_steps: total optimiser steps; the cosine schedule ends here (Table S3 "Checkpoint").
        warmup_steps: linear warmup from 0 to ``peak_lr``.
        adam_betas, weight_decay, grad_clip_norm: AdamW and clipping (Table S3).
        mixed_precision: ``"bf16"`` (Table S3) is used where the accelerator supports it, else fp32.
        backbone: Qwen3.5 checkpoint id / path, or ``"tiny"`` for the offline random tiny backbone.
        vlm_adapter: ``"frozen"`` (baseline), ``"lora"`` (+LoRA-VLM, Appendix C.1) or ``"full"`` (every VLM
            weight trains; for the offline backbones, which start random).
        expert_init: ``"fresh"`` or ``"checkpoint"`` (+DROID-style init: ``init_expert_from`` needed).
        model_overrides: ``BSpatialVLAConfig`` fields of the variant (e.g. ``ir_mode``).
        data_fraction: per-task fraction of episodes (1.0, or the nested 0.3 / 0.5 subsets).
        task_column: episode metadata column whose value defines a task for uniform sampling.
        save_every, log_every: checkpoint and logging periods in steps.
        num_workers: DataLoader worker processes.
        seed: seeds batches, noise, times, subsets and the model init.
        image_pixels: maximum pixels per image after Qwen's resize.
        instruction_source: ``"instruction"`` (each frame's instruction) or ``"task_name"`` (the episode's
            bare task name, ``bspatial.catalog.tasks.bare_task_name``: the language-blanked policy).
        state_dropout: share of training samples whose (normalised) state the expert sees as zeros, drawn per
            sample and step from the seed; 0 = never. Training only: the state is always given at inference.
            A regulariser against acting from the proprioceptive state alone (``CPU_REACH_NOTES``).
        instruction_dropout: share of training frames (a fixed, seeded set) whose instruction is the episode's bare
            task name, as the language-blanked policy sees every frame; 0 = never. Where the image carries the
            target (the dot of an IR policy), those frames can only be fitted by reading it (``CPU_REACH_NOTES``).
        cue_decoys: IR policies with pointing co-training: share of training frames (a fixed, seeded set) whose IR
            cue is drawn at a uniformly random pixel instead of the target; the point head learns to point at that
            cue and those frames' actions are left out of the flow-matching loss (they still show the demonstrated
            target). Where only the cue can tell where the point is, the pointing learns to read the cue
            (``CPU_REACH_NOTES``). 0 = never.
        cue_pretrain_steps: IR policies with the ``image_tokens`` pointing readout: steps of cue pretraining
            (``cue_pretraining.pretrain_cue``: the vision tower and the readout learn to point at a cue redrawn at
            random pixels) before the first policy step of a new run; 0 = none. Not counted in ``max_steps``.
    """

    name: str
    batch_size: int
    peak_lr: float
    max_steps: int
    warmup_steps: int = WARMUP_STEPS
    adam_betas: tuple[float, float] = ADAM_BETAS
    weight_decay: float = WEIGHT_DECAY
    grad_clip_norm: float = GRAD_CLIP_NORM
    mixed_precision: str = "bf16"
    backbone: str = BACKBONE
    vlm_adapter: str = "frozen"
    expert_init: str = "fresh"
    model_overrides: Mapping = field(default_factory=dict)
    data_fraction: float = 1.0
    task_column: str = "tasks"
    save_every: int = 5000
    log_every: int = 50
    num_workers: int = 4
    seed: int = 0
    image_pixels: int = POLICY_IMAGE_PIXELS
    instruction_source: str = "instruction"
    state_dropout: float = 0.0
    instruction_dropout: float = 0.0
    cue_decoys: float = 0.0
    cue_pretrain_steps: int = 0

    def __post_init__(self):
        for name in ("batch_size", "max_steps", "save_every", "log_every", "image_pixels"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.warmup_steps < 0 or self.num_workers < 0:
            raise ValueError(f"warmup_steps and num_workers must be >= 0, got {self.warmup_steps!r}, {self.num_workers!r}")
        if not self.peak_lr > 0:
            raise ValueError(f"peak_lr must be positive, got {self.peak_lr!r}")
        if self.vlm_adapter not in VLM_ADAPTERS:
            raise ValueError(f"vlm_adapter must be one of {VLM_ADAPTERS}, got {self.vlm_adapter!r}")
        if self.instruction_source not in INSTRUCTION_SOURCES:
            raise ValueError(f"instruction_source must be one of {INSTRUCTION_SOURCES}, "
                             f"got {self.instruction_source!r}")
        if self.expert_init not in ("fresh", "checkpoint"):
            raise ValueError(f"expert_init must be 'fresh' or 'checkpoint', got {self.expert_init!r}")
        if self.mixed_precision not in ("bf16", "no"):
            raise ValueError(f"mixed_precision must be 'bf16' or 'no', got {self.mixed_precision!r}")
        if not 0 <= self.state_dropout < 1:
            raise ValueError(f"state_dropout must lie in [0, 1), got {self.state_dropout!r}")
        if not 0 <= self.instruction_dropout < 1:
            raise ValueError(f"instruction_dropout must lie in [0, 1), got {self.instruction_dropout!r}")
        if not 0 <= self.cue_decoys < 1:
            raise ValueError(f"cue_decoys must lie in [0, 1), got {self.cue_decoys!r}")
        if self.cue_decoys and (self.model_overrides.get("ir_mode", "none") == "none"
                                or not self.model_overrides.get("point_loss_weight")):
            raise ValueError(f"cue_decoys={self.cue_decoys!r} needs an IR policy with pointing co-training "
                             f"(model_overrides ir_mode and point_loss_weight), got {dict(self.model_overrides)!r}")
        if not isinstance(self.cue_pretrain_steps, int) or self.cue_pretrain_steps < 0:
            raise ValueError(f"cue_pretrain_steps must be a non-negative integer, got {self.cue_pretrain_steps!r}")
        if self.cue_pretrain_steps and (self.model_overrides.get("ir_mode", "none") == "none"
                                        or self.model_overrides.get("point_readout") != "image_tokens"):
            raise ValueError(f"cue_pretrain_steps={self.cue_pretrain_steps!r} needs an IR policy with the image_tokens "
                             f"pointing readout (model_overrides ir_mode and point_readout), got "
                             f"{dict(self.model_overrides)!r}")
        if self.instruction_dropout and self.instruction_source == "task_name":
            raise ValueError(f"instruction_dropout={self.instruction_dropout!r} with instruction_source='task_name': "
                             f"every frame already has the bare task name")
        if not 0 < self.data_fraction <= 1:
            raise ValueError(f"data_fraction must lie in (0, 1], got {self.data_fraction!r}")


# Every named preset, in one list (Table S3 rows, plus the nested data subsets and `tiny`); PRESETS
# below adds the tiny variants derived from them.
_DECLARED_PRESETS: tuple[TrainingConfig, ...] = (
    TrainingConfig("pi05_qwen_frozen", batch_size=256, peak_lr=4e-4, max_steps=100_000),
    TrainingConfig("pi05_qwen_lora", batch_size=128, peak_lr=2.8e-4, max_steps=110_000, vlm_adapter="lora"),
    TrainingConfig("pi05_qwen_droid_init", batch_size=256, peak_lr=4e-4, max_steps=90_000, expert_init="checkpoint"),
    TrainingConfig("pi05_qwen_dot_ir", batch_size=256, peak_lr=4e-4, max_steps=100_000,
                   model_overrides={"ir_mode": "dot"}),
    TrainingConfig("pi05_qwen_dot_ir_anchor", batch_size=256, peak_lr=4e-4, max_steps=100_000,
                   model_overrides={"ir_mode": "dot", "first_frame_anchor": True}),
    TrainingConfig("pi05_qwen_attn_map_ir", batch_size=256, peak_lr=4e-4, max_steps=100_000,
                   model_overrides={"ir_mode": "attn_map"}),
    # Section 5 / Appendix 16.9: the data-scaling study retrains the dot-IR policy on nested subsets.
    TrainingConfig("pi05_qwen_dot_ir_data50", batch_size=256, peak_lr=4e-4, max_steps=100_000, data_fraction=0.5,
                   model_overrides={"ir_mode": "dot"}),
    TrainingConfig("pi05_qwen_dot_ir_data30", batch_size=256, peak_lr=4e-4, max_steps=100_000, data_fraction=0.3,
                   model_overrides={"ir_mode": "dot"}),
    # Table S3 navigation: 10 tasks sampled uniformly (task_column: the recorder's task name, not the
    # instruction); Section 4.1: the policy also sees the scene-context frames, as many as the tour gives.
    TrainingConfig("pi05_qwen_navigation", batch_size=512, peak_lr=4.2e-4, max_steps=60_000, task_column="task_name",
                   model_overrides={"max_context_frames": CONTEXT_FRAMES}),
    # Tests and the demo: tiny random backbone, fp32, a few steps, no worker processes.
    TrainingConfig("tiny", batch_size=2, peak_lr=1e-3, max_steps=4, warmup_steps=1, mixed_precision="no",
                   backbone=TINY_BACKBONE, save_every=2, log_every=1, num_workers=0, image_pixels=64 * 64),
    # Measured: the reach tasks trained on 2 CPU cores in well under an hour (sizes and measurements:
    # CPU_REACH_NOTES below). Its dot-IR and language-blanked variants derive from it (_cpu_reach_variants).
    TrainingConfig("cpu_reach", batch_size=32, peak_lr=1e-3, max_steps=1500, warmup_steps=100, mixed_precision="no",
                   backbone=SMALL_BACKBONE, vlm_adapter="full", task_column="task_name", save_every=500,
                   log_every=25, num_workers=1, image_pixels=96 * 96,
                   # Absolute actions, no state dropout: relative joints (RELATIVE_JOINT_DIMS) and state_dropout
                   # were measured and neither beat random in rollouts yet (CPU_REACH_NOTES).
                   model_overrides={"camera_names": ["head"], "state_in_prompt": False, "point_loss_weight": 1.0}),
)
# The six policy variants of Section 4.2 (Table 4 rows); each gets a tiny counterpart below.
VARIANT_PRESETS = ("pi05_qwen_frozen", "pi05_qwen_lora", "pi05_qwen_droid_init", "pi05_qwen_dot_ir",
                   "pi05_qwen_dot_ir_anchor", "pi05_qwen_attn_map_ir")
# Fields that define a variant (what trains, how it starts, what it sees); everything else of a tiny
# variant (backbone, batch, steps, precision) comes from `tiny`, so the tiny and the paper variant
# cannot drift apart.
VARIANT_FIELDS = ("vlm_adapter", "expert_init", "model_overrides", "data_fraction")
# The navigation policy (Table S3's navigation row) also differs in what a task is (the task name).
NAVIGATION_PRESET = "pi05_qwen_navigation"
NAVIGATION_FIELDS = (*VARIANT_FIELDS, "task_column")
TINY_PREFIX = "tiny_"


def _tiny_variants(presets: Sequence[TrainingConfig]) -> tuple[TrainingConfig, ...]:
    known = {p.name: p for p in presets}
    fields = {**{name: VARIANT_FIELDS for name in VARIANT_PRESETS}, NAVIGATION_PRESET: NAVIGATION_FIELDS}
    return tuple(replace(known["tiny"], name=TINY_PREFIX + name.removeprefix("pi05_qwen_"),
                         **{f: getattr(known[name], f) for f in names}) for name, names in fields.items())


# ---- cpu_reach: how the sizes were chosen -------------------------------------------------------------
CPU_REACH_NOTES = """Sizes of the ``cpu_reach`` presets, measured on the 2-core CPU machine (no GPU), December 2026.

Data: 36 ``bspatial demos`` episodes of reach_plate (5,729 frames; the train split holds two instructions,
"largest" and "second smallest"), 30 used for training (every 2nd frame cached) and 6 held out (every 8th
frame: 126 validation frames); the data pipeline was also timed on 30 episodes of reach_plate / reach_tool /
reach_dice. Times are CPU seconds of one process on ONE torch thread (process time, so the other jobs on the
machine do not inflate them) per optimiser step of batch 16 (forward, backward, AdamW).

Cost per step (tokens = prompt length per sample; 3 cameras unless noted):

| backbone (text h x L / vision h x depth / expert h x L) | VLM    | image | params | tokens | s/step |
|--------------------------------------------------------|--------|-------|--------|--------|--------|
| tiny   64 x 2 / 32 x 2 / 32 x 2                         | frozen | 64    | 0.25M  | 374    | 0.13   |
| tiny                                                   | full   | 64    | 0.25M  | 374    | 0.30   |
| small 128 x 4 / 64 x 2 / 64 x 4 (``SMALL``)            | frozen | 96    | 1.40M  | 389    | 0.62   |
| small                                                  | full   | 64    | 1.40M  | 374    | 1.50   |
| small                                                  | full   | 96    | 1.40M  | 389    | 1.63   |
| small, head camera only                                | full   | 96    | 1.40M  | 367    | 1.43   |
| small                                                  | full   | 128   | 1.40M  | 410    | 1.90   |
| small + dot-IR image                                   | full   | 96    | 1.40M  | 400    | 1.76   |
| small, batch 32                                        | full   | 96    | 1.40M  | 389    | 3.60   |
| small with 2 text / 2 expert layers                    | full   | 96    | 0.86M  | 389    | 0.79   |
| 192 x 4 / 96 x 2 / 96 x 4                              | full   | 96    | 3.02M  | 389    | 2.88   |

The prompt is ~85% state text (84 state dims as byte-level digits, ~330 tokens); images add 4 (64 px) to
16 (128 px) tokens each. So the image side and the camera count are cheap, and text width / depth and
training the VLM set the cost. The real data pipeline (LeRobot decode of three 224 px video frames, the dot,
the processor) costs 0.23 s of CPU per batch of 16: one DataLoader worker on the second core keeps up.

Learning (reach_plate, lr 1e-3, warmup 30, cosine; validation on the 6 held-out episodes; open-loop error =
mean |action - recorded| over the first predicted chunk, 10 Euler steps from fixed noise, in robot units:
rad for torso / arms, m/s and rad/s for the base; grippers do not move in reach demos):

| run (steps done / schedule)          | train | val loss: true / bare / swap | arms (last) | torso | base  |
|--------------------------------------|-------|------------------------------|-------------|-------|-------|
| tiny, frozen VLM, 64 px (400 / 400)  | 0.24  | 0.413 / 0.413 / 0.413        | 0.074       | 0.035 | 0.026 |
| tiny, full VLM, 64 px (400 / 400)    | 0.24  | 0.415 / 0.415 / 0.415        | 0.076       | 0.033 | 0.027 |
| small, full VLM, 96 px (300 / 600)   | 0.13  | 0.251 / 0.252 / 0.251        | 0.062 (0.071) | 0.026 | 0.026 |
| small, full VLM, 96 px (360 / 600)   | 0.12  | 0.205 / 0.205 / 0.205        | 0.055 (0.065) | 0.024 | 0.025 |
| small + dot IR, 96 px (300 / 600)    | 0.14  | 0.246 / 0.246 / 0.246        | 0.062 (0.070) | 0.026 | 0.026 |
| small, blind language (300 / 600)    | 0.14  | 0.250 (its prompt: bare) / - / 0.250 | 0.063 (0.075) | 0.026 | 0.026 |
| baseline: mean training action       |       |                              | 0.280 (0.293) | 0.048 | 0.020 |
| baseline: hold joints, base still    |       |                              | 0.042 (0.075) | 0.019 | 0.015 |

("bare": the instruction replaced by the bare task name; "swapped": by the other training instruction. The
blind run trained and is validated on the bare name: its 0.250 matches the instructed run's 0.251 at step 300.)

First choice (superseded below): ``small`` (1.4M parameters, Qwen3.5-shaped: 3 gated-delta-net + 1 full-attention
layer), the VLM trained in full, 96 px images from all three cameras, batch 16, peak LR 1e-3, 1,200 steps. Why the
small backbone and the full VLM: the small model reaches a much lower validation loss than the tiny one in fewer steps
(0.25 at step 300 against 0.41 after the tiny one's whole 400-step schedule, frozen or trained VLM alike); a frozen
random VLM passes random features, so it could never learn to read the instruction; a wider backbone (192) costs 1.8x
per step. In these budgets no run used the instruction (validation loss with the true, the bare and a swapped
instruction agree to 1e-3), and open-loop errors were not below the hold-still baseline over the chunk.

Revision (what the preset is now): the prompt leaves the state text out (``state_in_prompt=False``) and the policy
reads the head camera only. The expert reads the state through its own state token either way, so the text only
repeated it: on the byte-level offline tokenizer it was ~85% of the prompt and most of the cost, and it diluted the
instruction the VLM has to read. Measured (CPU seconds of one torch thread per optimiser step, process time, a
recording job on the other core):

| prompt / cameras                  | tokens | batch 16 | batch 32 |
|-----------------------------------|--------|----------|----------|
| pi0.5 state text, three cameras   | 347    | 1.45     | 2.41     |
| pi0.5 state text, head camera     | 341    | 1.14     | 2.36     |
| no state text, head camera (now)  | 63     | 0.21     | 0.40     |

So a step of batch 32 now costs a third of a batch-16 step before: ``cpu_reach`` trains batch 32 for 1,500 steps
(48,000 samples, 8x the data the first choice saw in 1,200 steps of 16) at peak LR 1e-3 with 100 warm-up steps. The
head camera alone also lets ``bspatial demos --camera head`` record 4.2x the episodes per hour (benchmarks/demos.py)
and is what the CPU ACT reads. In ``benchmarks/learned.py`` two learners train side by side on the 2 cores, each
with one torch thread and one DataLoader worker decoding its frames; measured there: ~1.2-1.4 s of wall time per
step each (the decoding workers take ~40% of the CPU), so 1,500 steps take ~35 min per pair.

The dot of ``cpu_reach_dot_ir`` (``ir_dot_radius`` 12, ``CPU_DOT_RADIUS``): the model reads its images at 96 px,
where the paper's radius-4 dot (drawn at 224) is 1.7 px, a few red pixels in one 16 px patch; radius 12 keeps a
~5 px disc there (~80 red pixels, tests/modeling/test_cpu_presets.py). The radius is a config field saved with the
processor, and the rollout's IR conditioner draws the checkpoint's radius, so training and rollouts see one dot.
Measured (2026-12-06, 300 demos, 1,500 steps, 18 validation demos; "effect" = mean |change of the sampled chunk|
in rad when that input comes from another episode's frame, same noise; benchmarks/learned.py's diagnosis):

| run                                       | cue (dot) | camera image | instruction | state |
|-------------------------------------------|-----------|--------------|-------------|-------|
| dot radius 4 (the paper's)                | 0.00003   | 0.0022       | 0.0020      | 0.195 |
| dot radius 12 (now)                       | 0.0001    | 0.0014       | 0.0018      | 0.195 |
| radius 12, expert also reads VLM layer 0  | 0.00004   | 0.0015       | 0.0021      | 0.196 |
| the same at 128 px images                 | 0.0001    | 0.0021       | 0.0021      | 0.196 |

(instruction: swapped for the other training instruction of the same task; the last two rows are
``model_overrides={"prefix_layers": [0, 1, 2, 4]}`` and ``image_pixels=128 * 128`` on top of this preset.)
The larger dot is plainly visible at the model's input and still unread: every learner acts from its
proprioceptive state (which moves the chunk ~100x more than the whole camera image), and neither a direct path to the raw
vision tokens (``prefix_layers`` [0, 1, 2, 4]) nor finer image tokens changes that within this budget. With the
state zeroed in every batch (an experiment outside the presets: the expert then acts from the prefix alone) the
image effect is 0.198 and the dot's 0.0029, 28x the table's: the prefix path learns when it must; the state
shortcut starves it. The next thing to try is state dropout in training (the state token blanked in a share of
samples), which keeps the state at rollout time while making the prefix pay off. A first probe (the state zeroed in
half of the samples, 750 steps, measured with the state present): image effect 0.038 (27x), dot 0.0006 (6x),
instruction 0.006 (3x), state 0.152, but open-loop error 0.045 against hold 0.033 at that short schedule; not
rolled out yet.

Relative joint actions and state dropout (2026-12-06, same 300 demos, 1,500 steps unless noted; held-out rollouts,
95 episodes of the three tasks; random: strict 8 / 95):

| run (dot-IR unless noted)                      | image  | cue    | open-loop (hold 0.0325) | held-out contact / strict |
|------------------------------------------------|--------|--------|-------------------------|---------------------------|
| absolute actions (the table's learners)         | 0.0014 | 0.0001 | 0.0285 (cpu_reach)      | - / 5 (cpu_reach)         |
| cpu_reach, relative joints                      | 0.0011 | -      | 0.0246                  | 2 / 0 of the first 57     |
| absolute, state dropout 0.5                     | 0.0144 | 0.0003 | 0.0316                  | 14 / 4                    |
| relative joints, state dropout 0.5              | 0.0189 | 0.0009 | 0.0266                  | 36 / 10                   |
| the same, 3,000 steps (resumed at 1,500)        |        |        |                         | 31 / 7                    |
| relative joints, state dropout 0.8              |        |        |                         | 12 / 3                    |

(contact: episodes that touched a candidate, right or wrong; strict: the instructed one.) Relative joints alone fit
the chunks better open-loop and are worse closed-loop (the absolute targets anchored the pose); with half the
samples state-blind the prefix is read 8-13x more and the policy touches an object 2.6x as often, but it still
picks among the candidates at chance (10 right, 26 wrong): the dot is read 9x more than before and still weakly.
Neither a longer schedule (3,000 steps, a warm restart of the cosine at 1,500) nor a higher dropout (0.8: the
expert rarely sees its state, and executes worse) lifts strict success off random's 8 / 95. What remains: the
target is not read from the dot or the words at this scale, so no choice beats chance, and contact alone (at most
38%) is too rare for chance choice to beat random. So the presets keep absolute actions and no dropout until a
variant beats random.

Pointing co-training (``point_loss_weight`` 1.0, now in every cpu_reach preset; 2026-12-06, same 300 demos, 1,500
steps). pi0.5 co-trains its VLM to localise objects; here the VLM's last prompt token predicts the instructed target's
pixel in the head image (the oracle IR point the demonstrations carry as a label) and the expert reads that point as
one more token. Diagnosis on the 18 validation demonstrations (2 frames each unless noted):

| run                                         | val loss instr / bare / swapped | open-loop (hold) | instr. | cue    | image | point err px (centroid) | dot moved: to it / to target |
|---------------------------------------------|---------------------------------|------------------|--------|--------|-------|-------------------------|------------------------------|
| dot-IR + pointing (4 frames)                | 0.075 / 0.113 / 0.179           | 0.0251 (0.0325)  | 0.010  | 0.0019 | 0.036 | 14.5 (51.9)             | -                            |
| dot-IR + pointing                           | 0.077 / 0.124 / 0.193           | 0.0322 (0.0338)  | 0.011  | 0.0031 | 0.026 | 14.7 (46.8)             | 56.1 / 21.6                  |
| dot-IR + pointing + instruction dropout 0.5 | 0.079 / 0.091 / 0.165           | 0.0301 (0.0338)  | 0.013  | 0.0066 | 0.033 | 14.4 (46.8)             | 53.7 / 21.7                  |

With the pointing loss the learners read their instruction for the first time (validation loss 0.075 with the
recorded instruction against 0.179 with the other training instruction of the task; before, the two agreed to 1e-3),
the image moves the chunk 25x more and the open-loop error drops below holding still and below the privileged frozen
command (0.0251 against 0.0325 / 0.0275). The point lands 14.5 px from the target (a constant guess: 52 px). But
the pointing reads the words and the layout, not the dot: with the dot moved to another episode's target, the
predicted point stays 22 px from the true target and 54-56 px from the dot, with or without half of the frames
trained on the bare task name (where only the dot tells the two training instructions apart). Rolled out on the 95
held-out episodes the dot-IR + pointing learner (absolute actions) touched an object in 32 and the instructed one
in 5 (relative joints + state dropout 0.5: 28 / 7): the held-out instructions are variants the learners never heard
("2nd leftmost" where training said "leftmost" and "second rightmost"), so a learner that points from the words
points at the training variant's object (reach_tool: the nearest candidate to the end effector was the instructed
one in 0 of 32 episodes, the left arm reached toward the leftmost tool in most, where the expert uses the right arm
for the rightmost one). Only a cue it reads can carry it to the new target.

Two ways to make the pointing read the cue were tried, and neither did (2026-12-06; diagnosis as above, 2 frames
per validation demonstration, training-only augmentations off in validation: ``diagnostics.validation_config``):
half the frames on the bare task name (``instruction_dropout`` 0.5, the row above: no change), and on top of it 30%
of the frames with a decoy cue at a uniformly random pixel whose pointing label follows the cue and whose actions
leave the loss (``cue_decoys`` 0.3, now in both IR presets). With decoys the training point loss stays at a
constant guess's level (0.2-0.4 against 0.01-0.03 without), so on the decoy frames the cue is not localised at all,
and the learner is worse everywhere: point error 28.8 px (centroid 46.8), with the dot moved 51.5 px from it and
29.0 px from the true target, validation loss 0.148 (0.079 without decoys), open-loop error 0.038 above holding
still (0.034). The attention-map rendering (``cpu_reach_attn_map_ir``: the target alone as a blob on a plain
background, no scene to point from instead) behaves the same. So at this size and schedule the from-scratch
backbone does not localise a cue image at all, while it does localise the instructed object in the camera image
(14.5 px). What to find out next: whether the IR image slot carries its cue's position to the last prompt token
(a pointing probe trained on decoy frames alone, with the camera image blanked), before any larger run.

Where the cue is lost (2026-12-06, probes on 500 training frames, the cue redrawn at a uniformly random pixel every
step and the label following it, point loss only, batch 32, AdamW 1e-3, fresh weights; mean error on 100 held-out
frames, 224 grid; the constant guess is 73 px):

| readout (what the point is computed from)                                  | head image  | steps | error px |
|----------------------------------------------------------------------------|-------------|-------|----------|
| last prompt token, linear (``point_readout="last_token"``)                  | real, black | 600   | 73, 73   |
| attention over the final hidden states of the image tokens, soft-argmax     | real, black | 200   | 74, 73   |
| the same over hidden state 0 (the vision tokens), query from the last token | real        | 200   | 73       |
| attention over the vision tower's tokens alone (no language model)          | black       | 300   | 16       |
| the same                                                                    | real        | 1,500 | 18-21    |

In the trained dot-IR checkpoint (black head image, 8 cue positions) the last prompt token's hidden state varies across
cue positions by 1e-8 after each of the three Gated-DeltaNet layers and by 0.01 after the one full-attention layer; the dot's own vision token differs by 3.5 (norm 20) between cue positions. So the cue is seen
by the vision tower and lost between it and the pointing head. Two changes follow, in both IR presets:
``point_readout="image_tokens"`` (the point is a soft-argmax over the head-frame vision tokens, queried by the last
prompt token: ``BSpatialPointReadout``) and ``cue_pretrain_steps`` 1,500 (``cue_pretraining.pretrain_cue``: the
vision tower and the readout alone learn to point at a cue redrawn at random pixels, ~0.2 s a step, before the
policy's first step). Through the model's own code the dot is found after ~1,000 such steps (23 px at 1,100) once
the readout's query starts at unit scale; with the policy's 0.02 init it stayed at the constant guess for all
1,500. The attention map (a blob on a plain background) is found within 300 steps (29 px).

Both IR learners retrained with them (``benchmarks/learned.py``, same 300 demos, 1,500 policy steps after 1,500 cue
steps; diagnosis on the 18 validation demonstrations, 4 frames each):

| run                   | cue pretraining error px | val loss instr / bare / swapped | open-loop (hold 0.0325) | cue    | point err px (centroid 51.9) | dot moved: to it / to target |
|-----------------------|--------------------------|---------------------------------|-------------------------|--------|------------------------------|------------------------------|
| dot IR                | 17.8                     | 0.117 / 0.117 / 0.116           | 0.0235                  | 0.0161 | 9.9                          | 11.4 / 70.2                  |
| attention-map IR      | 0.9                      | 0.037 / 0.036 / 0.037           | 0.0130                  | 0.0642 | 0.5                          | 0.5 / 72.1                   |

The point now follows the cue wherever it is drawn (before: it stayed 22 px from the true target and 54-56 px from
the moved dot), the cue moves the chunk 5-20x more than before, and the open-loop error falls below holding still
(the attention map's to 40% of it). The words no longer matter to either (the three prompts' losses agree): an IR
policy acts from its cue, as the paper's oracle-IR rows intend. Rollouts (``benchmarks/results/learned_table4.md``,
every held-out and probe entry of the three tasks): held-out strict 28.4 (dot) and 37.9 (attention map) against
random's 8.4, intervals apart; probe strict 38.7 / 40.7 against the baseline's 19.3, wrong targets 14.7 / 2.0 against
25.3.
"""

CPU_REACH_PRESET = "cpu_reach"
# The dot of cpu_reach_dot_ir, in pixels of the 224 px IR image: the model reads it at 96 px, where the paper's
# radius 4 shrinks to 1.7 px (a few percent of one 16 px patch); 12 keeps it ~5 px there (CPU_REACH_NOTES).
CPU_DOT_RADIUS = 12
# The share of cpu_reach_dot_ir's frames trained with the bare task name instead of the instruction: with the
# instruction present the dot agrees with what the words and the layout already say, and the learner never reads
# it (CPU_REACH_NOTES); on the blanked frames only the dot tells the candidates apart.
CPU_DOT_INSTRUCTION_DROPOUT = 0.5
# The share of the IR variants' frames with a decoy cue (TrainingConfig.cue_decoys): with the cue always on the
# target, the pointing learnt to point from the words and the layout and ignored the cue (CPU_REACH_NOTES).
CPU_CUE_DECOYS = 0.3
# Cue pretraining of the dot-IR policy (TrainingConfig.cue_pretrain_steps): on real head images the vision tower
# trained from scratch finds the dot after ~1,000 cue-only steps (CPU_REACH_NOTES, "Where the cue is lost").
CPU_CUE_PRETRAIN_STEPS = 1500
# The CPU reach policy and its variants: the dot-IR policy (Section 4.2), the language-blanked reference (our
# policy with the instruction blanked) and the attention-map IR policy (Section 4.2's other rendering).
CPU_REACH_PRESETS = (CPU_REACH_PRESET, "cpu_reach_dot_ir", "cpu_reach_blind_language", "cpu_reach_attn_map_ir")


def _cpu_reach_variants(presets: Sequence[TrainingConfig]) -> tuple[TrainingConfig, ...]:
    # Each variant replaces only what makes it that variant, so the three cannot drift apart. The dot-IR policy
    # also trains half its frames on the bare task name: there the dot is the only cue (CPU_REACH_NOTES).
    base = {p.name: p for p in presets}[CPU_REACH_PRESET]
    return (replace(base, name=CPU_REACH_PRESETS[1], instruction_dropout=CPU_DOT_INSTRUCTION_DROPOUT,
                    cue_decoys=CPU_CUE_DECOYS, cue_pretrain_steps=CPU_CUE_PRETRAIN_STEPS,
                    model_overrides={**base.model_overrides, "ir_mode": "dot", "ir_dot_radius": CPU_DOT_RADIUS,
                                     "point_readout": "image_tokens"}),
            _blind_language(base),
            # The attention map is the target alone on a plain background (no scene to point from instead).
            replace(base, name=CPU_REACH_PRESETS[3], instruction_dropout=CPU_DOT_INSTRUCTION_DROPOUT,
                    cue_decoys=CPU_CUE_DECOYS, cue_pretrain_steps=CPU_CUE_PRETRAIN_STEPS,
                    model_overrides={**base.model_overrides, "ir_mode": "attn_map", "point_readout": "image_tokens"}))


# The declared presets, then tiny_frozen, tiny_lora, tiny_droid_init, tiny_dot_ir, tiny_dot_ir_anchor,
# tiny_attn_map_ir and tiny_navigation (tests and demos of every variant and of the navigation policy), then
# cpu_reach_dot_ir and cpu_reach_blind_language.
def _blind_language(base: TrainingConfig) -> TrainingConfig:
    """``<base>_blind_language``: ``base`` trained on the bare task names (the language-blanked reference)."""
    return replace(base, name=f"{base.name}_blind_language", instruction_source="task_name")


PRESETS: tuple[TrainingConfig, ...] = (_DECLARED_PRESETS + _tiny_variants(_DECLARED_PRESETS)
                                       + _cpu_reach_variants(_DECLARED_PRESETS)
                                       # tiny_blind_language: benchmarks/learned.py --smoke's language-blanked row
                                       + (_blind_language({p.name: p for p in _DECLARED_PRESETS}["tiny"]),))

_PRESETS_BY_NAME = by_name(PRESETS, "training preset")


def get_preset(name: str, **overrides) -> TrainingConfig:
    """The named preset, with fields replaced by ``overrides``; unknown names list the known ones.

    Example:
        >>> get_preset("pi05_qwen_lora").peak_lr, get_preset("tiny", max_steps=2).max_steps
        (0.00028, 2)
    """
    return replace(lookup(_PRESETS_BY_NAME, name, "preset"), **overrides)
