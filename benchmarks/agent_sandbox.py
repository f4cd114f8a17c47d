"""The agent sandbox's reliability table: every hostile program of evaluation/agents/hostile/, how it ended.

Each program runs in the sandbox against one small reach_plate episode with the suite's tiny limits (a 2 s
watchdog instead of the paper's 900 s). The table lists the program, what it tries, the outcome and the
recorded reason, whether that is what the program's header expects, and the wall seconds; the last line says
whether the host survived them all (it is this process) and whether anything escaped the temp folder.

Then it compares the API's latency over the sandbox's pipe with the same calls made in the host process.

    .venv/bin/python benchmarks/agent_sandbox.py [--markdown] [--calls 200]
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
    parser.add_argument("--calls", type=int, default=200, help="calls per method in the latency comparison")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    from bspatial.common.processes import live_descendants
    from bspatial.common.progress import track
    from bspatial.common.tables import markdown_table
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
    for program in track(hostile_programs(), "hostile programs", "program"):
        api = AgentAPI(EpisodeRun(sim, instance, max_steps=30))
        started = time.perf_counter()
        run = run_program(program.source, api, limits=HOSTILE_LIMITS)
        rows.append((program.name, program.description, run.outcome, run.reason.replace("|", "/")[:110],
                     "yes" if program.matches(run) else "NO", f"{time.perf_counter() - started:.1f}"))
    sim.close()
    header = ("program", "tries", "outcome", "reason", "as expected", "s")
    if args.markdown:
        print(markdown_table(header, [(f"`{row[0]}`", *row[1:]) for row in rows]))
    else:
        widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
        for row in [header] + rows:
            print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    expected = sum(r[4] == "yes" for r in rows)
    print(f"\n{expected}/{len(rows)} ended as expected; host pid {os.getpid()} survived all; "
          f"escape marker present: {marker.exists()}; processes left: {len(live_descendants(os.getpid()))}")
    _latency(args.calls)


LATENCY_PROGRAM = """
import time

def run(api):
    for method, args in (("get_state", ()), ("get_image", ("head",)), ("pixel_to_point", (112, 150, "head"))):
        started = time.perf_counter()
        for _ in range({calls}):
            getattr(api, method)(*args)
        api.log(method, seconds=(time.perf_counter() - started) / {calls})
"""


def _latency(calls: int) -> None:
    """Seconds per call over the pipe vs the same call in the host process, and the sandbox's start cost."""
    import time

    from bspatial.evaluation.agents.api import AgentAPI
    from bspatial.evaluation.agents.sandbox import SandboxLimits, run_program
    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks import sample_instance
    from bspatial.tasks.episode import EpisodeRun

    sim = MujocoBackend()
    instance = sample_instance("reach_plate", "largest", 0)
    sim.load(instance.scene)
    api = AgentAPI(EpisodeRun(sim, instance, max_steps=30))
    direct = {}
    for method, args in (("get_state", []), ("get_image", ["head"]), ("pixel_to_point", [112, 150, "head"])):
        api.call(method, args)          # warm: the frame is rendered once per step, for both sides
        started = time.perf_counter()
        for _ in range(calls):
            api.call(method, args)
        direct[method] = (time.perf_counter() - started) / calls
    started = time.perf_counter()
    empty = run_program("def run(api):\n    pass\n", api, limits=SandboxLimits(inactivity_s=60))
    start_cost = time.perf_counter() - started
    run = run_program(LATENCY_PROGRAM.format(calls=calls), api, limits=SandboxLimits(inactivity_s=60))
    sim.close()
    if run.outcome != "finished" or empty.outcome != "finished":
        raise SystemExit(f"latency program did not finish: {run.outcome}: {run.reason}")
    print(f"\nper call ({calls} calls each; frames are rendered once per step and reused):")
    print(f"  {'method':16s} {'in host (ms)':>13s} {'over the pipe (ms)':>19s} {'ratio':>6s}")
    for entry in api.episode_log[-3:]:
        host, piped = direct[entry["msg"]] * 1e3, entry["seconds"] * 1e3
        print(f"  {entry['msg']:16s} {host:13.3f} {piped:19.3f} {piped / host:6.1f}")
    print(f"  sandbox start + stop of an empty program: {start_cost:.2f} s")


if __name__ == "__main__":
    main()
