"""The trained text probe: it finds a word the prior baseline cannot see, stays at chance on text that carries
nothing, is deterministic, and never looks at the test fold (neither to fit nor to choose its model)."""

import numpy as np

from bspatial.construction.quality import probe as probe_module
from bspatial.construction.quality.probe import option_terms, probe_predictions
from bspatial.construction.quality.report import LETTERS, quality_report

COLOURS = ["red", "blue", "green", "grey", "white", "black"]
NOUNS = ["mug", "bowl", "plate", "cup", "jar", "tin", "box", "pan"]


def _red_wins(n: int, seed: int = 0) -> list[dict]:
    """Every option text is unique ("<colour> <noun> <serial>"), exactly one option is red, and the red one is
    always the answer, at a uniform letter."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        colours = ["red", *rng.choice(COLOURS[1:], 3, replace=False)]
        options = [f"{c} {rng.choice(NOUNS)} {4 * i + k}" for k, c in enumerate(colours)]
        order = rng.permutation(4)
        options = [options[j] for j in order]
        rows.append({"id": f"r{i}", "category": "distance", "question": "Which object is closest to the camera?",
                     "frames": [f"frame{i}"], "options": options, "answer": LETTERS[int(np.argmax(order == 0))]})
    return rows


def _random_answers(n: int, seed: int = 0) -> list[dict]:
    """The same kind of text, but the answer letter is drawn independently of it."""
    rng = np.random.default_rng(seed)
    rows = _red_wins(n, seed)
    for row in rows:
        row["answer"] = LETTERS[int(rng.integers(4))]
    return rows


def test_option_terms_are_ngrams_crosses_letter_and_priors():
    row = {"category": "size", "question": "Which is the largest?", "options": ["lime", "box of cereal", "apple",
                                                                            "banana"]}
    terms = option_terms(row, 1)
    assert terms[:12] == ["q:which", "q:is", "q:the", "q:largest", "q:which is", "q:is the", "q:the largest",
                          "o:box", "o:of", "o:cereal", "o:box of", "o:of cereal"]
    assert "x:largest|cereal" in terms and "x:which|box" in terms and len([t for t in terms if t[:2] == "x:"]) == 12
    assert "letter:B" in terms and "letter:size:B" in terms
    # The prior baseline's world-knowledge feature, one-hot: a box of cereal (0.30 m) is the longest of the four.
    assert [t for t in terms if t.startswith("prior:")] == ["prior:prior_size|size|largest|0"]


def test_a_word_inside_unique_option_texts_is_found_by_the_probe_not_by_the_prior_baseline():
    # No option text recurs, so every option / pair / rival feature of the prior baseline is unseen at test time
    # and it can only guess a letter (answers uniform over letters): about 25%. The probe's option unigram
    # "red" is on the answer in every item and never on a distractor, so it picks the red option: 100 of 100.
    rows = _red_wins(100)
    report = quality_report(rows, probe=probe_predictions)
    (line,) = report.rows
    assert line.probe_pct == 100.0 and line.probe_low_pct > 96.0   # Wilson low of 100/100 is 96.3%
    assert line.blind_ok and abs(line.blind_pct - 25.0) < 10.0
    assert not line.probe_ok and not report.gate_ok
    assert report.failures() == ("all / distance (100 items): text probe 100.0% "
                                 "(above chance 25.0% by more than 10 points)")
    assert "| all | distance | (all) | 100 | 25.0 |" in report.to_markdown()
    assert "| text probe FAIL |" in report.to_markdown()


def test_text_that_carries_nothing_keeps_the_probe_at_chance():
    # Answers drawn independently of the text: no predictor beats 25% in expectation. With 240 items the
    # standard error is sqrt(0.25 * 0.75 / 240) = 2.8 points, so 10 points is 3.6 of them.
    report = quality_report(_random_answers(240, seed=1), probe=probe_predictions)
    (line,) = report.rows
    assert abs(line.probe_pct - 25.0) < 10.0, line
    assert line.probe_ok and line.blind_ok and report.gate_ok, report.to_markdown()


def test_the_probe_is_deterministic():
    rows = _random_answers(80, seed=2)
    assert probe_predictions(rows) == probe_predictions(list(rows))


def test_fewer_than_two_scenes_cannot_be_cross_fitted():
    rows = _red_wins(60)
    for row in rows:
        row["scene"] = "the only scene"
    assert probe_predictions(rows) is None
    line = quality_report(rows, probe=probe_predictions).rows[0]
    assert line.probe_pct is None and line.probe_ok
    assert "| not fitted |" in quality_report(rows, probe=probe_predictions).to_markdown()


def test_the_model_is_chosen_on_a_training_half_and_the_test_fold_is_never_fitted(monkeypatch):
    # Record every fit's sample count and every scoring call's rows. Per test fold the probe scores the two
    # models on one half of the *training* fold (fitted on its other half), then the chosen one, refitted on the
    # whole training fold, on the test fold: the held-out rows never meet the test rows.
    from bspatial.construction.quality.report import blind_fold

    rows = _red_wins(100, seed=3)
    fits, scored = [], []
    real_fit, real_choices = probe_module._fit, probe_module._choices
    monkeypatch.setattr(probe_module, "_fit", lambda name, X, y: fits.append(X.shape[0]) or real_fit(name, X, y))
    monkeypatch.setattr(probe_module, "_choices", lambda model, X, owner, items:
                        scored.append(set(items)) or real_choices(model, X, owner, items))
    fit = probe_predictions(rows)
    folds = [blind_fold(r) for r in rows]
    assert len(fit.models) == 2 and len(scored) == 6 and len(fits) == 6
    tested = [scored[3 * f + 2] for f in range(2)]
    assert set().union(*tested) == set(range(100)) and sum(map(len, tested)) == 100   # each row tested once
    for f in range(2):
        held, again, test = scored[3 * f: 3 * f + 3]
        assert held == again and not held & test
        assert {folds[i] for i in held} == {1 - f} and {folds[i] for i in test} == {f}   # held out of training
        # 4 options a row: the choice fits see the training fold less its held half, the refit all of it.
        training = sum(1 for x in folds if x != f)
        assert fits[3 * f] == fits[3 * f + 1] == 4 * (training - len(held))
        assert fits[3 * f + 2] == 4 * training


def test_one_scene_fold_cannot_be_cross_fitted_and_two_scenes_can():
    rows = _red_wins(40)
    from bspatial.construction.quality.report import blind_fold

    scenes = {}
    for k in range(50):   # two scene names that fall in different folds
        scenes.setdefault(blind_fold({"scene": f"scene{k}"}), f"scene{k}")
    for i, row in enumerate(rows):
        row["scene"] = scenes[i % 2]
    fit = probe_predictions(rows)
    assert fit.models == ("logistic", "logistic")   # one scene per training fold: no halves to choose on
    assert sum(p == r["answer"] for p, r in zip(fit.predictions, rows)) == 40
