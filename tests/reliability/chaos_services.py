"""The services under a 1,000-node run fail: Redis restarts, PostgreSQL restarts, the workspace folder's
filesystem fills up.

Redis and PostgreSQL are the session's own (tests/chaos.py starts them): Redis is SIGKILLed and started
again mid-run, PostgreSQL restarted (``pg_ctl stop -m fast``, every session cut; a crash, ``-m immediate``,
may also lose the log lines of its last moment, which the log writer commits without waiting for the disk
by design: graphs/transactions.py); the filesystem is a tmpfs of the case's own holding the
project's repository and the workspace folder, filled to its last byte while attempts check out and
commit, then freed. After each the run must end ``succeeded``, or failed with a reason naming the fault,
with every node landed once, every log numbered 1…n, and nothing left behind (harness.py, ``verdict``).
"""

from __future__ import annotations

import pytest
from django.db import connections

from graphs.engine import run_start
from graphs.models import WorkGraphRun
from tests.reliability.harness import NODES, Chaos, chaos_manifest, run_finished, verdict, wait_for, wait_succeeded
from tests.reliability.services import Tmpfs, mount_problem
from tests.run_builders import node_rows, planned_run

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# Room for the repository, its 1,000 landings and the pool's worktrees, several times over.
TMPFS_MB = 256
NO_SPACE = "No space left on device"


def _a_third_succeeded(case: Chaos, task) -> WorkGraphRun:
    """A chaos run of ``task`` on two workers of ``case`` (the first with the beat), once a third of its nodes
    have succeeded: the faults strike a run well under way."""
    case.worker("first", beat=True)
    case.worker("second")
    run = planned_run(task, chaos_manifest())
    run_start(run=run)
    wait_succeeded(run, case, NODES // 3)
    return run


def test_a_run_goes_on_across_a_redis_restart(chaos, chaos_services, task):
    _, server = chaos_services
    case = chaos()
    run = _a_third_succeeded(case, task)

    server.crash()
    wait_for(lambda: "Connection to broker lost" in case.logs(), timeout=60,
             message=lambda: f"no worker noticed the broker gone:\n{case.logs()}")
    server.start()

    run = run_finished(run, case)
    assert verdict(run, case, fault_words=()) == []


def test_a_run_goes_on_across_a_postgresql_restart(chaos, chaos_services, task):
    cluster, _ = chaos_services
    case = chaos()
    run = _a_third_succeeded(case, task)

    connections.close_all()
    cluster.restart()

    run = run_finished(run, case)
    assert verdict(run, case, fault_words=("database",)) == []


def test_a_full_workspace_filesystem_fails_attempts_and_loses_nothing(chaos, task, tmp_path):
    if mount_problem():
        pytest.skip(mount_problem())
    disk = Tmpfs(path=tmp_path / "tmpfs", size_mb=TMPFS_MB)
    disk.mount()
    try:
        case = chaos(disk.path)
        run = _a_third_succeeded(case, task)

        filler = disk.fill()
        # Full until an attempt has failed on it, in its checkout, commit or landing: then it is freed.
        wait_for(lambda: node_rows(run).filter(status="failed").exists()
                 or WorkGraphRun.objects.get(pk=run.pk).is_finished(),
                 timeout=120, message=lambda: f"no attempt met the full disk:\n{case.logs()}")
        filler.unlink()

        run = run_finished(run, case)
        assert verdict(run, case, fault_words=(NO_SPACE,)) == []
    finally:
        disk.unmount()
