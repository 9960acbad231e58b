"""Delivery: where a project delivers its runs (read by its members, changed by its leads), and a run's
delivery asked for by a lead (``POST /runs/<id>/deliver``): first, again, or a retry after it failed."""

from __future__ import annotations

from uuid import UUID

from ninja import Field, Router, Status

from console.api.delivery_schemas import DeliveryOut, DeliverySettingsOut
from console.api.errors import ApiError
from console.api.schemas import ERRORS, InSchema
from console.permissions import project_for_member, require, run_for_member
from graphs.delivery.deliveries import DeliveryRefused, run_delivery_request
from graphs.delivery.project_settings import (
    FIELDS,
    DeliverySettingsInvalid,
    project_delivery_notes,
    project_delivery_of,
    project_delivery_update,
)
from graphs.delivery.reads import run_delivery_out
from graphs.models import ProjectDelivery

router = Router(tags=["delivery"])


class DeliverySettingsPatch(InSchema):
    """The settings to change; those left out stay as they are. Checked whole: every problem named at once."""

    deliver: str | None = Field(None, description="off, push or pull_request.")
    remote_url: str | None = Field(None, description="An https://, ssh:// or file:// URL, or an absolute path.")
    forge: str | None = Field(None, description="github, gitlab, gitea, or empty to push only.")
    forge_api_url: str | None = Field(None, description="The forge's API; GitHub's public one when empty.")
    forge_repo: str | None = Field(None, description="owner/name, or GitLab's project path.")
    forge_token_env: str | None = Field(None, description="The name of the variable holding the token, never it.")
    forge_webhook_secret_env: str | None = None


@router.get("/projects/{slug}/delivery", response={200: DeliverySettingsOut, **ERRORS})
def delivery_settings_read(request, slug: str):
    project, _ = project_for_member(request.auth, slug)
    setting = project_delivery_of(project)
    return _settings_out(setting, project_delivery_notes(setting))


@router.patch("/projects/{slug}/delivery", response={200: DeliverySettingsOut, **ERRORS})
def delivery_settings_update(request, slug: str, payload: DeliverySettingsPatch):
    project, role = project_for_member(request.auth, slug)
    require(role, "edit_project")
    changes = payload.dict(exclude_unset=True)
    try:
        saved = project_delivery_update(project=project, changes=changes, by=request.auth)
    except DeliverySettingsInvalid as error:
        fields = [{"field": name, "message": message} for name, message in error.problems.items()]
        raise ApiError(400, "invalid_delivery", "The delivery settings are not valid; nothing was saved.",
                       fields) from error
    return _settings_out(saved.delivery, saved.notes)


@router.post("/runs/{run_id}/deliver", response={202: DeliveryOut, **ERRORS})
def runs_deliver(request, run_id: UUID):
    """Push the run's branch and open its pull request as the project's settings say: a first delivery, a
    retry of one that failed, or again. The try runs in the background: poll the run's ``delivery``."""
    run, role = run_for_member(request.auth, run_id)
    require(role, "deliver")
    try:
        delivery = run_delivery_request(run=run, by=request.auth)
    except DeliveryRefused as refusal:
        raise ApiError(409, refusal.code, str(refusal)) from refusal
    return Status(202, run_delivery_out(delivery))


def _settings_out(setting: ProjectDelivery, notes: list[str]) -> dict:
    return {"project": setting.project.slug, **{name: getattr(setting, name) for name in FIELDS}, "notes": notes}
