"""What a project tells the outside of its runs: webhooks and their deliveries, members' email choices and
the emails waiting for their batch."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from graphs.models.projects import Project


class Webhook(models.Model):
    """An address a project's lead registered to hear some of its events. The signing secret is stored,
    as a signature needs it, and shown only once, when the webhook is made."""

    class Format(models.TextChoices):
        JSON = "json", "JSON"
        SLACK = "slack", "Slack"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list, help_text="The events it hears (graphs.notifications.EVENTS).")
    format = models.CharField(max_length=8, choices=Format.choices, default=Format.JSON)
    secret = models.CharField(max_length=100, help_text="whsec_<base64>: what deliveries are signed with.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"{self.url} ({self.project})"


class WebhookDelivery(models.Model):
    """One event sent to one webhook: its id (the ``webhook-id`` every try of it carries), its body, and how
    its last try went."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SUCCEEDED = "succeeded", "Delivered"
        FAILED = "failed", "Failed"
        REFUSED = "refused", "Refused"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40)
    event_key = models.CharField(max_length=300, help_text="What tells the event from another (one row per key).")
    body = models.TextField(help_text="The exact bytes sent, so every try is signed over the same body.")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    response_code = models.PositiveIntegerField(null=True, blank=True)
    response_excerpt = models.CharField(max_length=500, blank=True)
    error = models.CharField(max_length=500, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    next_try_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_try_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["webhook", "event_key"], name="webhook_delivery_once_per_event"),
        ]

    def __str__(self) -> str:
        return f"{self.event} to {self.webhook_id} ({self.status})"

    @property
    def message_id(self) -> str:
        return f"msg_{self.id.hex}"


class EmailSubscription(models.Model):
    """Which events of a project a member hears of by email."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="email_subscriptions")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="email_subscriptions")
    events = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "project"], name="email_subscription_unique_user_project"),
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.project}: {', '.join(self.events)}"


class EmailNotice(models.Model):
    """One event for one recipient, waiting to be mailed alone or in the minute's batch."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="email_notices")
    event = models.CharField(max_length=40)
    event_key = models.CharField(max_length=300)
    subject = models.CharField(max_length=300)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["user", "event_key"], name="email_notice_once_per_event"),
        ]
        indexes = [models.Index(fields=["user", "sent_at"], name="email_notice_user_sent")]

    def __str__(self) -> str:
        return f"{self.event} for {self.user}"
