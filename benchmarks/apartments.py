"""Benchmark apartments: what the furnished activity apartments cost a build, side by side.

For ``--apartments`` seeded activity scenes (the general-VQA apartments: floor plan, furniture, lights) it
measures, in one process:

1. the time to lay out and furnish an apartment (``activity_scene``), and
2. the time of one 720 x 720 rotation frame (head height, 90 degree view, RGB + depth + segmentation),
   furnished vs the same scene with every room's furniture, door leaves and room lights removed (walls,
   floors, the work wall's furniture and the activity objects kept; the old grid apartments looked like
   that), rendered alternately in rounds, with the ratio.

Run: ``.venv/bin/python benchmarks/apartments.py --apartments 6``.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import statistics
import time

logger = logging.getLogger("benchmarks.apartments")
STRUCTURE = {"walls", "floors"}


def bare(ascene):
    """The activity scene without the rooms' furniture, door leaves and room lights."""
    keep = {"support_0", "storage_0", *ascene.object_names}
    objects = tuple(o for o in ascene.scene.objects if o.category in STRUCTURE or o.name in keep)
    return dataclasses.replace(ascene.scene, objects=objects, lights=ascene.scene.lights[:2])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apartments", type=int, default=6, help="activity apartments to build and render")
    parser.add_argument("--rounds", type=int, default=3, help="alternating render rounds per apartment")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    import numpy as np

    from bspatial.catalog.schema import CONSTRUCTION_FRAME_SIZE as SIZE
    from bspatial.construction.questions.activities import GENERAL_ACTIVITIES, activity_scene
    from bspatial.construction.questions.general import rotation_pose, rotation_scene
    from bspatial.sim.mujoco_backend import MujocoBackend

    layout_s, furnished_ms, bare_ms = [], [], []
    sim = MujocoBackend(max_render_size=SIZE)
    try:
        for k in range(args.apartments):
            start = time.perf_counter()
            ascene = activity_scene(GENERAL_ACTIVITIES[k % len(GENERAL_ACTIVITIES)], 1000 + k)
            layout_s.append(time.perf_counter() - start)
            pose = rotation_pose(ascene, np.random.default_rng(k))
            full = rotation_scene(ascene, *pose)
            stripped = dataclasses.replace(full, objects=bare(ascene).objects, lights=bare(ascene).lights)
            for _ in range(args.rounds):
                for scene, out in ((full, furnished_ms), (stripped, bare_ms)):
                    sim.load(scene)
                    sim.render("rotation_0", width=SIZE, height=SIZE)   # warm: context and textures
                    start = time.perf_counter()
                    for cam in range(4):
                        sim.render(f"rotation_{cam}", width=SIZE, height=SIZE)
                    out.append((time.perf_counter() - start) / 4 * 1000)
    finally:
        sim.close()
    f, b = statistics.median(furnished_ms), statistics.median(bare_ms)
    logger.info("apartment layout + furnishing: median %.2f s (max %.2f s) over %d apartments",
                statistics.median(layout_s), max(layout_s), len(layout_s))
    logger.info("| rotation frame %dx%d | furnished | walls + floors only | ratio |", SIZE, SIZE)
    logger.info("|---|---|---|---|")
    logger.info("| median ms per frame | %.1f | %.1f | %.2f |", f, b, f / b)


if __name__ == "__main__":
    main()
