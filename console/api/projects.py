"""Projects: list and read what the viewer may see; create (with Django's add_project permission); edit and
manage members (leads); check a folder before saving it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from ninja import Router, Status

from console.api.errors import ApiError
from console.api.project_schemas import (
    FolderCheckIn,
    FolderCheckOut,
    MemberIn,
    MemberOut,
    MemberRoleIn,
    ProjectIn,
    ProjectOut,
    ProjectPatch,
)
from console.api.schemas import ERRORS
from console.permissions import can, may_create_projects, project_for_member, require
from graphs.models import Project, ProjectMembership
from graphs.projects.edits import COMMANDS_CONFIRMATION, ProjectInvalid, project_create, project_update
from graphs.projects.folder_check import FolderCheck, folder_check
from graphs.projects.members import (
    SEVERAL_PROBLEMS,
    MemberRefused,
    member_add,
    member_remove,
    member_role_set,
    project_members,
)
from graphs.reads.access import projects_for_user
from graphs.reads.task_lists import projects_spend

router = Router(tags=["projects"])
# How each refusal of a member change answers, by its code.
MEMBER_STATUS = {"unknown_user": 400, "bad_role": 400, "not_member": 404, "already_member": 409, "last_lead": 409,
                 SEVERAL_PROBLEMS: 400}


@router.get("/projects", response={200: list[ProjectOut], **ERRORS})
def projects_list(request):
    roles = dict(ProjectMembership.objects.filter(user=request.auth).values_list("project_id", "role"))
    projects = list(projects_for_user(request.auth))
    spend = projects_spend(projects)
    return [_project_out(p, roles[p.pk], spend[p.pk]) for p in projects]


@router.post("/projects", response={201: ProjectOut, **ERRORS})
def projects_create(request, payload: ProjectIn):
    if not may_create_projects(request.auth):
        raise PermissionDenied("you may not create projects: an administrator gives the permission to add them")
    fields = payload.dict(exclude={"confirm_commands"})
    saved = _saved(lambda: project_create(created_by=request.auth, fields=fields,
                                          confirm_commands=payload.confirm_commands))
    return Status(201, _project_out(saved.project, ProjectMembership.Role.LEAD, None, saved.check))


@router.post("/projects/folder-check", response={200: FolderCheckOut, **ERRORS})
def projects_folder_check(request, payload: FolderCheckIn):
    """What a folder and base ref are, as the project form shows it: for those who may create or edit one."""
    leads = ProjectMembership.objects.filter(user=request.auth, role=ProjectMembership.Role.LEAD)
    if not (may_create_projects(request.auth) or leads.exists()):
        raise PermissionDenied("only those who create or lead projects check folders")
    return folder_check(folder=payload.target_folder, base_ref=payload.base_ref).as_dict()


@router.get("/projects/{slug}", response={200: ProjectOut, **ERRORS})
def projects_detail(request, slug: str):
    project, role = project_for_member(request.auth, slug)
    check = None
    if can(role, "edit_project"):
        check = folder_check(folder=project.target_folder, base_ref=project.base_ref)
    return _project_out(project, role, None, check)


@router.patch("/projects/{slug}", response={200: ProjectOut, **ERRORS})
def projects_update(request, slug: str, payload: ProjectPatch):
    project, role = project_for_member(request.auth, slug)
    require(role, "edit_project")
    changes = payload.dict(exclude_unset=True, exclude={"confirm_commands"})
    saved = _saved(lambda: project_update(project=project, changes=changes,
                                          confirm_commands=payload.confirm_commands, by=request.auth))
    return _project_out(saved.project, role, None, saved.check)


@router.get("/projects/{slug}/members", response={200: list[MemberOut], **ERRORS})
def members_list(request, slug: str):
    project, _ = project_for_member(request.auth, slug)
    return [_member_out(membership) for membership in project_members(project)]


@router.post("/projects/{slug}/members", response={201: MemberOut, **ERRORS})
def members_add(request, slug: str, payload: MemberIn):
    project = _project_led(request, slug)
    return Status(201, _member_out(_member_change(member_add, request.auth, project=project,
                                                  username=payload.username, role=payload.role)))


@router.patch("/projects/{slug}/members/{username}", response={200: MemberOut, **ERRORS})
def members_role_set(request, slug: str, username: str, payload: MemberRoleIn):
    project = _project_led(request, slug)
    return _member_out(_member_change(member_role_set, request.auth, project=project, username=username,
                                      role=payload.role))


@router.delete("/projects/{slug}/members/{username}", response={204: None, **ERRORS})
def members_remove(request, slug: str, username: str):
    _member_change(member_remove, request.auth, project=_project_led(request, slug), username=username)
    return Status(204, None)


def _project_led(request, slug: str) -> Project:
    project, role = project_for_member(request.auth, slug)
    require(role, "manage_members")
    return project


def _saved(save):
    try:
        return save()
    except ProjectInvalid as error:
        fields = [{"field": name, "message": message} for name, message in error.problems.items()]
        if all(message == COMMANDS_CONFIRMATION for message in error.problems.values()):
            raise ApiError(400, "confirmation_required", f"{COMMANDS_CONFIRMATION} Send confirm_commands: true.",
                           fields) from error
        raise ApiError(400, "invalid_project", "The project is not valid; nothing was saved.", fields) from error


def _member_change(change, by, **kwargs: Any):
    try:
        return change(by=by, **kwargs)
    except MemberRefused as error:
        fields = [{"field": name, "message": message} for name, message in error.problems.items()]
        raise ApiError(MEMBER_STATUS[error.code], error.code, str(error), fields) from error


def _member_out(membership: ProjectMembership) -> dict[str, str]:
    return {"username": membership.user.get_username(), "role": membership.role}


def _project_out(project: Project, role: str, spend, check: FolderCheck | None = None) -> dict[str, Any]:
    if spend is None:
        spend = projects_spend([project])[project.pk]
    fields = ("slug", "name", "base_ref", "require_plan_approval", "require_change_review", "allow_commands",
              "allow_command_network", "max_run_cost_usd", "agent", "promotion_min_pass_rate",
              "promotion_no_regressions")
    return {**{name: getattr(project, name) for name in fields},
            "agent_used": project.agent or settings.WORKGRAPH_AGENT,
            "role": role, "spend": spend.as_dict(),
            "target_folder": project.target_folder if can(role, "see_target_folder") else None,
            "folder_check": check.as_dict() if check is not None else None}
