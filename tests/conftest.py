"""Suite-wide fixtures and the CI guard.

Under ``CI=true`` the suite must run against the real PostgreSQL and Redis, and with a bubblewrap that
can sandbox agents: if any is missing the run stops with an error instead of quietly skipping the
tests that need them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import cache
from django.db import connections

from graphs.agents import runner_register
from graphs.engine import scheduler
from graphs.executors import InlineExecutor, executor_set
from graphs.logs import events
from graphs.logs.events import run_event_listener_register
from graphs.logs.store import log_writer_stop
from graphs.workspaces.sandbox import bwrap_problem
from tests import factories
from tests.celery_worker import Broker, Worker, broker_create, broker_delete, worker_env, worker_start
from tests.claude_real import anthropic_standin, real_claude  # noqa: F401  (fixtures of the real Claude CLI)
from tests.deliveries import bare_remote, forge_token  # noqa: F401  (the delivery tests' remote and token)
from tests.hostile_runs import hostile  # noqa: F401  (the hostile agent's runs)
from tests.repos import repository_create
from tests.scripted_agents import ScriptedRunner

IN_CI = os.environ.get("CI", "").lower() == "true"
FAKE_CLAUDE = Path(__file__).parent / "fake_claude.py"
CLAUDE_FIXTURES = Path(__file__).parent / "fixtures" / "claude"


def _redis_reachable(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def pytest_configure(config: pytest.Config) -> None:
    if not IN_CI:
        return
    engine = settings.DATABASES["default"]["ENGINE"]
    if "postgresql" not in engine:
        raise pytest.UsageError(f"CI=true needs DATABASE_URL pointing at PostgreSQL; the engine is {engine}")
    if not settings.REDIS_URL or not _redis_reachable(settings.REDIS_URL):
        raise pytest.UsageError(f"CI=true needs a reachable Redis at REDIS_URL (got {settings.REDIS_URL!r})")
    problem = bwrap_problem(settings.WORKGRAPH_BWRAP_BIN)
    if problem:
        raise pytest.UsageError(f"CI=true needs the agents' sandbox: {problem}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked ``services`` outside CI when PostgreSQL or Redis is not configured, and those
    marked ``sandbox`` when bubblewrap cannot run here."""
    if IN_CI:
        return
    problem = bwrap_problem(settings.WORKGRAPH_BWRAP_BIN)
    if problem:
        for item in items:
            if "sandbox" in item.keywords:
                item.add_marker(pytest.mark.skip(reason=f"{problem}; CI=true runs it"))
    missing = []
    if "postgresql" not in settings.DATABASES["default"]["ENGINE"]:
        missing.append("DATABASE_URL (PostgreSQL)")
    if not settings.REDIS_URL or not _redis_reachable(settings.REDIS_URL):
        missing.append("REDIS_URL (reachable Redis)")
    if not missing:
        return
    skip = pytest.mark.skip(reason=f"needs {' and '.join(missing)}; CI=true runs it")
    for item in items:
        if "services" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _throttles_forgotten():
    """API throttles count in the cache, which outlives each test's database: every test starts afresh."""
    cache.clear()


@pytest.fixture(autouse=True)
def _log_writer_gone_before_the_flush(request):
    """A test that commits has its tables emptied after it (a TRUNCATE). The log writer's thread may still
    be storing its attempts' lines then: the two take each other's locks and PostgreSQL ends one of them
    (a deadlock), failing the next test's setup. So the writer stores what it holds and its thread ends
    first; the next line starts it again."""
    marker = request.node.get_closest_marker("django_db")
    commits = "transactional_db" in request.fixturenames or (marker is not None and marker.kwargs.get("transaction"))
    if not commits:
        yield
        return
    request.getfixturevalue("_django_db_helper")  # set up before this fixture, so emptied after it
    yield
    log_writer_stop()


@pytest.fixture(autouse=True)
def _heartbeat_held_inside_a_test_transaction(request, settings):
    """A test inside one transaction holds rows the heartbeat's own connection cannot see: a beat falling
    due during a slow call would read the attempt as taken from it and cancel it. Such tests get no beat;
    tests of the heartbeat itself commit as they go (transaction=True) and keep it."""
    marker = request.node.get_closest_marker("django_db")
    in_one_transaction = "db" in request.fixturenames or marker is not None
    commits = "transactional_db" in request.fixturenames or (marker is not None and marker.kwargs.get("transaction"))
    if in_one_transaction and not commits:
        settings.WORKGRAPH_HEARTBEAT_SECONDS = 3600.0


@pytest.fixture
def through_libgit2(settings):
    """Attempts stage, commit and land through libgit2 wherever it does what git does, whatever the
    environment's ``WORKGRAPH_GIT_BACKEND`` says."""
    settings.WORKGRAPH_GIT_BACKEND = "auto"


@pytest.fixture
def project(db):
    return factories.ProjectFactory()


@pytest.fixture
def commands_allowed(project):
    """The project lets command nodes and command judgments run (``allow_commands``)."""
    project.allow_commands = True
    project.save(update_fields=["allow_commands"])
    return project


@pytest.fixture
def reviewed(project):
    """The project requires plan approval: the plan and each append wait for a reviewer."""
    project.require_plan_approval = True
    project.save(update_fields=["require_plan_approval"])
    return project


@pytest.fixture
def alice(project):
    """Alice leads the project."""
    return factories.member(project, "alice", role="lead")


@pytest.fixture
def bob(project):
    """Bob reviews the project."""
    return factories.member(project, "bob", role="reviewer")


@pytest.fixture
def charlie(db):
    """Charlie has no access to the project."""
    return factories.UserFactory(username="charlie")


@pytest.fixture
def dana(db):
    """Dana administers skills and belongs to no project."""
    return factories.skill_admin("dana")


@pytest.fixture
def task(project, alice):
    return factories.TaskFactory(project=project, created_by=alice)


@pytest.fixture(scope="session", autouse=True)
def log_writer_stopped_at_the_end(django_db_setup, django_db_blocker):
    """The log writer's thread ends, and its connection closes, before the test database is dropped."""
    yield
    with django_db_blocker.unblock():
        log_writer_stop()


@pytest.fixture
def inline_executor():
    """Jobs run in the test's own thread when the test calls ``drain()``: deterministic, no threads."""
    executor = InlineExecutor()
    previous = executor_set(executor)
    yield executor
    executor_set(previous)


@pytest.fixture
def scripted_runner(settings):
    """Route every agent call of the test to a ``ScriptedRunner`` the test can program and inspect."""
    runner = ScriptedRunner()
    runner_register("scripted", lambda: runner)
    settings.WORKGRAPH_AGENT = "scripted"
    return runner


@pytest.fixture
def run_events_heard(monkeypatch) -> list[dict]:
    """The run events delivered while the test runs, and to no other listener."""
    delivered: list[dict] = []
    monkeypatch.setattr(events, "_listeners", [])
    run_event_listener_register(delivered.append)
    return delivered


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git repository made for the test (see tests/repos.py)."""
    return repository_create(tmp_path / "repo")


@pytest.fixture
def repo_task(repo, project, alice):
    """A task of the project, whose folder is ``repo``."""
    project.target_folder = str(repo)
    project.save(update_fields=["target_folder"])
    return factories.TaskFactory(project=project, created_by=alice)


@pytest.fixture
def sandbox_writable(settings, tmp_path):
    """Let sandboxed agents write the test's own folder: the fake CLI records its call and waits for its
    gates there."""
    settings.WORKGRAPH_SANDBOX_WRITABLE = [str(tmp_path)]


@pytest.fixture
def claude_fixture(monkeypatch):
    """Select the scenario (a file of tests/fixtures/claude) the fake claude CLI plays."""
    return lambda name: monkeypatch.setenv("FAKE_CLAUDE_FIXTURE", str(CLAUDE_FIXTURES / name))


@pytest.fixture
def claude_cli(settings, claude_fixture):
    """Make the claude runner, pointed at the fake CLI, the engine's agent; returns the fixture chooser."""
    settings.WORKGRAPH_AGENT = "claude"
    settings.WORKGRAPH_CLAUDE_BIN = str(FAKE_CLAUDE)
    settings.WORKGRAPH_TRANSIENT_RETRIES = 0
    return claude_fixture


@pytest.fixture
def locked(monkeypatch) -> list[object]:
    """The run ids the scheduler takes the run lock of, in order."""
    taken: list[object] = []
    run_locked = scheduler.run_locked

    def counting(run_id, **kwargs):
        taken.append(run_id)
        return run_locked(run_id, **kwargs)

    monkeypatch.setattr(scheduler, "run_locked", counting)
    return taken


@pytest.fixture
async def live_sockets(settings):
    """For WebSocket tests: a fresh channel layer, and the consumers' database connection closed after.

    channels-redis binds its per-channel locks to the loop that used them, so each test needs a new
    layer; the consumers' queries run on asgiref's sync thread, whose connection must close before the
    test database can be flushed or dropped.
    """
    settings.CHANNEL_LAYERS = {**settings.CHANNEL_LAYERS}
    yield
    await sync_to_async(connections.close_all)()


@pytest.fixture
def broker() -> Iterator[Broker]:
    """A queue of the test's own; this process's jobs are published to it while the test runs."""
    broker = broker_create()
    previous = executor_set(broker.executor())
    yield broker
    executor_set(previous)
    broker_delete(broker)


@pytest.fixture
def workers(broker, tmp_path) -> Iterator[Callable[..., Worker]]:
    """Start workers on demand; every one of them is stopped (and its group killed) at teardown."""
    started: list[Worker] = []

    def start(name: str, *, beat: bool = False, **env: str) -> Worker:
        worker = worker_start(name=name, env=worker_env(broker=broker, **env), log_dir=tmp_path, beat=beat)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
