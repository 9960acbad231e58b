"""A log written by another process, with no disk shared, is served here: backlog, live, and a writer
killed mid-stream (no line twice, no gap shown as data)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone

from graphs.engine import executions_reap
from graphs.logs.store import log_file_open
from graphs.models import ExecutionLogFile, ExecutionLogLine, WorkNodeExecution
from tests import factories
from tests.celery_worker import current_database_url, wait_until
from tests.test_live_log_stream import assert_end, connect_log, receive_seqs

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live_sockets")]

WRITER_TIMEOUT = 60


@pytest.fixture
def execution(task):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running",
                                           worker="elsewhere", heartbeat_at=timezone.now())
    log_file_open(execution=execution)
    return execution


def writer_start(execution, *arguments: str) -> subprocess.Popen:
    """``tests.log_writer_process`` on the test database, with a folder of its own and no log directory."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": current_database_url(),
        "WORKGRAPH_VAR_DIR": tempfile.mkdtemp(prefix="workgraph-other-host-"),
        "PYTHONUNBUFFERED": "1",
    }
    if settings.REDIS_URL:
        env["REDIS_URL"] = settings.REDIS_URL
    return subprocess.Popen(
        [sys.executable, "-m", "tests.log_writer_process", str(execution.pk), *arguments],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )


def writer_finish(process: subprocess.Popen) -> str:
    output, _ = process.communicate(timeout=WRITER_TIMEOUT)
    assert process.returncode == 0, output
    return output


def stored_seqs(execution) -> list[int]:
    return list(ExecutionLogLine.objects.filter(log_file_id=execution.pk).order_by("seq").values_list("seq", flat=True))


async def test_the_backlog_of_a_log_another_process_wrote_is_served_here(alice, execution):
    output = await asyncio.to_thread(writer_finish, writer_start(execution, "--lines", "30", "--close"))
    assert output.splitlines()[-1] == "stored"

    communicator = await connect_log(alice, execution)
    try:
        assert await receive_seqs(communicator, 30) == list(range(1, 31))
        await assert_end(communicator, last_seq=30)
    finally:
        await communicator.disconnect()


async def test_lines_another_process_writes_while_watched_arrive_once_each_in_order(alice, execution):
    communicator = await connect_log(alice, execution)
    try:
        process = writer_start(execution, "--lines", "60", "--every", "0.01", "--close")
        assert await receive_seqs(communicator, 60) == list(range(1, 61))
        await assert_end(communicator, last_seq=60)
        await asyncio.to_thread(writer_finish, process)
    finally:
        await communicator.disconnect()


async def test_a_writer_killed_mid_stream_leaves_no_duplicate_and_no_gap_shown(alice, execution):
    communicator = await connect_log(alice, execution)
    process = writer_start(execution, "--lines", "0", "--every", "0.002")
    try:
        await asyncio.to_thread(
            wait_until, lambda: len(stored_seqs(execution)) >= 40, timeout=WRITER_TIMEOUT,
            message=lambda: "the other process stored too few lines", alive=process,
        )
        os.killpg(process.pid, signal.SIGKILL)  # mid-stream: lines numbered, maybe not yet stored
        handed_over = [int(line.split()[1]) for line in process.communicate(timeout=10)[0].splitlines()
                       if line.startswith("appended ")]
        kept = await sync_to_async(stored_seqs)(execution)
        assert kept == list(range(1, len(kept) + 1))  # stored in order, none twice, none skipped
        assert len(kept) <= len(handed_over)

        # The reaper finds the attempt's worker silent and closes its log after the last line stored.
        await sync_to_async(WorkNodeExecution.objects.filter(pk=execution.pk).update)(
            heartbeat_at=timezone.now() - timedelta(minutes=5)
        )
        await sync_to_async(executions_reap)(stale_after=timedelta(seconds=30))

        last = len(kept) + 1
        assert await receive_seqs(communicator, last) == list(range(1, last + 1))
        await assert_end(communicator, last_seq=last)
        header = await sync_to_async(ExecutionLogFile.objects.get)(node_exec=execution)
        assert (header.status, header.last_seq) == ("closed", last)
        lost = await sync_to_async(ExecutionLogLine.objects.get)(log_file=header, seq=last)
        assert lost.event == "worker_lost"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        await communicator.disconnect()
