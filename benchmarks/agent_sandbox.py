"""The agent sandbox's reliability table: every hostile program of evaluation/agents/hostile/, how it ended.

Each program runs in the sandbox against one small reach_plate episode with the suite's tiny limits (a 2 s
watchdog instead of the paper's 900 s). The table lists the program, what it tries, the outcome and the
recorded reason, whether that is what the program's header expects, and the wall seconds; the last line says
whether the host survived them all (it is this process) and whether anything escaped the temp folder.

    .venv/bin/python benchmarks/agent_sandbox.py [--markdown]
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table (the README's)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    from tqdm import tqdm

    from bspatial.common.processes import live_descendants
    from bspatial.evaluation.agents.api import AgentAPI
    from bspatial.evaluation.agents.hostile_suite import HOSTILE_LIMITS, hostile_programs
    from bspatial.evaluation.agents.sandbox import run_program
    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks import sample_instance
    from bspatial.tasks.episode import EpisodeRun

    sim = MujocoBackend()
    instance = sample_instance("reach_plate", "largest", 0)
    sim.load(instance.scene)
    rows = []
    marker = Path(tempfile.gettempdir()) / "bspatial-hostile-escaped"
    for program in tqdm(hostile_programs(), desc="hostile programs"):
        api = AgentAPI(EpisodeRun(sim, instance, max_steps=30))
        started = time.perf_counter()
        run = run_program(program.source, api, limits=HOSTILE_LIMITS)
        rows.append((program.name, program.description, run.outcome, run.reason.replace("|", "/")[:110],
                     "yes" if program.matches(run) else "NO", f"{time.perf_counter() - started:.1f}"))
    sim.close()
    header = ("program", "tries", "outcome", "reason", "as expected", "s")
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(f"`{row[0]}`" if i == 0 else row[i] for i in range(len(row))) + " |")
    else:
        widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
        for row in [header] + rows:
            print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    expected = sum(r[4] == "yes" for r in rows)
    print(f"\n{expected}/{len(rows)} ended as expected; host pid {os.getpid()} survived all; "
          f"escape marker present: {marker.exists()}; processes left: {len(live_descendants(os.getpid()))}")


if __name__ == "__main__":
    main()
