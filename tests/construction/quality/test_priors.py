"""World-knowledge priors of the blind baseline (issue 16, item 3): the tables, and a leak they catch."""

import numpy as np

from bspatial.construction.quality import priors
from bspatial.construction.quality.report import prior_features, quality_report


def test_every_prior_has_a_positive_value_and_a_source():
    for table in (priors.TYPICAL_LENGTH_M, priors.TYPICAL_HEIGHT_M, priors.TYPICAL_ROOM_AREA_M2):
        assert table and all(p.value > 0 and p.source.strip() for p in table.values())


def test_ranks_follow_typical_sizes_and_say_nothing_for_marks_of_one_category():
    # Typical lengths: box of cereal 0.30 m > banana 0.19 > apple 0.08 > lime 0.055.
    assert priors.ranks(["lime", "box of cereal", "apple", "banana"], priors.TYPICAL_LENGTH_M, True) == [3, 0, 2, 1]
    assert priors.ranks(["mug 1", "mug 2", "mug 3", "mug 4"], priors.TYPICAL_LENGTH_M, True) is None
    assert priors.ranks(["lime", "moon rock", "apple", "banana"], priors.TYPICAL_LENGTH_M, True) is None
    assert priors.noun("The Mug 12") == "mug"


def test_prior_features_name_the_relation_and_the_height_sign():
    size = {"category": "size", "question": "Measuring from the length of the longest dimension (length, width, or "
            "height), which food item on the countertop is the smallest?",
            "options": ["lime", "box of cereal", "apple", "banana"], "answer": "A"}
    assert prior_features(size, 0) == [("prior_size", "size", "smallest", 3)]
    rooms = {"category": "size", "question": "Based on the given frames, which room has the largest area?",
             "options": ["bathroom", "garage", "kitchen", "office"], "answer": "B"}
    assert prior_features(rooms, 1) == [("prior_area", "size", "largest", 0)]
    # A bucket stands on the floor (0.15 m), a mug on a counter (0.91 m): the bucket is typically below.
    height = {"category": "direction", "question": "From the viewpoint of the image, where is the bucket relative "
              "to the mug?", "options": ["above", "below", "left", "front"], "answer": "B"}
    assert prior_features(height, 1) == [("prior_height", "direction", "below", -1)]
    assert prior_features(height, 2) == []


def _size_rows(n, leak, rng):
    nouns = ["apple", "orange", "lime", "banana", "carrot", "cucumber", "bell pepper", "potato", "eggplant", "mango",
             "box of cereal", "box of oatmeal", "bag of chips", "box of crackers"]
    rows = []
    for i in range(n):
        options = [nouns[j] for j in rng.choice(len(nouns), 4, replace=False)]
        relation = ("largest", "smallest")[i % 2]
        if leak:   # the answer is what typical sizes say
            key = lambda o: priors.TYPICAL_LENGTH_M[o].value  # noqa: E731
            answer = (max if relation == "largest" else min)(options, key=key)
        else:      # the answer is drawn regardless of typical sizes
            answer = options[int(rng.integers(4))]
        rows.append({"id": f"q{i}", "category": "size", "frames": [f"frame{i}"], "options": options,
                     "question": f"Which food item on the countertop is the {relation}?",
                     "answer": "ABCD"[options.index(answer)]})
    return rows


def test_the_blind_baseline_fails_a_set_that_typical_sizes_answer():
    leaky = quality_report(_size_rows(400, True, np.random.default_rng(0))).rows[0]
    assert leaky.blind_pct > 70 and not leaky.blind_ok
    fair = quality_report(_size_rows(400, False, np.random.default_rng(1))).rows[0]
    assert fair.blind_ok, fair
