"""Who belongs to a project and in which role, changed by username. A project always keeps a lead: the
last one can be neither removed nor given another role."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from graphs.models import Project, ProjectMembership
from graphs.projects.folder_check import text_encodable

Role = ProjectMembership.Role
USERNAME_MAX_CHARS = 150


class MemberRefused(ValueError):
    """A change of members that cannot be made; ``code`` says why (``unknown_user``, ``not_member``,
    ``already_member``, ``bad_role``, ``last_lead``), the message in words."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def project_members(project: Project) -> list[ProjectMembership]:
    """The project's memberships, leads first, then by username."""
    order = {Role.LEAD: 0, Role.REVIEWER: 1, Role.VIEWER: 2}
    rows = list(ProjectMembership.objects.filter(project=project).select_related("user"))
    return sorted(rows, key=lambda row: (order.get(row.role, 3), row.user.get_username()))


def member_add(*, project: Project, username: str, role: str) -> ProjectMembership:
    """Make the user called ``username`` a member in ``role``."""
    _role_check(role)
    user = _user(username)
    with transaction.atomic():
        if ProjectMembership.objects.filter(project=project, user=user).exists():
            raise MemberRefused("already_member", f"{username} is a member already; change their role instead.")
        return ProjectMembership.objects.create(project=project, user=user, role=role)


def member_role_set(*, project: Project, username: str, role: str) -> ProjectMembership:
    """Give the member called ``username`` the role ``role``."""
    _role_check(role)
    with transaction.atomic():
        membership = _membership_locked(project, username)
        if membership.role == Role.LEAD and role != Role.LEAD:
            _other_lead_check(project, membership)
        membership.role = role
        membership.save(update_fields=["role"])
        return membership


def member_remove(*, project: Project, username: str) -> None:
    """Remove the member called ``username`` from the project."""
    with transaction.atomic():
        membership = _membership_locked(project, username)
        if membership.role == Role.LEAD:
            _other_lead_check(project, membership)
        membership.delete()


def _role_check(role: str) -> None:
    if role not in Role.values:
        raise MemberRefused("bad_role", f"A role is one of {', '.join(Role.values)}.")


def _user(username: str):
    if not _username_plausible(username):
        raise MemberRefused("unknown_user", f"A username has at most {USERNAME_MAX_CHARS} characters and no NUL.")
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise MemberRefused("unknown_user", f"No active user is called {username!r}.")
    return user


def _username_plausible(username: str) -> bool:
    return len(username) <= USERNAME_MAX_CHARS and "\x00" not in username and text_encodable(username)


def _membership_locked(project: Project, username: str) -> ProjectMembership:
    # The project's row is locked (on PostgreSQL) for the transaction: changes of one project's members
    # are made one at a time, so two leads demoting each other at once cannot leave it without a lead.
    Project.objects.select_for_update().filter(pk=project.pk).first()
    membership = None
    if _username_plausible(username):
        membership = ProjectMembership.objects.filter(project=project, user__username=username).first()
    if membership is None:
        raise MemberRefused("not_member", f"{username!r} is not a member of {project.name}.")
    return membership


def _other_lead_check(project: Project, membership: ProjectMembership) -> None:
    others = ProjectMembership.objects.filter(project=project, role=Role.LEAD).exclude(pk=membership.pk)
    if not others.exists():
        raise MemberRefused("last_lead", f"{project.name} must keep at least one lead: make another member a lead"
                                         " first.")
