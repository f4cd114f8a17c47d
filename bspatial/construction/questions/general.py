"""General VQA (Table S1): single-frame and multi-frame (rotation, navigation) questions over the activity scenes.

Pipeline (Appendix 11, "General VQA filtering and sampling"):

1. **Frames.** Per activity, ``layouts`` seeded apartments (:func:`~bspatial.construction.questions.activities.activity_scene`);
   per apartment ``views`` single-frame head views (the robot at a seeded pose facing the work wall,
   720x720 head camera) and ``rotations`` rotation samples (four 720x720 frames from the robot's head
   height, turning left by 90 degrees between frames, so the four cover 360 degrees) and ``navigations``
   navigation samples (four frames along a walk from the activity room through neighbouring rooms).
2. **Candidates.** Every template of Table S1 is asked about every qualifying entity of the frame,
   with the filters: relation margins (distance >= 15% relative, size >= 10%), visibility by pixel
   count (stricter for the answer object), direction dominance.
3. **Sublinear cap.** A frame gives at most ``ceil(CAP_SCALE * sqrt(n))`` questions, ``n`` the distinct
   questions it offers.
4. **Category-controlled subsampling** to the exact per-subtype counts, prior-balanced
   (:mod:`bspatial.construction.quality.debias`): the picks spread over the answer values (so no answer value
   dominates a category) and keep the option texts, letters and question words uninformative (so a
   text-only guesser stays at chance); too few candidates raise :class:`GeneralShortfall` naming the
   subtype and the shortfall.

Every third single-frame view (the second of each three) is a reaching view, the others standing views
(the robot 1.1-1.5 m from the furniture, arms at home). Reaching views (close to the work surface, both hands posed over it by IK), so that objects lie
on every side of the robot's arms.

Multi-frame questions are about rooms, "measuring from room centers" (Table S1): direction of one
room from another in the egocentric frame of the last frame (front-left / front-right / back-left /
back-right), which room is closest to the robot, which room is largest. A room counts as observed
(and may be named or offered) when its floor covers at least :data:`MIN_ROOM_PIXELS` over the four frames,
and a sample whose last frame is mostly wall (:data:`MAX_LAST_FRAME_WALL_SHARE`) gives no questions.

Single-frame size questions come from their own same-category views (:mod:`~bspatial.construction.questions.size_views`:
four marked objects of one category on the work surface), the Appendix 11.1 rule that size compares objects
of the same category; direction distractors are false by the direction margin
(:func:`bspatial.world.relations.false_directions`).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bspatial.sim.backend import SimBackend
from bspatial.common.seeds import derive_seed
from bspatial.catalog.thresholds import DISTANCE_MARGIN, SIZE_MARGIN
from bspatial.world import relations
from bspatial.construction.questions.activities import ROOM_NAMES, ActivityScene
from bspatial.construction.items.frames import MAX_LAST_FRAME_WALL_SHARE, MIN_ROOM_PIXELS, FrameRecord, Rejected, \
    view_shares
from bspatial.construction.items.marks import Mark, mark_frame
from bspatial.construction.items.records import VQARecord
from bspatial.construction.questions.templates import Question, display, four_options
from bspatial.world.spec import CameraSpec, RobotSpawn

CAP_SCALE = 1.5
"""Sublinear per-frame cap ceil(1.5 sqrt(n)) (Appendix 11 names a sublinear cap but no constant)."""
ROTATION_FOVY_DEG = 90.0
"""Rotation frames: a 90-degree square view, so four frames 90 degrees apart cover the full 360 degrees
(Appendix 11). Our head camera's 60 degrees would leave gaps."""
ROTATION_PITCH_DEG = 10.0
"""Rotation frames look 10 degrees down so room floors (the room-visibility masks) are in view."""
HEAD_HEIGHT_M = 1.5
"""Rotation and navigation camera height: about the robot's head camera at its start pose
(:data:`bspatial.catalog.robot.HEAD_CAMERA_HEIGHT_M`, 1.45 m), rounded; these are virtual cameras, not the head's."""
SETS_PER_REFERENCE = 2
"""Distance questions per object reference (with different answers): more from one frame would repeat it.
The camera and the arms, one each per frame, ask about every object that can be the answer."""
TRIPLES_PER_ANSWER = 4
"""Single-frame distance candidates: distractor triples drawn per answer (at most one is kept)."""
SIZE_VIEWS = 4
"""Same-category size views per apartment (:mod:`~bspatial.construction.questions.size_views`), one size question
each: the paper preset's 147 apartments give up to 588 candidates for its 139 size questions. With 2 (at
most 294, about 200 found) the pick was nearly forced (measured on a 16-activity plan: 68 candidates for 46)
and the blind baseline scored 9.4% (chance 25%); 4 views measured 27.4% there (with the per-fold pick)."""
N_DISTRACTORS = 3
ARMS = ("left", "right")
DIRECTIONS_4 = ("front-left", "front-right", "back-left", "back-right")
"""Multi-frame direction answer space (Table S1)."""

SINGLE = "single_frame"
ROTATION = "multi_frame_rotation"
NAVIGATION = "multi_frame_navigation"


class GeneralShortfall(RuntimeError):
    """Too few candidates for a (setting, category, subtype): names it and the shortfall."""


@dataclass
class Candidate:
    """One generated question before subsampling."""

    setting: str
    question: Question
    balance: str  # the answer value that category-controlled subsampling balances
    frame_id: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return self.question.category, self.question.subtype


# ----------------------------------------------------------------------------- views


def view_robot(ascene: ActivityScene, rng: np.random.Generator) -> RobotSpawn:
    """A seeded single-frame viewpoint: 1.1-1.5 m from the furniture fronts, facing a point between the work
    surface and the storage unit (close enough that the objects' depths differ by the distance margin)."""
    aim_y = float(rng.uniform(min(ascene.support_y, ascene.storage_y), max(ascene.support_y, ascene.storage_y)))
    x = ascene.support_front_x + float(rng.uniform(1.1, 1.5))
    y = aim_y + float(rng.uniform(-0.4, 0.4))
    yaw = math.atan2(aim_y - y, ascene.support_front_x - 0.3 - x)
    return RobotSpawn(x, y, yaw)


REACH_STANCE_M = (0.35, 0.5)
"""Reaching views stand with the base centre this far from the work surface's front edge (the base is
0.3 m deep, the arms reach about 0.6 m from its centre)."""
REACH_DEPTH_M = (0.02, 0.3)
REACH_SIDEWAYS_M = (0.0, 0.25)
REACH_ABOVE_SURFACE_M = (0.05, 0.35)
"""Reaching views: each hand is posed by IK towards a seeded point this far behind the work surface's front
edge and this high above it (the IK result is used as is: out of reach, the arm stretches towards it)."""


def reaching_robot(sim: SimBackend, ascene: ActivityScene, rng: np.random.Generator) -> RobotSpawn:
    """A seeded viewpoint close to the work surface with both arms mid-reach over it (IK).

    Every third single-frame view is a reaching view. From the standing views the hands hang just below
    the head camera, so nearly every object is "front" of an arm (measured on the paper preset: 596 of
    691 robot-arm-relative direction candidates) and the arm subtypes would test one answer; with the
    hands among the objects, left / right / front / back / above / below all occur.
    """
    surface = next(s for s in ascene.scene.surfaces if s.owner == "support_0")
    xs = surface.polygon[:, 0]
    y = ascene.support_y + float(rng.uniform(-0.3, 0.3))
    spawn = RobotSpawn(ascene.support_front_x + float(rng.uniform(*REACH_STANCE_M)), y,
                       math.pi + float(rng.uniform(-0.15, 0.15)))
    sim.load(dataclasses.replace(ascene.scene, robot=spawn))
    arms: dict[str, tuple[float, ...]] = {}
    for side in ARMS:
        # Each hand stays in front of its own shoulder, within the head camera's view: the left arm over the
        # robot-left side (-y when facing -x), the right arm over the other.
        lo, hi = (y - REACH_SIDEWAYS_M[1], y - REACH_SIDEWAYS_M[0]) if side == "left" else (
            y + REACH_SIDEWAYS_M[0], y + REACH_SIDEWAYS_M[1])
        target = (float(xs.max() - rng.uniform(*REACH_DEPTH_M)), float(rng.uniform(lo, hi)),
                  surface.height + float(rng.uniform(*REACH_ABOVE_SURFACE_M)))
        arms[side] = tuple(float(q) for q in sim.solve_ik(side, target).qpos)
    return dataclasses.replace(spawn, left_arm=arms["left"], right_arm=arms["right"])


def rotation_pose(ascene: ActivityScene, rng: np.random.Generator) -> tuple[float, float, float]:
    """(x, y, first yaw) of a rotation sample; the yaw is kept >= 20 degrees off the room axes."""
    x0, x1, y0, y1 = ascene.work_bounds
    x, y = float(rng.uniform(x0, max(x0, x1))), float(rng.uniform(y0, max(y0, y1)))
    yaw = math.radians(float(rng.uniform(20.0, 70.0)) + 90.0 * int(rng.integers(4)))
    return x, y, yaw


def rotation_cameras(x: float, y: float, yaw0: float) -> tuple[CameraSpec, ...]:
    """Four cameras at head height turning left by 90 degrees; the last one is the question's frame."""
    drop = math.tan(math.radians(ROTATION_PITCH_DEG))
    cams = []
    for k in range(4):
        yaw = yaw0 + k * math.pi / 2
        cams.append(CameraSpec(f"rotation_{k}", (x, y, HEAD_HEIGHT_M),
                               (x + math.cos(yaw), y + math.sin(yaw), HEAD_HEIGHT_M - drop), fovy_deg=ROTATION_FOVY_DEG))
    return tuple(cams)


def rotation_scene(ascene: ActivityScene, x: float, y: float, yaw0: float):
    """The apartment with the four rotation cameras; the robot body is left out (the views are its head's)."""
    return dataclasses.replace(ascene.scene, robot=None, cameras=ascene.scene.cameras + rotation_cameras(x, y, yaw0))


def navigation_poses(ascene: ActivityScene, rng: np.random.Generator) -> list[tuple[float, float, float]]:
    """Four head poses along a walk from the activity room through its neighbours (general navigation).

    The walk goes from a point near the activity room's centre to the centre of a neighbouring room and,
    when that room has another neighbour, on to its centre: straight legs between room centres pass
    through the centred wall openings. Frames sit at equal arc length, facing along the walk.
    """
    from bspatial.construction.questions.activities import GRID_COLUMNS

    def neighbours(i: int) -> list[int]:
        r, c = divmod(i, GRID_COLUMNS)
        out = [(r + dr) * GRID_COLUMNS + (c + dc) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
               if 0 <= r + dr < len(ascene.rooms) // GRID_COLUMNS and 0 <= c + dc < GRID_COLUMNS]
        return sorted(out)

    home = ascene.activity_room
    first = neighbours(home)[int(rng.integers(len(neighbours(home))))]
    onward = [n for n in neighbours(first) if n != home]
    stops = [home, first] + ([onward[int(rng.integers(len(onward)))]] if onward else [])
    points = [np.asarray(ascene.rooms[i].center, float) for i in stops]
    points[0] = points[0] + rng.uniform(-0.3, 0.3, 2)
    legs = [float(np.linalg.norm(b - a)) for a, b in zip(points, points[1:])]
    total, poses = sum(legs), []
    for k in range(4):
        d, leg = total * k / 3, 0
        while leg < len(legs) - 1 and d > legs[leg]:
            d -= legs[leg]
            leg += 1
        a, b = points[leg], points[leg + 1]
        xy = a + (b - a) * min(d / legs[leg], 1.0)
        poses.append((float(xy[0]), float(xy[1]), math.atan2(b[1] - a[1], b[0] - a[0])))
    return poses


def navigation_scene(ascene: ActivityScene, poses: list[tuple[float, float, float]]):
    """The apartment with one head-height camera per navigation pose (the robot body left out)."""
    drop = math.tan(math.radians(ROTATION_PITCH_DEG))
    cams = tuple(CameraSpec(f"navigation_{k}", (x, y, HEAD_HEIGHT_M),
                            (x + math.cos(yaw), y + math.sin(yaw), HEAD_HEIGHT_M - drop), fovy_deg=ROTATION_FOVY_DEG)
                 for k, (x, y, yaw) in enumerate(poses))
    return dataclasses.replace(ascene.scene, robot=None, cameras=ascene.scene.cameras + cams)


# ----------------------------------------------------------------------------- single-frame templates


ARM_RELATIVE_DIRECTIONS = ("left", "right", "above", "below")
"""Arm-relative direction questions ask across the image (:func:`~bspatial.world.relations.camera_plane_direction`),
depth left out, and offer these four. Asked in 3D with distractors from all six directions, "above" was never the
answer of the paper build's 66 items offering it and "back" once in 82 (the arms' hands hang below and in front of
the head camera), and a text-only guesser skipping them scored 48.7% on 150 items; keeping the 3D answer and
dropping those two distractors left mostly "front" answers (72.7%: a side answer seldom clears "front" by the
margin). Across the image the picked items' answers were right 52, left 50, below 44, above 4 of 150 (issue 29)."""


def single_frame_candidates(record: FrameRecord, ascene: ActivityScene, frame_id: str,
                            rng: np.random.Generator) -> list[Candidate]:
    """Every Table S1 single-frame question the frame supports, after the margin and visibility filters."""
    objects = {n: record.objects[n] for n in ascene.object_names}
    visible = [n for n, s in objects.items() if s.visible()]
    label = {n: display(objects[n].category) for n in objects}
    T = record.frame.T_world_cam
    arms = {a: p for a, p in record.eef_pos.items() if _in_image(record, p)}
    out: list[Candidate] = []

    def add(q: Question, balance: str, **meta) -> None:
        out.append(Candidate(SINGLE, q, balance, frame_id, meta))

    # Direction, object-relative: "From the viewpoint of {frame_idx}, where is {objA} relative to {objB}?"
    # Distractors are the directions false by the distractor margin (relations.false_directions): the
    # dominance rule alone let a second axis reach 2/3 of the answer's offset ("two options both true").
    findable = [n for n in visible if record.findable(n) is None]   # what a question may name, not only offer
    for a, b in itertools.permutations(findable, 2):
        answer = relations.camera_direction(objects[a].center, objects[b].center, T)
        if answer is not None:
            q = f"From the viewpoint of the image, where is the {label[a]} relative to the {label[b]}?"
            wrong = relations.false_directions(relations.camera_offsets(objects[a].center, objects[b].center, T), answer)
            add(four_options("direction", "object_relative", q, answer, wrong, rng), answer, object=a, reference=b)
    # Direction, robot-arm-relative: the arm's end-effector as the reference, camera perspective.
    for a, arm in itertools.product(findable, arms):
        answer = relations.camera_plane_direction(objects[a].center, arms[arm], T)
        if answer is not None:
            q = f"From the viewpoint of the image, where is the {label[a]} relative to the robot's {arm} arm?"
            wrong = [d for d in relations.false_directions(relations.camera_offsets(objects[a].center, arms[arm], T),
                                                           answer) if d in ARM_RELATIVE_DIRECTIONS]
            if len(wrong) == 3:
                add(four_options("direction", "robot_arm_relative", q, answer, wrong, rng), answer, object=a, arm=arm)
    # Locate: the storage cell / layer containing the object's centre.
    storage = record.objects[ascene.storage.name]
    if storage.visible():
        noun = "bookcase" if ascene.storage.kind == "grid" else "shelf"
        for a in findable:
            cell = relations.locate_cell(objects[a].center, ascene.storage.cells)
            if cell is not None and objects[a].visible(answer=True):
                q = f"From the viewpoint of the image, where is the {label[a]} located on the {noun}?"
                add(four_options("direction", "locate", q, cell, sorted(ascene.storage.cells), rng), cell, object=a,
                    cells={k: list(v) for k, v in ascene.storage.cells.items()})
    # Distance to an object, to the camera, to an arm: "which object is the closest to {objA / camera / robot arm}?"
    references: list[tuple[str, str, Any, dict]] = [
        ("object_relative", f"the {label[r]}", objects[r].center, {"reference": r}) for r in findable]
    references.append(("camera_relative", "the camera", T[:3, 3], {"reference": "camera"}))
    references += [("robot_arm_relative", f"the robot's {arm} arm", p, {"reference": f"{arm}_arm"}) for arm, p in arms.items()]
    for subtype, phrase, point, meta in references:
        pool = [n for n in visible if n != meta["reference"]]
        values = {n: relations.center_distance(objects[n].center, point) for n in pool}
        q = f"Measuring from the center of each object, which object is the closest to {phrase}?"
        per_reference = SETS_PER_REFERENCE if subtype == "object_relative" else len(pool)
        for answer, names in _decisive_sets(values, "closest", DISTANCE_MARGIN,
                                            [n for n in pool if objects[n].visible(answer=True)], rng,
                                            per_reference, TRIPLES_PER_ANSWER):
            add(four_options("distance", subtype, q, label[answer], [label[n] for n in names if n != answer], rng),
                objects[answer].category, option_objects={label[n]: n for n in names},
                values={n: values[n] for n in names}, point=list(np.asarray(point, float)), **meta)
    # Size questions come from the same-category size views (size_candidates), never from these frames:
    # one object per category here, and comparing a pillow with a mug is answered from typical sizes alone.
    return out


SIZE_QUESTION = "Measuring from the length of the longest dimension (length, width, or height), which object is the longest?"
"""Table S1's single-frame size template."""


def size_candidates(record: FrameRecord, names: tuple[str, ...], frame_id: str,
                    rng: np.random.Generator) -> list[Candidate]:
    """The size question of a same-category size view (:mod:`~bspatial.construction.questions.size_views`): its four
    objects as numbered marks ("mug 1".."mug 4", numbers in seeded order); none when an option is not
    visible (the answer by the stricter threshold) or the longest does not clear the size margin."""
    objects = {n: record.objects[n] for n in names}
    sizes = {n: relations.longest_dimension(objects[n].extents) for n in names}
    answer, margin = relations.pick_by_rank(sizes, "largest")
    if margin < SIZE_MARGIN or not all(objects[n].visible(answer=(n == answer)) for n in names):
        return []
    noun = display(objects[answer].category)
    numbers = rng.permutation(len(names)) + 1
    label = {n: f"{noun} {k}" for n, k in zip(names, numbers)}
    try:
        marks = mark_frame(record, [(str(k), n) for n, k in zip(names, numbers)])
    except Rejected:   # four marks that would hide too much of an object: the view gives no question
        return []
    question = four_options("size", "object_relative", SIZE_QUESTION, label[answer],
                            [label[n] for n in names if n != answer], rng)
    return [Candidate(SINGLE, question, label[answer], frame_id,
                      {"option_objects": {label[n]: n for n in names}, "values": sizes,
                       "marks": [m.record() for m in marks]})]


def _in_image(record: FrameRecord, point) -> bool:
    uv, z = record.frame.project(np.asarray(point, float)[None])
    w, h = record.image_size
    return bool(z[0] > 0 and 0 <= uv[0, 0] < w and 0 <= uv[0, 1] < h)


def _decisive_sets(values: dict[str, float], relation: str, margin: float, answers: list[str],
                   rng: np.random.Generator, per_reference: int = SETS_PER_REFERENCE,
                   triples: int = 1) -> list[tuple[str, list[str]]]:
    """(answer, four names) sets whose ``relation`` winner clears ``margin``: up to ``per_reference`` answers,
    each with up to ``triples`` different distractor triples.

    For a candidate answer ``a``, the distractors are drawn from the names that lose to it by at least the
    margin (relative gap >= ``margin``), so the answer is decisive among the four options by construction;
    the caller's calculator check (``pick_by_rank``) re-confirms it. Several triples per answer give the
    prior-balanced subsampling (:func:`subsample`) a choice of distractors; it keeps at most one.
    """
    out = []
    answered = 0
    for a in (answers[i] for i in rng.permutation(len(answers))):
        losers = sorted(n for n in values if n != a and (values[n] > values[a] if relation == "closest" else values[n] < values[a])
                        and relations.relative_gap(values[n], values[a]) >= margin)
        if len(losers) < N_DISTRACTORS:
            continue
        seen: set[tuple[str, ...]] = set()
        for _ in range(triples):
            names = tuple(sorted([a, *(losers[i] for i in rng.choice(len(losers), N_DISTRACTORS, replace=False))]))
            winner, gap = relations.pick_by_rank({n: values[n] for n in names}, relation)
            if names not in seen and winner == a and gap >= margin:
                seen.add(names)
                out.append((a, list(names)))
        answered += bool(seen)
        if answered == per_reference:
            break
    return out


# ----------------------------------------------------------------------------- multi-frame (rotation) templates


def room_pixels(frames, ascene: ActivityScene) -> dict[str, int]:
    """Floor pixels of each room summed over the rotation frames (the room-visibility measure)."""
    total = {r.name: 0 for r in ascene.rooms}
    for frame in frames:
        counts = np.bincount(frame.segmentation[frame.segmentation >= 0].ravel())
        for i, name in frame.id_to_name.items():
            if name.startswith("floor_") and name[6:] in total and i < len(counts):
                total[name[6:]] += int(counts[i])
    return total


def wall_share(frame, ascene: ActivityScene) -> float:
    """Share of ``frame``'s pixels that show walls (the last-frame rule, :data:`MAX_LAST_FRAME_WALL_SHARE`)."""
    return view_shares(frame, ascene.scene)[0]


def quadrant(offset_xy, yaw: float) -> str | None:
    """front-left / front-right / back-left / back-right of a world-xy offset for a robot heading ``yaw``, or None
    within the axis margin."""
    return relations.clear_quadrant(offset_xy, yaw)


def rotation_candidates(pixels: dict[str, int], ascene: ActivityScene, pose: tuple[float, float, float], frame_id: str,
                        rng: np.random.Generator) -> list[Candidate]:
    """Table S1 multi-frame questions about the rooms observed in the four rotation frames."""
    x, y, yaw0 = pose
    return room_candidates(pixels, ascene, (x, y, yaw0 + 3 * math.pi / 2), frame_id, rng, ROTATION)


def room_candidates(pixels: dict[str, int], ascene: ActivityScene, last_pose: tuple[float, float, float],
                    frame_id: str, rng: np.random.Generator, setting: str) -> list[Candidate]:
    """Table S1 multi-frame questions about the observed rooms, in the last frame's egocentric frame."""
    x, y, last_yaw = last_pose
    rooms = {r.name: r for r in ascene.rooms if pixels.get(r.name, 0) >= MIN_ROOM_PIXELS}
    names = sorted(rooms)
    label = {n: ROOM_NAMES[rooms[n].kind] for n in names}
    centers = {n: np.asarray(rooms[n].center, float) for n in names}
    meta = {"robot_xy": [x, y], "last_yaw": last_yaw, "room_centers": {n: c.tolist() for n, c in centers.items()},
            "room_pixels": {n: pixels[n] for n in names}, "room_bounds": {n: list(rooms[n].bounds) for n in names}}
    out: list[Candidate] = []
    for a, b in itertools.combinations(names, 2):
        if rng.integers(2):
            a, b = b, a
        answer = quadrant(centers[a] - centers[b], last_yaw)
        if answer is not None:
            q = (f"From the viewpoint of the last frame, measuring from room centers, where is the {label[a]} "
                 f"relative to the {label[b]}?")
            out.append(Candidate(setting, four_options("direction", "object_relative", q, answer, DIRECTIONS_4, rng),
                                 answer, frame_id, {**meta, "object": a, "reference": b}))
    distances = {n: float(np.hypot(*(centers[n] - (x, y)))) for n in names}
    areas = {n: (rooms[n].bounds[1] - rooms[n].bounds[0]) * (rooms[n].bounds[3] - rooms[n].bounds[2]) for n in names}
    for values, relation, margin_needed, category, q in (
            (distances, "closest", DISTANCE_MARGIN, "distance",
             "Based on the given frames, measuring from room centers, which room is the closest to the robot's position "
             "at the last frame?"),
            (areas, "largest", SIZE_MARGIN, "size", "Based on the given frames, which room has the largest area?")):
        for answer, subset in _decisive_sets(values, relation, margin_needed, names, rng, per_reference=1):
            question = four_options(category, "object_relative", q, label[answer],
                                    [label[n] for n in subset if n != answer], rng)
            out.append(Candidate(setting, question, rooms[answer].kind, frame_id,
                                 {**meta, "option_rooms": {label[n]: n for n in subset},
                                  "values": {n: values[n] for n in subset}}))
    return out


# ----------------------------------------------------------------------------- cap and subsampling


def frame_cap(n: int) -> int:
    """The sublinear per-frame cap (Appendix 11): ceil(CAP_SCALE * sqrt(n)), never more than the n there are."""
    return min(n, math.ceil(CAP_SCALE * math.sqrt(n))) if n > 0 else 0


def _question_identity(c: Candidate) -> tuple:
    """One question of one frame; candidates that differ only in their distractors share it."""
    return c.frame_id, c.key, c.question.question, c.question.answer_text


def frame_room(candidates: list[Candidate]) -> dict[str, int]:
    """Each frame's cap: :func:`frame_cap` of the distinct questions it offers (distractor variants count once)."""
    questions: dict[str, set] = {}
    for c in candidates:
        questions.setdefault(c.frame_id, set()).add(_question_identity(c))
    return {frame: frame_cap(len(q)) for frame, q in questions.items()}


def scene_id(frame_id: str) -> str:
    """The activity layout a sample shows (``{activity}-l{layout}``): its frame id without the view part."""
    return frame_id.rsplit("-", 1)[0]


def quality_row(c: Candidate) -> dict[str, Any]:
    """The candidate in the data-quality report's record shape."""
    q = c.question
    # The scene decides the blind baseline's fold (quality.blind_fold), which the pick balances on its own.
    return {"id": c.frame_id, "category": q.category, "question": q.question, "options": list(q.options),
            "answer": q.answer, "frames": [image_path(c.frame_id, 0)], "scene": scene_id(c.frame_id)}


def image_path(frame_id: str, index: int) -> str:
    """Where frame ``index`` of sample ``frame_id`` is written in the build (the records' ``frames``)."""
    return f"images/general-{frame_id}-{index}.png"


def subsample(pool: list[Candidate], counts: dict[tuple[str, str], int], setting: str,
              rng: np.random.Generator) -> list[Candidate]:
    """Exactly ``counts[key]`` candidates per (category, subtype): prior-balanced, capped per frame.

    Per subtype, :func:`~bspatial.construction.quality.debias.balanced_choice` picks the questions whose option
    texts, letters and question words leave a text-only guesser at chance, spreading the picks over the
    answer values; each frame gives at most its :func:`frame_room` questions in all, and one question
    at most once. Subtypes are filled scarcest first (fewest candidates per question wanted), so a
    tight subtype is not starved by the frames' cap.

    Raises:
        GeneralShortfall: a key gets fewer than its count (all shortfalls are named).
    """
    from bspatial.construction.quality.debias import balanced_choice

    room = frame_room(pool)
    groups = {key: [c for c in pool if c.key == key] for key in counts}
    chosen: list[Candidate] = []
    short = {}
    for key in sorted(counts, key=lambda k: (len(groups[k]) / max(counts[k], 1), k)):
        group, n = groups[key], counts[key]
        picked = balanced_choice([quality_row(c) for c in group], n, [c.balance for c in group], rng,
                                 same=[_question_identity(c) for c in group], frames=[c.frame_id for c in group],
                                 room=room)
        if len(picked) < n:
            short[key] = (len(picked), n)
        chosen += [group[i] for i in picked]
    if short:
        detail = "; ".join(f"{setting} {c}/{s}: {have} candidates for {n} (short by {n - have})"
                           for (c, s), (have, n) in sorted(short.items()))
        raise GeneralShortfall(detail)
    return sorted(chosen, key=lambda c: (c.frame_id, c.key, c.question.question, c.question.options))


# ----------------------------------------------------------------------------- the build driver


@dataclass(frozen=True)
class GeneralPlan:
    """How much general VQA a preset builds.

    Attributes:
        single_frame: exact count per (category, subtype) of single-frame questions.
        multi_frame: exact count per (category, subtype) of multi-frame rotation questions.
        activities: how many of :data:`~bspatial.construction.questions.activities.GENERAL_ACTIVITIES` (in order).
        layouts: seeded apartments per activity; views / rotations / navigations: samples per apartment
            (navigation: four frames along a walk through neighbouring rooms, Appendix 11).
    """

    single_frame: tuple[tuple[tuple[str, str], int], ...]
    multi_frame: tuple[tuple[tuple[str, str], int], ...]
    activities: int
    layouts: int = 1
    views: int = 2
    rotations: int = 1
    navigations: int = 0

    def __post_init__(self) -> None:
        from bspatial.construction.questions.activities import GENERAL_ACTIVITIES

        if not 1 <= self.activities <= len(GENERAL_ACTIVITIES):
            raise ValueError(f"general.activities must be in [1, {len(GENERAL_ACTIVITIES)}], got {self.activities}")
        for name in ("layouts", "views", "rotations", "navigations"):
            if getattr(self, name) < 0:
                raise ValueError(f"general.{name} must be >= 0, got {getattr(self, name)}")
        for name in ("single_frame", "multi_frame"):
            for key, n in getattr(self, name):
                if n < 0:
                    raise ValueError(f"general.{name}[{key}] must be >= 0, got {n}")


def _seed(*parts) -> int:
    return derive_seed(*parts)


FRAMES_FOLDER = "general-frames"
"""Staging folder (under the build's records root) of the candidate frames' images: every activity writes its
frames there (:func:`activity_frames`, one build job per activity); :func:`write_general_records` moves the
chosen ones to ``images/`` and removes the rest."""


@dataclass
class ActivityPools:
    """One activity's candidates (all its layouts), in the order the pooled subsample reads them."""

    activity: str
    single: list[Candidate]
    multi: list[Candidate]


def activity_frames(sim: SimBackend, plan: GeneralPlan, seed: int, activity: str, root) -> ActivityPools:
    """Render ``activity``'s frames for ``plan`` and generate their candidates; the images of every frame that
    has candidates go to ``root /`` :data:`FRAMES_FOLDER` under their :func:`image_path` names.

    Every frame draws from its own seeded generator and every apartment from ``(activity, layout)``, so an
    activity's candidates do not depend on which process rendered it or what that process rendered before.
    """
    from pathlib import Path

    from bspatial.construction.items.frames import png_bytes
    from bspatial.construction.questions.activities import activity_scene

    staged = Path(root) / FRAMES_FOLDER
    (staged / "images").mkdir(parents=True, exist_ok=True)
    single_pool: list[Candidate] = []
    multi_pool: list[Candidate] = []
    for layout in range(plan.layouts):
        ascene = activity_scene(activity, _seed(seed, layout))
        jobs = ([(single_pool, f"{activity}-l{layout}-v{v}", functools.partial(_view_frame, reaching=v % 3 == 1))
                 for v in range(plan.views)]
                + [(single_pool, f"{activity}-l{layout}-s{v}", _size_frame) for v in range(SIZE_VIEWS)]
                + [(multi_pool, f"{activity}-l{layout}-r{r}", _rotation_frames) for r in range(plan.rotations)]
                + [(multi_pool, f"{activity}-l{layout}-n{r}", _navigation_frames) for r in range(plan.navigations)])
        for pool, frame_id, make in jobs:
            found, images = make(sim, ascene, activity, frame_id, np.random.default_rng(_seed(seed, frame_id)))
            for k, rgb in enumerate(images):
                (staged / image_path(frame_id, k)).write_bytes(png_bytes(rgb))
            pool += found
    return ActivityPools(activity, single_pool, multi_pool)


def _view_frame(sim: SimBackend, ascene: ActivityScene, activity: str, frame_id: str, rng: np.random.Generator, *,
                reaching: bool) -> tuple[list[Candidate], list[np.ndarray]]:
    """A single-frame view (``reaching``: with the robot's hand out): its candidates and, if any, its image."""
    from bspatial.construction.items.frames import capture

    robot = reaching_robot(sim, ascene, rng) if reaching else view_robot(ascene, rng)
    record = capture(sim, dataclasses.replace(ascene.scene, robot=robot))
    found = single_frame_candidates(record, ascene, frame_id, rng)
    shared = dict(activity=activity, camera=record.camera_dict(),  # one copy per frame, not per candidate
                  eef_pos={k: list(map(float, p)) for k, p in record.eef_pos.items()},
                  objects={n: record.objects[n].to_dict() for n in ascene.object_names})
    for c in found:
        c.metadata.update(shared)
    return found, [record.frame.rgb] if found else []


def _size_frame(sim: SimBackend, ascene: ActivityScene, activity: str, frame_id: str,
                rng: np.random.Generator) -> tuple[list[Candidate], list[np.ndarray]]:
    """A same-category size view: its candidates and their marked image (the last candidate's marks)."""
    from bspatial.construction.items.frames import capture
    from bspatial.construction.items.marks import draw_marks
    from bspatial.construction.questions.size_views import size_view

    view = size_view(ascene, rng)
    if view is None:
        return [], []
    scene, names = view
    record = capture(sim, scene)
    found = size_candidates(record, names, frame_id, rng)
    images = []
    for c in found:
        c.metadata.update(activity=activity, camera=record.camera_dict(),
                          objects={n: record.objects[n].to_dict() for n in names})
        images = [draw_marks(record.frame.rgb, [Mark.from_record(m) for m in c.metadata["marks"]])]
    return found, images


def _four_frames(sim: SimBackend, prefix: str) -> list:
    from bspatial.catalog.schema import CONSTRUCTION_FRAME_SIZE

    return [sim.render(f"{prefix}_{k}", width=CONSTRUCTION_FRAME_SIZE, height=CONSTRUCTION_FRAME_SIZE)
            for k in range(4)]


def _cameras(frames: list) -> list[dict]:
    return [{"K": f.K.tolist(), "T_world_cam": f.T_world_cam.tolist()} for f in frames]


def _rotation_frames(sim: SimBackend, ascene: ActivityScene, activity: str, frame_id: str,
                     rng: np.random.Generator) -> tuple[list[Candidate], list[np.ndarray]]:
    """Four frames 90 degrees apart from one pose: their room candidates (none when the last frame is mostly wall)."""
    pose = rotation_pose(ascene, rng)
    sim.load(rotation_scene(ascene, *pose))
    frames = _four_frames(sim, "rotation")
    walls = wall_share(frames[-1], ascene)
    found = rotation_candidates(room_pixels(frames, ascene), ascene, pose, frame_id, rng) \
        if walls <= MAX_LAST_FRAME_WALL_SHARE else []
    for c in found:
        c.metadata.update(activity=activity, last_frame_wall_share=walls, cameras=_cameras(frames))
    return found, [f.rgb for f in frames] if found else []


def _navigation_frames(sim: SimBackend, ascene: ActivityScene, activity: str, frame_id: str,
                       rng: np.random.Generator) -> tuple[list[Candidate], list[np.ndarray]]:
    """Four frames along a walk: their room candidates in the last pose's frame (none when it is mostly wall)."""
    poses = navigation_poses(ascene, rng)
    sim.load(navigation_scene(ascene, poses))
    frames = _four_frames(sim, "navigation")
    walls = wall_share(frames[-1], ascene)
    found = room_candidates(room_pixels(frames, ascene), ascene, poses[-1], frame_id, rng, NAVIGATION) \
        if walls <= MAX_LAST_FRAME_WALL_SHARE else []
    for c in found:
        c.metadata.update(activity=activity, poses=[list(p) for p in poses], last_frame_wall_share=walls,
                          cameras=_cameras(frames))
    return found, [f.rgb for f in frames] if found else []


def write_general_records(pools: list[ActivityPools], plan: GeneralPlan, seed: int, root, handle) -> dict[str, int]:
    """Pool the activities' candidates (in :data:`GENERAL_ACTIVITIES` order), cap and subsample them, move the
    chosen frames' images from :data:`FRAMES_FOLDER` to ``root/images``, remove the rest, and write the records
    (sorted by id) to ``handle``. Returns counts per ``<setting>/<category>/<subtype>``.

    Raises:
        GeneralShortfall: a (setting, category, subtype) has too few candidates.
        ValueError: ``pools`` are not the plan's activities in order.
    """
    import json
    import shutil
    from pathlib import Path

    from bspatial.construction.questions.activities import GENERAL_ACTIVITIES

    expected = list(GENERAL_ACTIVITIES[: plan.activities])
    if [p.activity for p in pools] != expected:
        raise ValueError(f"pools must be the plan's activities in order {expected}, got {[p.activity for p in pools]}")
    root = Path(root)
    staged = root / FRAMES_FOLDER
    single_pool = [c for p in pools for c in p.single]
    multi_pool = [c for p in pools for c in p.multi]
    rng = np.random.default_rng(_seed(seed, "general-subsample"))
    chosen = subsample(single_pool, dict(plan.single_frame), SINGLE, rng)
    chosen += subsample(multi_pool, dict(plan.multi_frame), "multi_frame", rng)
    written: set[str] = set()
    rows = []
    per_frame: dict[str, int] = {}
    for c in chosen:
        k = per_frame[c.frame_id] = per_frame.get(c.frame_id, -1) + 1
        paths = [image_path(c.frame_id, i) for i in range(1 if c.setting == SINGLE else 4)]
        if c.frame_id not in written:
            for path in paths:
                (staged / path).replace(root / path)
            written.add(c.frame_id)
        q = c.question
        prefix = "gs" if c.setting == SINGLE else "gm"
        rows.append(VQARecord(f"{prefix}-{c.frame_id}-{k:02d}", c.setting, q.category, q.subtype, tuple(paths),
                              q.question, q.options, q.answer,
                              metadata={**c.metadata, **q.metadata, "build_seed": seed,
                                        "scene": scene_id(c.frame_id)}).to_row())
    shutil.rmtree(staged, ignore_errors=True)
    counts: dict[str, int] = {}
    for row in sorted(rows, key=lambda r: r["id"]):
        handle.write(json.dumps(row, sort_keys=True) + "\n")
        key = f"{row['setting']}/{row['category']}/{row['subtype']}"
        counts[key] = counts.get(key, 0) + 1
    return counts
