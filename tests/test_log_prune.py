"""``manage.py logs_prune --older-than``: the lines of old closed logs go, their headers stay, open logs stay."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from graphs.logs.store import log_append, log_file_close, log_file_open
from graphs.models import ExecutionLogFile, ExecutionLogLine
from tests import factories

pytestmark = pytest.mark.django_db


def written_log(task, *, lines: int, closed_days_ago: float | None):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="succeeded")
    log_file_open(execution=execution)
    for number in range(lines):
        log_append(execution=execution, event="agent_output", text=f"line {number}")
    if closed_days_ago is not None:
        log_file_close(execution=execution)
        ExecutionLogFile.objects.filter(node_exec=execution).update(
            closed_at=timezone.now() - timedelta(days=closed_days_ago)
        )
    return ExecutionLogFile.objects.get(node_exec=execution)


def prune(*arguments: str) -> str:
    out = StringIO()
    call_command("logs_prune", *arguments, stdout=out)
    return out.getvalue()


def test_it_deletes_the_lines_of_logs_closed_before_the_cutoff_and_keeps_their_headers(task):
    old = written_log(task, lines=3, closed_days_ago=40)
    recent = written_log(task, lines=2, closed_days_ago=5)
    open_and_old = written_log(task, lines=4, closed_days_ago=None)
    ExecutionLogFile.objects.filter(pk=open_and_old.pk).update(created_at=timezone.now() - timedelta(days=90))

    assert "pruned 3 line(s) of 1 log(s)" in prune("--older-than", "30d")

    assert not ExecutionLogLine.objects.filter(log_file=old).exists()
    header = ExecutionLogFile.objects.get(pk=old.pk)
    assert header.pruned_at is not None and (header.line_count, header.last_seq) == (3, 3)
    assert ExecutionLogLine.objects.filter(log_file=recent).count() == 2
    assert ExecutionLogLine.objects.filter(log_file=open_and_old).count() == 4


def test_a_dry_run_counts_and_deletes_nothing(task):
    written_log(task, lines=3, closed_days_ago=2)

    assert "would prune 3 line(s) of 1 log(s)" in prune("--older-than", "24h", "--dry-run")
    assert ExecutionLogLine.objects.count() == 3


def test_pruning_again_finds_nothing_more(task):
    written_log(task, lines=3, closed_days_ago=2)
    prune("--older-than", "1")

    assert "pruned 0 line(s) of 0 log(s)" in prune("--older-than", "1")


@pytest.mark.parametrize("bad", ["soon", "-3d", "3w", ""])
def test_a_duration_it_cannot_read_is_refused_with_the_forms_it_can(bad):
    with pytest.raises(CommandError, match="30d, 12h, 90m"):
        prune(f"--older-than={bad}")


def test_a_pruned_log_says_so_on_its_page(task, alice, client):
    old = written_log(task, lines=3, closed_days_ago=40)
    prune("--older-than", "30d")
    client.force_login(alice)

    page = client.get(f"/executions/{old.node_exec_id}/").content.decode()

    assert "pruned" in page and "line 0" not in page
