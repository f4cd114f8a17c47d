"""Task-grounded navigation VQA: quadrant answers from simulator state, margins, balance, context frames."""

import math

import numpy as np
import pytest

from bspatial.catalog.thresholds import QUADRANT_AXIS_MARGIN_DEG
from bspatial.construction.questions import navigation_vqa as nv
from bspatial.tasks import navigation

pytestmark = [pytest.mark.sim]


@pytest.fixture(scope="module")
def sim_720():
    from bspatial.sim.mujoco_backend import MujocoBackend

    backend = MujocoBackend(max_render_size=720)
    yield backend
    backend.close()


def _quadrant_by_rotation(pose, point) -> str:
    # Independent of nv.quadrant: rotate the offset by -yaw with a rotation matrix.
    x, y, yaw = pose
    c, s = np.cos(-yaw), np.sin(-yaw)
    fwd, left = np.array([[c, -s], [s, c]]) @ (np.asarray(point) - [x, y])
    return ("front" if fwd > 0 else "back") + "-" + ("left" if left > 0 else "right")


def test_quadrant_agrees_with_a_rotation_matrix_on_random_poses():
    rng = np.random.default_rng(0)
    for _ in range(500):
        pose = (*rng.uniform(-5, 5, 2), rng.uniform(-np.pi, np.pi))
        point = rng.uniform(-5, 5, 2)
        assert nv.quadrant(pose, point) == _quadrant_by_rotation(pose, point)


def test_axis_margin_is_zero_on_an_axis_and_45_on_a_diagonal():
    assert nv.axis_margin_deg((0, 0, 0), (2, 0)) == pytest.approx(0, abs=1e-9)
    assert nv.axis_margin_deg((0, 0, math.pi / 2), (-1, 0)) == pytest.approx(0, abs=1e-9)
    assert nv.axis_margin_deg((0, 0, 0), (1, -1)) == pytest.approx(45)
    assert nv.axis_margin_deg((1, 1, 0.3), (1 + math.cos(0.3 + 0.2), 1 + math.sin(0.3 + 0.2))) == pytest.approx(
        math.degrees(0.2))


def test_context_indices_are_ordered_even_and_keep_the_ends():
    assert nv.context_indices(5, 12) == [0, 1, 2, 3, 4]
    idx = nv.context_indices(50, 12)
    assert idx[0] == 0 and idx[-1] == 49 and len(idx) == 12 and idx == sorted(idx)
    assert max(np.diff(idx)) - min(np.diff(idx)) <= 1
    with pytest.raises(ValueError, match="n_tour must be >= 1, got 0"):
        nv.context_indices(0)


@pytest.mark.parametrize("task", ["move_to_bathroom", "move_to_oven"])
def test_questions_are_correct_balanced_and_off_the_goal(sim_720, task):
    inst, _ = navigation.sample_validated_instance(sim_720, task, 3)
    pool = nv.candidate_questions(sim_720, inst, np.random.default_rng(1))
    questions = [pool[i] for i in nv.pick_questions(pool, [0] * len(pool), 8, np.random.default_rng(2), per_spawn=8)]
    assert len(questions) == 8
    target = navigation.destination_point(inst)
    for q in questions:
        assert q.answer_text == _quadrant_by_rotation(q.pose, target)
        assert q.options[ord(q.answer) - ord("A")] == q.answer_text
        assert sorted(q.options) == sorted(nv.QUADRANTS)
        assert q.margin_deg >= QUADRANT_AXIS_MARGIN_DEG and q.distance_m >= nv.MIN_TARGET_DISTANCE_M
        assert not navigation.goal_reached(inst, q.pose)
        assert inst.instruction in q.question
    counts = {a: sum(q.answer_text == a for q in questions) for a in nv.QUADRANTS}
    assert max(counts.values()) <= 4, counts     # no quadrant above half of a task's questions


def test_context_and_current_frames_render(sim_720):
    inst, _ = navigation.sample_validated_instance(sim_720, "move_to_bookcase", 0)
    context = nv.context_tour(sim_720, inst)
    assert len(context) == min(nv.CONTEXT_FRAMES, len(navigation.tour_poses(navigation.plan_of(inst))))
    assert context[0].shape == (nv.NAV_FRAME_SIZE, nv.NAV_FRAME_SIZE, 3)
    assert not np.array_equal(context[0], context[-1])          # the tour moves
    current = nv.render_at(sim_720, (inst.robot.x, inst.robot.y, inst.robot.yaw))
    turned = nv.render_at(sim_720, (inst.robot.x, inst.robot.y, inst.robot.yaw + np.pi))
    assert current.shape == context[0].shape and not np.array_equal(current, turned)
    assert nv.jpeg_bytes(current)[:2] == b"\xff\xd8"


def _content_share_by_hand(backend, scene, pose) -> float:
    """Share of the view's pixels on objects of ``scene`` other than walls and floors (an independent count)."""
    frame = nv.view_at(backend, pose)
    structure = {o.name for o in scene.objects if o.category in ("walls", "floors")}
    objects = {o.name for o in scene.objects} - structure
    ids = [i for i, name in frame.id_to_name.items() if name in objects]
    return float(np.isin(frame.segmentation, ids).mean())


def test_current_views_of_a_bare_corner_are_not_asked(sim_720, tmp_path):
    # move_to_garage's first spawn: 5 of its first 8 candidate views showed nothing but walls and floor (looked
    # at: "a plain corner"). The built questions' current views all show furniture or objects.
    (tmp_path / "images").mkdir()
    lines = []

    class Sink:
        def write(self, text):
            lines.append(text)

    made = nv.write_navigation(sim_720, {"move_to_garage": 6}, 0, tmp_path, Sink())
    assert made == {"move_to_garage": 6}
    rows = [__import__("json").loads(line) for line in lines]
    for row in rows:
        meta = __import__("json").loads(row["metadata"])
        inst, _ = navigation.sample_validated_instance(sim_720, "move_to_garage", meta["seed"])
        sim_720.load(inst.scene)
        share = _content_share_by_hand(sim_720, inst.scene, meta["pose"])
        assert share >= nv.MIN_VIEW_CONTENT_SHARE, (row["id"], share)
        assert meta["current_view_content_share"] == pytest.approx(share, abs=1e-3)


def test_view_rule_rejects_walls_and_floor_alone(sim_720):
    # Candidate views of move_to_garage's first spawn (looked at: bare corners at 0%, furniture in view above 10%).
    draw = nv._seed(0, "move_to_garage", 0)
    inst, _ = navigation.sample_validated_instance(sim_720, "move_to_garage", draw)
    poses = [q.pose for q in nv.candidate_questions(sim_720, inst, np.random.default_rng(draw))[:12]]
    sim_720.load(inst.scene)
    by_hand = [_content_share_by_hand(sim_720, inst.scene, p) for p in poses]
    assert min(by_hand) == 0.0 and max(by_hand) > 0.1
    for pose, share in zip(poses, by_hand):
        walls, content = nv.view_shares(nv.view_at(sim_720, pose), inst.scene)
        assert content == pytest.approx(share, abs=1e-9)
        assert nv.view_ok(walls, content) is (share >= 0.05 and walls <= 0.7)
