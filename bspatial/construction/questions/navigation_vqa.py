"""Task-grounded navigation VQA: where is the destination, relative to the robot's current view?

Appendix 11 ("Navigation context") and Appendix 15.1 ("Task-grounded navigation"): a question shows
the environment's curated **context tour** (ordered head frames recorded along a traversal,
:func:`bspatial.tasks.navigation.tour_poses`) followed by the robot's **current view**, and asks in
which quadrant (front-left / front-right / back-left / back-right, robot-centric and top-down) the
task's destination lies. The answer is computed from simulator state: the destination point
(:func:`bspatial.tasks.navigation.destination_point`: the object's footprint centre or the room's
centre) in the robot's base frame at the current pose.

Current poses are drawn along the scripted expert's route from a validated spawn (where a navigation
policy actually is during an episode): a random point of the A* route, heading along the route plus
a random turn. A pose is kept when the goal criterion does not hold there, the destination is at
least :data:`MIN_TARGET_DISTANCE_M` away, and its bearing is at least :data:`~bspatial.catalog.thresholds.QUADRANT_AXIS_MARGIN_DEG` from
the front/back and left/right axes (a relation margin: no question sits on a quadrant boundary).
Each task's questions are picked from the candidates of twice the spawns they need
(:data:`SPAWN_CHOICE`, at most :data:`QUESTIONS_PER_SPAWN` per spawn) by the prior-balanced pick of
:mod:`bspatial.construction.quality.debias`, spread over the four quadrants as far as the poses allow, so no
answer value dominates a task and the instruction's words do not predict the quadrant.

Implementation choices (the paper gives no number): the tour is subsampled evenly to
:data:`~bspatial.catalog.schema.CONTEXT_FRAMES` frames (in order, first and last kept) at :data:`NAV_FRAME_SIZE` pixels, and
frames are stored as JPEG (:data:`JPEG_QUALITY`) because every question repeats its scene's tour.

Example:
    >>> quadrant((0.0, 0.0, 0.0), (1.0, 2.0))
    'front-left'
    >>> quadrant((0.0, 0.0, 3.14159), (1.0, 2.0))   # facing -x: the point is behind and to the right
    'back-right'
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Collection, Sequence

import numpy as np

from bspatial.sim.backend import SimBackend
from bspatial.catalog.schema import CONTEXT_FRAMES
from bspatial.catalog.thresholds import QUADRANT_AXIS_MARGIN_DEG
from bspatial.common.seeds import derive_seed
from bspatial.construction.quality.debias import PoolFeatures, balanced_choice
from bspatial.construction.items.frames import MAX_LAST_FRAME_WALL_SHARE, MIN_VIEW_CONTENT_SHARE, view_shares
from bspatial.construction.items.records import VQARecord
from bspatial.world import relations

QUADRANTS: tuple[str, ...] = ("front-left", "front-right", "back-left", "back-right")
"""Appendix 15.1: "answer with the quadrant the target lies in"; Table S1's multi-frame relations."""
MIN_TARGET_DISTANCE_M = 1.0
"""The destination is at least this far from the base (closer, "front-left" of a 2 m table is moot)."""
NAV_FRAME_SIZE = 320
"""Pixels (square) of the context and current frames."""
JPEG_QUALITY = 90
MAX_TURN_RAD = math.pi / 2
"""Current heading = route heading + uniform(-MAX_TURN_RAD, MAX_TURN_RAD)."""
SUBTYPE = "robot_relative"
QUESTION = "Task: {instruction} Where is the {destination} relative to the robot?"


def _offset(base_pose: Sequence[float], point: Sequence[float]) -> tuple[tuple[float, float], float]:
    x, y, yaw = (float(v) for v in base_pose)
    return (float(point[0]) - x, float(point[1]) - y), yaw


def quadrant(base_pose: Sequence[float], point: Sequence[float]) -> str:
    """The quadrant of ``point`` (world xy) in the frame of ``base_pose`` (x, y, yaw; x forward, y left)."""
    return relations.quadrant(*_offset(base_pose, point))


def axis_margin_deg(base_pose: Sequence[float], point: Sequence[float]) -> float:
    """Angle (degrees) between the bearing of ``point`` and the nearest robot axis (0..45)."""
    return relations.axis_margin_deg(*_offset(base_pose, point))


@dataclass(frozen=True)
class NavQuestion:
    """One task-grounded navigation question before rendering."""

    task: str
    seed: int
    pose: tuple[float, float, float]
    destination: str
    question: str
    options: tuple[str, ...]
    answer: str          # letter
    answer_text: str
    margin_deg: float
    distance_m: float


def context_indices(n_tour: int, k: int = CONTEXT_FRAMES) -> list[int]:
    """``k`` evenly spaced indices into a tour of ``n_tour`` frames, first and last included, ordered."""
    if n_tour < 1:
        raise ValueError(f"n_tour must be >= 1, got {n_tour}")
    if n_tour <= k:
        return list(range(n_tour))
    return sorted({int(round(i * (n_tour - 1) / (k - 1))) for i in range(k)})


def _route(backend: SimBackend, instance) -> np.ndarray:
    """(N, 2) world points of the expert's A* route from the spawn, densified every 0.1 m."""
    from bspatial.tasks.experts.navigation import NavigationExpert

    expert = NavigationExpert(backend, instance)
    start = np.array([instance.robot.x, instance.robot.y])
    pts = [start, *expert.plan(start)]
    dense = [start]
    for a, b in zip(pts, pts[1:]):
        n = max(1, int(np.ceil(np.linalg.norm(b - a) / 0.1)))
        dense += [a + (b - a) * (k / n) for k in range(1, n + 1)]
    return np.array(dense)


def candidate_questions(backend: SimBackend, instance, rng: np.random.Generator, *, max_draws: int = 200) -> list[NavQuestion]:
    """Every valid question among ``max_draws`` poses drawn on the route of ``instance`` (a navigation instance)."""
    from bspatial.tasks import navigation

    route = _route(backend, instance)
    target = navigation.destination_point(instance)
    destination = navigation.NAV_TASKS[instance.task].destination
    out: list[NavQuestion] = []
    for _ in range(max_draws):
        i = int(rng.integers(len(route)))
        ahead = route[min(i + 3, len(route) - 1)] - route[max(i - 3, 0)]
        yaw = math.atan2(ahead[1], ahead[0]) + float(rng.uniform(-MAX_TURN_RAD, MAX_TURN_RAD))
        pose = (float(route[i][0]), float(route[i][1]), math.atan2(math.sin(yaw), math.cos(yaw)))
        distance = float(np.hypot(target[0] - pose[0], target[1] - pose[1]))
        margin = axis_margin_deg(pose, target)
        if navigation.goal_reached(instance, pose) or distance < MIN_TARGET_DISTANCE_M or margin < QUADRANT_AXIS_MARGIN_DEG:
            continue
        answer_text = quadrant(pose, target)
        options = tuple(QUADRANTS[j] for j in rng.permutation(len(QUADRANTS)))
        out.append(NavQuestion(
            instance.task, int(instance.seed or 0), pose, destination,
            QUESTION.format(instruction=instance.instruction, destination=destination), options,
            "ABCD"[options.index(answer_text)], answer_text, margin, distance))
    return out


def pick_questions(pool: Sequence[NavQuestion], spawn_of: Sequence[int], n: int, rng: np.random.Generator,
                   per_spawn: int, excluded: Collection[int] = (), features: PoolFeatures | None = None) -> list[int]:
    """Indices of ``n`` of a task's candidate questions: the prior-balanced pick of
    :func:`~bspatial.construction.quality.debias.balanced_choice`, spread over the quadrants, at most ``per_spawn``
    from each spawn (``spawn_of[i]``: the spawn of ``pool[i]``), none of ``excluded``. Fewer when the pool runs out.
    Excluded candidates stay in the pool with no room (rather than leaving it), so the seeded visiting order and
    hence the rest of the pick do not change. ``features``: the pool's :func:`pool_features` when picking from it
    again."""
    frames = [("excluded", i) if i in excluded else spawn_of[i] for i in range(len(pool))]
    room = {**dict.fromkeys(set(spawn_of), per_spawn), **{("excluded", i): 0 for i in excluded}}
    features = features or pool_features(pool)
    return balanced_choice(features.rows, n, [q.answer_text for q in pool], rng, frames=frames, room=room,
                           features=features)


def pool_features(pool: Sequence[NavQuestion]) -> PoolFeatures:
    """The blind baseline's features of ``pool``'s questions (quality-record rows), for :func:`pick_questions`."""
    return PoolFeatures([{"category": "direction", "question": q.question, "options": list(q.options),
                          "answer": q.answer} for q in pool])


def render_at(backend: SimBackend, pose: Sequence[float], *, size: int = NAV_FRAME_SIZE) -> np.ndarray:
    """The head camera's RGB with the base teleported (kinematically) to ``pose``."""
    return view_at(backend, pose, size=size).rgb


def view_at(backend: SimBackend, pose: Sequence[float], *, size: int = NAV_FRAME_SIZE):
    """The head camera's frame (RGB and segmentation) with the base teleported (kinematically) to ``pose``."""
    backend.set_base_pose(*pose)
    return backend.render("head", width=size, height=size)


MAX_VIEW_ROUNDS = 100
"""Pick rounds (each drops the picked views that fail :func:`view_ok` and picks again) before a shortfall."""


def view_ok(walls: float, content: float) -> bool:
    """The current-view rule (:data:`~bspatial.construction.items.frames.MIN_VIEW_CONTENT_SHARE`)."""
    return walls <= MAX_LAST_FRAME_WALL_SHARE and content >= MIN_VIEW_CONTENT_SHARE


def jpeg_bytes(rgb: np.ndarray, quality: int = JPEG_QUALITY) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def context_tour(backend: SimBackend, instance, *, size: int = NAV_FRAME_SIZE) -> list[np.ndarray]:
    """The environment's context frames (:func:`context_indices` of the full tour), as RGB arrays.

    The one source of context frames: the task-grounded navigation VQA shows them, and navigation policies
    see them at training and rollout (:mod:`bspatial.construction.demonstrations.context_frames`). Only the kept poses are
    rendered (the same pixels as rendering the whole tour and subsampling it).
    """
    from bspatial.tasks import navigation

    plan = navigation.plan_of(instance)
    keep = context_indices(len(navigation.tour_poses(plan)))
    return [frame.rgb for frame in navigation.render_tour(backend, plan, size=size, indices=keep)]


def _pick_with_views(sim: SimBackend, spawns: list, pool: Sequence[NavQuestion], spawn_of: Sequence[int], wanted: int,
                     pick_seed: int) -> tuple[list[int], dict[int, tuple[np.ndarray, float, float]]]:
    """:func:`pick_questions` over the candidates whose current view keeps :func:`view_ok`: the picked views are
    rendered, those failing are excluded and the pick is made again (same seed), until every picked view passes.
    Rendering only the picked views keeps the build's time: measured for 60 questions of move_to_garage (about a
    third of its candidate views pass), 9 rounds and 130 renders of a pool of 2,436 candidates.
    Returns the picked indices and, per rendered candidate, (RGB, walls share, content share); fewer than
    ``wanted`` indices when the pool runs out."""
    views: dict[int, tuple[np.ndarray, float, float]] = {}
    features = pool_features(pool)
    for _ in range(MAX_VIEW_ROUNDS):
        failing = {i for i, (_, walls, content) in views.items() if not view_ok(walls, content)}
        picked = pick_questions(pool, spawn_of, wanted, np.random.default_rng(pick_seed), QUESTIONS_PER_SPAWN,
                                excluded=failing, features=features)
        fresh = [i for i in picked if i not in views]
        if not fresh:
            return picked, views
        for s_index in sorted({spawn_of[i] for i in fresh}):
            scene = spawns[s_index][1].scene
            sim.load(scene)
            for i in (i for i in fresh if spawn_of[i] == s_index):
                frame = view_at(sim, pool[i].pose)
                views[i] = (frame.rgb, *view_shares(frame, scene))
    raise NavigationShortfall(f"navigation current views: the pick still shows views that fail the current-view rule "
                              f"after {MAX_VIEW_ROUNDS} rounds")


QUESTIONS_PER_SPAWN = 6
"""Questions drawn along one spawn's route before the next spawn (spreads each task over routes)."""
SPAWN_CHOICE = 2
"""Spawns drawn per spawn's worth of questions, so the prior-balanced pick has a choice of routes."""
MAX_SPAWNS_PER_TASK = 400
"""Spawns tried per task before the requested count is declared unreachable."""


class NavigationShortfall(RuntimeError):
    """Too few valid questions for a navigation task: names it and the shortfall."""


def _seed(seed: int, task: str, k: int) -> int:
    
    return derive_seed(seed, "task_navigation", task, k)


def write_navigation(sim: SimBackend, counts: dict[str, int], seed: int, root, handle) -> dict[str, int]:
    """Build ``counts[task]`` task-grounded navigation questions per task into records.

    Frames go to ``root/images`` as JPEG (each environment's context tour once, shared by its
    questions); rows (one JSON line each, in task then draw order) to ``handle``. Returns the
    questions per task.

    Raises:
        NavigationShortfall: a task's questions could not be drawn within :data:`MAX_SPAWNS_PER_TASK` spawns.
    """
    import json
    from pathlib import Path

    from bspatial.tasks import navigation

    root = Path(root)
    tours: dict[str, list[str]] = {}
    made: dict[str, int] = {}
    for task, wanted in counts.items():
        if wanted <= 0:
            continue
        plan = navigation.NAV_TASKS[task].plan
        # Candidates from SPAWN_CHOICE times the spawns the questions need, then one prior-balanced pick
        # over all of them (at most QUESTIONS_PER_SPAWN per spawn): routes run towards the destination, so
        # one spawn's poses mostly see it ahead, and a per-spawn round robin left "front-left" at 37%.
        spawns, pool, spawn_of = [], [], []
        needed = SPAWN_CHOICE * math.ceil(wanted / QUESTIONS_PER_SPAWN)
        for k in range(MAX_SPAWNS_PER_TASK):
            if len(spawns) == needed:
                break
            draw = _seed(seed, task, k)
            instance, _ = navigation.sample_validated_instance(sim, task, draw)
            found = candidate_questions(sim, instance, np.random.default_rng(draw))
            if found:
                spawn_of += [len(spawns)] * len(found)
                spawns.append((draw, instance))
                pool += found
        picked, views = _pick_with_views(sim, spawns, pool, spawn_of, wanted, _seed(seed, task, -1))
        if len(picked) < wanted:
            raise NavigationShortfall(f"task_navigation / {task}: built {len(picked)} of {wanted} "
                                      f"(short by {wanted - len(picked)}) from {len(spawns)} spawns")
        n = 0
        for s_index, (draw, instance) in enumerate(spawns):
            if not any(spawn_of[i] == s_index for i in picked):
                continue
            if plan not in tours:
                tours[plan] = []
                for i, rgb in enumerate(context_tour(sim, instance)):
                    tours[plan].append(f"images/nav-tour-{plan}-{i:02d}.jpg")
                    (root / tours[plan][-1]).write_bytes(jpeg_bytes(rgb))
            for i in (i for i in picked if spawn_of[i] == s_index):
                q, (rgb, walls, content) = pool[i], views[i]
                item = f"{task}-{draw:08x}-{n:03d}"
                current = f"images/nav-{item}.jpg"
                (root / current).write_bytes(jpeg_bytes(rgb))
                metadata = {"seed": draw, "build_seed": seed, "pose": list(q.pose), "destination": q.destination,
                            "current_view_wall_share": round(walls, 4), "current_view_content_share": round(content, 4),
                            "destination_point": [float(v) for v in navigation.destination_point(instance)],
                            "margin_deg": q.margin_deg, "distance_m": q.distance_m, "context_frames": len(tours[plan]),
                            "answer_text": q.answer_text, "plan": plan}
                row = VQARecord(f"tn-{item}", "task_navigation", "direction", SUBTYPE, (*tours[plan], current),
                                q.question, q.options, q.answer, task=task, variant="", metadata=metadata).to_row()
                handle.write(json.dumps(row, sort_keys=True) + "\n")
                n += 1
        made[task] = n
    return made
