"""Webhooks (leads) and email notifications (every member, for themselves) of a project."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status

from console.api.errors import ApiError
from console.api.schemas import ERRORS, InSchema
from console.permissions import project_for_member, require
from graphs.models import Project, Webhook, WebhookDelivery
from graphs.notifications import EVENTS
from graphs.notifications.webhooks import (
    WebhookInvalid,
    delivery_redeliver,
    email_events_of,
    email_events_set,
    webhook_create,
    webhook_delete,
    webhook_deliveries,
)

router = Router(tags=["notifications"])


class WebhookIn(InSchema):
    url: str = Field(..., description="http(s) URL; loopback, link-local and private addresses are refused.")
    events: list[str] = Field(..., description=f"Any of: {', '.join(EVENTS)}.")
    # Text, not a choice the schema refuses: a wrong format is named with the request's other problems.
    format: str = Field("json", description="json: the documented payload; slack: a message.",
                        json_schema_extra={"enum": ["json", "slack"]})


class WebhookOut(Schema):
    id: int
    url: str
    events: list[str]
    format: str
    created_at: datetime


class WebhookCreatedOut(WebhookOut):
    secret: str = Field(..., description="whsec_…: verifies the deliveries' signatures. Shown this once.")


class DeliveryOut(Schema):
    id: str = Field(..., description="The webhook-id every try of this delivery carries.")
    event: str
    status: str
    attempts: int
    response_code: int | None
    response_excerpt: str
    error: str
    duration_ms: int | None
    next_try_at: datetime | None
    created_at: datetime
    last_try_at: datetime | None


class EmailEventsIn(InSchema):
    events: list[str] = Field(..., description=f"Any of: {', '.join(EVENTS)}; none stops the emails.")


class EmailEventsOut(Schema):
    events: list[str]


@router.get("/projects/{slug}/webhooks", response={200: list[WebhookOut], **ERRORS})
def webhooks_list(request, slug: str):
    project = _project_led(request, slug)
    return [_webhook_out(hook) for hook in project.webhooks.all()]


@router.post("/projects/{slug}/webhooks", response={201: WebhookCreatedOut, **ERRORS})
def webhooks_create(request, slug: str, payload: WebhookIn):
    project = _project_led(request, slug)
    try:
        hook = webhook_create(project=project, url=payload.url, events=payload.events, format=payload.format,
                              created_by=request.auth)
    except WebhookInvalid as error:
        raise ApiError(400, "invalid_webhook", str(error), _problem_fields(error)) from error
    return Status(201, {**_webhook_out(hook), "secret": hook.secret})


@router.delete("/projects/{slug}/webhooks/{webhook_id}", response={204: None, **ERRORS})
def webhooks_delete(request, slug: str, webhook_id: int):
    webhook_delete(webhook=_webhook(request, slug, webhook_id), by=request.auth)
    return Status(204, None)


@router.get("/projects/{slug}/webhooks/{webhook_id}/deliveries", response={200: list[DeliveryOut], **ERRORS})
def deliveries_list(request, slug: str, webhook_id: int):
    return [_delivery_out(delivery) for delivery in webhook_deliveries(_webhook(request, slug, webhook_id))]


@router.post("/projects/{slug}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver",
             response={202: DeliveryOut, **ERRORS})
def deliveries_redeliver(request, slug: str, webhook_id: int, delivery_id: str):
    hook = _webhook(request, slug, webhook_id)
    delivery = get_object_or_404(WebhookDelivery, pk=_delivery_uuid(delivery_id), webhook=hook)
    delivery_redeliver(delivery)
    delivery.refresh_from_db()
    return Status(202, _delivery_out(delivery))


@router.get("/projects/{slug}/notifications/email", response={200: EmailEventsOut, **ERRORS})
def email_events_get(request, slug: str):
    project, _ = project_for_member(request.auth, slug)
    return {"events": email_events_of(user=request.auth, project=project)}


@router.put("/projects/{slug}/notifications/email", response={200: EmailEventsOut, **ERRORS})
def email_events_put(request, slug: str, payload: EmailEventsIn):
    project, _ = project_for_member(request.auth, slug)
    if not request.auth.email:
        raise ApiError(400, "no_email", "your account has no email address to send to")
    try:
        return {"events": email_events_set(user=request.auth, project=project, events=payload.events)}
    except WebhookInvalid as error:
        raise ApiError(400, "invalid_events", str(error), _problem_fields(error)) from error


def _problem_fields(error: WebhookInvalid) -> list[dict[str, str]]:
    return [{"field": name, "message": message} for name, message in error.problems.items()]


def _project_led(request, slug: str) -> Project:
    project, role = project_for_member(request.auth, slug)
    require(role, "edit_project")
    return project


def _webhook(request, slug: str, webhook_id: int) -> Webhook:
    return get_object_or_404(Webhook, pk=webhook_id, project=_project_led(request, slug))


def _delivery_uuid(delivery_id: str) -> UUID:
    try:
        return UUID(delivery_id.removeprefix("msg_"))
    except ValueError:
        raise ApiError(404, "not_found", "no such delivery") from None


def _webhook_out(hook: Webhook) -> dict[str, Any]:
    return {"id": hook.pk, "url": hook.url, "events": hook.events, "format": hook.format,
            "created_at": hook.created_at}


def _delivery_out(delivery: WebhookDelivery) -> dict[str, Any]:
    fields = ("event", "status", "attempts", "response_code", "response_excerpt", "error", "duration_ms",
              "next_try_at", "created_at", "last_try_at")
    return {"id": delivery.message_id, **{name: getattr(delivery, name) for name in fields}}
