"""The engine's hot statements read and write what the querysets they stand in for would."""

from __future__ import annotations

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import DatabaseError, connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from graphs.engine.claims import CLAIMED_FIELDS
from graphs.engine.state import RUN_FIELDS
from graphs.engine.statements import (
    attempt_latest_claim,
    attempt_next_queued_lock,
    row_locked_read,
    row_update,
    rows_read,
)
from graphs.models import ExecutionLogFile, WorkGraphRun, WorkNodeExecution
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(task) -> WorkGraphRun:
    nodes = [node("a"), node("b", "a"), node("c", "a")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    for node_id in ("a", "b", "c"):
        WorkNodeExecution.objects.create(run=run, node_id=node_id, attempt=1, subagent_type="coder",
                                         input_payload={"feedback": ["ü", {"nested": [1, 2]}]})
    return run


def test_a_conditional_update_changes_the_row_only_while_its_conditions_hold(run):
    row = run.executions.get(node_id="a")
    now = timezone.now()
    values = {"status": "running", "started_at": now, "worker": "w1"}

    assert row_update(WorkNodeExecution, pk=row.pk, where={"status": "queued"}, values=values) == 0
    assert WorkNodeExecution.objects.get(pk=row.pk).status == "pending"
    assert row_update(WorkNodeExecution, pk=row.pk, where={"status": "pending"}, values=values) == 1
    assert row_update(WorkNodeExecution, pk=row.pk, where={"status": "pending"}, values=values) == 0

    stored = WorkNodeExecution.objects.get(pk=row.pk)
    assert (stored.status, stored.started_at, stored.worker) == ("running", now, "w1")
    assert run.executions.exclude(pk=row.pk).filter(status="pending").count() == 2


def test_an_update_stores_json_decimals_and_empty_values_as_the_orm_would(run):
    row = run.executions.get(node_id="a")
    output = {"text": "it's \"quoted\"\n", "usage": None, "list": [1.5, True]}

    row_update(WorkNodeExecution, pk=row.pk, where={"status": "pending", "worker": ""},
               values={"output_payload": output, "judgment_result": None, "cost_usd": Decimal("0.012345"),
                       "finished_at": None})

    stored = WorkNodeExecution.objects.get(pk=row.pk)
    assert stored.output_payload == output
    assert stored.judgment_result is None
    assert stored.cost_usd == Decimal("0.012345")
    assert WorkNodeExecution.objects.filter(pk=row.pk, judgment_result__isnull=True).exists()


def test_a_locked_read_gives_the_row_the_orm_gives_with_the_rest_deferred(run):
    names = ("status", "manifest_version", "task", "cancel_requested_at")

    read = row_locked_read(WorkGraphRun, pk=run.pk, names=names)

    orm = WorkGraphRun.objects.only(*names).get(pk=run.pk)
    assert read.pk == orm.pk
    assert (read.status, read.manifest_version, read.task_id, read.cancel_requested_at) == (
        orm.status, orm.manifest_version, orm.task_id, orm.cancel_requested_at)
    assert read.get_deferred_fields() == orm.get_deferred_fields()
    with CaptureQueriesContext(connection) as queries:
        assert read.graph_manifest == run.graph_manifest
    assert len(queries) == 1  # a deferred field loads when it is asked for, as the ORM's would


def test_a_locked_read_of_a_missing_row_raises_does_not_exist(run):
    with pytest.raises(WorkGraphRun.DoesNotExist):
        row_locked_read(WorkGraphRun, pk="00000000-0000-0000-0000-000000000000", names=("status",))


@pytest.mark.django_db(transaction=True)
def test_a_locked_read_holds_the_row_until_the_transaction_ends(run):
    if not connection.features.has_select_for_update:
        pytest.skip("this database locks the whole file for a write, not rows")
    outcome: list[str] = []

    def try_lock() -> None:
        try:
            with transaction.atomic():
                WorkGraphRun.objects.select_for_update(nowait=True).get(pk=run.pk)
            outcome.append("locked")
        except DatabaseError:
            outcome.append("refused")
        finally:
            connections.close_all()

    with transaction.atomic():
        row_locked_read(WorkGraphRun, pk=run.pk, names=("status",))
        other = threading.Thread(target=try_lock)
        other.start()
        other.join()
    after = threading.Thread(target=try_lock)
    after.start()
    after.join()

    assert outcome == ["refused", "locked"]


def test_rows_read_match_the_orms_values(run):
    later = timezone.now() + timedelta(minutes=5)
    run.executions.filter(node_id="b").update(not_before=later, skill_ref=None, cause_node_id="a")
    names = ["pk", "node_id", "attempt", "status", "not_before", "skill_ref_id", "input_payload", "cause_node_id"]

    read = rows_read(WorkNodeExecution, names, where={"run_id": run.pk}, within=("node_id", ["a", "b"]))

    orm = WorkNodeExecution.objects.filter(run_id=run.pk, node_id__in=["a", "b"]).values(*names)
    assert sorted(read, key=lambda row: row["node_id"]) == sorted(orm, key=lambda row: row["node_id"])
    assert {row["node_id"]: row["not_before"] for row in read}["b"] == later


def test_rows_read_among_no_values_is_empty_without_a_query(run):
    with CaptureQueriesContext(connection) as queries:
        assert rows_read(WorkNodeExecution, ["pk"], where={"run_id": run.pk}, within=("node_id", [])) == []
    assert len(queries) == 0


def _queue(run: WorkGraphRun, node_id: str, *, ready_at, not_before=None) -> None:
    run.executions.filter(node_id=node_id).update(status="queued", ready_at=ready_at, not_before=not_before)


def _next(run: WorkGraphRun, now) -> WorkNodeExecution | None:
    return attempt_next_queued_lock(run_id=run.pk, now=now, names=("node_id", "attempt", "input_payload"),
                                    run_names=RUN_FIELDS)


def test_the_next_queued_attempt_is_the_longest_waiting_one_that_may_start(run):
    now = timezone.now()
    _queue(run, "a", ready_at=now - timedelta(seconds=30), not_before=now + timedelta(seconds=5))
    _queue(run, "b", ready_at=now - timedelta(seconds=20))
    _queue(run, "c", ready_at=now - timedelta(seconds=10))

    with transaction.atomic():
        picked = _next(run, now)
    assert picked.node_id == "b"
    assert picked.input_payload == {"feedback": ["ü", {"nested": [1, 2]}]}
    assert (picked.run.pk, picked.run.status, picked.run.manifest_version) == (run.pk, run.status,
                                                                                run.manifest_version)
    assert "graph_manifest" in picked.run.get_deferred_fields()

    run.executions.filter(node_id="b").update(status="running")
    with transaction.atomic():
        assert _next(run, now).node_id == "c"
    with transaction.atomic():
        assert _next(run, now + timedelta(seconds=6)).node_id == "a"
    run.executions.update(status="succeeded")
    with transaction.atomic():
        assert _next(run, now) is None


@pytest.mark.django_db(transaction=True)
def test_a_queued_attempt_another_worker_holds_is_skipped(run):
    if not connection.features.has_select_for_update_skip_locked:
        pytest.skip("this database has no SKIP LOCKED: the conditional update decides there")
    now = timezone.now()
    _queue(run, "b", ready_at=now - timedelta(seconds=20))
    _queue(run, "c", ready_at=now - timedelta(seconds=10))
    seen: list[str | None] = []

    def other_worker() -> None:
        try:
            with transaction.atomic():
                picked = _next(run, now)
                seen.append(picked.node_id if picked else None)
        finally:
            connections.close_all()

    with transaction.atomic():
        assert _next(run, now).node_id == "b"
        other = threading.Thread(target=other_worker)
        other.start()
        other.join()

    assert seen == ["c"]


def _claim_b(run: WorkGraphRun, now, *, after: tuple[str, int] = ("a", 1)) -> WorkNodeExecution | None:
    values = {"status": "running", "ready_at": now, "started_at": now, "heartbeat_at": now, "worker": "w1"}
    claim = attempt_latest_claim(run_id=run.pk, node_id="b", after=after, manifest_version=run.manifest_version,
                                 now=now, values=values, names=CLAIMED_FIELDS)
    return claim.execution if claim is not None else None


def test_a_chains_next_node_is_claimed_only_while_every_condition_of_the_locked_advance_holds(run):
    """Its latest attempt pending and out of its backoff, the ended attempt still its node's latest, the
    run running, not asked to stop, at the manifest version the attempt ran with: else nothing changes."""
    now = timezone.now()
    WorkGraphRun.objects.filter(pk=run.pk).update(status="running")
    run.executions.filter(node_id="a").update(status="succeeded")
    refusals = [
        lambda: WorkGraphRun.objects.filter(pk=run.pk).update(cancel_requested_at=now),
        lambda: WorkGraphRun.objects.filter(pk=run.pk).update(manifest_version=run.manifest_version + 1),
        lambda: WorkGraphRun.objects.filter(pk=run.pk).update(status="failed"),
        lambda: WorkNodeExecution.objects.create(run=run, node_id="a", attempt=2, cause="loop_back"),
        lambda: run.executions.filter(node_id="b").update(not_before=now + timedelta(seconds=5)),
        lambda: run.executions.filter(node_id="b").update(status="cancelled"),
    ]
    for refusal in refusals:
        with transaction.atomic():
            refusal()
            assert _claim_b(run, now) is None
            assert run.executions.get(node_id="b").worker == ""
            transaction.set_rollback(True)

    # Of two attempts of the node, the latest is the one claimed, read back as the claim wrote it.
    WorkNodeExecution.objects.create(run=run, node_id="b", attempt=2, cause="loop_back", subagent_type="coder",
                                     input_payload={"feedback": ["ü"]})
    claimed = _claim_b(run, now)
    assert (claimed.node_id, claimed.attempt, claimed.cause, claimed.status, claimed.worker) == (
        "b", 2, "loop_back", "running", "w1")
    assert (claimed.input_payload, claimed.started_at, claimed.cost_usd) == ({"feedback": ["ü"]}, now, None)
    assert claimed.get_deferred_fields() >= {"output_payload", "judgment_result"}
    assert run.executions.get(node_id="b", attempt=1).status == "pending"
    assert _claim_b(run, now) is None


def test_a_chains_claim_makes_the_claimed_attempts_log_header_where_one_statement_can(run, task):
    """On PostgreSQL the claim inserts the header as ``log_file_create`` would, and says whether it made
    it; a claim refused makes none. Elsewhere it makes none, and says so, for the caller to make it."""
    now = timezone.now()
    WorkGraphRun.objects.filter(pk=run.pk).update(status="running")
    run.executions.filter(node_id="a").update(status="succeeded")
    values = {"status": "running", "ready_at": now, "started_at": now, "heartbeat_at": now, "worker": "w1"}

    def claim(node_id: str):
        return attempt_latest_claim(run_id=run.pk, node_id=node_id, after=("a", 1), now=now, values=values,
                                    manifest_version=run.manifest_version, names=CLAIMED_FIELDS,
                                    log_project_id=task.project_id)

    WorkGraphRun.objects.filter(pk=run.pk).update(cancel_requested_at=now)
    assert claim("b") is None
    WorkGraphRun.objects.filter(pk=run.pk).update(cancel_requested_at=None)
    assert not ExecutionLogFile.objects.exists()

    b = run.executions.get(node_id="b")
    c = run.executions.get(node_id="c")
    ExecutionLogFile.objects.create(log_file_id=c.pk, node_exec=c, project_id=task.project_id, last_seq=3)
    made, found = claim("b"), claim("c")
    assert (made.execution.pk, found.execution.pk) == (b.pk, c.pk)
    if connection.vendor != "postgresql":
        assert (made.log_created, found.log_created) == (None, None)
        assert list(ExecutionLogFile.objects.values_list("node_exec", flat=True)) == [c.pk]
        return
    assert (made.log_created, found.log_created) == (True, False)
    header = ExecutionLogFile.objects.get(node_exec=b)
    assert (header.pk, header.project_id, header.status, header.last_seq, header.format) == (
        b.pk, task.project_id, "open", 0, "jsonl")
    assert header.created_at is not None and header.closed_at is None
    assert ExecutionLogFile.objects.get(node_exec=c).last_seq == 3
