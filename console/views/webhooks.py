"""A project's notifications page — the member's own email choice, and for leads the webhooks (a new
one's secret shown once) — and a webhook's delivery log with redeliver."""

from __future__ import annotations

from uuid import UUID

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from console.forms.fields import TickedChoices, TypedText
from console.permissions import can, project_for_member, require
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

EVENT_CHOICES = [(event, event) for event in EVENTS]
# The session's note of the webhook just registered, whose secret the page it redirects to shows once.
JUST_REGISTERED = "webhook_just_registered"


class EmailEventsForm(forms.Form):
    events = forms.MultipleChoiceField(choices=EVENT_CHOICES, required=False, widget=forms.CheckboxSelectMultiple,
                                       label="Email me when")


class WebhookForm(forms.Form):
    """Only gathers what was typed: webhook_create checks it all and names every problem at once, as the API
    does; a field refused here would hide the others' problems until it was fixed."""

    url = TypedText(label="URL", help_text="http(s); loopback, link-local and private addresses are refused.")
    events = TickedChoices(choices=EVENT_CHOICES, widget=forms.CheckboxSelectMultiple)
    # Text with a list to choose from: a format the console lacks is webhook_create's to name, with the rest.
    format = TypedText(widget=forms.Select(choices=Webhook.Format.choices), initial=Webhook.Format.JSON,
                       help_text="JSON: the documented payload. Slack: a message for an incoming webhook.")


@login_required
def project_notifications(request: HttpRequest, slug: str) -> HttpResponse:
    project, role = project_for_member(request.user, slug)
    leads = can(role, "edit_project")
    action = request.POST.get("action") if request.method == "POST" else None
    email_form = EmailEventsForm(request.POST if action == "email" else None,
                                 initial={"events": email_events_of(user=request.user, project=project)})
    webhook_form = WebhookForm(request.POST if action == "webhook_add" else None)
    if action == "email" and email_form.is_valid():
        if not request.user.email and email_form.cleaned_data["events"]:
            email_form.add_error("events", "Your account has no email address to send to.")
        else:
            email_events_set(user=request.user, project=project, events=email_form.cleaned_data["events"])
            messages.success(request, "Your email notifications are saved.")
            return redirect("project_notifications", slug=project.slug)
    elif action == "webhook_add":
        require(role, "edit_project")
        if webhook_form.is_valid():
            try:
                created = webhook_create(project=project, created_by=request.user, **webhook_form.cleaned_data)
            except WebhookInvalid as error:
                for name, message in error.problems.items():
                    webhook_form.add_error(name if name in webhook_form.fields else None, message)
            else:
                # Redirected, a reload of the page that shows the secret cannot register the webhook again.
                request.session[JUST_REGISTERED] = created.pk
                return redirect("project_notifications", slug=project.slug)
    elif action == "webhook_delete":
        require(role, "edit_project")
        webhook_delete(webhook=get_object_or_404(Webhook, pk=_number(request.POST.get("webhook_id")), project=project),
                       by=request.user)
        messages.success(request, "The webhook is removed.")
        return redirect("project_notifications", slug=project.slug)
    invalid = email_form.errors or webhook_form.errors
    shown = request.session.pop(JUST_REGISTERED, None)
    created = project.webhooks.filter(pk=shown).first() if leads and shown else None
    return render(request, "console/notifications.html", {
        "project": project, "leads": leads, "email_form": email_form, "webhook_form": webhook_form,
        "created": created, "webhooks": list(project.webhooks.all()) if leads else [],
    }, status=400 if invalid else 200)


@login_required
def webhook_deliveries_page(request: HttpRequest, slug: str, webhook_id: int) -> HttpResponse:
    project = _project_led(request, slug)
    webhook = get_object_or_404(Webhook, pk=webhook_id, project=project)
    if request.method == "POST":
        delivery = get_object_or_404(WebhookDelivery, pk=_uuid(request.POST.get("delivery_id")), webhook=webhook)
        delivery_redeliver(delivery)
        messages.success(request, f"{delivery.message_id} is sent again.")
        return redirect("webhook_deliveries", slug=project.slug, webhook_id=webhook.pk)
    return render(request, "console/webhook_deliveries.html",
                  {"project": project, "webhook": webhook, "deliveries": webhook_deliveries(webhook)})


def _number(raw: str | None) -> int:
    """The id a form sent; one that is no number names nothing (a 404, never a 500)."""
    return int(raw) if raw and raw.isdigit() else 0


def _uuid(raw: str | None) -> UUID | None:
    try:
        return UUID(raw or "")
    except ValueError:
        raise Http404("no such delivery") from None


def _project_led(request: HttpRequest, slug: str) -> Project:
    project, role = project_for_member(request.user, slug)
    require(role, "edit_project")
    return project
