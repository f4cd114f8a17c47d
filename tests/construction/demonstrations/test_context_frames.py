"""Navigation context frames: the stored strip's format and the tour poses they come from.

The recorded set, training and rollout with the frames are tested together in
tests/modeling/test_navigation_policy.py (one navigation recording serves them all).
"""

import numpy as np
import pytest
from PIL import Image

from bspatial.construction.demonstrations.context_frames import (context_frames_path, encode_strip, read_context_frames,
                                                  write_context_frames)
from bspatial.construction.questions.navigation_vqa import CONTEXT_FRAMES, context_indices
from bspatial.tasks import navigation as nav
from bspatial.world.floorplans import get_floorplan

pytestmark = [pytest.mark.sim]


@pytest.fixture(scope="module")
def sim():
    from bspatial.sim.mujoco_backend import MujocoBackend

    backend = MujocoBackend()
    yield backend
    backend.close()


def _frames(k: int, size: int = 8, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (k, size, size, 3), dtype=np.uint8)


def test_a_strip_reads_back_as_the_frames_in_order_and_its_bytes_are_a_function_of_the_pixels(tmp_path):
    frames = _frames(5)
    path = write_context_frames(tmp_path, 7, frames)
    assert path == tmp_path / "meta" / "context_frames" / "episode_000007.png" == context_frames_path(tmp_path, 7)
    np.testing.assert_array_equal(read_context_frames(tmp_path, 7), frames)
    # PIL's own reading: one RGB image, the frames stacked top to bottom.
    with Image.open(path) as image:
        assert (image.mode, image.size) == ("RGB", (8, 40))
        np.testing.assert_array_equal(np.asarray(image)[16:24], frames[2])
    assert path.read_bytes() == encode_strip(frames.copy())   # no timestamp or other run-dependent byte
    assert [p.name for p in path.parent.iterdir()] == ["episode_000007.png"]   # no temp file left


def test_bad_frames_and_missing_or_foreign_files_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"\(K, H, H, 3\) uint8, got \(2, 8, 6, 3\)"):
        encode_strip(np.zeros((2, 8, 6, 3), np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        encode_strip(np.zeros((2, 8, 8, 3), np.float32))
    with pytest.raises(ValueError, match="at least one frame"):
        encode_strip(np.zeros((0, 8, 8, 3), np.uint8))
    with pytest.raises(FileNotFoundError, match="episode_000003.png"):
        read_context_frames(tmp_path, 3)
    path = context_frames_path(tmp_path, 0)
    path.parent.mkdir(parents=True)
    Image.fromarray(np.zeros((12, 8, 3), np.uint8)).save(path)      # 12 rows of 8-pixel frames: not square
    with pytest.raises(ValueError, match="not a strip of square RGB frames"):
        read_context_frames(tmp_path, 0)
    Image.fromarray(np.zeros((16, 8), np.uint8)).save(path)         # grey
    with pytest.raises(ValueError, match="mode L"):
        read_context_frames(tmp_path, 0)


def test_render_tour_at_indices_gives_the_full_tours_frames_there(sim):
    """The context tour renders only its kept poses: the pixels of the whole tour subsampled."""
    plan = get_floorplan("single_floor_house_toy_room")
    full = nav.render_tour(sim, plan, size=48)
    keep = context_indices(len(full))
    assert len(keep) == CONTEXT_FRAMES < len(full)
    some = nav.render_tour(sim, plan, size=48, indices=keep)
    assert len(some) == len(keep)
    for index, frame in zip(keep, some, strict=True):
        np.testing.assert_array_equal(frame.rgb, full[index].rgb)
