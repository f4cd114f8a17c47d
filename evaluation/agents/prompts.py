"""The writer's context (Appendix 16.5 "Writer context"): one system prompt per task, and the requests.

* :func:`system_prompt`: identical for every writer of a task: the API reference (built from the API's
  own signatures and docstrings, so it cannot drift from what programs call), the privileged-information
  restrictions, the development instructions, the task family's scoring notes and the spatial-relation
  conventions.
* :func:`first_request`: the task, the instruction of an example scene and its head and wrist images.
* :func:`feedback_request`: the previous episode's verdict (strict outcome and whether the hand ended
  nearer the correct or a wrong candidate), its printed output, API call log and final camera views,
  and the history of development outcomes; or, for a skipped step, that no episode was run and why.

A request is a :class:`Message` (text and PNG images); the writer backends turn it into their wire
format, and the run folder logs it with each image's SHA-256 in place of its bytes.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Sequence

from bspatial.catalog.tasks import TASKS
from bspatial.evaluation.agents.api import METHODS, AgentAPI

HISTORY_EXCHANGES = 3
"""Appendix 16.5: each request includes the last three text exchanges."""
MAX_PRINTED_CHARS = 4000
"""The tail of the program's printed output and episode log shown to the writer."""
MAX_CALL_LOG_LINES = 60
"""Call-log entries shown to the writer (the first and last halves when longer)."""

RESTRICTIONS = """\
Privileged information: the program never receives object poses, names, identities or segmentation, nor
the task's target or candidates. It sees only what the API returns: images, depth, geometry from pixels,
the robot's own state, and the answers of the pointing model and the VLM. Do not try to reach the
simulator, the file system or the network; the sandbox refuses it and the program fails. Allowed imports:
numpy, math, re, cv2, PIL, scipy and the Python standard library."""

DEVELOPMENT = """\
Development: you write one program for this task. It is run on development episodes of the task (new
scenes and instructions each time); after each episode you get its verdict, the printed output, the API
call log and the final camera views, and you may revise the program. Before each run the program is
screened on a recorded scene: it is rejected if it raises, never commands a motion, makes 100 perception
calls in a row without a motion, or makes no API call for 20 s. The final program is frozen and run
unchanged on unseen test episodes, where no feedback exists: make it general, closed-loop and robust
(re-observe after moving the base, check motion results, retry). Termination and success are the
simulator's: the episode ends on a decided outcome or when its step budget runs out.

Answer with a short plan (a few sentences), then the complete program in one ```python block that
defines run(api)."""

CONVENTIONS = """\
Spatial conventions: positions are metres in the robot base frame (x forward, y left, z up, origin on the
floor under the robot); the frame moves with the robot, so re-express or re-observe positions after base
motion. Left and right are the robot's (its camera's) left and right; leftmost / rightmost order objects
along the robot's left-right axis. Closest / farthest compare distances between object centres. Sizes
(largest, 2nd smallest...) compare objects of one category. Bookcase cells are named row x column, rows
counted from the bottom and columns from the robot's left. Container layers are counted from the bottom."""

SCORING_NOTES: dict[str, str] = {
    "reach": ("Scoring (contact reach): the first contact of a hand with any candidate object decides: the "
              "instructed object is a success, another candidate is a wrong target. Without contact, soft "
              "credit goes to an episode whose hand came clearly closer to the instructed object than to any "
              "other candidate (at least halving its start distance)."),
    "reach_base_proximity": ("Scoring (soda cans on the floor): touching the instructed can succeeds, touching "
                             "another is wrong; without contact, the can nearest the robot base at the end "
                             "decides when it is within 0.70 m (instructed: success, another: wrong)."),
    "directional_placement": ("Scoring (directional placement): pick up the object and release it onto the "
                              "countertop on the instructed side of the reference object, not on top of the "
                              "reference (within 0.17 m of it) and not on the floor; the other side is wrong."),
    "container_placement": ("Scoring (container placement): pick up the object and release it so it rests "
                            "inside the container in the instructed layer; another layer is wrong, outside the "
                            "container or on the floor is no success."),
}
"""Task-family scoring notes (Table S4, in the writer's words)."""


@dataclass(frozen=True)
class Message:
    """One chat message: role, text and PNG images (shown before the text)."""

    role: str
    text: str
    images: tuple[bytes, ...] = field(default_factory=tuple)
    image_names: tuple[str, ...] = field(default_factory=tuple)

    def to_log(self) -> dict[str, Any]:
        """The JSON form the run folder keeps (each image's name and SHA-256, not its bytes)."""
        return {"role": self.role, "text": self.text,
                "images": [{"name": n, "sha256": hashlib.sha256(b).hexdigest()}
                           for n, b in zip(self.image_names or [""] * len(self.images), self.images)]}


def api_reference() -> str:
    """Every API method with its signature and docstring's first paragraph, from :class:`AgentAPI` itself."""
    lines = ["API (call as api.<name>): api.instruction is the episode's instruction (str)."]
    for name in METHODS:
        method = getattr(AgentAPI, name)
        signature = str(inspect.signature(method)).replace("(self, ", "(").replace("(self)", "()").replace("'", "")
        doc = inspect.getdoc(method) or ""
        lines.append(f"- {name}{signature}: {' '.join(doc.split(chr(10) + chr(10))[0].split())}")
    lines.append("Motion, gripper and wait calls return a result r with r.success, r.reason (stalled, blocked, "
                 "pushing, timeout), r.detail and r.steps (approach also r.point); bool(r) is r.success.")
    return "\n".join(lines)


def system_prompt(task: str) -> str:
    """The task's system prompt (module docstring); the same text for every writer."""
    spec = TASKS[task]
    return "\n\n".join([f"You write Python programs that control a mobile two-armed robot in a household "
                        f"simulator, for the task {task}.", api_reference(), RESTRICTIONS, DEVELOPMENT,
                        SCORING_NOTES[spec.family], CONVENTIONS])


def first_request(task: str, instruction: str, images: dict[str, bytes]) -> Message:
    """The first request: the task, an example scene's instruction and its camera images."""
    names = tuple(images)
    text = (f"Task: {task}. An example scene of this task is shown in the images ({', '.join(names)} cameras, in "
            f"that order); its instruction is: {instruction!r}. Other episodes have other scenes and "
            f"instructions. Write the first version of the program.")
    return Message("user", text, tuple(images[n] for n in names), names)


def _clip(text: str, limit: int = MAX_PRINTED_CHARS) -> str:
    return text if len(text) <= limit else "[... earlier output cut ...]\n" + text[-limit:]


def _call_lines(call_log: Sequence[dict[str, Any]]) -> str:
    entries = list(call_log)
    if len(entries) > MAX_CALL_LOG_LINES:
        half = MAX_CALL_LOG_LINES // 2
        entries = entries[:half] + [{"method": f"... {len(call_log) - 2 * half} calls ..."}] + entries[-half:]
    lines = []
    for e in entries:
        outcome = e.get("error") or ("" if "success" not in e else ("ok" if e["success"] else f"failed: {e['reason']}"))
        args = json.dumps(e.get("args", []))[:160]
        lines.append(f"{e['method']}{args} {outcome}".rstrip())
    return "\n".join(lines) or "(no calls)"


def feedback_request(feedback: dict[str, Any], history: Sequence[str], images: dict[str, bytes]) -> Message:
    """A later request: the last development step's feedback (see :func:`describe_step`), the outcome
    history and the final camera views."""
    parts = [f"Development step {feedback['step']} result."]
    if feedback.get("skipped"):
        parts.append(f"No episode was run: {feedback['skipped']}")
    else:
        parts += [f"Verdict: {feedback['verdict']}",
                  f"Program ended: {feedback['program_outcome']} ({feedback['program_reason']})",
                  "Printed output and log:\n" + (_clip(feedback.get("printed", "")) or "(nothing)"),
                  "API call log:\n" + _call_lines(feedback.get("call_log", []))]
    for note in feedback.get("screening_notes", []):
        parts.append(f"Screening: {note}")
    parts.append("History of development outcomes:\n" + ("\n".join(history) or "(none yet)"))
    if images:
        parts.append(f"Final camera views: {', '.join(images)} (the images, in that order).")
    parts.append("Write the next version of the program (a short plan, then the complete module).")
    names = tuple(images)
    return Message("user", "\n\n".join(parts), tuple(images[n] for n in names), names)


def retry_request(reason: str) -> Message:
    """The request after a screening rejection, within the same development step."""
    return Message("user", f"The program was rejected before simulation: {reason}. Fix it and answer again with a "
                           f"short plan and the complete module.")


def conversation(system: str, exchanges: Sequence[tuple[Message, str]], request: Message) -> list[Message]:
    """What one request sends: the system prompt, the last :data:`HISTORY_EXCHANGES` text exchanges (their
    images dropped: only the current request carries images), then the request."""
    messages = [Message("system", system)]
    for sent, reply in list(exchanges)[-HISTORY_EXCHANGES:]:
        messages += [Message(sent.role, sent.text), Message("assistant", reply)]
    return messages + [request]
