"""How transient agent failures are retried, for planning calls and node attempts alike."""

from __future__ import annotations

from django.conf import settings


def transient_retry_allowed(*, retries_used: int) -> bool:
    """Whether another retry fits the budget (``WORKGRAPH_TRANSIENT_RETRIES``) after ``retries_used``."""
    return retries_used < settings.WORKGRAPH_TRANSIENT_RETRIES


def transient_backoff_seconds(*, retries_used: int) -> float:
    """How long to wait before the next retry: exponential from ``WORKGRAPH_BACKOFF_BASE``, capped at
    ``WORKGRAPH_BACKOFF_CAP``."""
    return min(settings.WORKGRAPH_BACKOFF_CAP, settings.WORKGRAPH_BACKOFF_BASE * (2**retries_used))
