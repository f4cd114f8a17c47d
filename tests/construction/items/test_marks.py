"""Numbered marks sit on their object and hide at most a quarter of it (issue 29). Expected values are worked
out from the masks by hand; the hidden share is checked against the pixels the drawn image actually changes."""

import math

import numpy as np
import pytest

from bspatial.construction.items.marks import (DISC_CLEARANCE_PX, MARK_RADIUS_PX, MAX_HIDDEN_SHARE, Mark,
                                               anchor_point, draw_marks, hidden_shares, place_marks)

SIZE = 200


def _square(v0, u0, side, size=SIZE):
    mask = np.zeros((size, size), bool)
    mask[v0:v0 + side, u0:u0 + side] = True
    return mask


def _changed_share(masks, marks, name):
    """The share of ``name``'s pixels whose colour the drawn marks change, on a mid-grey frame (an independent
    measure: the output image against its input)."""
    grey = np.full((*masks[name].shape, 3), 128, np.uint8)
    changed = (draw_marks(grey, marks) != grey).any(axis=2)
    return (changed & masks[name]).sum() / masks[name].sum()


def test_a_large_object_takes_its_disc_inline_on_its_middle():
    masks = {"tray": _square(50, 60, 100)}           # rows 50-149, cols 60-159: 10,000 px
    (mark,) = place_marks(masks, [("1", "tray")])
    assert not mark.leader and mark.at == mark.anchor
    assert mark.anchor in ((109, 99), (109, 100), (110, 99), (110, 100))   # the middle 2 x 2 pixels
    share = hidden_shares([mark], masks)["1"]
    # A disc of radius 16 (outline included) is about pi * 16^2 = 804 px of 10,000.
    assert 0.07 < share < 0.09
    assert share == pytest.approx(_changed_share(masks, [mark], "tray"), abs=0.01)


def test_a_small_object_gets_a_leader_and_its_disc_beside_it():
    masks = {"die": _square(90, 90, 20)}             # 400 px: a 15 px disc (707 px) would hide all of it
    (mark,) = place_marks(masks, [("1", "die")])
    assert mark.leader and masks["die"][mark.anchor[1], mark.anchor[0]]
    # The disc's nearest pixel lies outside the die's box (rows / cols 90-109).
    nearest_u = min(max(mark.at[0], 90), 109)
    nearest_v = min(max(mark.at[1], 90), 109)
    assert math.dist(mark.at, (nearest_u, nearest_v)) > MARK_RADIUS_PX
    share = hidden_shares([mark], masks)["1"]
    assert 0 < share <= MAX_HIDDEN_SHARE           # the leader's end and its dot only
    assert share == pytest.approx(_changed_share(masks, [mark], "die"), abs=0.02)


def test_the_anchor_of_a_ring_lies_on_the_ring_not_at_its_centroid():
    v, u = np.mgrid[0:SIZE, 0:SIZE]
    ring = (np.hypot(u - 100, v - 100) <= 40) & (np.hypot(u - 100, v - 100) >= 30)
    anchor = anchor_point(ring)
    assert ring[anchor[1], anchor[0]]
    assert 30 <= math.dist(anchor, (100, 100)) <= 40


def test_neighbouring_small_objects_keep_their_discs_apart_and_their_budgets():
    masks = {"a": _square(90, 80, 20), "b": _square(90, 104, 20)}   # 4 px apart
    marks = place_marks(masks, [("1", "a"), ("2", "b")])
    assert math.dist(marks[0].at, marks[1].at) >= 2 * MARK_RADIUS_PX + DISC_CLEARANCE_PX
    shares = hidden_shares(marks, masks)
    assert all(0 < s <= MAX_HIDDEN_SHARE for s in shares.values())


def test_a_disc_beside_an_object_at_the_frame_edge_stays_in_the_frame():
    masks = {"cup": _square(0, 0, 20)}               # the top-left corner: up and left are off the frame
    (mark,) = place_marks(masks, [("1", "cup")])
    r = MARK_RADIUS_PX + 1
    assert r <= mark.at[0] < SIZE - r and r <= mark.at[1] < SIZE - r


def test_an_empty_mask_is_an_error_naming_the_cause():
    with pytest.raises(ValueError, match="no visible pixels"):
        anchor_point(np.zeros((10, 10), bool))


def test_a_mark_survives_its_metadata_record():
    mark = Mark("3", "die_2", (40, 12), (41, 44), 0.125)
    assert mark.record() == ["3", [40.0, 12.0], [41.0, 44.0], "die_2", 0.125]
    assert Mark.from_record(mark.record()) == mark
