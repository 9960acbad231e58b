"""How transient agent failures are retried, for planning calls and node attempts alike.

A node may carry its own ``retry_policy`` (``max_retries``, ``delays_seconds``, ``kinds``): it replaces
the console's shared budget and backoff for that node only. Planning calls always use the shared ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings


def transient_retry_allowed(*, retries_used: int, policy: Mapping[str, Any] | None = None) -> bool:
    """Whether another retry fits the budget after ``retries_used``: the policy's ``max_retries``, else
    ``WORKGRAPH_TRANSIENT_RETRIES``."""
    budget = settings.WORKGRAPH_TRANSIENT_RETRIES
    if policy and policy.get("max_retries") is not None:
        budget = policy["max_retries"]
    return retries_used < budget


def transient_backoff_seconds(*, retries_used: int, policy: Mapping[str, Any] | None = None) -> float:
    """How long to wait before the next retry.

    With a policy's ``delays_seconds``, the delay at index ``retries_used`` (its last one once the list
    runs out); otherwise exponential from ``WORKGRAPH_BACKOFF_BASE``, capped at ``WORKGRAPH_BACKOFF_CAP``.
    """
    delays = (policy or {}).get("delays_seconds")
    if delays:
        return float(delays[min(retries_used, len(delays) - 1)])
    return min(settings.WORKGRAPH_BACKOFF_CAP, settings.WORKGRAPH_BACKOFF_BASE * (2**retries_used))


def transient_retry_refusal(*, node: Mapping[str, Any], kind: str | None) -> str | None:
    """Why a transient failure of ``kind`` (None: the attempt's worker was lost) must not be retried on
    ``node`` whatever its budget, or None when it may be.

    A node with ``tool_profile`` ``write`` may have changed things outside its worktree (a call it made, a
    file it wrote elsewhere) before it failed: running it again could do that twice.
    """
    if node.get("tool_profile") == "write":
        return ("not retried: the node's tool_profile is write, so its side effects may already have "
                "happened; a person decides whether to run it again")
    kinds = (node.get("retry_policy") or {}).get("kinds")
    if kind is not None and kinds is not None and kind not in kinds:
        return f"not retried: the node's retry_policy retries only {', '.join(kinds)}, not {kind}"
    return None
