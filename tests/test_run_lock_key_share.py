"""A run's lock never stops a worker committing rows that refer to the run, so a cancel and a worker that
are each waiting on the other cannot deadlock.

A worker records a chain node's end and claims the next node in one transaction, without the run lock;
the artifact the node keeps refers to its run and task, and PostgreSQL checks those references when the
transaction commits by taking a KEY SHARE lock on each row referred to. A cancel locks the run, then
cancels the waiting attempts, and so waits on the attempt the worker has just claimed. Were the run's
lock FOR UPDATE, which KEY SHARE waits for, the worker's commit would wait on the cancel: a deadlock,
one of the two aborted (a cancel answered with a 500). The run, its task and its project are locked FOR
NO KEY UPDATE, which excludes every other locker as before and lets the references be checked.
"""

from __future__ import annotations

import ast
import threading
import time
from pathlib import Path

import pytest
from django.db import connection, connections

from graphs.engine import claims, run_cancel, run_start
from graphs.engine.state import run_locked
from graphs.models import Artifact, WorkGraphRun, WorkNodeExecution
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's row lock modes"),
]

# A bound on a wait that should end at once; only a hang reaches it.
HANG_SECONDS = 60.0
ROOT = Path(__file__).resolve().parent.parent


def _chain_keeping_artifacts(task) -> WorkGraphRun:
    nodes = [node("n0", promotes_to_artifact={"artifact_type": "notes"})]
    nodes += [node(f"n{i}", f"n{i - 1}", promotes_to_artifact={"artifact_type": "notes"}) for i in (1, 2)]
    return planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})


def _backend_waits_on_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        # Read afresh: within a transaction, PostgreSQL answers from the first read's snapshot.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + HANG_SECONDS
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


class _InThread:
    """A call run in a thread of its own, on its own database connection; its error kept for the test."""

    def __init__(self, call) -> None:
        self.pid: int | None = None
        self.error: BaseException | None = None
        self._call = call
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self) -> None:
        try:
            connection.ensure_connection()
            self.pid = connection.connection.info.backend_pid
            self._call()
        except BaseException as error:  # kept for the test to report
            self.error = error
        finally:
            connections.close_all()

    def join(self) -> None:
        self._thread.join(HANG_SECONDS)
        assert not self._thread.is_alive(), "the call in the thread never ended"


def test_a_cancel_waiting_on_a_chain_node_the_worker_is_committing_does_not_deadlock(
    task, scripted_runner, inline_executor, monkeypatch
):
    run = _chain_keeping_artifacts(task)
    cancels: list[_InThread] = []
    real_emit = claims.node_states_emit

    def cancel_meanwhile(*, run_id, rows):
        """The claim of n1 is made and n0's artifact written, uncommitted: the cancel starts now, locks the
        run and waits on n1; then the worker's transaction commits."""
        if not cancels and [row.node_id for row in rows] == ["n1"]:
            cancels.append(_InThread(lambda: run_cancel(run=WorkGraphRun.objects.get(pk=run.pk))))
            _until(lambda: cancels[0].pid is not None and _backend_waits_on_a_lock(cancels[0].pid),
                   "the cancel never waited on the claimed attempt")
        return real_emit(run_id=run_id, rows=rows)

    monkeypatch.setattr(claims, "node_states_emit", cancel_meanwhile)
    run_start(run=run)
    inline_executor.drain()
    cancels[0].join()

    assert cancels[0].error is None
    rows = latest(run)
    assert [rows[node_id].status for node_id in ("n0", "n1", "n2")] == ["succeeded", "succeeded", "cancelled"]
    assert WorkGraphRun.objects.get(pk=run.pk).status == "cancelled"
    assert list(Artifact.objects.filter(run=run).values_list("node_exec__node_id", flat=True).order_by("pk")) == [
        "n0", "n1"]


@pytest.mark.parametrize("with_manifest", [True, False], ids=["the run with its manifest", "the scheduler's"])
def test_a_row_referring_to_the_run_commits_while_the_run_is_locked(task, with_manifest):
    run = _chain_keeping_artifacts(task)
    run_start(run=run)
    attempt = WorkNodeExecution.objects.get(run=run, node_id="n0")
    locked, released = threading.Event(), threading.Event()

    def hold_the_lock():
        with run_locked(run.pk, with_manifest=with_manifest):
            locked.set()
            released.wait(2 * HANG_SECONDS)

    holder = _InThread(hold_the_lock)
    try:
        assert locked.wait(HANG_SECONDS)
        # Committed as it is inserted, its references to the run and task checked then.
        inserter = _InThread(lambda: Artifact.objects.create(node_exec=attempt, task=task, run=run,
                                                             artifact_type="notes", content="kept"))
        inserter.join()
        assert inserter.error is None and not released.is_set()
    finally:
        released.set()
        holder.join()
    assert holder.error is None


def test_every_row_lock_the_console_takes_lets_references_to_the_row_be_checked():
    """Rows are locked to order decisions, never to hold off rows that refer to them: every lock in the
    code is FOR NO KEY UPDATE (no_key=True), through the ORM or the engine's own statements."""
    plain = []
    for path in sorted([*(ROOT / "graphs").rglob("*.py"), *(ROOT / "console").rglob("*.py")]):
        for call in ast.walk(ast.parse(path.read_text())):
            if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
                continue
            if call.func.attr not in ("select_for_update", "for_update_sql"):
                continue
            no_key = [keyword.value for keyword in call.keywords if keyword.arg == "no_key"]
            if not (no_key and isinstance(no_key[0], ast.Constant) and no_key[0].value is True):
                plain.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    assert plain == []
