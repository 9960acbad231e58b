"""Every metric family of ``/metrics``, with its labels, after an offline pipeline ran in this process:
the database's gauges, and the counters the engine, the log writer, the live publisher, the reaper and
the webhook deliveries keep."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from graphs.engine import executions_reap, pipeline_start
from graphs.logs.live import _Outbox
from graphs.metrics.counters import webhook_delivery_count
from graphs.metrics.exposition import metrics_text
from graphs.models import WorkGraphRun, WorkNodeExecution
from tests import factories

pytestmark = pytest.mark.django_db


def _samples() -> dict[str, list]:
    """Each sample name's samples, as (labels, value)."""
    found: dict[str, list] = {}
    for family in text_string_to_metric_families(metrics_text().decode()):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def _value(samples: list, **labels: str) -> float:
    return sum(value for found, value in samples if all(found.get(k) == v for k, v in labels.items()))


def test_the_database_gauges_count_runs_by_status_and_nodes_queued_and_running(task):
    factories.RunFactory(task=task, status="succeeded")
    factories.RunFactory(task=task, status="succeeded")
    running = factories.RunFactory(task=task, status="running")
    an_hour_ago = timezone.now() - timedelta(hours=1)
    factories.ExecutionFactory(run=running, node_id="a", status="queued", ready_at=an_hour_ago)
    factories.ExecutionFactory(run=running, node_id="b", status="queued", ready_at=timezone.now())
    factories.ExecutionFactory(run=running, node_id="c", status="running")

    samples = _samples()

    runs = samples["workgraph_runs"]
    assert {labels["status"] for labels, _ in runs} == set(WorkGraphRun.Status.values)
    assert _value(runs, status="succeeded") == 2 and _value(runs, status="running") == 1
    assert _value(runs, status="cancelled") == 0
    nodes = samples["workgraph_nodes"]
    assert (_value(nodes, status="queued"), _value(nodes, status="running")) == (2, 1)
    (_, age), = samples["workgraph_oldest_queued_node_age_seconds"]
    assert 3590 < age < 3700


def test_with_nothing_queued_the_oldest_queued_age_is_zero(task):
    assert _samples()["workgraph_oldest_queued_node_age_seconds"] == [({}, 0.0)]


def test_a_pipeline_leaves_node_agent_and_log_counters_by_org_node_project_and_model(task, inline_executor):
    pipeline_start(task=task)
    inline_executor.drain()
    assert WorkGraphRun.objects.get(task=task).status == "succeeded"

    samples = _samples()

    node_counts = samples["workgraph_node_duration_seconds_count"]
    assert {labels["org_node"] for labels, _ in node_counts} >= {"planner", "coder", "validator"}
    assert _value(node_counts, org_node="coder", status="succeeded") >= 1
    assert any(labels.get("le") == "+Inf" for labels, _ in samples["workgraph_node_duration_seconds_bucket"])
    call_counts = samples["workgraph_agent_call_duration_seconds_count"]
    assert {labels["org_node"] for labels, _ in call_counts} >= {"planner", "coder", "validator"}
    slug = task.project.slug
    calls = samples["workgraph_agent_calls_total"]
    assert _value(calls, project=slug) >= WorkNodeExecution.objects.filter(run__task=task).count()
    assert all(set(labels) == {"project", "model"} for labels, _ in calls)
    assert any(labels["project"] == slug for labels, _ in samples["workgraph_agent_cost_usd_total"])
    tokens = [labels for labels, _ in samples["workgraph_agent_tokens_total"] if labels["project"] == slug]
    assert {labels["kind"] for labels in tokens} >= {"input_tokens", "output_tokens"}
    assert samples["workgraph_log_lines_stored_total"][0][1] > 0


def test_the_live_publisher_reports_how_long_a_drain_waited_and_what_it_dropped():
    before = _samples()
    outbox = _Outbox(layer=None)
    outbox._wake = lambda: None  # no sender: the drain below is taken by hand
    outbox.put([("g", {"type": "x"})] * 3)
    outbox._batch_take()

    after = _samples()

    lag = "workgraph_live_publish_lag_seconds_count"
    assert _value(after[lag]) == _value(before.get(lag, [])) + 1
    assert "workgraph_live_messages_dropped_total" in after


def test_the_reaper_counts_the_attempts_it_recovers(task, inline_executor):
    run = factories.RunFactory(task=task, status="running", graph_manifest={"nodes": [
        {"node_id": "a", "depends_on": [], "task_prompt": "x"}], "edges": []})
    stale = timezone.now() - timedelta(hours=1)
    factories.ExecutionFactory(run=run, node_id="a", status="running", worker="gone", started_at=stale,
                               heartbeat_at=stale)
    before = _value(_samples().get("workgraph_reaper_recoveries_total", []), kind="attempt_lost")

    assert len(executions_reap(stale_after=timedelta(seconds=1))) == 1

    recoveries = _samples()["workgraph_reaper_recoveries_total"]
    assert _value(recoveries, kind="attempt_lost") == before + 1


def test_the_trace_spans_dropped_are_read_from_the_exporter(monkeypatch):
    monkeypatch.setattr("graphs.telemetry.export._dropped", 7)

    assert _samples()["workgraph_trace_spans_dropped_total"] == [({}, 7.0)]


def test_webhook_deliveries_are_counted_by_outcome():
    before = _value(_samples().get("workgraph_webhook_deliveries_total", []), outcome="delivered")

    webhook_delivery_count("delivered")
    webhook_delivery_count("failed")

    deliveries = _samples()["workgraph_webhook_deliveries_total"]
    assert _value(deliveries, outcome="delivered") == before + 1
    assert {labels["outcome"] for labels, _ in deliveries} >= {"delivered", "failed"}
