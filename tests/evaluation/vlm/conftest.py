"""Shared fixtures: the fixture benchmark written once per session."""

from __future__ import annotations

import pytest

from bspatial.evaluation.vlm.fixtures import write_fixture_repos


@pytest.fixture(scope="session")
def repos(tmp_path_factory):
    """{"vqa": repo dir, "ir": repo dir} of the clean fixture benchmark."""
    return write_fixture_repos(tmp_path_factory.mktemp("fixture"))


@pytest.fixture(scope="session")
def malformed_repos(tmp_path_factory):
    """The fixture benchmark with one malformed row per suite."""
    return write_fixture_repos(tmp_path_factory.mktemp("fixture-malformed"), malformed=True)

