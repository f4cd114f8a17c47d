"""Fixtures shared across test folders: one local Ray cluster for every Ray test of a session (its start-up
takes ~12 s on a 2-core machine, so it is paid once)."""

from __future__ import annotations

import os

import pytest

RAY_TEST_CPUS = 2
"""The issue's test cluster: a local Ray cluster with 2 CPUs."""


@pytest.fixture(scope="session")
def ray_cluster():
    """``ray`` initialised on a local 2-CPU cluster (no dashboard, no usage stats); its GCS address is
    ``ray_cluster.get_runtime_context().gcs_address``. Shut down at the end of the session."""
    ray = pytest.importorskip("ray")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")   # the machine has no network
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=RAY_TEST_CPUS, include_dashboard=False, logging_level="WARNING")
    yield ray
    if started:
        ray.shutdown()
