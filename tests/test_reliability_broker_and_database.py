"""Infrastructure blips under a running graph: the broker restarts, the database drops connections.

Real Celery workers (prefork, with beat running the reaper) execute a 12-node graph with the offline
agent slowed so each node takes a moment. Mid-run, the test either kills and restarts the Redis server
the workers use (a private one on its own port: restarting the machine's would disturb every other
test) or terminates every database connection of the workers. Either way the run must finish with
each node's result committed exactly once, and the blip must leave a recorded, explained trace.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from django.db import connection

from graphs.engine import run_start
from graphs.executors import executor_set
from graphs.models import ExecutionLogLine, WorkGraphRun
from tests.celery_worker import Broker, wait_until
from tests.redis_server import RedisServer, redis_server_start
from tests.run_builders import lanes_manifest, node_rows, planned_run

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

RUN_TIMEOUT = 120.0
BLIP_ENV = {
    "WORKGRAPH_AGENT": "offline",
    # Four lines per node, about a second of agent work: long enough to be caught in the middle.
    "WORKGRAPH_OFFLINE_LINE_DELAY": "0.25",
    "WORKGRAPH_HEARTBEAT_SECONDS": "0.5",
    "WORKGRAPH_REAP_AFTER_SECONDS": "4",
    "WORKGRAPH_REAP_INTERVAL_SECONDS": "1",
}


@pytest.fixture
def private_redis(tmp_path) -> Iterator[RedisServer]:
    server = redis_server_start(tmp_path)
    yield server
    server.stop()


@pytest.fixture
def broker(private_redis) -> Iterator[Broker]:
    """This module's workers (and their live publishing) use the private Redis, not the machine's."""
    broker = Broker(url=private_redis.url, queue=f"workgraph-blip-{uuid.uuid4().hex[:12]}")
    previous = executor_set(broker.executor())
    yield broker
    executor_set(previous)


def _wait_mid_run(run: WorkGraphRun, worker) -> None:
    wait_until(
        lambda: node_rows(run).filter(status="succeeded").count() >= 3
        and node_rows(run).filter(status="running").exists(),
        timeout=60,
        message=lambda: f"no node running after some succeeded; worker log:\n{worker.log_text()[-3000:]}",
    )


def _wait_in_an_agent_call(run: WorkGraphRun, worker) -> None:
    """Until a running attempt's agent has begun to answer: its first line is stored, and the rest of
    the call (about a second) is still to come."""
    wait_until(
        lambda: ExecutionLogLine.objects.filter(
            log_file__node_exec__in=node_rows(run).filter(status="running"), event="agent_output"
        ).exists(),
        timeout=60,
        message=lambda: f"no running attempt's agent began to answer; worker log:\n{worker.log_text()[-3000:]}",
    )


def _wait_finished(run: WorkGraphRun, worker) -> WorkGraphRun:
    wait_until(
        lambda: WorkGraphRun.objects.get(pk=run.pk).is_finished(),
        timeout=RUN_TIMEOUT,
        message=lambda: f"the run is still {WorkGraphRun.objects.get(pk=run.pk).status}:\n{worker.log_text()[-4000:]}",
    )
    return WorkGraphRun.objects.get(pk=run.pk)


def _assert_every_node_committed_once(run: WorkGraphRun) -> None:
    assert run.status == "succeeded", run.error
    succeeded = Counter(node_rows(run).filter(status="succeeded").values_list("node_id", flat=True))
    assert len(succeeded) == 12
    assert set(succeeded.values()) == {1}, f"a node committed more than one result: {succeeded}"


def test_a_run_finishes_across_a_broker_restart(task, workers, private_redis):
    worker = workers("broker-blip", beat=True, **BLIP_ENV)
    run = planned_run(task, lanes_manifest(lanes=2, length=5))
    run_start(run=run)
    _wait_mid_run(run, worker)

    # Killed, not shut down: every queued and unacknowledged message is gone with it.
    private_redis.stop()
    wait_until(
        lambda: "Connection to broker lost" in worker.log_text(),
        timeout=60,
        message=lambda: f"the worker never noticed the broker gone:\n{worker.log_text()[-3000:]}",
    )
    private_redis.start()

    run = _wait_finished(run, worker)
    _assert_every_node_committed_once(run)


def test_a_dropped_database_connection_retries_the_node_and_loses_nothing(task, workers):
    worker = workers("database-blip", beat=True, **BLIP_ENV)
    run = planned_run(task, lanes_manifest(lanes=2, length=5))
    run_start(run=run)
    _wait_mid_run(run, worker)
    _wait_in_an_agent_call(run, worker)

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        terminated = cursor.fetchone()[0]
    assert terminated > 0, "the workers held no database connection to drop"

    run = _wait_finished(run, worker)
    _assert_every_node_committed_once(run)
    lost = list(node_rows(run).filter(status="failed"))
    assert lost, "no attempt was caught by the dropped connection"
    for row in lost:
        assert row.error.startswith("database connection lost"), row.error
        retry = run.executions.get(node_id=row.node_id, attempt=row.attempt + 1)
        assert (retry.cause, retry.status) == ("transient_retry", "succeeded")
