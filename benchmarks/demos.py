"""Demonstration recording speed: episodes per hour, the previous recording path and today's, side by side.

Both record the same training entries of one task through ``bspatial.construction.demonstrations.demos.record_demos`` (one process,
the full write: rendering, lerobot's add_frame / save_episode, statistics, card), alternating rounds so that the
machine's load falls on both alike:

* ``previous``: the segmentation pass rendered with every RGB frame, lerobot's default writer (a PNG per frame and
  camera, image statistics read back from the PNGs, an encoding pass per camera at the episode's end);
* ``today``: RGB-only renders (:data:`~bspatial.construction.demonstrations.demos.RGB_ONLY`) and lerobot's streaming encoder
  (:data:`~bspatial.construction.demonstrations.demos.STREAMING_ENCODING`: frames go straight to per-camera encoder threads, the
  image statistics come from the encoder);
* ``today, head only``: the same with ``bspatial demos --camera head``, the set a head-camera learner needs.

The two switches are module constants of ``demos`` so that this script can set them per round; the datasets are
checked to hold the same frames (count, state, action) both ways. Target: today at least 2x previous.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/demos.py --episodes 4 --rounds 2``.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

WAYS = {"previous": dict(RGB_ONLY=False, STREAMING_ENCODING=False), "today": dict(RGB_ONLY=True, STREAMING_ENCODING=True),
        "today, head only": dict(RGB_ONLY=True, STREAMING_ENCODING=True)}
CAMERAS_OF = {"today, head only": ("head",)}
"""``bspatial demos --camera head``: what a head-camera learner (the CPU ACT of benchmarks/learned.py) needs."""


def _frames(root: Path):
    import numpy as np
    import pandas as pd

    frames = pd.concat([pd.read_parquet(p) for p in sorted((root / "data").rglob("*.parquet"))], ignore_index=True)
    return len(frames), np.stack(frames["observation.state"].to_numpy()), np.stack(frames["action"].to_numpy())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="reach_plate")
    parser.add_argument("--episodes", type=int, default=4, help="episodes per round and way")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")

    import numpy as np

    from bspatial.construction.demonstrations import demos

    seconds = {way: [] for way in WAYS}
    with tempfile.TemporaryDirectory() as tmp:
        demos.record_demos(Path(tmp) / "warm", tasks=[args.task], episodes_per_task=1)   # imports, GL, shaders
        for round_ in range(args.rounds):
            made = {}
            for way, switches in WAYS.items():
                for name, value in switches.items():
                    setattr(demos, name, value)
                out = Path(tmp) / f"{way}-{round_}"
                start = time.perf_counter()
                cameras = {"cameras": CAMERAS_OF[way]} if way in CAMERAS_OF else {}
                demos.record_demos(out, tasks=[args.task], episodes_per_task=args.episodes, **cameras)
                seconds[way].append(time.perf_counter() - start)
                made[way] = _frames(out)
                shutil.rmtree(out)
            (n_a, s_a, a_a), *others = made.values()
            for n_b, s_b, a_b in others:
                if n_a != n_b or not (np.array_equal(s_a, s_b) and np.array_equal(a_a, a_b)):
                    print(f"round {round_}: the ways recorded different frames ({n_a} vs {n_b})")
                    return 1
            print(f"round {round_}: " + ", ".join(f"{w} {seconds[w][-1]:.1f} s" for w in WAYS) + f" ({n_a} frames)",
                  flush=True)
    per_hour = {w: 3600 * args.episodes / float(np.median(s)) for w, s in seconds.items()}
    print(f"\n| way | s per {args.episodes} episodes (median) | episodes per hour |\n|---|---|---|")
    for way in WAYS:
        print(f"| {way} | {float(np.median(seconds[way])):.1f} | {per_hour[way]:.0f} |")
    for way in list(WAYS)[1:]:
        print(f"{way} / previous: {per_hour[way] / per_hour['previous']:.2f}x episodes per hour")
    return 0


if __name__ == "__main__":
    sys.exit(main())
