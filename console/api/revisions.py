"""Skills and agent profiles, each with its numbered revisions and their labels: every member of a project
reads them; skill admins (the ``graphs.manage_skills`` permission) add revisions. A revision made on an
older one than the newest is a 409 ``conflict`` and saves nothing. The rules of each field are the
editors' forms', so the pages and the API refuse alike."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Max, Prefetch
from django.http import Http404
from ninja import Router, Status

from console.api.errors import ApiError
from console.api.revision_schemas import (
    AgentProfileDetailOut,
    AgentProfileOut,
    AgentProfileRevisionIn,
    AgentProfileRevisionOut,
    SkillDetailOut,
    SkillOut,
    SkillRevisionIn,
    SkillRevisionOut,
)
from console.api.schemas import ERRORS
from console.forms.agent_profiles import AgentProfileForm
from console.forms.skills import SkillForm
from graphs.domain.revisions import RUN_LABEL, RevisionConflict, RevisionField
from graphs.models import AgentProfile, ProjectMembership, Skill
from graphs.profiles import revisions as profile_revisions
from graphs.profiles.resolve import profiles_ensure_shipped
from graphs.skills import revisions as skill_revisions

router = Router(tags=["skills and agent profiles"])
SKILL_ADMIN = "graphs.manage_skills"
# The profile editor's form names its tool lists as text; the API names them as the model does.
_FORM_FIELD_NAMES = {"allowed_tools_text": "allowed_tools", "disallowed_tools_text": "disallowed_tools"}
_SKILL_FIELDS = ("name", "description", "owner_org_node", "body")
_PROFILE_FIELDS = ("description", "instructions", "model", "effort", "permission_mode", "max_turns",
                   "repository_definition_first", "allowed_tools", "disallowed_tools")


@router.get("/skills", response={200: list[SkillOut], **ERRORS})
def skills_list(request):
    _reader(request)
    return [_skill_out(skill) for skill in _with_labels(Skill.objects.order_by("skill_id"))]


@router.get("/skills/{skill_id}", response={200: SkillDetailOut, **ERRORS})
def skills_detail(request, skill_id: str):
    _reader(request)
    skill = _one(_with_labels(Skill.objects.filter(skill_id=skill_id)), f"no skill has the id {skill_id}")
    return {**_skill_out(skill), **_detail(skill, fields=_SKILL_FIELDS)}


@router.post("/skills/{skill_id}/revisions", response={200: SkillRevisionOut, 201: SkillRevisionOut, **ERRORS})
def skills_revise(request, skill_id: str, payload: SkillRevisionIn):
    _writer(request)
    skill = _one(Skill.objects.filter(skill_id=skill_id), f"no skill has the id {skill_id}")
    changes = payload.dict(exclude_unset=True)
    data = {name: changes.get(name, getattr(skill, name)) for name in ("name", "description", "owner_org_node")}
    form = _valid(SkillForm({**data, "skill_id": skill.skill_id, "body": payload.body, "note": payload.note,
                             "base_revision": payload.base_revision}, instance=skill))
    revision = _saved(lambda: skill_revisions.skill_save(
        skill=form.save(commit=False), body=form.cleaned_data["body"], author=request.auth,
        note=form.cleaned_data["note"], base_revision=payload.base_revision), skill_revisions.FIELDS)
    return _revision_answer(skill, revision, fields=_SKILL_FIELDS)


@router.get("/agent-profiles", response={200: list[AgentProfileOut], **ERRORS})
def profiles_list(request):
    _reader(request)
    profiles_ensure_shipped()
    profiles = _with_labels(AgentProfile.objects.filter(project__isnull=True).order_by("org_node"))
    overrides: dict[str, list[str]] = {}
    for org_node, slug in (AgentProfile.objects.filter(project__isnull=False).order_by("project__slug")
                           .values_list("org_node", "project__slug")):
        overrides.setdefault(org_node, []).append(slug)
    return [{**_labels_out(profile), "org_node": profile.org_node, "description": profile.description,
             "model": profile.model, "overrides": overrides.get(profile.org_node, [])} for profile in profiles]


@router.get("/agent-profiles/{org_node}", response={200: AgentProfileDetailOut, **ERRORS})
def profiles_detail(request, org_node: str):
    _reader(request)
    profile = _console_profile(org_node, labelled=True)
    overrides = list(AgentProfile.objects.filter(org_node=org_node, project__isnull=False)
                     .order_by("project__slug").values_list("project__slug", flat=True))
    return {**_labels_out(profile), **_detail(profile, fields=_PROFILE_FIELDS), "org_node": profile.org_node,
            "overrides": overrides}


@router.post("/agent-profiles/{org_node}/revisions",
             response={200: AgentProfileRevisionOut, 201: AgentProfileRevisionOut, **ERRORS})
def profiles_revise(request, org_node: str, payload: AgentProfileRevisionIn):
    _writer(request)
    profile = _console_profile(org_node, labelled=False)
    changes = payload.dict(exclude_unset=True, exclude={"base_revision", "note"})
    content = {**profile_revisions.profile_content(profile), **changes}
    data = {**content, "org_node": profile.org_node, "note": payload.note, "base_revision": payload.base_revision,
            "max_turns": "" if content["max_turns"] is None else content["max_turns"],
            # Each rule its own line: a comma inside a rule's parentheses stays the rule's.
            "allowed_tools_text": "\n".join(content["allowed_tools"]),
            "disallowed_tools_text": "\n".join(content["disallowed_tools"])}
    form = _valid(AgentProfileForm(data, instance=profile))
    revision = _saved(lambda: profile_revisions.profile_save(
        profile=form.save(commit=False), author=request.auth, note=form.cleaned_data["note"],
        base_revision=payload.base_revision), profile_revisions.FIELDS)
    return _revision_answer(profile, revision, fields=_PROFILE_FIELDS)


def _reader(request) -> None:
    user = request.auth
    if not (user.has_perm(SKILL_ADMIN) or ProjectMembership.objects.filter(user=user).exists()):
        raise PermissionDenied("skills and agent profiles are read by the members of projects and by skill admins")


def _writer(request) -> None:
    if not request.auth.has_perm(SKILL_ADMIN):
        raise PermissionDenied("only skill admins (the manage_skills permission) add revisions")


def _with_labels(records):
    """``records`` with their newest revision number and their labels (with each one's revision) at hand."""
    label_model = records.model.labels.field.model
    return records.annotate(latest_revision=Max("revisions__number")).prefetch_related(
        Prefetch("labels", queryset=label_model.objects.select_related("revision")))


def _one(records, missing: str):
    record = records.first()
    if record is None:
        raise Http404(missing)
    return record


def _console_profile(org_node: str, *, labelled: bool) -> AgentProfile:
    profiles_ensure_shipped()
    profiles = AgentProfile.objects.filter(org_node=org_node, project__isnull=True)
    return _one(_with_labels(profiles) if labelled else profiles, f"no agent profile of {org_node}")


def _labels(record) -> dict[str, int]:
    return {label.label: label.revision.number for label in record.labels.all()}


def _labels_out(record) -> dict[str, Any]:
    """The record's newest revision, its labels, and the revision runs use (as graphs.revisions reads it)."""
    labels = _labels(record)
    return {"latest_revision": record.latest_revision, "labels": labels,
            "run_revision": labels.get(RUN_LABEL, record.latest_revision)}


def _skill_out(skill: Skill) -> dict[str, Any]:
    return {**_labels_out(skill), **{name: getattr(skill, name) for name in ("skill_id", "name", "description",
                                                                              "owner_org_node", "status")}}


def _revision_out(revision, *, fields: tuple[str, ...], labels: dict[str, int]) -> dict[str, Any]:
    return {**{name: getattr(revision, name) for name in fields}, "number": revision.number, "note": revision.note,
            "author": revision.author.get_username() if revision.author else None,
            "created_at": revision.created_at,
            "labels": [label for label, number in labels.items() if number == revision.number]}


def _detail(record, *, fields: tuple[str, ...]) -> dict[str, Any]:
    labels = _labels(record)
    revisions = record.revisions.select_related("author").order_by("-number")
    return {**{name: getattr(record, name) for name in fields},
            "revisions": [_revision_out(revision, fields=fields, labels=labels) for revision in revisions]}


def _revision_answer(record, revision, *, fields: tuple[str, ...]):
    """201 with the revision made; 200 with the newest when nothing changed, so no revision was made."""
    made = revision is not None
    revision = revision or record.revisions.select_related("author").order_by("-number").first()
    labels = {label.label: label.revision.number for label in record.labels.select_related("revision")}
    return Status(201 if made else 200, _revision_out(revision, fields=fields, labels=labels))


def _valid(form):
    if not form.is_valid():
        fields = [{"field": _FORM_FIELD_NAMES.get(name, name) if name != "__all__" else "", "message": message}
                  for name, messages in form.errors.items() for message in messages]
        raise ApiError(400, "invalid_revision", "The revision is not valid; nothing was saved.", fields)
    return form


def _saved(save, fields: tuple[RevisionField, ...]):
    try:
        return save()
    except RevisionConflict as conflict:
        names = {field.label: field.name for field in fields}
        problems = [{"field": "base_revision", "message": f"Revision {conflict.latest} is the newest.",
                     "latest": conflict.latest},
                    *({"field": names.get(version.label, version.label),
                       "message": f"Revision {conflict.latest} has it otherwise.", "theirs": version.theirs}
                      for version in conflict.fields)]
        raise ApiError(409, "conflict", str(conflict), problems) from conflict
