"""The evaluation prompts of BEHAVIOR-Spatial, verbatim from paper Appendix 15, and the rules that
assemble them.

Appendix 15.1 (VQA): a prompt concatenates an observation-setting preamble, the answer-format
instruction, the applicable spatial rules, and ``Question: ... / Options: ...``. Which blocks an
item receives (paper wording in quotes):

=================================  ===============================================================
block                              applies to
=================================  ===============================================================
``SINGLE_FRAME_PREAMBLE``          "single-frame questions": settings ``single_frame`` and
                                   ``task_manipulation`` (task-grounded manipulation questions are
                                   asked on one head-camera frame)
``MULTI_FRAME_PREAMBLE`` +         "general multi-frame questions" (replaces the single-frame
``ROTATION_ADDITION`` /            preamble); rotation / navigation "additionally receive" their
``NAVIGATION_ADDITION``            sentence, on the next line
``TASK_NAVIGATION_PREAMBLE``       ``task_navigation``; "replaces the general multi-frame preamble
                                   and direction-rule block"
``ANSWER_FORMAT``                  every (multiple-choice) VQA item
``DIRECTION_RULES``                category ``direction`` except subtype ``locate``, "except for
                                   task-grounded navigation"
``LOCATE_RULES``                   subtype ``locate``
``CAMERA_DISTANCE_RULES``          "distance questions referencing the camera": category
                                   ``distance`` with subtype ``camera_relative`` (the record's
                                   label decides, not a text search of the question)
``QUESTION_TEMPLATE``              every VQA item, last
=================================  ===============================================================

Appendix 15.2 (IR point grounding): ``IR_TEMPLATE`` with the target description chosen by the
target kind (``IR_OBJECT_TARGET`` for reach queries, ``IR_PLACEMENT_TARGET`` for directional and
container placement), and ``IR_LAYER_HINT`` inserted on the line after the instruction "for
placement instructions containing the word 'layer'" (whole word, any case); otherwise that line is
omitted entirely (no blank line).

Transcription decisions (the paper says its boxes reproduce the wording "with line wrapping
adjusted for presentation"):

* Line breaks: a box line that ends mid-sentence (not in ``.``, ``:``, ``?`` or a ``{placeholder}``)
  and is followed by a line that does not start a bullet, placeholder or ``Example:`` is a
  presentation wrap and is joined with one space; every other line break is kept, and so are
  blank lines inside a box. (The snapshot files were derived from the paper's lines by this rule,
  independently of the constants below.)
* The boxes are typeset verbatim (``---`` and straight double quotes survive unligatured), where a
  straight apostrophe renders as ``’``; prompts therefore use ASCII ``'``. The en dash of
  "0–1000", which verbatim typesetting would not produce from ASCII, is kept as written.
* Wording, including "C. front" and "3Dcenter", is kept character for character.
* Not given by the paper, so chosen here and pinned by the snapshot tests: blocks are joined by
  ``BLOCK_SEPARATOR`` (a blank line); options are written ``A.text`` joined by a space, the form
  of the answer-format example ('A.above B.under ...').
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Literal

from bspatial.scoring.choice import LETTERS

# --- Appendix 15.1, VQA evaluation prompts -------------------------------------------------------

# Appendix 15.1, "Single-frame preamble".
SINGLE_FRAME_PREAMBLE = "Answer the question based on the given image(s)."

# Appendix 15.1, "Answer format".
ANSWER_FORMAT = (
    "Answer with the option's letter and text from the given choices directly.\n"
    "Example: if you think the correct answer is 'C.front' from 'A.above B.under C. front D.behind.', "
    "your response should only be 'C.front'."
)

# Appendix 15.1, "Direction rules".
DIRECTION_RULES = (
    "Spatial Understanding Rules:\n"
    "- Use the camera's perspective as the reference frame for all spatial relationships "
    "(unless explicitly stated otherwise).\n"
    '- Front/Back: The object that appears farther from the camera (deeper into the scene) is considered "in front of" '
    'the object that appears closer to the camera. The object closer to the camera is at the "back" of the farther object.\n'
    "- Left/Right: Defined from the camera's viewpoint. An object located on the left side of the image relative to "
    'another object is considered "left of" that object, and similarly for right.\n'
    "- Above/Below: Determined by relative vertical position in the scene."
)

# Appendix 15.1, "Locate rules".
LOCATE_RULES = (
    "Locate Question Rules:\n"
    "- Grid Positions (Row x Column): Rows are counted from bottom to top. Columns are counted from left to right. "
    'For example, "1x1" is the bottom-left grid, "2x3" is the second row from the bottom and third column from the left.\n'
    "- Layers: Counted from bottom to top of the container. Layer 1 is the bottommost level "
    "(closest to the floor/base), and higher layers are numbered sequentially upward.\n"
    "- Levels: Counted from bottom to top, described by their relative height within the container. "
    '(e.g., "low level," "middle level," "high level," or specific numerical levels)\n'
    "- Please ONLY consider the internal space and organizational structure of the specific container "
    "mentioned in the question."
)

# Appendix 15.1, "Camera-distance rules".
CAMERA_DISTANCE_RULES = (
    "Camera Distance Question Rules:\n"
    '- When questions refer to "the camera", note that the robot hand visible in the image is NOT the camera. '
    "The camera is the viewpoint from which the image was captured, which is separate from any robot hand or "
    "manipulator visible in the scene.\n"
    "- Distance is defined along the view trace from the camera to the 3Dcenter of the object."
)

# Appendix 15.1, "General multi-frame questions": replaces the single-frame preamble.
MULTI_FRAME_PREAMBLE = (
    "These are consecutive observations from the head camera of a robot. Answer the question based on the given images."
)
# Appendix 15.1, "Rotation questions additionally receive".
ROTATION_ADDITION = "The robot is rotating in place. The images show different viewpoints as the robot turns."
# Appendix 15.1, "Navigation questions additionally receive".
NAVIGATION_ADDITION = "The robot is navigating through the environment. The images show the robot's observations as it moves."

# Appendix 15.1, "Task-grounded navigation": replaces the multi-frame preamble and direction rules.
TASK_NAVIGATION_PREAMBLE = (
    "You are looking through the head camera of a mobile robot.\n"
    "All images except the last one are a CONTEXT TOUR: earlier views recorded while moving through this environment. "
    "Use them to learn where things are. They were NOT taken from the robot's current position.\n"
    "The LAST image is the robot's CURRENT camera view. All answers are relative to the robot's current position "
    "and heading in that last image.\n"
    "\n"
    "Definitions (robot-centric, top-down):\n"
    "- FRONT = the direction the camera is facing; BACK = directly behind the robot.\n"
    "- LEFT / RIGHT = the robot's left and right when facing forward.\n"
    "- The target may be OUT OF VIEW (behind the robot, or behind a wall). It still has a direction. "
    "Locate the target from the tour, locate the robot from the current view, and answer with the quadrant "
    "the target lies in."
)

# Appendix 15.1, "Question and choices".
QUESTION_TEMPLATE = "Question: {question}\nOptions: {options}"

# Not given by the paper (see the module docstring); pinned by the snapshot tests.
BLOCK_SEPARATOR = "\n\n"
OPTION_FORMAT = "{letter}.{text}"  # the answer-format example's 'A.above B.under ...'
OPTION_SEPARATOR = " "

# --- Appendix 15.2, point-grounding (IR) prompts ---------------------------------------------------

# Appendix 15.2, "Point-grounding template"; {layer_hint_line} is IR_LAYER_HINT + "\n" or "".
IR_TEMPLATE = (
    "The robot's task is: {instruction}\n"
    "{layer_hint_line}"
    "Predict the center of the target in the frame: {target_description}.\n"
    "Output the spatial coordinate of the center as x, y (integer coordinates normalized to a 0–1000 scale).\n"
    "You must provide a valid prediction for the target --- do not return null or empty values.\n"
    "Predict exactly ONE point: x and y must each be a single integer, never a list. "
    "If multiple objects are plausible, commit to the single most likely one.\n"
    "Respond ONLY with valid JSON in the exact format shown below. Do not include any other text.\n"
    'Example: {{"results": {{"target": {{"x": <int>, "y": <int>}}}}}}'
)
# Appendix 15.2, "Target description".
IR_OBJECT_TARGET = "the object that the robot must reach or manipulate to accomplish this task"
IR_PLACEMENT_TARGET = "the target location where the robot must place the object it is holding to accomplish this task"
# Appendix 15.2, "Layer-counting hint".
IR_LAYER_HINT = 'Layers are counted from bottom to top: for example, "layer 5" is the fifth layer from the bottom of the fridge.'
_LAYER_WORD = re.compile(r"\blayer\b", re.IGNORECASE)

# Bump when the assembly rules in vqa_blocks / build_ir_prompt change (the text constants are hashed).
PROMPT_RULES_VERSION = 1

TargetKind = Literal["object", "placement"]
TARGET_DESCRIPTIONS: dict[str, str] = {"object": IR_OBJECT_TARGET, "placement": IR_PLACEMENT_TARGET}

# Block names, as reported by :func:`vqa_blocks` (and logged in the run's fingerprint).
VQA_BLOCKS: dict[str, str] = {
    "single_frame_preamble": SINGLE_FRAME_PREAMBLE,
    "multi_frame_preamble": MULTI_FRAME_PREAMBLE,
    "rotation_addition": ROTATION_ADDITION,
    "navigation_addition": NAVIGATION_ADDITION,
    "task_navigation_preamble": TASK_NAVIGATION_PREAMBLE,
    "answer_format": ANSWER_FORMAT,
    "direction_rules": DIRECTION_RULES,
    "locate_rules": LOCATE_RULES,
    "camera_distance_rules": CAMERA_DISTANCE_RULES,
}
_PREAMBLES: dict[str, tuple[str, ...]] = {
    "single_frame": ("single_frame_preamble",),
    "task_manipulation": ("single_frame_preamble",),
    "multi_frame_rotation": ("multi_frame_preamble", "rotation_addition"),
    "multi_frame_navigation": ("multi_frame_preamble", "navigation_addition"),
    "task_navigation": ("task_navigation_preamble",),
}


def vqa_blocks(setting: str, category: str, subtype: str) -> list[str]:
    """Names of the Appendix 15.1 blocks an item receives, in prompt order (the question last, implied).

    The preamble's parts (multi-frame preamble + addition) are consecutive names; they form one block.

    Examples:
        >>> vqa_blocks("single_frame", "direction", "locate")
        ['single_frame_preamble', 'answer_format', 'locate_rules']
        >>> vqa_blocks("task_navigation", "direction", "camera_relative")
        ['task_navigation_preamble', 'answer_format']
        >>> vqa_blocks("multi_frame_rotation", "distance", "camera_relative")
        ['multi_frame_preamble', 'rotation_addition', 'answer_format', 'camera_distance_rules']
    """
    if setting not in _PREAMBLES:
        raise ValueError(f"setting must be one of {sorted(_PREAMBLES)}, got {setting!r}")
    names = [*_PREAMBLES[setting], "answer_format"]
    if subtype == "locate":
        names.append("locate_rules")
    elif category == "direction" and setting != "task_navigation":
        names.append("direction_rules")
    if category == "distance" and subtype == "camera_relative":
        names.append("camera_distance_rules")
    return names


def format_options(options: Sequence[str]) -> str:
    """Options in the answer-format example's form.

    Example:
        >>> format_options(["above", "under", "front", "behind"])
        'A.above B.under C.front D.behind'
    """
    if len(options) != len(LETTERS):
        raise ValueError(f"options must hold {len(LETTERS)} texts (letters {'/'.join(LETTERS)}), got {list(options)!r}")
    return OPTION_SEPARATOR.join(OPTION_FORMAT.format(letter=l, text=t) for l, t in zip(LETTERS, options))


def build_vqa_prompt(setting: str, category: str, subtype: str, question: str, options: Sequence[str]) -> str:
    """The full text prompt of one VQA item (images are passed to the model separately, before it).

    Example:
        >>> print(build_vqa_prompt("single_frame", "size", "object_relative", "Which is largest?", "abcd"))
        Answer the question based on the given image(s).
        <BLANKLINE>
        Answer with the option's letter and text from the given choices directly.
        Example: if you think the correct answer is 'C.front' from 'A.above B.under C. front D.behind.', your response should only be 'C.front'.
        <BLANKLINE>
        Question: Which is largest?
        Options: A.a B.b C.c D.d
    """
    names = vqa_blocks(setting, category, subtype)
    preamble_parts = [VQA_BLOCKS[n] for n in _PREAMBLES[setting]]
    blocks = ["\n".join(preamble_parts)] + [VQA_BLOCKS[n] for n in names[len(preamble_parts) :]]
    blocks.append(QUESTION_TEMPLATE.format(question=question, options=format_options(options)))
    return BLOCK_SEPARATOR.join(blocks)


def needs_layer_hint(instruction: str, target: TargetKind) -> bool:
    """Appendix 15.2: the hint goes to placement instructions containing the word "layer".

    Example:
        >>> needs_layer_hint("Place the bowl in the layer 3 of the bottom cabinet.", "placement")
        True
    """
    return target == "placement" and _LAYER_WORD.search(instruction) is not None


def build_ir_prompt(instruction: str, target: TargetKind) -> str:
    """The point-grounding prompt of one IR query (the head image is passed separately).

    Args:
        instruction: the task instruction, e.g. "Reach the dice closest to the board game on the bed."
        target: ``"object"`` (reach) or ``"placement"`` (directional / container placement).
    """
    if target not in TARGET_DESCRIPTIONS:
        raise ValueError(f"target must be one of {sorted(TARGET_DESCRIPTIONS)}, got {target!r}")
    hint = IR_LAYER_HINT + "\n" if needs_layer_hint(instruction, target) else ""
    return IR_TEMPLATE.format(
        instruction=instruction, layer_hint_line=hint, target_description=TARGET_DESCRIPTIONS[target]
    )


def prompts_fingerprint() -> str:
    """sha256 over every template and joining convention: changes whenever any prompt would change."""
    parts = [
        str(PROMPT_RULES_VERSION),
        *VQA_BLOCKS.values(),
        QUESTION_TEMPLATE,
        BLOCK_SEPARATOR,
        OPTION_FORMAT,
        OPTION_SEPARATOR,
        IR_TEMPLATE,
        IR_OBJECT_TARGET,
        IR_PLACEMENT_TARGET,
        IR_LAYER_HINT,
        _LAYER_WORD.pattern,
        repr(sorted(_PREAMBLES.items())),
    ]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()
