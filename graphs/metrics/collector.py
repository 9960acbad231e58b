"""The gauges a scrape reads from the database: what is true of every run and node now, whichever
process or machine is doing the work. Three queries a scrape, on indexed columns."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, Min
from django.db.models.functions import Coalesce
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from graphs.models import WorkGraphRun, WorkNodeExecution

NodeStatus = WorkNodeExecution.Status
_OLDEST_HELP = "How long the oldest queued node has waited since its dependencies were met."


class DatabaseCollector(Collector):
    """Runs by status, nodes queued and running, and how long the oldest queued node has waited."""

    def collect(self) -> Iterator[Metric]:
        yield runs_by_status()
        yield from nodes_waiting()


def runs_by_status() -> GaugeMetricFamily:
    """Every run status, 0 for those no run has, so a query over one status never finds nothing."""
    counts = dict(WorkGraphRun.objects.order_by().values_list("status").annotate(n=Count("pk")))
    family = GaugeMetricFamily("workgraph_runs", "Runs by status.", labels=["status"])
    for status in WorkGraphRun.Status.values:
        family.add_metric([status], counts.get(status, 0))
    return family


def nodes_waiting() -> Iterator[GaugeMetricFamily]:
    """Attempts queued, running and awaiting review; the age of the oldest queued one (0 when none is queued)."""
    counted = (NodeStatus.QUEUED, NodeStatus.RUNNING, NodeStatus.AWAITING_REVIEW)
    active = WorkNodeExecution.objects.order_by().filter(status__in=counted)
    counts = dict(active.values_list("status").annotate(n=Count("pk")))
    nodes = GaugeMetricFamily("workgraph_nodes", "Node attempts queued, running or awaiting review.",
                              labels=["status"])
    for status in counted:
        nodes.add_metric([status], counts.get(status, 0))
    yield nodes
    # An attempt whose dependencies' being met was not recorded waits from its creation.
    since = WorkNodeExecution.objects.order_by().filter(status=NodeStatus.QUEUED).aggregate(
        since=Min(Coalesce("ready_at", "created_at")))["since"]
    age = (timezone.now() - since).total_seconds() if since is not None else 0.0
    yield GaugeMetricFamily("workgraph_oldest_queued_node_age_seconds", _OLDEST_HELP,
                            value=max(age, 0.0))
