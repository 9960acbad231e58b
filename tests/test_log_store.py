"""Logs are stored in the database: batched, numbered once, bounded, and downloaded as they were sent."""

from __future__ import annotations

import json
import threading

import pytest
from django.test import Client

from graphs.logs import numbering, writer
from graphs.logs.store import log_append, log_file_close, log_file_open, log_read, log_writes_wait
from graphs.models import ExecutionLogFile, ExecutionLogLine
from tests import factories
from tests.celery_worker import wait_until
from tests.faults import FailingFirst
from tests.log_lines import running_with_log, stored

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def execution(task):
    return running_with_log(task)


def test_lines_appended_while_a_drain_is_under_way_go_in_one_insert(execution, monkeypatch):
    inserts: list[int] = []
    first_insert_started, let_it_go = threading.Event(), threading.Event()
    real_insert = writer._lines_insert

    def counting_insert(lines):
        # Only this test's lines: another test's may still be in the process's queue.
        ours = [item for item in lines if str(item.log_id) == str(execution.pk)]
        if not ours:
            return real_insert(lines)
        if not first_insert_started.is_set():
            first_insert_started.set()
            assert let_it_go.wait(10)
        stored_now = real_insert(lines)
        # Counted once stored: a drain the database refused (a busy SQLite file) is tried again whole.
        inserts.append(len(ours))
        return stored_now

    monkeypatch.setattr(writer, "_lines_insert", counting_insert)
    log_append(execution=execution, event="agent_output", text="first")
    assert first_insert_started.wait(10)
    for number in range(200):  # all of these wait behind the first drain
        log_append(execution=execution, event="agent_output", text=f"line {number}")
    let_it_go.set()

    assert log_writes_wait(timeout=10)
    assert inserts in ([1, 200], [201]), "the lines appended during the first drain did not go in one insert"
    assert [line["seq"] for line in stored(execution)] == list(range(1, 202))


def test_a_line_stored_while_the_log_is_read_is_in_the_answer(execution, monkeypatch):
    held, let_it_go = threading.Event(), threading.Event()
    real_insert, real_unwritten = writer._lines_insert, writer._logs.unwritten

    def held_insert(lines):
        if not held.is_set() and any(str(item.log_id) == str(execution.pk) for item in lines):
            held.set()
            assert let_it_go.wait(10)
        return real_insert(lines)

    def stored_then_unwritten(log_id):
        # The writer commits the line just as the reader takes what is not stored yet: it is stored by
        # then, so only a read of the stored lines made after this finds it.
        let_it_go.set()
        assert log_writes_wait(timeout=10)
        return real_unwritten(log_id)

    monkeypatch.setattr(writer, "_lines_insert", held_insert)
    log_append(execution=execution, event="agent_output", text="in flight")
    assert held.wait(10)
    monkeypatch.setattr(writer._logs, "unwritten", stored_then_unwritten)

    lines = log_read(log_file=ExecutionLogFile.objects.get(node_exec=execution))

    assert [line["text"] for line in lines] == ["in flight"]


def test_a_line_is_told_to_the_listeners_only_once_it_is_stored(execution, monkeypatch):
    seen_in_store: list[bool] = []

    def listener(_execution, line):
        seen_in_store.append(ExecutionLogLine.objects.filter(log_file_id=execution.pk, seq=line["seq"]).exists())

    monkeypatch.setattr(writer, "_listeners", [listener])
    for number in range(20):
        log_append(execution=execution, event="agent_output", text=f"line {number}")
    assert log_writes_wait(timeout=10)
    assert seen_in_store == [True] * 20


def test_the_download_is_the_lines_as_they_were_sent_byte_for_byte(alice, execution):
    log_append(execution=execution, event="agent_output", text="plain")
    log_append(execution=execution, event="agent_output", text="ünïcode ✓ and \"quotes\" and \u0000 nul",
               zeta=1, alpha={"b": 2, "a": 1})
    log_append(execution=execution, event="judgment", ok=True, issues=["<script>x</script>"])
    log_file_close(execution=execution)
    client = Client()
    client.force_login(alice)

    response = client.get(f"/executions/{execution.pk}/log.jsonl")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    body = b"".join(response.streaming_content).decode()
    lines = log_read(log_file=ExecutionLogFile.objects.get(node_exec=execution))
    assert body == "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    # Keys keep the order they were written in (PostgreSQL's jsonb would sort them).
    assert list(json.loads(body.splitlines()[1])) == ["seq", "ts", "event", "text", "zeta", "alpha"]
    api = client.get(f"/api/executions/{execution.pk}/log", {"limit": 10}).json()
    assert api["lines"] == lines and api["complete"] is True


def test_a_closed_log_records_its_counts(execution):
    for number in range(3):
        log_append(execution=execution, event="agent_output", text=f"line {number}")
    log_file_close(execution=execution)

    header = ExecutionLogFile.objects.get(node_exec=execution)
    texts = list(ExecutionLogLine.objects.filter(log_file=header).values_list("text", flat=True))
    assert (header.status, header.last_seq, header.line_count) == ("closed", 3, 3)
    assert header.size_bytes == sum(len(text.encode()) + 1 for text in texts)


def test_a_line_over_the_payload_cap_is_cut_and_says_so(execution, settings):
    settings.WORKGRAPH_LOG_LINE_MAX_BYTES = 4096
    huge = "é" * 100_000  # two bytes each

    log_append(execution=execution, event="agent_output", text=huge, note="small")
    log_writes_wait(timeout=10)

    row = ExecutionLogLine.objects.get(log_file_id=execution.pk)
    line = json.loads(row.text)
    assert len(row.text.encode()) <= 4096
    assert row.cut is True
    assert line["cut"] == {"text": 200_000}
    assert line["text"].endswith(numbering.CUT_SUFFIX) and line["text"].startswith("éé")
    assert line["note"] == "small"


def test_a_line_too_big_even_cut_keeps_what_identifies_it(execution, settings):
    settings.WORKGRAPH_LOG_LINE_MAX_BYTES = 1024

    log_append(execution=execution, event="agent_output", items=list(range(10_000)))
    log_writes_wait(timeout=10)

    line = json.loads(ExecutionLogLine.objects.get(log_file_id=execution.pk).text)
    assert set(line) == {"seq", "ts", "event", "cut", "payload_bytes"}
    assert line["payload_bytes"] > 1024


def test_past_the_line_cap_agent_output_is_counted_and_the_engine_lines_are_kept(execution, settings):
    settings.WORKGRAPH_LOG_MAX_LINES = 10
    for number in range(25):
        log_append(execution=execution, event="agent_output", text=f"line {number}")
    log_append(execution=execution, event="node_finished", status="succeeded")
    log_file_close(execution=execution)

    lines = stored(execution)
    assert [line["event"] for line in lines] == ["agent_output"] * 10 + ["log_truncated", "node_finished"]
    assert lines[10]["max_lines"] == 10
    assert [line["seq"] for line in lines] == list(range(1, 13))
    header = ExecutionLogFile.objects.get(node_exec=execution)
    assert (header.line_count, header.lines_dropped, header.last_seq) == (12, 15, 12)


def test_a_log_another_process_wrote_to_is_numbered_on_from_its_last_line(execution):
    log_append(execution=execution, event="node_start")
    assert log_writes_wait(timeout=10)
    # The reaper, in another process, knows nothing of this one's numbering but what is stored.
    writer._forget_after_fork()

    line = log_append(execution=execution, event="worker_lost", worker="w1")

    assert line["seq"] == 2
    assert log_writes_wait(timeout=10)
    assert [line["event"] for line in stored(execution)] == ["node_start", "worker_lost"]


def test_lines_that_lost_their_seq_to_another_process_are_renumbered_not_duplicated(execution):
    log_append(execution=execution, event="node_start")
    assert log_writes_wait(timeout=10)
    # Another process stores seq 2 and 3 meanwhile; this one still thinks 2 is next.
    for seq in (2, 3):
        text = json.dumps({"seq": seq, "ts": "2026-12-01T10:00:00.000+00:00", "event": "agent_output", "text": "x"})
        ExecutionLogLine.objects.create(log_file_id=execution.pk, seq=seq, ts="2026-12-01T10:00:00Z",
                                        event="agent_output", text=text)

    line = log_append(execution=execution, event="agent_output", text="mine")
    log_append(execution=execution, event="agent_output", text="mine too")
    log_file_close(execution=execution)

    lines = stored(execution)
    assert [line["seq"] for line in lines] == [1, 2, 3, 4, 5]
    assert [line.get("text") for line in lines[3:]] == ["mine", "mine too"]
    assert line["seq"] == 4  # the line handed back is the line stored
    assert ExecutionLogFile.objects.get(node_exec=execution).last_seq == 5


def test_a_writer_that_loses_the_database_stores_its_lines_once_it_is_back(execution, monkeypatch):
    from django.db import OperationalError

    drop = OperationalError("server closed the connection unexpectedly")
    monkeypatch.setattr(writer, "RETRY_FIRST_SECONDS", 0.01)
    monkeypatch.setattr(writer, "_lines_insert", FailingFirst(writer._lines_insert, drop, drop))
    for number in range(5):
        log_append(execution=execution, event="agent_output", text=f"line {number}")
    log_file_close(execution=execution)

    assert [line["seq"] for line in stored(execution)] == [1, 2, 3, 4, 5]
    assert ExecutionLogFile.objects.get(node_exec=execution).status == "closed"


def test_lines_of_an_attempt_that_never_reached_the_database_are_dropped_with_a_warning(task, monkeypatch, caplog):
    monkeypatch.setattr(writer, "HEADER_WAIT_SECONDS", 0.2)
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    ExecutionLogFile.objects.filter(node_exec=execution).delete()  # as if its transaction rolled back

    log_append(execution=execution, event="agent_output", text="nowhere to go")

    assert log_writes_wait(timeout=10)  # it does not wait for lines that may never be stored
    wait_until(lambda: "dropped 1 lines of log" in caplog.text, timeout=10,
               message=lambda: "the lines were never dropped")
    assert not ExecutionLogLine.objects.exists()
