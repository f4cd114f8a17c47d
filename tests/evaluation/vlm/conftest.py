"""Shared fixtures: the fixture benchmark written once per session."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bspatial.evaluation.vlm.backend_chance import ChanceBackend
from bspatial.evaluation.vlm.fixtures import write_fixture_repos


@dataclass
class InterruptAfter(ChanceBackend):
    """Chance that raises KeyboardInterrupt (as Ctrl-C would) once ``budget`` items are answered."""

    budget: int = 0

    def generate(self, requests):
        if self.budget < len(requests):
            raise KeyboardInterrupt
        self.budget -= len(requests)
        return super().generate(requests)


@pytest.fixture(scope="session")
def repos(tmp_path_factory):
    """{"vqa": repo dir, "ir": repo dir} of the clean fixture benchmark."""
    return write_fixture_repos(tmp_path_factory.mktemp("fixture"))


@pytest.fixture(scope="session")
def malformed_repos(tmp_path_factory):
    """The fixture benchmark with one malformed row per suite."""
    return write_fixture_repos(tmp_path_factory.mktemp("fixture-malformed"), malformed=True)

