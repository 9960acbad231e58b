"""What a scrape of ``/metrics`` answers, and who may have it.

The console's process counters (``counters.REGISTRY``) and the database's gauges (``DatabaseCollector``)
are two registries written one after the other: a worker's own port serves the first alone, so a
distributed deployment's sums over all targets never count a run twice.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from enum import Enum

from django.conf import settings
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from graphs.metrics.collector import DatabaseCollector
from graphs.metrics.counters import REGISTRY
from graphs.telemetry.export import spans_dropped

CONTENT_TYPE = CONTENT_TYPE_LATEST


class _TraceDropsCollector(Collector):
    """The spans this process's trace exporter dropped (graphs.telemetry keeps the count)."""

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily("workgraph_trace_spans_dropped", "Trace spans this process dropped instead of "
                                  "waiting for the receiver.", value=spans_dropped())


# Registered here, where every process that serves metrics (the console, a worker's pool process) comes.
REGISTRY.register(_TraceDropsCollector())
_database = CollectorRegistry(auto_describe=False)
_database.register(DatabaseCollector())


class Access(Enum):
    OFF = "off"  # no token configured: the endpoint does not exist
    MISSING = "missing"  # no bearer token given
    WRONG = "wrong"
    ALLOWED = "allowed"


def metrics_access(*, authorization: str) -> Access:
    """Whether an ``Authorization`` header's bearer token opens ``/metrics``.

    Compared in constant time, so the answer's timing tells nothing of the token.
    """
    token = settings.WORKGRAPH_METRICS_TOKEN
    if not token:
        return Access.OFF
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return Access.MISSING
    if hmac.compare_digest(given.strip().encode(), token.encode()):
        return Access.ALLOWED
    return Access.WRONG


def metrics_text() -> bytes:
    """This process's counters and the database's gauges, in Prometheus' text format."""
    return generate_latest(REGISTRY) + generate_latest(_database)
