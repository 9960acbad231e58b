"""Trying a webhook delivery: resolve and check the address, connect to that very address, POST the signed
body once (no redirect followed, short timeouts), and record how it went — retried with exponential
backoff through the job system while the retry window (``WORKGRAPH_WEBHOOK_RETRY_SECONDS``) lasts.

Each try claims the delivery by its count of attempts, so a job delivered twice sends once; every try
carries the delivery's one id, for the receiver to drop what it already has.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from graphs.metrics.counters import webhook_delivery_count
from graphs.models import WebhookDelivery
from graphs.notifications.addresses import WebhookAddressRefused, WebhookTarget, webhook_target
from graphs.notifications.jobs import webhook_deliver_submit
from graphs.notifications.signing import webhook_headers

Status = WebhookDelivery.Status
# How much of a receiver's answer is kept, and read at most: enough to tell an error page.
RESPONSE_KEPT_CHARS = 500
# A backoff never grows past this (seconds), however long the window.
BACKOFF_CAP_SECONDS = 3600
USER_AGENT = "WorkGraphConsole-Webhooks/1"


def webhook_deliver_job(delivery_id: str) -> None:
    """Try the delivery once if it is still pending and due; schedule its next try or record its end."""
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id, status=Status.PENDING).first()
    if delivery is None:
        return  # delivered, given up, refused or removed: a duplicate job has nothing to do
    now = timezone.now()
    if delivery.next_try_at is not None and delivery.next_try_at > now + timedelta(seconds=0.5):
        webhook_deliver_submit(delivery_id=delivery.pk, delay=(delivery.next_try_at - now).total_seconds())
        return
    tried = delivery.attempts + 1
    claimed = WebhookDelivery.objects.filter(pk=delivery.pk, status=Status.PENDING, attempts=delivery.attempts).update(
        attempts=tried, last_try_at=now)
    if claimed != 1:
        return
    try:
        target = webhook_target(delivery.webhook.url)
    except WebhookAddressRefused as refusal:
        _record(delivery, status=Status.REFUSED, error=str(refusal), outcome="refused")
        return
    started = time.monotonic()
    try:
        code, excerpt = _post(target, delivery)
    except (OSError, http.client.HTTPException) as error:
        _after_failure(delivery, tried=tried, started=started, error=f"{type(error).__name__}: {error}")
        return
    if 200 <= code < 300:
        _record(delivery, status=Status.SUCCEEDED, code=code, excerpt=excerpt, started=started, outcome="delivered")
        return
    _after_failure(delivery, tried=tried, started=started, code=code, excerpt=excerpt,
                   error=f"the receiver answered {code}")


def webhook_backoff_seconds(attempts: int) -> float:
    """How long after its ``attempts``-th try a delivery is tried again: doubling from the base."""
    return min(BACKOFF_CAP_SECONDS, settings.WORKGRAPH_WEBHOOK_BACKOFF_SECONDS * 2 ** max(attempts - 1, 0))


def _after_failure(delivery: WebhookDelivery, *, tried: int, started: float, error: str, code: int | None = None,
                   excerpt: str = "") -> None:
    """Schedule the next try while the retry window lasts (counted in backoffs, so a redelivery gets a whole
    window again), else record the delivery failed."""
    waited = sum(webhook_backoff_seconds(n) for n in range(1, tried))
    backoff = webhook_backoff_seconds(tried)
    if waited + backoff > settings.WORKGRAPH_WEBHOOK_RETRY_SECONDS:
        _record(delivery, status=Status.FAILED, code=code, excerpt=excerpt, error=error, started=started,
                outcome="gave_up")
        return
    _record(delivery, status=Status.PENDING, code=code, excerpt=excerpt, error=error, started=started,
            next_try_at=timezone.now() + timedelta(seconds=backoff), outcome="failed")
    webhook_deliver_submit(delivery_id=delivery.pk, delay=backoff)


def _record(delivery: WebhookDelivery, *, status: str, outcome: str, code: int | None = None, excerpt: str = "",
            error: str = "", started: float | None = None, next_try_at=None) -> None:
    duration = None if started is None else int((time.monotonic() - started) * 1000)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=status, response_code=code, response_excerpt=excerpt[:RESPONSE_KEPT_CHARS], error=error[:500],
        duration_ms=duration, next_try_at=next_try_at)
    webhook_delivery_count(outcome)


def _post(target: WebhookTarget, delivery: WebhookDelivery) -> tuple[int, str]:
    """POST the delivery's body to the checked address; return the answer's code and its first characters."""
    body = delivery.body.encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Host": target.host if target.port == _default_port(target.scheme) else f"{target.host}:{target.port}",
        **webhook_headers(secret=delivery.webhook.secret, message_id=delivery.message_id,
                          timestamp=int(time.time()), body=body),
    }
    timeout = settings.WORKGRAPH_WEBHOOK_TIMEOUT_SECONDS
    connection_class = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    connection = connection_class(target, timeout=timeout)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        excerpt = response.read(RESPONSE_KEPT_CHARS).decode("utf-8", "replace")
        return response.status, excerpt
    finally:
        connection.close()


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the checked address, whatever the host's name resolves to now."""

    def __init__(self, target: WebhookTarget, *, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), timeout=self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """Connects to the checked address and verifies the certificate against the URL's host name."""

    def __init__(self, target: WebhookTarget, *, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=ssl.create_default_context())
        self._address = target.address

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), timeout=self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)
