"""The notification jobs, submitted through the job system like the engine's (Celery workers in the
distributed mode, the serving process's threads in the embedded one)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from graphs.executors import job_submit


class NotificationJob(StrEnum):
    WEBHOOK_DELIVER = "webhook_deliver"
    EMAIL_SEND = "email_send"


def webhook_deliver_submit(*, delivery_id: Any, delay: float = 0.0) -> None:
    """Try a webhook delivery (after ``delay`` seconds: its backoff)."""
    job_submit(NotificationJob.WEBHOOK_DELIVER, str(delivery_id), delay=delay)


def email_send_submit(*, user_id: Any, delay: float = 0.0) -> None:
    """Mail the user what waits for them, alone or batched (after ``delay`` seconds: the batch's minute)."""
    job_submit(NotificationJob.EMAIL_SEND, str(user_id), delay=delay)
