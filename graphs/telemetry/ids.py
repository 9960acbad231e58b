"""Trace and span ids that any process derives alike from the records' ids.

A run's trace id is stored on the run (``WorkGraphRun.trace_id``); the first process to make a span of
the run stores it. It is the run's own 128 random bits, so two processes racing to store it agree.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from graphs.models import WorkGraphRun

# Trace ids this process has read or stored, so a run's many attempts cost one query between them.
_KNOWN_MAX = 4096
_known: dict[str, str] = {}


def span_id_of(*parts: Any) -> int:
    """A 64-bit span id, never 0, derived from ``parts`` (``"attempt", node_exec_id``, …)."""
    digest = hashlib.blake2b(":".join(str(part) for part in parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") or 1


def trace_id_ensure(run_id: Any) -> str:
    """The run's trace id (32 hex digits), stored on the run if it had none yet."""
    key = str(run_id)
    if key in _known:
        return _known[key]
    stored = WorkGraphRun.objects.filter(pk=run_id).values_list("trace_id", flat=True).first()
    if not stored:
        stored = uuid.UUID(key).hex
        WorkGraphRun.objects.filter(pk=run_id, trace_id="").update(trace_id=stored)
    if len(_known) >= _KNOWN_MAX:
        _known.clear()
    _known[key] = stored
    return stored
