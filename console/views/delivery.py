"""Delivery's pages: a project's delivery settings (read by its members, changed by its leads), and the task
page's Deliver / Retry button. The rules are graphs.delivery's; these views show its words."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.forms.delivery import DeliveryForm
from console.permissions import can, project_for_member, require, run_for_member
from console.views.common import redirect_back
from graphs.delivery.deliveries import DeliveryRefused, run_delivery_request
from graphs.delivery.project_settings import (
    FIELDS,
    DeliverySettingsInvalid,
    project_delivery_notes,
    project_delivery_of,
    project_delivery_update,
)


@login_required
def project_delivery_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Where the project delivers its runs; a lead changes it, every problem marked on its field at once."""
    project, role = project_for_member(request.user, slug)
    current = project_delivery_of(project)
    form = DeliveryForm(request.POST or None, initial={name: getattr(current, name) for name in FIELDS})
    notes = project_delivery_notes(current)
    if request.method == "POST":
        require(role, "edit_project")
        if form.is_valid():
            try:
                saved = project_delivery_update(project=project, changes=form.cleaned_data, by=request.user)
            except DeliverySettingsInvalid as error:
                for name, message in error.problems.items():
                    form.add_error(name if name in form.fields else None, message)
            else:
                messages.success(request, "Delivery settings saved.")
                for note in saved.notes:
                    messages.warning(request, note)
                return redirect("project_delivery", slug=project.slug)
    return render(request, "console/project_delivery.html",
                  {"project": project, "form": form, "can_edit": can(role, "edit_project"), "current": current,
                   "notes": notes}, status=400 if form.errors else 200)


@login_required
@require_POST
def run_deliver_view(request: HttpRequest, run_id) -> HttpResponse:
    """A lead's Deliver, Retry or Deliver again: the delivery is tried in the background."""
    run, role = run_for_member(request.user, run_id)
    require(role, "deliver")
    try:
        delivery = run_delivery_request(run=run, by=request.user)
    except DeliveryRefused as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, f"Delivering {delivery.remote_branch}: the task page shows how it goes.")
    return redirect_back(request, f"{reverse('task_detail', kwargs={'task_id': run.task_id})}#run-{run.run_id}")
