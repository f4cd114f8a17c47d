"""Benchmark apartments: what the furnished activity apartments cost a build, and how their rooms are sized.

For ``--apartments`` seeded activity scenes (the general-VQA apartments: floor plan, furniture, lights) it
measures, in one process:

1. the time to lay out and furnish an apartment (``activity_scene``),
2. the time of one 720 x 720 rotation frame (head height, 90 degree view, RGB + depth + segmentation),
   furnished vs the same scene with every room's furniture, door leaves and room lights removed (walls,
   floors, the work wall's furniture and the activity objects kept; the old grid apartments looked like
   that), rendered alternately in rounds, with the ratio, and
3. the same frames with the rooms' ceilings vs without (the apartments before ceilings: black above the
   walls): median ms, mean brightness and the share of black pixels (every channel <= 8).

and over ``--areas`` apartments (activities in turn, layout seeds 1000, 1001, ...):

4. the mean, min and max floor area per room type, next to the typical area the data-quality report's blind
   baseline knows (``construction.quality.priors.TYPICAL_ROOM_AREA_M2``), and
5. how often the room largest by typical area is the largest room: over the six rooms of an apartment, and
   over every 4 of them (a multi-frame "which room has the largest area?" question names 4 rooms). Rooms tied
   on typical area (kitchen and dining room, 15 m^2) share the credit: the baseline picks one of them.

Run: ``.venv/bin/python benchmarks/apartments.py --apartments 6 --areas 100``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import logging
import statistics
import time
from collections import defaultdict

logger = logging.getLogger("benchmarks.apartments")
STRUCTURE = {"walls", "floors"}
BLACK_MAX = 8
"""A pixel is black when no channel exceeds this (the clear colour where nothing is drawn is 0, 0, 0)."""


def bare(ascene):
    """The activity scene without the rooms' furniture, door leaves and room lights."""
    keep = {"support_0", "storage_0", *ascene.object_names}
    objects = tuple(o for o in ascene.scene.objects if o.category in STRUCTURE or o.name in keep)
    return dataclasses.replace(ascene.scene, objects=objects, lights=ascene.scene.lights[:2])


def with_ceilings(ascene):
    """``ascene`` whose scene has its rooms' ceilings: ``activity_scene`` passes the apartment's own
    (``Apartment.ceilings``) once its scene carries them; until then they are laid here from its rooms."""
    from bspatial.world.rooms import room_ceilings

    if ascene.scene.ceilings:
        return ascene
    return dataclasses.replace(ascene, scene=dataclasses.replace(ascene.scene, ceilings=room_ceilings(ascene.rooms)))


def typical_order_share(room_areas: list[dict[str, float]], typical: dict[str, float], k: int) -> float:
    """Over every ``k`` rooms of every apartment (``kind -> area``): how often the room largest by ``typical`` area
    is the largest; ``t`` rooms tied at the top typical value share the credit (1 / t each).

    Example:
        >>> typical_order_share([{"garage": 30.0, "bathroom": 10.0, "kitchen": 12.0}], {"garage": 37, "bathroom": 5,
        ...                      "kitchen": 15}, 2)
        1.0
        >>> typical_order_share([{"garage": 11.0, "bathroom": 10.0, "kitchen": 12.0}], {"garage": 37, "bathroom": 5,
        ...                      "kitchen": 15}, 3)
        0.0
    """
    hits, total = 0.0, 0
    for areas in room_areas:
        for subset in itertools.combinations(sorted(areas), k):
            top = max(typical[r] for r in subset)
            tied = [r for r in subset if typical[r] == top]
            hits += (max(subset, key=areas.get) in tied) / len(tied)
            total += 1
    return hits / total


def area_table(n: int) -> None:
    """Log the mean / min / max area per room type over ``n`` activity apartments and the typical-order shares."""
    from bspatial.construction.quality.priors import TYPICAL_ROOM_AREA_M2
    from bspatial.construction.questions.activities import GENERAL_ACTIVITIES, ROOM_NAMES, activity_scene

    per_kind: dict[str, list[float]] = defaultdict(list)
    apartments, bathroom_largest, layout_s = [], 0, []
    for k in range(n):
        start = time.perf_counter()
        ascene = activity_scene(GENERAL_ACTIVITIES[k % len(GENERAL_ACTIVITIES)], 1000 + k)
        layout_s.append(time.perf_counter() - start)
        areas = {r.kind: (r.bounds[1] - r.bounds[0]) * (r.bounds[3] - r.bounds[2]) for r in ascene.rooms}
        for kind, area in areas.items():
            per_kind[kind].append(area)
        bathroom_largest += max(areas, key=areas.get) == "bathroom"
        apartments.append(areas)
    typical = {kind: TYPICAL_ROOM_AREA_M2[ROOM_NAMES[kind]].value for kind in ROOM_NAMES}
    logger.info("apartment layout + furnishing: median %.2f s (max %.2f s) over %d apartments",
                statistics.median(layout_s), max(layout_s), n)
    logger.info("| room type | rooms | mean m^2 | min | max | typical (priors) |")
    logger.info("|---|---|---|---|---|---|")
    for kind in sorted(per_kind, key=lambda kind: statistics.mean(per_kind[kind])):
        values = per_kind[kind]
        logger.info("| %s | %d | %.1f | %.1f | %.1f | %.0f |", kind, len(values), statistics.mean(values), min(values),
                    max(values), typical[kind])
    logger.info("room largest by typical area is the largest: %.0f%% of %d apartments (6 rooms), %.0f%% of their "
                "4-room sets; a bathroom is the largest room in %d", 100 * typical_order_share(apartments, typical, 6),
                n, 100 * typical_order_share(apartments, typical, 4), bathroom_largest)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apartments", type=int, default=6, help="activity apartments to build and render")
    parser.add_argument("--rounds", type=int, default=3, help="alternating render rounds per apartment")
    parser.add_argument("--areas", type=int, default=100, help="apartments whose room areas are tabulated (0: none)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    import numpy as np

    from bspatial.catalog.schema import CONSTRUCTION_FRAME_SIZE as SIZE
    from bspatial.construction.questions.activities import GENERAL_ACTIVITIES, activity_scene
    from bspatial.construction.questions.general import rotation_pose, rotation_scene
    from bspatial.sim.mujoco_backend import MujocoBackend

    if args.areas:
        area_table(args.areas)
    layout_s = []
    ms: dict[str, list[float]] = defaultdict(list)
    brightness: dict[str, list[float]] = defaultdict(list)
    black: dict[str, list[float]] = defaultdict(list)
    sim = MujocoBackend(max_render_size=SIZE)
    try:
        for k in range(args.apartments):
            start = time.perf_counter()
            ascene = activity_scene(GENERAL_ACTIVITIES[k % len(GENERAL_ACTIVITIES)], 1000 + k)
            layout_s.append(time.perf_counter() - start)
            pose = rotation_pose(ascene, np.random.default_rng(k))
            full = rotation_scene(with_ceilings(ascene), *pose)
            stripped = dataclasses.replace(full, objects=bare(ascene).objects, lights=bare(ascene).lights)
            scenes = {"furnished": full, "bare": stripped, "no ceilings": dataclasses.replace(full, ceilings=())}
            for _ in range(args.rounds):
                for name, scene in scenes.items():
                    sim.load(scene)
                    sim.render("rotation_0", width=SIZE, height=SIZE)   # warm: context and textures
                    start = time.perf_counter()
                    frames = [sim.render(f"rotation_{cam}", width=SIZE, height=SIZE).rgb for cam in range(4)]
                    ms[name].append((time.perf_counter() - start) / 4 * 1000)
                    brightness[name] += [float(f.mean()) for f in frames]
                    black[name] += [float((f.max(-1) <= BLACK_MAX).mean()) for f in frames]
    finally:
        sim.close()
    f, b, n = (statistics.median(ms[name]) for name in ("furnished", "bare", "no ceilings"))
    logger.info("apartment layout + furnishing: median %.2f s (max %.2f s) over %d apartments",
                statistics.median(layout_s), max(layout_s), len(layout_s))
    logger.info("| rotation frame %dx%d | furnished | walls + floors only | ratio |", SIZE, SIZE)
    logger.info("|---|---|---|---|")
    logger.info("| median ms per frame | %.1f | %.1f | %.2f |", f, b, f / b)
    logger.info("| rotation frame %dx%d, furnished | with ceilings | without | ratio |", SIZE, SIZE)
    logger.info("|---|---|---|---|")
    logger.info("| median ms per frame | %.1f | %.1f | %.2f |", f, n, f / n)
    logger.info("| mean brightness (0-255) | %.1f | %.1f | %.2f |", statistics.mean(brightness["furnished"]),
                statistics.mean(brightness["no ceilings"]),
                statistics.mean(brightness["furnished"]) / statistics.mean(brightness["no ceilings"]))
    logger.info("| black pixels | %.1f%% | %.1f%% | |", 100 * statistics.mean(black["furnished"]),
                100 * statistics.mean(black["no ceilings"]))


if __name__ == "__main__":
    main()
