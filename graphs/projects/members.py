"""Who belongs to a project and in which role, changed by username. A project always keeps a lead: the
last one can be neither removed nor given another role. A change is checked whole before anything is
written, and every problem of it is named at once, on the field it concerns."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from graphs.audit import audit_record
from graphs.models import AuditEntry, Project, ProjectMembership
from graphs.projects.folder_check import text_encodable

Role = ProjectMembership.Role
Action = AuditEntry.Action
USERNAME_MAX_CHARS = 150
# The code of a refusal naming more than one problem.
SEVERAL_PROBLEMS = "invalid_member"
# A problem found: the field it concerns -> (its code, its message).
Refusals = dict[str, tuple[str, str]]


class MemberRefused(ValueError):
    """A change of members that cannot be made. ``problems`` maps each field found wrong (``username``,
    ``role``) to what is wrong with it, in words; ``code`` says why in a stable word: the one problem's
    (``unknown_user``, ``not_member``, ``already_member``, ``bad_role``, ``last_lead``), or
    ``invalid_member`` when there are several."""

    def __init__(self, refusals: Refusals) -> None:
        self.problems = {field: message for field, (_, message) in refusals.items()}
        codes = [code for code, _ in refusals.values()]
        self.code = codes[0] if len(codes) == 1 else SEVERAL_PROBLEMS
        super().__init__(" ".join(self.problems.values()))


def project_members(project: Project) -> list[ProjectMembership]:
    """The project's memberships, leads first, then by username."""
    order = {Role.LEAD: 0, Role.REVIEWER: 1, Role.VIEWER: 2}
    rows = list(ProjectMembership.objects.filter(project=project).select_related("user"))
    return sorted(rows, key=lambda row: (order.get(row.role, 3), row.user.get_username()))


def member_add(*, project: Project, username: str, role: str, by: AbstractBaseUser | None = None) -> ProjectMembership:
    """Make the user called ``username`` a member in ``role``; the audit log records ``by`` adding them."""
    refusals = _role_refusals(role)
    with transaction.atomic():
        user = _user(username, refusals)
        if user is not None and ProjectMembership.objects.filter(project=project, user=user).exists():
            refusals["username"] = ("already_member", f"{username} is a member already; change their role instead.")
        if refusals:
            raise MemberRefused(refusals)
        membership = ProjectMembership.objects.create(project=project, user=user, role=role)
        _audit(by, Action.MEMBER_ADDED, membership, f"Added {username} to {project.slug} as a {role}",
               after={"role": role})
        return membership


def member_role_set(*, project: Project, username: str, role: str,
                    by: AbstractBaseUser | None = None) -> ProjectMembership:
    """Give the member called ``username`` the role ``role``; the audit log records ``by`` changing it, the
    role before and after (nothing, when it was that role already)."""
    refusals = _role_refusals(role)
    with transaction.atomic():
        membership = _membership_locked(project, username, refusals)
        if membership is not None and not refusals and membership.role == Role.LEAD and role != Role.LEAD:
            refusals.update(_last_lead_refusals(project, membership, field="role"))
        if refusals:
            raise MemberRefused(refusals)
        was = membership.role
        if was == role:
            return membership
        membership.role = role
        membership.save(update_fields=["role"])
        _audit(by, Action.MEMBER_ROLE_CHANGED, membership,
               f"Made {username} a {role} of {project.slug}, a {was} before",
               before={"role": was}, after={"role": role})
        return membership


def member_remove(*, project: Project, username: str, by: AbstractBaseUser | None = None) -> None:
    """Remove the member called ``username`` from the project; the audit log records ``by`` removing them."""
    refusals: Refusals = {}
    with transaction.atomic():
        membership = _membership_locked(project, username, refusals)
        if membership is not None and membership.role == Role.LEAD:
            refusals.update(_last_lead_refusals(project, membership, field="username"))
        if refusals:
            raise MemberRefused(refusals)
        _audit(by, Action.MEMBER_REMOVED, membership, f"Removed {username} ({membership.role}) from {project.slug}",
               before={"role": membership.role})
        membership.delete()


def _audit(by: AbstractBaseUser | None, action: str, membership: ProjectMembership, summary: str,
           **changes: dict[str, str]) -> None:
    audit_record(actor=by, action=action, object_type="member", object_id=membership.user.get_username(),
                 project=membership.project, summary=summary, **changes)


def _role_refusals(role: str) -> Refusals:
    if role not in Role.values:
        return {"role": ("bad_role", f"A role is one of {', '.join(Role.values)}.")}
    return {}


def _user(username: str, refusals: Refusals):
    """The active user called ``username``; None, with the problem added to ``refusals``, when there is none."""
    if not _username_plausible(username):
        refusals["username"] = ("unknown_user", f"A username has at most {USERNAME_MAX_CHARS} characters and no NUL.")
        return None
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        refusals["username"] = ("unknown_user", f"No active user is called {username!r}.")
    return user


def _username_plausible(username: str) -> bool:
    return len(username) <= USERNAME_MAX_CHARS and "\x00" not in username and text_encodable(username)


def _membership_locked(project: Project, username: str, refusals: Refusals) -> ProjectMembership | None:
    """The membership of ``username``; None, with the problem added to ``refusals``, when there is none."""
    # The project's row is locked (on PostgreSQL) for the transaction: changes of one project's members
    # are made one at a time, so two leads demoting each other at once cannot leave it without a lead.
    Project.objects.select_for_update(no_key=True).filter(pk=project.pk).first()
    membership = None
    if _username_plausible(username):
        membership = ProjectMembership.objects.filter(project=project, user__username=username).first()
    if membership is None:
        refusals["username"] = ("not_member", f"{username!r} is not a member of {project.name}.")
    return membership


def _last_lead_refusals(project: Project, membership: ProjectMembership, *, field: str) -> Refusals:
    others = ProjectMembership.objects.filter(project=project, role=Role.LEAD).exclude(pk=membership.pk)
    if others.exists():
        return {}
    return {field: ("last_lead", f"{project.name} must keep at least one lead: make another member a lead first.")}
