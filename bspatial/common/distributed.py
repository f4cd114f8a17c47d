"""Which rank this process is, and a barrier that holds whoever launched the ranks.

A sharded run is several processes on one run folder, each told its place by environment variables:
torchrun and ``accelerate launch`` set ``RANK`` / ``WORLD_SIZE`` / ``MASTER_ADDR`` / ``MASTER_PORT``;
an ``srun``-launched job has ``SLURM_PROCID`` / ``SLURM_NTASKS`` and the user exports the master address.

The barrier is ``torch.distributed`` over gloo (CPU, no GPU needed), initialised here from those variables
when nobody initialised it. It used to be ``accelerate.PartialState().wait_for_everyone()``, which is a
no-op when accelerate's own state is not distributed although ``RANK`` / ``WORLD_SIZE`` are set (measured:
torchrun on CPU kept 247 of 494 rows, rank 0's, and exited 0): a barrier that can silently not wait is
worse than none.

Example:
    >>> Launch.of_environment({}).world
    1
    >>> Launch.of_environment({"SLURM_PROCID": "1", "SLURM_NTASKS": "4", "MASTER_ADDR": "n01", "MASTER_PORT": "29500"})
    Launch(rank=1, world=4, source='SLURM_PROCID/SLURM_NTASKS')
"""

from __future__ import annotations

import datetime
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

logger = logging.getLogger(__name__)

BARRIER_TIMEOUT_ENV = "BSPATIAL_BARRIER_TIMEOUT_S"
DEFAULT_BARRIER_TIMEOUT_S = 3 * 3600
"""How long a rank waits at a barrier for the others (seconds). Ranks get equal shares, so they arrive
within minutes of each other; a rank that died breaks the gloo connection and the wait ends at once;
the timeout only bounds a rank that hangs. Long enough for a slow model's imbalance, overridable."""

_LAUNCHERS = (("RANK", "WORLD_SIZE"), ("SLURM_PROCID", "SLURM_NTASKS"))


@dataclass(frozen=True)
class Launch:
    """This process's place in a launch: ``rank`` of ``world`` processes, and which variables said so."""

    rank: int = 0
    world: int = 1
    source: str = ""

    @staticmethod
    def of_environment(environ: Mapping[str, str] | None = None) -> Launch:
        """Read the launcher's variables (torchrun / accelerate first, then SLURM).

        SLURM's variables count only beside ``MASTER_ADDR``: a batch script's own shell also has
        ``SLURM_NTASKS`` > 1, and a lone process there must not wait for ranks nobody started.

        Raises:
            ValueError: a variable that is not an integer, or a rank outside ``[0, world)``.
        """
        env = os.environ if environ is None else environ
        for rank_name, world_name in _LAUNCHERS:
            if world_name not in env or (rank_name.startswith("SLURM") and not env.get("MASTER_ADDR")):
                continue
            world, rank = _integer(env, world_name, "1"), _integer(env, rank_name, "0")
            if world < 1 or not 0 <= rank < world:
                raise ValueError(f"{rank_name}={rank} must be in [0, {world_name}={world})")
            return Launch(rank, world, f"{rank_name}/{world_name}") if world > 1 else Launch()
        return Launch()


def _integer(env: Mapping[str, str], name: str, default: str) -> int:
    value = env.get(name, default)
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def barrier(launch: Launch) -> None:
    """Wait until every rank of ``launch`` reaches this call (nothing to wait for in a single process).

    Raises:
        RuntimeError: no rendezvous address (``MASTER_ADDR`` / ``MASTER_PORT``) to find the other ranks,
            or a rank died or hung past the timeout (the message comes from ``torch.distributed``).
    """
    if launch.world == 1:
        return
    import torch.distributed as dist

    if not dist.is_initialized():
        missing = [name for name in ("MASTER_ADDR", "MASTER_PORT") if not os.environ.get(name)]
        if missing:
            raise RuntimeError(
                f"{launch.source} say this is rank {launch.rank} of {launch.world}, but {'/'.join(missing)} "
                "is unset, so the ranks cannot meet: launch with torchrun or accelerate launch, or export "
                "MASTER_ADDR (the first node) and MASTER_PORT (a free port) for every rank"
            )
        timeout = float(os.environ.get(BARRIER_TIMEOUT_ENV, DEFAULT_BARRIER_TIMEOUT_S))
        logger.info("rank %d/%d: joining the gloo group at %s:%s", launch.rank, launch.world,
                    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"])
        dist.init_process_group("gloo", init_method="env://", rank=launch.rank, world_size=launch.world,
                                timeout=datetime.timedelta(seconds=timeout))
    dist.barrier()


__all__ = ["BARRIER_TIMEOUT_ENV", "DEFAULT_BARRIER_TIMEOUT_S", "Launch", "barrier"]
