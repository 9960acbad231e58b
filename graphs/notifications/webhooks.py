"""Registering webhooks and choosing emails: what a project's lead and its members do, checked here for the
page and the API alike."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from graphs.models import EmailSubscription, Project, Webhook, WebhookDelivery
from graphs.notifications import EVENTS
from graphs.notifications.addresses import WebhookAddressRefused, webhook_target
from graphs.notifications.jobs import webhook_deliver_submit
from graphs.notifications.signing import webhook_secret_new

# How many webhooks one project may have, and how many deliveries its log shows.
WEBHOOKS_PER_PROJECT = 20
DELIVERIES_SHOWN = 100


class WebhookInvalid(Exception):
    """What is wrong with a webhook as asked for; ``field`` names the part."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


def events_checked(events: Iterable[str], *, field: str = "events") -> list[str]:
    """The events asked for, in the console's order; WebhookInvalid for an unknown one."""
    chosen = set(events)
    unknown = sorted(chosen - set(EVENTS))
    if unknown:
        raise WebhookInvalid(field, f"unknown events: {', '.join(unknown)}; known: {', '.join(EVENTS)}")
    return [event for event in EVENTS if event in chosen]


def webhook_create(*, project: Project, url: str, events: Iterable[str], format: str = Webhook.Format.JSON,
                   created_by: AbstractBaseUser | None) -> Webhook:
    """Register a webhook after checking its URL (and the address it resolves to), events and format. The
    returned webhook's ``secret`` is shown to its maker once; no page or answer shows it again."""
    url = (url or "").strip()
    if len(url) > 2000:
        raise WebhookInvalid("url", "the URL is longer than 2000 characters")
    try:
        webhook_target(url)
    except WebhookAddressRefused as refusal:
        raise WebhookInvalid("url", f"this URL is refused: {refusal}") from None
    chosen = events_checked(events)
    if not chosen:
        raise WebhookInvalid("events", "choose at least one event")
    if format not in Webhook.Format.values:
        raise WebhookInvalid("format", f"format must be one of {', '.join(Webhook.Format.values)}")
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).values_list("pk", flat=True).get()
        if Webhook.objects.filter(project=project).count() >= WEBHOOKS_PER_PROJECT:
            raise WebhookInvalid("url", f"a project has {WEBHOOKS_PER_PROJECT} webhooks at most")
        return Webhook.objects.create(project=project, url=url, events=chosen, format=format,
                                      secret=webhook_secret_new(), created_by=created_by)


def webhook_deliveries(webhook: Webhook) -> list[WebhookDelivery]:
    return list(webhook.deliveries.all()[:DELIVERIES_SHOWN])


def delivery_redeliver(delivery: WebhookDelivery) -> None:
    """Send the delivery again, with its id and body unchanged (a receiver that has it drops it), and a
    whole retry window of its own."""
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=WebhookDelivery.Status.PENDING, attempts=0, next_try_at=timezone.now(), error="")
    webhook_deliver_submit(delivery_id=delivery.pk)


def email_events_of(*, user: AbstractBaseUser, project: Project) -> list[str]:
    subscription = EmailSubscription.objects.filter(user=user, project=project).first()
    return list(subscription.events) if subscription else []


def email_events_set(*, user: AbstractBaseUser, project: Project, events: Iterable[str]) -> list[str]:
    """Choose which of ``project``'s events ``user`` is mailed; none removes the choice."""
    chosen = events_checked(events)
    if not chosen:
        EmailSubscription.objects.filter(user=user, project=project).delete()
        return []
    EmailSubscription.objects.update_or_create(user=user, project=project, defaults={"events": chosen})
    return chosen
