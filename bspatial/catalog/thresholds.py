"""Every threshold of the paper's validity filters (Appendix 11), IR scoring (Appendix 14) and action rules (Table S4).

Defined once; :mod:`bspatial.scoring`, the task generators and the suite builders import them from here.
Each cites its source, or says it is our implementation choice where the paper gives no number.
"""

from __future__ import annotations

# ----------------------------------------------------------------------------- relations (Appendix 11)

DISTANCE_MARGIN = 0.15
"""Distance comparisons need >= 15% relative separation (Appendix 11 filters)."""
SIZE_MARGIN = 0.10
"""Size comparisons need >= 10% relative separation (Appendix 11 filters)."""
ORDINAL_GAP_M = 0.08
"""Implementation choice: neighbouring candidates of an ordinal relation differ by at least 8 cm along the
robot-right axis (and their footprints do not overlap along it), so left-to-right order is unambiguous."""
DIRECTION_DOMINANCE = 1.5
"""Implementation choice: a direction is named only when its axis offset is >= 1.5x the next largest."""
DIRECTION_DISTRACTOR_RATIO = 0.268
"""Implementation choice (the paper gives margins for distance and size only): a direction is
offered as a distractor only when the offset towards it, along its own axis, is at most 0.268 = tan(15 deg)
of the answer's offset, i.e. the offset lies within 15 degrees of the answer's axis in the plane of the two
axes: the same 15-degree axis margin the multi-frame and navigation quadrant questions use. (Measured on the
paper build before this rule: 22.7% of object-to-object direction items offered a distractor whose offset was
over half the answer's, "two options both true".)"""

QUADRANT_AXIS_MARGIN_DEG = 15.0
"""Implementation choice (the paper names quadrants, no margin): a quadrant (front-left / front-right / back-left /
back-right) is asked, or audited as the one true answer, only when the offset lies at least 15 degrees from both of
the robot's axes, so exactly one quadrant applies: multi-frame room questions, task-grounded navigation
destinations and the audit's ``one_true`` rule. :data:`DIRECTION_DISTRACTOR_RATIO` is the same angle."""

# ----------------------------------------------------------------------------- IR scoring (Appendix 14)

TOLERANCE_DIAGONAL_FRACTION = 0.02
"""Appendix 14, "Reach IR Scoring": tolerant scoring accepts points "within approximately 2% of the image
diagonal of the target region (approximately 20 pixels for a 720 x 720 image)"."""
ON_REF_RADIUS_M = 0.17
"""Appendix 14 "Placement IR Scoring" and Table S4 "Directional placement": locations (IR) and releases
(action) within 0.17 m of the reference centre are on-ref failures; a correct placement is farther."""
COMPARTMENT_BAND_MARGIN_M = 0.05
"""Appendix 14 "Placement IR Scoring": the entry height is compared with the instructed compartment's height
band +-0.05 m. Table S4's container soft credit ("permitted band around the instructed compartment") gives no
action-specific margin; the action rule uses this value too, so IR and action judge heights alike."""

# ----------------------------------------------------------------------------- action rules (Table S4)

SODA_BASE_PROXIMITY_M = 0.70
"""Table S4 "Reach (base proximity)": the base ends within 0.70 m of the instructed can."""
COUNTERTOP_REST_BAND_M = (-0.02, 0.10)
"""Implementation choice (the paper says only "released onto the countertop"): an object rests on the
countertop when its final reference-point height minus the plane height lies in this range. The upper
end covers the half-height of the placed objects (carving knife, saucer) and thin items under them
(a cutting-board edge); the lower end absorbs contact penetration."""
APPROACH_FRACTION = 0.5
"""Our reading of Table S4's reach soft credit ("correct intention for target approaching"; Sec. 5.1): the
closest approach to the instructed target must at least halve the end-effectors' distance to it at the
episode's start. Approaching is movement: a robot that holds still keeps its start distance and earns
nothing, however near its spawn happens to be to the target."""
APPROACH_MIN_M = 0.10
"""... and close at least 10 cm of it (a target that spawns within reach cannot be "approached" by drift)."""
CARRY_MIN_M = 0.10
"""Our reading of the placement soft credit ("target-consistent progress"): the manipulated object must have
been carried at least 10 cm (horizontal displacement from its start) before its held position or its
in-footprint peak counts, so an object that starts on the instructed side or in a band earns nothing idle."""
FLOOR_REST_HEIGHT_M = 0.10
"""Implementation choice: a released object whose final height is within 0.10 m of the floor rests on
the floor (a floor drop; Appendix 14 names floor drops as failures without soft credit)."""
