"""The data contract: the paper's layout numbers, and the remote-code copies in modeling/ pinned equal to it.

Checkpoint files may import only torch / transformers / numpy / PIL (they travel as remote code), so
``modeling/`` keeps its own copies of the schema; these tests keep each copy equal to the catalogue.
"""

import numpy as np
import pytest

from bspatial.catalog import schema


def test_layout_is_r1pro_and_the_papers_numbers():
    assert schema.ACTION_DIM == 23 and schema.CHUNK_SIZE == 32 and schema.CONTROL_HZ == 30
    covered = np.concatenate([np.arange(schema.ACTION_DIM)[s] for s in schema.ACTION_SLICES.values()])
    assert sorted(covered.tolist()) == list(range(23))   # the slices tile the action exactly once
    assert schema.GRIPPER_DIMS == (14, 22)
    assert schema.STATE_DIM == 84 and schema.PROPRIO_SLICES["gripper_width"] == slice(82, 84)
    assert schema.CAMERAS == ("head", "left_wrist", "right_wrist")
    assert schema.POLICY_IMAGE_SIZE == 224 and schema.CONSTRUCTION_FRAME_SIZE == 720


def test_remote_code_copies_equal_the_catalogue():
    from bspatial.modeling import configuration_bspatial_vla as configuration
    from bspatial.modeling import ir_rendering, processing_bspatial_vla as processing

    assert processing.STATE_KEY == schema.STATE_KEY
    assert processing.ACTION_KEY == schema.ACTION_KEY
    assert processing.TASK_KEY == schema.TASK_KEY
    assert processing.ACTION_IS_PAD_KEY == schema.ACTION_IS_PAD_KEY
    assert processing.CAMERA_KEY_PREFIX == schema.CAMERA_KEY_PREFIX
    assert processing.IR_TARGET_KEY == schema.IR_TARGET_KEY
    assert ir_rendering.IR_IMAGE_SIZE == schema.POLICY_IMAGE_SIZE
    from bspatial.evaluation.rollout.policies import CHECKPOINT_MODEL_TYPE

    assert CHECKPOINT_MODEL_TYPE == configuration.BSpatialVLAConfig.model_type   # read without importing torch
    config = configuration.BSpatialVLAConfig()
    assert (config.chunk_size, config.action_dim) == (schema.CHUNK_SIZE, schema.ACTION_DIM)
    assert tuple(configuration.DEFAULT_CAMERA_NAMES) == schema.CAMERAS


@pytest.mark.parametrize("seed", range(5))
def test_remote_code_ir_target_equals_the_scoring_rule(seed):
    # modeling/ir_rendering.py carries a copy of bspatial.scoring.ir_target (remote code); random boxes and
    # cameras, some behind or beside the camera, must give the same pixel (or the same None) from both.
    from bspatial.modeling import ir_rendering
    from bspatial.scoring.ir_target import box_corners, ir_target_pixel

    rng = np.random.default_rng(seed)
    K = np.array([[360.0, 0, 360], [0, 360.0, 360], [0, 0, 1]])
    outcomes = set()
    for _ in range(200):
        corners = box_corners(rng.uniform(-3, 3, 3) + [0, 0, 1.5], rng.uniform(0.01, 0.5, 3))
        pose = np.eye(4)
        pose[:3, 3] = rng.uniform(-0.5, 0.5, 3)
        ours = ir_target_pixel(corners, K, pose, (720, 720))
        theirs = ir_rendering.target_pixel(ir_rendering.box_corners(*_center_half(corners)), K, pose, (720, 720))
        assert ours == theirs
        outcomes.add(ours is None)
    assert outcomes == {True, False}   # both branches exercised


def _center_half(corners):
    return corners.mean(0), (corners.max(0) - corners.min(0)) / 2
