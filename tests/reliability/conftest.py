"""Fixtures of the fault cases: the session's own services (tests/chaos.py starts them) and a case's run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.reliability.harness import Chaos, repository_make
from tests.reliability.services import ChaosRedis, PostgresCluster, services_from_environment


@pytest.fixture
def chaos_services() -> tuple[PostgresCluster, ChaosRedis]:
    services = services_from_environment()
    if services is None:
        pytest.skip("the fault cases run on services of their own: make chaos (tests/chaos.py) starts them")
    return services


@pytest.fixture
def chaos(chaos_services, broker, task, settings, tmp_path) -> Iterator[Callable[..., Chaos]]:
    """Make the case's repository (the task's project folder, commands allowed so the offline agent writes
    its files) and workspace folder under ``root``; the workers it starts are stopped at teardown."""
    made: list[Chaos] = []

    def make(root: Path = tmp_path, extra_env: dict[str, str] | None = None) -> Chaos:
        project = task.project
        project.target_folder = str(repository_make(root / "repo"))
        project.allow_commands = True
        project.save(update_fields=["target_folder", "allow_commands"])
        settings.WORKGRAPH_WORKSPACE_DIR = root / "workspaces"
        case = Chaos(broker=broker, folder=tmp_path, workspace_dir=root / "workspaces", extra_env=extra_env or {})
        made.append(case)
        return case

    yield make
    for case in made:
        case.stop()
