"""A transaction that wrote log lines and rolled back leaves its log numbered 1…n, losing nothing told before it:
its own lines are written again marked ``rolled_back`` (what they told of did not happen), with their numbers
(graphs/logs/transacted.py). A PostgreSQL restart under a run rolls such transactions back (the chaos suite)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from graphs.logs import transacted, writer
from graphs.logs.store import log_append, log_file_close, log_writes_wait
from graphs.models import ExecutionLogFile
from tests.log_lines import running_with_log, stored

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def execution(task):
    return running_with_log(task)


def _stored(execution) -> list[tuple[int, str, bool]]:
    return [(line["seq"], line["text"], line.get("rolled_back", False)) for line in stored(execution)]


def test_a_rolled_back_transactions_lines_keep_their_numbers_and_the_lines_before_it_are_kept(execution):
    log_append(execution=execution, event="agent_output", text="before")
    with pytest.raises(RuntimeError), transaction.atomic():
        log_append(execution=execution, event="agent_output", text="in the transaction")
        raise RuntimeError("the commit never came")
    log_append(execution=execution, event="agent_output", text="after")
    log_file_close(execution=execution)

    assert _stored(execution) == [(1, "before", False), (2, "in the transaction", True), (3, "after", False)]
    assert ExecutionLogFile.objects.get(pk=execution.pk).last_seq == 3


def test_a_rolled_back_savepoint_marks_only_its_own_lines(execution):
    with transaction.atomic():
        log_append(execution=execution, event="agent_output", text="outer")
        with pytest.raises(RuntimeError), transaction.atomic():
            log_append(execution=execution, event="agent_output", text="inner")
            raise RuntimeError("the savepoint is rolled back")
        log_append(execution=execution, event="agent_output", text="outer again")
    log_file_close(execution=execution)

    assert _stored(execution) == [(1, "outer", False), (2, "inner", True), (3, "outer again", False)]


def test_a_close_rolled_back_with_its_lines_leaves_the_log_open_to_close_again(execution):
    log_append(execution=execution, event="agent_output", text="before")
    with pytest.raises(RuntimeError), transaction.atomic():
        log_append(execution=execution, event="node_end", text="recorded")
        log_file_close(execution=execution)
        raise RuntimeError("the commit never came")
    assert ExecutionLogFile.objects.get(pk=execution.pk).status == "open"

    with transaction.atomic():
        log_append(execution=execution, event="attempt_lost", text="lost instead")
        log_file_close(execution=execution)
    # "before" may have been the writer's to store all along, on its own connection: a close in a caller's
    # transaction does not wait for it (on SQLite the writer would need that transaction's lock). A job waits
    # for the writer before it ends; so does this test.
    assert log_writes_wait(timeout=10)

    assert _stored(execution) == [(1, "before", False), (2, "recorded", True), (3, "lost instead", False)]
    header = ExecutionLogFile.objects.get(pk=execution.pk)
    assert (header.status, header.last_seq, header.line_count) == ("closed", 3, 3)


def test_a_line_numbered_in_a_transaction_is_left_to_it_by_the_writer(execution, monkeypatch):
    # The writer drains between the line's numbering and its transaction's write, as it may at any moment.
    real_write = transacted.caller_transaction_write

    def drained_first(log_id, **kwargs):
        def drain() -> None:
            try:
                writer._writer._drain_once()
            finally:
                connection.close()

        drainer = threading.Thread(target=drain)
        drainer.start()
        drainer.join()
        real_write(log_id, **kwargs)

    monkeypatch.setattr(transacted, "caller_transaction_write", drained_first)
    log_append(execution=execution, event="agent_output", text="before")
    with pytest.raises(RuntimeError), transaction.atomic():
        log_append(execution=execution, event="agent_output", text="in the transaction")
        raise RuntimeError("the commit never came")
    log_file_close(execution=execution)

    assert _stored(execution) == [(1, "before", False), (2, "in the transaction", True)]
