"""One heartbeat thread per process: it beats every running attempt and tells the ones taken away."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from graphs.models import WorkNodeExecution
from graphs.runs.heartbeat import execution_heartbeat
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

WORKER = "host:1:1"


def _running(run, node_id: str) -> WorkNodeExecution:
    long_ago = timezone.now() - timedelta(minutes=5)
    return factories.ExecutionFactory(run=run, node_id=node_id, status="running", worker=WORKER,
                                      started_at=long_ago, heartbeat_at=long_ago)


def _heartbeat_at(execution: WorkNodeExecution) -> datetime:
    return WorkNodeExecution.objects.get(pk=execution.pk).heartbeat_at


def _wait(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_running_attempts_beat_and_a_finished_one_is_told_to_stop(task, settings):
    settings.WORKGRAPH_HEARTBEAT_SECONDS = 0.1
    run = factories.RunFactory(task=task, status="running")
    kept, taken = _running(run, "kept"), _running(run, "taken")
    kept_cancel, taken_cancel = threading.Event(), threading.Event()
    before = kept.heartbeat_at

    with execution_heartbeat(kept, worker=WORKER, cancel_event=kept_cancel), \
            execution_heartbeat(taken, worker=WORKER, cancel_event=taken_cancel):
        assert _wait(lambda: _heartbeat_at(kept) > before)
        # The reaper (or another worker) finished the row: the next beat tells its agent to stop.
        WorkNodeExecution.objects.filter(pk=taken.pk).update(status="failed", worker="someone-else")
        last_beat = _heartbeat_at(taken)
        assert taken_cancel.wait(5)
        # Every beat up to the one that told "taken" is stored by now: a later beat of "kept" is one without it.
        told_at = _heartbeat_at(kept)
        assert _wait(lambda: _heartbeat_at(kept) > told_at)

    assert not kept_cancel.is_set()
    assert _heartbeat_at(taken) == last_beat


def test_a_cancelled_run_stops_its_attempts_and_a_quick_attempt_never_beats(task, settings):
    settings.WORKGRAPH_HEARTBEAT_SECONDS = 0.2
    run = factories.RunFactory(task=task, status="running")
    quick = _running(run, "quick")
    with CaptureQueriesContext(connection) as queries:
        with execution_heartbeat(quick, worker=WORKER, cancel_event=threading.Event()):
            pass
    assert len(queries) == 0

    slow = _running(run, "slow")
    slow_cancel = threading.Event()
    with execution_heartbeat(slow, worker=WORKER, cancel_event=slow_cancel):
        # The slow attempt's first beat is due after the quick one's would have been: by then the quick
        # one would have beaten, had it been left beating.
        assert _wait(lambda: _heartbeat_at(slow) > slow.heartbeat_at)
        assert _heartbeat_at(quick) == quick.heartbeat_at
        run.__class__.objects.filter(pk=run.pk).update(cancel_requested_at=timezone.now())
        assert slow_cancel.wait(5)
