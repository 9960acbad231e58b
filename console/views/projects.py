"""The pages that set a project up: a new project, its settings, its members. The rules are
graphs.projects'; these views show its messages on the fields they name."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.forms.projects import MemberAddForm, ProjectForm
from console.permissions import can, may_create_projects, project_for_member, require
from graphs.models import ProjectMembership
from graphs.projects.edits import EDITABLE, ProjectInvalid, project_create, project_update
from graphs.projects.folder_check import folder_check
from graphs.projects.members import MemberRefused, member_add, member_remove, member_role_set, project_members


@login_required
def project_new(request: HttpRequest) -> HttpResponse:
    if not may_create_projects(request.user):
        raise PermissionDenied("you may not create projects: an administrator gives the permission to add them")
    form = ProjectForm(request.POST or None, creating=True)
    check = None
    if request.method == "POST" and form.is_valid():
        try:
            saved = project_create(created_by=request.user, fields=form.values(),
                                   confirm_commands=form.cleaned_data["confirm_commands"])
        except ProjectInvalid as error:
            check = error.check
            _problems_shown(form, error.problems)
        else:
            messages.success(request, f"Project {saved.project.name} created; you lead it.")
            return redirect("project_detail", slug=saved.project.slug)
    return render(request, "console/project_form.html", {"form": form, "check": check, "creating": True},
                  status=400 if form.errors else 200)


@login_required
def project_edit(request: HttpRequest, slug: str) -> HttpResponse:
    project, role = project_for_member(request.user, slug)
    require(role, "edit_project")
    initial = {name: getattr(project, name) for name in EDITABLE}
    initial["max_run_cost_usd"] = "" if project.max_run_cost_usd is None else project.max_run_cost_usd.normalize()
    form = ProjectForm(request.POST or None, initial=initial, creating=False)
    check = folder_check(folder=project.target_folder, base_ref=project.base_ref)
    if request.method == "POST" and form.is_valid():
        try:
            project_update(project=project, changes=form.values(),
                           confirm_commands=form.cleaned_data["confirm_commands"], by=request.user)
        except ProjectInvalid as error:
            check = error.check
            _problems_shown(form, error.problems)
        else:
            messages.success(request, "Project settings saved.")
            return redirect("project_detail", slug=project.slug)
    return render(request, "console/project_form.html",
                  {"form": form, "check": check, "creating": False, "project": project},
                  status=400 if form.errors else 200)


@login_required
def project_members_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Who belongs to the project; leads add members, change their roles and remove them."""
    project, role = project_for_member(request.user, slug)
    can_manage = can(role, "manage_members")
    form = MemberAddForm(request.POST or None)
    if request.method == "POST":
        require(role, "manage_members")
        if form.is_valid():
            try:
                member_add(project=project, **form.cleaned_data, by=request.user)
            except MemberRefused as error:
                _problems_shown(form, error.problems)
            else:
                messages.success(request, f"{form.cleaned_data['username']} is now a member.")
                return redirect("project_members", slug=project.slug)
    return render(request, "console/project_members.html",
                  {"project": project, "role": role, "can_manage": can_manage, "form": form,
                   "members": project_members(project), "roles": ProjectMembership.Role.choices},
                  status=400 if form.errors else 200)


@login_required
@require_POST
def project_member_change(request: HttpRequest, slug: str, username: str) -> HttpResponse:
    """Change a member's role, or remove them (the button pressed says which)."""
    project, role = project_for_member(request.user, slug)
    require(role, "manage_members")
    try:
        if request.POST.get("action") == "remove":
            member_remove(project=project, username=username, by=request.user)
            messages.success(request, f"{username} is no longer a member.")
        else:
            # The role as sent: graphs.projects names a wrong one beside any problem of the member.
            role_wanted = request.POST.get("role", "")
            member_role_set(project=project, username=username, role=role_wanted, by=request.user)
            messages.success(request, f"{username} is now a {role_wanted}.")
    except MemberRefused as error:
        messages.error(request, str(error))
    return redirect("project_members", slug=project.slug)


def _problems_shown(form: forms.Form, problems: dict[str, str]) -> None:
    """Mark each problem graphs.projects named on its field of ``form`` (the form's own, when it has none)."""
    for name, message in problems.items():
        form.add_error(name if name in form.fields else None, message)
