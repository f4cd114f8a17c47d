"""The paper's thresholds, pinned to the numbers printed in it (Appendix 11, Appendix 14, Table S4)."""

from bspatial.catalog import thresholds


def test_thresholds_are_the_papers_numbers():
    assert thresholds.DISTANCE_MARGIN == 0.15              # Appendix 11: >= 15% relative
    assert thresholds.SIZE_MARGIN == 0.10                  # Appendix 11: >= 10%
    assert thresholds.TOLERANCE_DIAGONAL_FRACTION == 0.02  # Appendix 14: ~2% of the image diagonal
    assert thresholds.ON_REF_RADIUS_M == 0.17              # Appendix 14 / Table S4: on-ref within 0.17 m
    assert thresholds.COMPARTMENT_BAND_MARGIN_M == 0.05    # Appendix 14: compartment band +-0.05 m
    assert thresholds.SODA_BASE_PROXIMITY_M == 0.70        # Table S4: base within 0.70 m of the can


def test_scoring_and_tasks_use_the_catalogue_values():
    # One definition: the rules that apply a threshold read the catalogue's object, not a copy.
    from bspatial.scoring import action, ir_regions
    from bspatial.tasks.manipulation import placement

    assert ir_regions.ON_REF_RADIUS_M is action.ON_REF_RADIUS_M is placement.ON_REF_RADIUS_M
    for module in (action, ir_regions):
        assert not any(name in vars(module) and vars(module)[name] is not getattr(thresholds, name)
                       for name in dir(thresholds) if name.isupper())
