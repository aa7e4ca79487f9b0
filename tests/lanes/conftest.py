"""Lane fixtures: the installation under test, from source or from built wheels."""

from __future__ import annotations

import pytest

from tests.lanes.installs import SOURCE, Install, build_wheels_install


@pytest.fixture(scope="session")
def wheels_install(tmp_path_factory: pytest.TempPathFactory) -> Install:
    """The four distributions built as wheels and installed into a fresh venv (once per run)."""
    return build_wheels_install(tmp_path_factory.mktemp("wheels-lane"))


@pytest.fixture(params=["source", "wheels"])
def install(request: pytest.FixtureRequest) -> Install:
    """Each lane runs twice: against this checkout, and against the built wheels."""
    if request.param == "source":
        return SOURCE
    built: Install = request.getfixturevalue("wheels_install")
    return built
