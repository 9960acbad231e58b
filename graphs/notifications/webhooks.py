"""Registering webhooks and choosing emails: what a project's lead and its members do, checked here for the
page and the API alike."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from graphs.audit import audit_record
from graphs.models import AuditEntry, EmailSubscription, Project, Webhook, WebhookDelivery
from graphs.notifications import EVENTS
from graphs.notifications.addresses import WebhookAddressRefused, webhook_target
from graphs.notifications.jobs import webhook_deliver_submit
from graphs.notifications.signing import webhook_secret_new

# How many webhooks one project may have, how long a URL may be, and how many deliveries its log shows.
WEBHOOKS_PER_PROJECT = 20
URL_MAX_LENGTH = 2000
DELIVERIES_SHOWN = 100


class WebhookInvalid(Exception):
    """What is wrong with a webhook as asked for: ``problems`` maps each part (``url``, ``events``, ``format``,
    or ``webhooks``, the project's own) to what is wrong with it."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems.items()))
        self.problems = problems


def events_checked(events: Iterable[str], *, field: str = "events") -> list[str]:
    """The events asked for, in the console's order; WebhookInvalid for an unknown one."""
    chosen, problem = _events_chosen(events)
    if problem:
        raise WebhookInvalid({field: problem})
    return chosen


def webhook_create(*, project: Project, url: str, events: Iterable[str], format: str = Webhook.Format.JSON,
                   created_by: AbstractBaseUser | None) -> Webhook:
    """Register a webhook after checking its URL (and the address it resolves to), events, format and the
    project's room for one more; WebhookInvalid names every problem at once. The returned webhook's
    ``secret`` is shown to its maker once; no page or answer shows it again."""
    url = (url or "").strip()
    chosen, events_problem = _events_chosen(events)
    found = {
        "url": _url_problem(url),
        "events": events_problem or ("" if chosen else "choose at least one event"),
        "format": "" if format in Webhook.Format.values else f"format must be one of {', '.join(Webhook.Format)}",
        "webhooks": _room_problem(project),
    }
    problems = {name: message for name, message in found.items() if message}
    if problems:
        raise WebhookInvalid(problems)
    with transaction.atomic():
        Project.objects.select_for_update(no_key=True).filter(pk=project.pk).values_list("pk", flat=True).get()
        # Counted again under the project's lock: another lead may have added one since.
        room = _room_problem(project)
        if room:
            raise WebhookInvalid({"webhooks": room})
        hook = Webhook.objects.create(project=project, url=url, events=chosen, format=format,
                                      secret=webhook_secret_new(), created_by=created_by)
        audit_record(actor=created_by, action=AuditEntry.Action.WEBHOOK_CREATED, object_type="webhook",
                     object_id=hook.pk, project=project, after=_audited(hook),
                     summary=f"Added a webhook to {_url_shown(url)} for {', '.join(chosen)}")
        return hook


def webhook_delete(*, webhook: Webhook, by: AbstractBaseUser | None) -> None:
    """Remove ``webhook``, its deliveries with it."""
    with transaction.atomic():
        audit_record(actor=by, action=AuditEntry.Action.WEBHOOK_DELETED, object_type="webhook", object_id=webhook.pk,
                     project=webhook.project, before=_audited(webhook),
                     summary=f"Deleted the webhook to {_url_shown(webhook.url)}")
        webhook.delete()


def _audited(hook: Webhook) -> dict[str, object]:
    # The URL as far as its host: a receiver's path or query may hold its own secret (Slack's does).
    return {"url": _url_shown(hook.url), "events": list(hook.events), "format": hook.format}


def _url_shown(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}/…"


def _events_chosen(events: Iterable[str]) -> tuple[list[str], str]:
    """The known events asked for, in the console's order, and what is wrong with the rest (or "")."""
    asked = set(events)
    unknown = sorted(asked - set(EVENTS))
    problem = f"unknown events: {', '.join(unknown)}; known: {', '.join(EVENTS)}" if unknown else ""
    return [event for event in EVENTS if event in asked], problem


def _url_problem(url: str) -> str:
    if not url:
        return "give the webhook a URL"
    if len(url) > URL_MAX_LENGTH:
        return f"the URL is longer than {URL_MAX_LENGTH} characters"
    if "\x00" in url:
        return "the URL must not contain a NUL character"
    try:
        webhook_target(url)
    except WebhookAddressRefused as refusal:
        return f"this URL is refused: {refusal}"
    return ""


def _room_problem(project: Project) -> str:
    if Webhook.objects.filter(project=project).count() >= WEBHOOKS_PER_PROJECT:
        return f"a project has {WEBHOOKS_PER_PROJECT} webhooks at most: remove one to add another"
    return ""


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
