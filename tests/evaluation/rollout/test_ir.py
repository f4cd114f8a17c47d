"""IR rollouts: oracle dot / attention-map / anchor images, VLM-predicted IR, failed predictions.

The expected target pixel is recomputed here from the frame's K and T_world_cam with plain numpy
(Appendix 13.3: corners projected, 2D box clipped, integer midpoint, scaled to 224, rounded half up),
independently of modeling/ir_rendering.
"""

import math

import numpy as np
import pytest

from bspatial.evaluation.rollout.ir import IRSettings, OracleTarget
from bspatial.evaluation.rollout.episodes import load_results
from bspatial.evaluation.rollout.plan import RunSettings
from bspatial.evaluation.rollout.policies import make_policy
from bspatial.evaluation.rollout.runner import run_rollouts
from bspatial.evaluation.vlm.backend_api import Response

pytestmark = [pytest.mark.slow, pytest.mark.sim]

DOT_COLOR = (255, 51, 51)  # Appendix 13.3
DISC_PIXELS = 49  # lattice points with dx^2 + dy^2 <= 4^2: the radius-4 dot


def expected_pixel(center, half, rotation, K, T, width, height, out=224):
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    corners = np.asarray(center) + (signs * np.asarray(half)) @ np.asarray(rotation).T
    cam = (corners - T[:3, 3]) @ T[:3, :3]
    cam = cam[cam[:, 2] > 1e-6]
    assert len(cam), "the box is behind the camera"
    u = K[0, 0] * cam[:, 0] / cam[:, 2] + K[0, 2]
    v = K[1, 1] * cam[:, 1] / cam[:, 2] + K[1, 2]
    x0, x1 = np.clip([u.min(), u.max()], 0, width - 1)
    y0, y1 = np.clip([v.min(), v.max()], 0, height - 1)
    mid_x, mid_y = math.floor((x0 + x1) / 2), math.floor((y0 + y1) / 2)
    return math.floor(mid_x * out / width + 0.5), math.floor(mid_y * out / height + 0.5)


@pytest.fixture
def backend():
    from bspatial.sim.mujoco_backend import MujocoBackend

    sim = MujocoBackend()
    yield sim
    sim.close()


def observed_episode(backend, checkpoint, instance, ir, steps):
    """Run ``steps`` of a checkpoint policy; per chunk: (head frame, instructed box, IR image, anchor or None)."""
    from bspatial.tasks.episode import run_episode

    backend.load(instance.scene)
    heads, fed = [], []
    real_render = backend.render

    def render(camera, **kwargs):  # observes the frames the policy renders (the real renderer draws them)
        frame = real_render(camera, **kwargs)
        if camera == "head" and "width" not in kwargs:   # a policy camera (RGB only), not the grounding render
            heads.append((frame, backend.object_bbox(instance.target)))
        return frame

    backend.render = render
    policy = make_policy(str(checkpoint), backend, instance, RunSettings(ir=ir))
    inner = policy.predictor

    def predictor(observation):
        chunk = inner(observation)
        batch = inner.predictor.last_batch
        image = lambda key: batch[key][0].permute(1, 2, 0).numpy() if key in batch else None
        fed.append((image("observation.images.ir"), image("observation.images.anchor"),
                    image("observation.images.rgb.head")))
        return chunk

    policy.predictor = predictor
    result = run_episode(backend, instance, policy, max_steps=steps)
    assert result.steps == steps or result.status == "decided"
    assert len(heads) == len(fed) >= 2
    return heads, fed, policy


def test_oracle_dot_ir_marks_the_instructed_objects_projection_and_the_anchor_stays(backend, tiny_dot_anchor_checkpoint):
    from bspatial.tasks import sample_instance

    instance = sample_instance("reach_plate", "largest", 1_000_000)
    heads, fed, _ = observed_episode(backend, tiny_dot_anchor_checkpoint, instance, IRSettings("oracle"), 25)
    for (frame, box), (ir, anchor, head) in zip(heads, fed):
        x, y = expected_pixel(box.center, box.half_extents, box.rotation, frame.K, frame.T_world_cam,
                              frame.width, frame.height)
        red = np.argwhere(np.all(ir == DOT_COLOR, axis=-1))
        assert len(red) == DISC_PIXELS
        assert tuple(red.mean(axis=0)) == (y, x)  # the disc is centred on the independent projection
        far = np.hypot(*np.mgrid[0:224, 0:224] - np.array([y, x])[:, None, None]) > 5
        assert np.array_equal(ir[far], head[far])  # drawn on the current 224 head frame
        assert np.array_equal(anchor, fed[0][0])  # the first observation's dot image, held fixed


def test_the_dot_is_drawn_with_the_checkpoints_radius(backend, tiny_dot12_checkpoint):
    """A checkpoint trained with a larger dot (``ir_dot_radius``, as cpu_reach_dot_ir) is rolled out with that
    dot: the radius travels in the saved processor, not in a rollout default."""
    from bspatial.tasks import sample_instance

    instance = sample_instance("reach_plate", "largest", 1_000_000)
    heads, fed, _ = observed_episode(backend, tiny_dot12_checkpoint, instance, IRSettings("oracle"), 25)
    (frame, box), (ir, _, _) = heads[0], fed[0]
    x, y = expected_pixel(box.center, box.half_extents, box.rotation, frame.K, frame.T_world_cam,
                          frame.width, frame.height)
    rows, cols = np.mgrid[0:224, 0:224]
    disc = (rows - y) ** 2 + (cols - x) ** 2 <= 12 ** 2   # radius 12, clipped by the image border
    assert disc.sum() > 49   # larger than the paper's radius-4 disc
    assert np.array_equal(np.all(ir == DOT_COLOR, axis=-1), disc)


def test_oracle_attention_map_peaks_at_the_projection(backend, tiny_attn_checkpoint):
    from bspatial.tasks import sample_instance

    instance = sample_instance("reach_dice", "closest/board game", 1_000_001)
    heads, fed, _ = observed_episode(backend, tiny_attn_checkpoint, instance, IRSettings("oracle"), 12)
    for (frame, box), (ir, anchor, _) in zip(heads, fed):
        x, y = expected_pixel(box.center, box.half_extents, box.rotation, frame.K, frame.T_world_cam,
                              frame.width, frame.height)
        assert anchor is None
        assert ir[y, x].tolist() == [255, 0, 0] and ir[0, 0].tolist() == [0, 0, 128]  # jet peak / background


def test_placement_goal_is_fixed_where_the_demonstrations_object_comes_to_rest(backend):
    """The fixed goal box projects (nearly) where the scripted expert's object ends: the demos' target."""
    from bspatial.modeling.ir_rendering import box_corners, target_pixel
    from bspatial.tasks import sample_instance
    from bspatial.tasks.episode import run_episode
    from bspatial.tasks.experts import make_expert

    instance = sample_instance("place_carving_knife", "left/cutting board", 1_000_000)
    backend.load(instance.scene)
    oracle = OracleTarget(backend, instance)
    start = backend.render("head")
    goal_pixel = oracle(start)
    result = run_episode(backend, instance, make_expert(backend, instance))
    assert result.outcome.outcome == "correct"
    assert oracle(start) == goal_pixel  # fixed in the world: the moved object does not move the cue
    final = backend.object_bbox(instance.manipulated)  # the demos' final-frame box (construction/demonstrations/demos.py)
    demo_pixel = target_pixel(box_corners(final.center, final.half_extents, final.rotation), start.K,
                              start.T_world_cam, (start.width, start.height))
    assert goal_pixel is not None and demo_pixel is not None
    assert np.hypot(goal_pixel[0] - demo_pixel[0], goal_pixel[1] - demo_pixel[1]) <= 6


def test_predicted_ir_with_the_chance_backend_is_counted(tmp_path, tiny_dot_anchor_checkpoint):
    summary = run_rollouts(str(tiny_dot_anchor_checkpoint), "held_out", ["reach_plate"], tmp_path,
                           RunSettings(max_steps=12, ir=IRSettings("predicted", "chance:0")), n_episodes=1)
    (r,) = load_results(tmp_path)
    assert summary.errors == 0, r["message"]
    # One VLM query per policy observation (steps 0 and 10); chance always answers a valid point.
    assert r["ir"] == {"source": "predicted", "mode": "dot", "anchor": True, "observations": 2, "without_target": 0,
                       "vlm_queries": 2, "failed_predictions": 0}


class NoPointVLM:
    """A grounding model that never answers with a point (served over HTTP like a real VLM)."""

    spec = "no-point"

    def identity(self):
        return {"kind": "no-point"}

    def generation_settings(self):
        return {}

    def generate(self, requests):
        return [Response("I cannot find the target in this image.", 0.0) for _ in requests]


def test_failed_prediction_gives_an_unmarked_image_and_is_recorded(tmp_path, backend, tiny_dot_anchor_checkpoint):
    from bspatial.evaluation.vlm.serve import ChatCompletionServer
    from bspatial.tasks import sample_instance

    with ChatCompletionServer(NoPointVLM(), "nopoint") as server:
        spec = f"openai:{server.base_url}#nopoint"
        run_rollouts(str(tiny_dot_anchor_checkpoint), "held_out", ["reach_plate"], tmp_path,
                     RunSettings(max_steps=12, ir=IRSettings("predicted", spec)), n_episodes=1)
        (r,) = load_results(tmp_path)
        assert r["status"] != "error", r["message"]
        assert r["ir"]["vlm_queries"] == r["ir"]["failed_predictions"] == r["ir"]["without_target"] == 2
        instance = sample_instance("reach_plate", "largest", 1_000_000)
        _, fed, _ = observed_episode(backend, tiny_dot_anchor_checkpoint, instance, IRSettings("predicted", spec), 12)
    for ir, anchor, head in fed:
        # No simulator fallback: the IR slot and the anchor are the plain head image, no marker anywhere.
        assert np.array_equal(ir, head) and np.array_equal(anchor, fed[0][2])
        assert not np.all(ir == DOT_COLOR, axis=-1).any()


def test_ir_settings_are_checked_against_the_checkpoint(tmp_path, tiny_checkpoint, tiny_dot_anchor_checkpoint):
    from bspatial.evaluation.rollout.policies import resolve_ir

    assert resolve_ir(str(tiny_dot_anchor_checkpoint), "held_out").source == "oracle"  # the default
    assert resolve_ir(str(tiny_checkpoint), "held_out").source == "none"
    with pytest.raises(ValueError, match="has no IR image slot \\(ir_mode='none'\\)"):
        resolve_ir(str(tiny_checkpoint), "held_out", "oracle")
    with pytest.raises(ValueError, match="navigation tasks have no IR target"):
        resolve_ir(str(tiny_dot_anchor_checkpoint), "navigation", "oracle")
    with pytest.raises(ValueError, match="ir_model='chance' is only used with ir='predicted'"):
        resolve_ir(str(tiny_dot_anchor_checkpoint), "held_out", "oracle", "chance")
    with pytest.raises(ValueError, match="unknown model kind 'vllmx'"):
        resolve_ir(str(tiny_dot_anchor_checkpoint), "held_out", "predicted", "vllmx:model")


def test_the_wrong_cue_marks_the_candidate_scripted_wrong_reaches(backend, tiny_dot_anchor_checkpoint):
    """The cue ladder's last rung: the dot sits on a non-instructed candidate's independent projection at every
    chunk, and that candidate is the one the scripted-wrong reference touches first on the same episode and seed."""
    from bspatial.tasks import sample_instance
    from bspatial.tasks.episode import run_episode

    instance = sample_instance("reach_plate", "largest", 1_000_000)
    backend.load(instance.scene)
    boxes, fed = [], []
    real_render = backend.render

    def render(camera, **kwargs):
        frame = real_render(camera, **kwargs)
        if camera == "head":
            boxes.append((frame, {c: backend.object_bbox(c) for c in instance.candidates}))
        return frame

    backend.render = render
    policy = make_policy(str(tiny_dot_anchor_checkpoint), backend, instance, RunSettings(ir=IRSettings("wrong")))
    inner = policy.predictor

    def predictor(observation):
        chunk = inner(observation)
        fed.append(inner.predictor.last_batch["observation.images.ir"][0].permute(1, 2, 0).numpy())
        return chunk

    policy.predictor = predictor
    run_episode(backend, instance, policy, max_steps=25)
    backend.render = real_render
    summary = inner.conditioner.summary()
    cued = summary["cue"]["target"]
    assert summary["source"] == "wrong" and cued in instance.candidates and cued != instance.target
    assert len(fed) == len(boxes) >= 2
    for (frame, by_name), ir in zip(boxes, fed):
        box = by_name[cued]
        x, y = expected_pixel(box.center, box.half_extents, box.rotation, frame.K, frame.T_world_cam,
                              frame.width, frame.height)
        assert tuple(np.argwhere(np.all(ir == DOT_COLOR, axis=-1)).mean(axis=0)) == (y, x)

    backend.load(instance.scene)
    wrong = run_episode(backend, instance, make_policy("scripted-wrong", backend, instance, RunSettings()))
    contacts = np.asarray(wrong.trace.eef_contacts)
    first = contacts[np.flatnonzero(contacts.any(axis=1))[0]]
    assert wrong.outcome.outcome == "wrong" and [wrong.trace.candidate_names[i] for i in np.flatnonzero(first)] == [cued]
