"""The delivery job, submitted through the job system like the engine's (Celery workers in the distributed
mode, the serving process's threads in the embedded one)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from graphs.executors import job_submit


class DeliveryJob(StrEnum):
    DELIVERY_TRY = "delivery_try"


def delivery_try_submit(*, run_id: Any, delay: float = 0.0) -> None:
    """Try the run's pending delivery (after ``delay`` seconds: its backoff)."""
    job_submit(DeliveryJob.DELIVERY_TRY, str(run_id), delay=delay)
