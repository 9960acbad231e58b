"""From one committed notification to the rows that carry it out: a delivery per webhook of the project that
hears the event, an email notice per member who chose it — each made once per event (its key), each
handed to a job."""

from __future__ import annotations

import uuid

from django.db import IntegrityError, transaction

from graphs.models import EmailNotice, EmailSubscription, ProjectMembership, Webhook, WebhookDelivery, WorkGraphRun
from graphs.notifications import Notification
from graphs.notifications.jobs import email_send_submit, webhook_deliver_submit
from graphs.notifications.payloads import (
    body_bytes,
    email_text,
    notification_sentence,
    notification_subject,
    payload_json,
    payload_slack,
)


def notification_fanout(notification: Notification) -> None:
    """Make and submit the deliveries and emails ``notification`` calls for (a listener of the hook)."""
    project_id = WorkGraphRun.objects.filter(pk=notification.run_id).values_list("task__project_id", flat=True).first()
    if project_id is None:
        return
    webhooks = [hook for hook in Webhook.objects.filter(project_id=project_id) if notification.event in hook.events]
    members = set(ProjectMembership.objects.filter(project_id=project_id).values_list("user_id", flat=True))
    recipients = [
        sub.user for sub in EmailSubscription.objects.filter(project_id=project_id).select_related("user")
        if notification.event in sub.events and sub.user_id in members and sub.user.email and sub.user.is_active
    ]
    if not webhooks and not recipients:
        return
    subject, _ = notification_subject(notification)
    for hook in webhooks:
        delivery_id = uuid.uuid4()
        if hook.format == Webhook.Format.SLACK:
            payload = payload_slack(notification, subject)
        else:
            payload = payload_json(notification, subject, message_id=f"msg_{delivery_id.hex}")
        if _created(WebhookDelivery, id=delivery_id, webhook=hook, event=notification.event,
                    event_key=notification.key, body=body_bytes(payload)):
            webhook_deliver_submit(delivery_id=delivery_id)
    sentence = notification_sentence(notification, subject)
    text = email_text(notification, subject)
    for user in recipients:
        if _created(EmailNotice, user=user, event=notification.event, event_key=notification.key,
                    subject=sentence[:300], text=text):
            email_send_submit(user_id=user.pk)


def _created(model, **fields) -> bool:
    """Make the row unless one for the same event exists (the event announced again); return whether made."""
    try:
        with transaction.atomic():
            model.objects.create(**fields)
    except IntegrityError:
        return False
    return True
