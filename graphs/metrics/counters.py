"""The counters and histograms of this process.

They live in a registry of the console's own (``REGISTRY``), not prometheus-client's default one, so
every family a scrape finds is named ``workgraph_…`` — the process's own (CPU, memory, open files) too.

Each is incremented by one function, called at the place that already records the fact (an attempt's
end, an agent call's accounting, a batch of log lines stored, a live drain, a reaper pass, a webhook
delivery). A process's counts start at zero when it starts: Prometheus' ``rate()`` and ``increase()``
handle the resets. Label values come from a small set (org nodes, statuses, projects, models), never from
free text.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector, disable_created_metrics

# A ``_created`` sample beside every series doubles what is scraped and stored for nothing a dashboard reads.
disable_created_metrics()

REGISTRY = CollectorRegistry()
ProcessCollector(namespace="workgraph", registry=REGISTRY)

# Agent calls and nodes take seconds to many minutes.
_LONG_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600)
# The live publisher hands lines on in milliseconds; seconds mean the layer is far behind.
_LAG_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

NODE_DURATION = Histogram(
    "workgraph_node_duration_seconds", "Wall time of finished node attempts, from start to end.",
    ["org_node", "status"], buckets=_LONG_BUCKETS, registry=REGISTRY,
)
AGENT_CALL_DURATION = Histogram(
    "workgraph_agent_call_duration_seconds", "Wall time of agent calls (nodes, judges, planning).",
    ["org_node"], buckets=_LONG_BUCKETS, registry=REGISTRY,
)
AGENT_CALLS = Counter("workgraph_agent_calls", "Agent calls made.", ["project", "model"], registry=REGISTRY)
AGENT_COST = Counter("workgraph_agent_cost_usd", "What agent calls reported they cost, in US dollars.",
                     ["project", "model"], registry=REGISTRY)
AGENT_TOKENS = Counter("workgraph_agent_tokens", "Tokens agent calls reported, by kind.",
                       ["project", "model", "kind"], registry=REGISTRY)
LOG_LINES_STORED = Counter("workgraph_log_lines_stored", "Log lines the log writer stored.", registry=REGISTRY)
LIVE_PUBLISH_LAG = Histogram(
    "workgraph_live_publish_lag_seconds",
    "How long the oldest message of each live drain waited in the outbox before it was sent.",
    buckets=_LAG_BUCKETS, registry=REGISTRY,
)
LIVE_MESSAGES_DROPPED = Counter(
    "workgraph_live_messages_dropped",
    "Live messages dropped from a full outbox (watchers refill from the log store).", registry=REGISTRY,
)
REAPER_RECOVERIES = Counter("workgraph_reaper_recoveries", "Lost work the reaper took up again, by kind.", ["kind"],
                            registry=REGISTRY)
WEBHOOK_DELIVERIES = Counter("workgraph_webhook_deliveries", "Webhook delivery attempts, by outcome.", ["outcome"],
                             registry=REGISTRY)


# Each family's child per label values, looked up once: ``labels()`` checks the values and takes the
# family's lock on every call, on the engine's path. Label values come from small sets, so this stays small.
_children: dict[tuple[Any, tuple[str, ...]], Any] = {}


def _child(family: Any, *values: str) -> Any:
    child = _children.get((family, values))
    if child is None:
        child = _children.setdefault((family, values), family.labels(*values))
    return child


def node_duration_observe(*, org_node: str, status: str, seconds: float) -> None:
    """An attempt ended with ``status`` after ``seconds``."""
    _child(NODE_DURATION, org_node or "worker", status).observe(max(seconds, 0.0))


@contextmanager
def agent_call_timed(*, org_node: str) -> Iterator[None]:
    """Time the agent call made inside, however it ends (an answer, an error, a cancel)."""
    started = time.monotonic()
    try:
        yield
    finally:
        _child(AGENT_CALL_DURATION, org_node or "worker").observe(time.monotonic() - started)


def agent_call_count(*, project: str, model: str, cost_usd: float | Decimal | None, tokens: Mapping[str, int]) -> None:
    """An agent call was accounted: its cost and tokens as far as it reported them (a call that reported
    none adds to neither: unknown is not 0), by project and model."""
    model = model or "unknown"
    _child(AGENT_CALLS, project, model).inc()
    if cost_usd is not None:
        _child(AGENT_COST, project, model).inc(max(float(cost_usd), 0.0))
    for kind, count in tokens.items():
        _child(AGENT_TOKENS, project, model, kind).inc(max(count, 0))


def log_lines_stored_count(count: int) -> None:
    """The log writer stored ``count`` lines."""
    if count > 0:
        LOG_LINES_STORED.inc(count)


def live_publish_lag_observe(seconds: float) -> None:
    """A live drain sent messages the oldest of which had waited ``seconds``."""
    LIVE_PUBLISH_LAG.observe(max(seconds, 0.0))


def live_messages_dropped_count(count: int) -> None:
    """The live outbox overflowed and dropped ``count`` messages."""
    if count > 0:
        LIVE_MESSAGES_DROPPED.inc(count)


def reaper_recovery_count(*, kind: str, count: int = 1) -> None:
    """The reaper recovered ``count`` pieces of lost work of ``kind`` (``attempt_lost``, ``job_resubmitted``)."""
    if count > 0:
        _child(REAPER_RECOVERIES, kind).inc(count)


def webhook_delivery_count(outcome: str) -> None:
    """One webhook delivery attempt ended with ``outcome``: ``delivered``, ``failed`` (will be retried),
    ``gave_up`` (no retry left) or ``refused`` (an address the console does not call)."""
    _child(WEBHOOK_DELIVERIES, outcome).inc()
