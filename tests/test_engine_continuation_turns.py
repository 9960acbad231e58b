"""A worker goes on with its own run's next node only while no other job waits for a worker: runs take turns.

The test's thread plays the worker that took the first node's job off a real Redis queue; what waits
there is read back from the broker itself.
"""

from __future__ import annotations

import base64
import json
import threading

import pytest
import redis

from graphs.engine import attempt, run_start
from graphs.executors import CeleryExecutor, ThreadExecutor, job_handlers_install
from tests import factories
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _chain(length: int) -> dict:
    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, length)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def _queued_jobs(broker) -> list[list[str]]:
    """The jobs in the broker's queue, the one that came first first (kombu pushes on the left)."""
    raw = redis.Redis.from_url(broker.url).lrange(broker.queue, 0, -1)
    return [json.loads(base64.b64decode(json.loads(message)["body"]))[0] for message in reversed(raw)]


def _taken_by_a_worker(broker) -> None:
    redis.Redis.from_url(broker.url).delete(broker.queue)


def test_with_another_runs_node_waiting_the_worker_hands_its_dependant_to_the_queue(task, scripted_runner, broker):
    mine = planned_run(task, _chain(3))
    run_start(run=mine)
    _taken_by_a_worker(broker)
    theirs = planned_run(factories.TaskFactory(project=task.project), _chain(1))
    run_start(run=theirs)
    their_first = latest(theirs)["n0"]

    attempt.node_execute_job(str(latest(mine)["n0"].pk))

    rows = latest(mine)
    assert rows["n0"].status == "succeeded"
    assert (rows["n1"].status, rows["n1"].started_at, rows["n1"].worker) == ("queued", None, "")
    assert rows["n2"].status == "pending"
    # Behind the other run's node, which a free worker takes first.
    assert _queued_jobs(broker) == [["node_execute", str(their_first.pk)], ["node_execute", str(rows["n1"].pk)]]
    assert [call[0] for call in scripted_runner.node_calls()] == ["n0"]


def test_with_nothing_waiting_the_worker_runs_its_run_on(task, scripted_runner, broker):
    mine = planned_run(task, _chain(3))
    run_start(run=mine)
    _taken_by_a_worker(broker)

    attempt.node_execute_job(str(latest(mine)["n0"].pk))

    rows = latest(mine)
    assert {node_id: row.status for node_id, row in rows.items()} == {"n0": "succeeded", "n1": "succeeded",
                                                                      "n2": "succeeded"}
    for node_id in ("n1", "n2"):
        assert rows[node_id].ready_at == rows[node_id].started_at
        assert rows[node_id].worker == rows["n0"].worker
    assert _queued_jobs(broker) == []


def test_a_broker_that_cannot_be_asked_says_no_job_waits():
    assert not CeleryExecutor(broker_url="redis://127.0.0.1:1/0", queue="nowhere").waiting()
    assert not CeleryExecutor(broker_url="memory://", queue="nowhere").waiting()
    assert not CeleryExecutor(broker_url="redis://127.0.0.1:1/0", queue="nowhere").waiting_ask()()


def test_the_broker_asked_ahead_answers_each_question_on_the_connection_it_went_out_on(broker):
    """A worker sends its question before its node's statements and reads the reply after them: each
    reply is its own question's, and every connection goes back to the pool once read."""
    executor = broker.executor()
    client = redis.Redis.from_url(broker.url)
    answers = []
    for jobs in (0, 1, 0, 2, 0):
        client.delete(broker.queue)
        for number in range(jobs):
            client.lpush(broker.queue, f"job {number}")
        answers.append(executor.waiting_ask()())
    assert answers == [False, True, False, True, False]
    assert not executor._broker.connection_pool._in_use_connections


def test_in_the_embedded_mode_a_job_waits_while_every_thread_is_busy():
    started = {"first": threading.Event(), "second": threading.Event()}
    release = threading.Event()
    job_handlers_install({"turns-test-hold": lambda arg: (started[arg].set(), release.wait(10))})
    executor = ThreadExecutor(workers=1)
    assert not executor.waiting()

    executor.submit("turns-test-hold", "first")
    assert started["first"].wait(10)
    assert not executor.waiting()  # the one job is running, not waiting
    executor.submit("turns-test-hold", "second")
    assert executor.waiting()

    release.set()
    assert started["second"].wait(10)
    assert not executor.waiting()
