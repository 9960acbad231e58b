"""A drain of many lines is stored at once — by COPY on PostgreSQL, one INSERT on SQLite — exactly the
lines numbered, in order, as encoded once; a clash or a failure of the COPY loses none of them."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import OperationalError, connection, transaction
from django.test.utils import CaptureQueriesContext

from graphs.logs import rows, writer
from graphs.logs.store import log_append, log_file_close, log_file_open, log_read, log_writes_wait
from graphs.models import ExecutionLogFile, ExecutionLogLine
from tests import factories
from tests.faults import FailingFirst

pytestmark = pytest.mark.django_db(transaction=True)

ODD_TEXTS = [
    "plain",
    "ünïcode ✓ 日本語 and emoji 🚀",
    "a \u0000 nul, a \t tab, a \\ backslash, a \r\n newline, \\N and \\. as COPY would read them",
    "\"quotes\" and <script>x</script>",
    "broken \ud800 surrogate",
]


@pytest.fixture
def execution(task):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    return execution


@pytest.fixture
def copies(monkeypatch) -> list[int]:
    """The size of every COPY tried (none on SQLite)."""
    tried: list[int] = []
    real_copy = rows._lines_copy

    def counted(lines):
        tried.append(len(lines))
        return real_copy(lines)

    monkeypatch.setattr(rows, "_lines_copy", counted)
    return tried


def stored_rows(execution) -> list[tuple]:
    return list(ExecutionLogLine.objects.filter(log_file_id=execution.pk).order_by("id")
                .values_list("seq", "event", "text", "cut"))


def test_a_drain_stores_exactly_the_lines_numbered_in_order_as_they_were_encoded(execution, settings, copies):
    settings.WORKGRAPH_LOG_LINE_MAX_BYTES = 4096
    handed: list[dict] = []
    with writer._logs.lock:  # the writer waits: all 300 go in one drain
        for number in range(300):
            text = ODD_TEXTS[number % len(ODD_TEXTS)] if number % 50 else "é" * 10_000  # some cut to the cap
            handed.append(log_append(execution=execution, event="agent_output", text=text, n=number))
    assert log_writes_wait(timeout=30)

    stored = stored_rows(execution)
    assert [seq for seq, *_ in stored] == list(range(1, 301))  # in order, by id as by seq
    assert [json.loads(text) for _, _, text, _ in stored] == handed  # the lines handed back are the lines stored
    assert [line["n"] for line in handed] == list(range(300))
    assert [cut for *_, cut in stored] == [number % 50 == 0 for number in range(300)]
    assert all(len(text.encode()) <= 4096 for _, _, text, _ in stored)
    assert handed[2]["text"] == ODD_TEXTS[2] and handed[4]["text"] == ODD_TEXTS[4]
    if connection.vendor == "postgresql":
        assert copies and sum(copies) == 300
    else:
        assert copies == []  # SQLite stores them with its INSERT


def test_a_copy_that_clashes_with_another_process_falls_back_and_renumbers(execution, copies):
    log_append(execution=execution, event="node_start")
    assert log_writes_wait(timeout=10)
    # Another process stores seq 2 and 3 meanwhile; this one still thinks 2 is next.
    for seq in (2, 3):
        text = json.dumps({"seq": seq, "ts": "2026-12-01T10:00:00.000+00:00", "event": "agent_output", "text": "x"})
        ExecutionLogLine.objects.create(log_file_id=execution.pk, seq=seq, ts="2026-12-01T10:00:00Z",
                                        event="agent_output", text=text)

    with writer._logs.lock:  # all in one drain, large enough for COPY
        for number in range(40):
            log_append(execution=execution, event="agent_output", text=f"mine {number}")
    log_file_close(execution=execution)

    stored = stored_rows(execution)
    assert sorted(seq for seq, *_ in stored) == list(range(1, 44))
    mine = [json.loads(text) for seq, _, text, _ in sorted(stored) if seq > 3]
    # Every line once; those that lost their seq are numbered after the ones stored.
    assert sorted(line["text"] for line in mine) == sorted(f"mine {number}" for number in range(40))
    assert [line["seq"] for line in mine] == list(range(4, 44))  # the text says the seq it is stored at
    header = ExecutionLogFile.objects.get(node_exec=execution)
    assert (header.last_seq, header.line_count) == (43, 41)  # this process's lines, not the other's
    if connection.vendor == "postgresql":
        assert copies == [40]  # tried, undone at the clash, then stored by the INSERT


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="COPY is PostgreSQL's")
def test_a_copy_that_fails_loses_no_line(execution, monkeypatch):
    monkeypatch.setattr(writer, "RETRY_FIRST_SECONDS", 0.01)
    copy_after_a_drop = FailingFirst(rows._lines_copy, OperationalError("server closed the connection unexpectedly"))
    monkeypatch.setattr(rows, "_lines_copy", copy_after_a_drop)
    with writer._logs.lock:  # all 30 wait for one drain
        for number in range(30):
            log_append(execution=execution, event="agent_output", text=f"line {number}")
    log_file_close(execution=execution)

    assert copy_after_a_drop.all_raised, "the COPY was never tried"
    assert [seq for seq, *_ in stored_rows(execution)] == list(range(1, 31))
    assert ExecutionLogFile.objects.get(node_exec=execution).status == "closed"


def test_a_copy_is_one_of_the_statements_counted(execution):
    # Lines queued for the writer, then stored by a close in the caller's transaction, on its connection.
    with writer._logs.lock:
        for number in range(rows.COPY_MIN_LINES):
            log_append(execution=execution, event="agent_output", text=f"line {number}")
        with CaptureQueriesContext(connection) as queries, transaction.atomic():
            log_file_close(execution=execution)

    table = ExecutionLogLine._meta.db_table
    writes = [query["sql"].split(" (")[0] for query in queries.captured_queries if table in query["sql"]]
    expected = "COPY" if connection.vendor == "postgresql" else "INSERT INTO"
    assert writes == [f"{expected} {connection.ops.quote_name(table)}"]
    assert len(stored_rows(execution)) == rows.COPY_MIN_LINES


def test_the_line_told_live_is_the_line_stored(execution, monkeypatch, settings):
    settings.WORKGRAPH_LOG_LINE_MAX_BYTES = 1024
    told: list[dict] = []
    monkeypatch.setattr(writer, "_listeners", [lambda _execution, line: told.append(line)])

    log_append(execution=execution, event="agent_output", path=Path("/srv/a.py"), cost=Decimal("0.25"), n=(1, 2))
    log_append(execution=execution, event="agent_output", text="x" * 5000)
    assert log_writes_wait(timeout=10)

    assert told == log_read(log_file=ExecutionLogFile.objects.get(node_exec=execution))
    assert (told[0]["path"], told[0]["cost"]) == ("/srv/a.py", "0.25")
    assert told[1]["text"].endswith(" …[cut]") and told[1]["cut"] == {"text": 5000}
