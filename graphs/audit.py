"""The audit log written: one entry per decision a person took, in the transaction that carries it out.

Every layer that carries out a decision (planning, the engine, projects, revisions, tokens,
notifications, the console) calls ``audit_record`` inside the same ``transaction.atomic()`` as the
change, so a decision and its entry are committed together or not at all. The vocabulary of actions
is ``AuditEntry.Action``; entries are never changed or deleted (graphs.models.audit).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest

from graphs.models import AuditEntry, Project, WorkGraphRun

Actor = AbstractBaseUser | AnonymousUser | str | None
# What an entry keeps of a name: as long as Django's usernames may be.
USERNAME_KEPT = 150


def audit_record(
    *,
    actor: Actor,
    action: AuditEntry.Action | str,
    object_type: str,
    object_id: object,
    summary: str,
    project: Project | None = None,
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
    ip: str | None = None,
) -> AuditEntry:
    """Append one entry and return it.

    ``actor`` is the user who decided; a plain string names someone who is not a user (the name a
    failed sign-in tried), and None or an anonymous user records no one. ``before`` and ``after`` hold
    the fields the decision changed (``audit_changes`` picks them out). Raises ValueError for an
    action the vocabulary does not name, so a misspelt action fails where it is written.
    """
    if action not in AuditEntry.Action.values:
        raise ValueError(f"{action!r} is not an audit action")
    user, name = _actor(actor)
    return AuditEntry.objects.create(
        actor=user, actor_name=name, action=action, object_type=object_type, object_id=str(object_id),
        summary=summary, project=project, project_slug=project.slug if project is not None else "",
        before=dict(before) if before is not None else None, after=dict(after) if after is not None else None,
        ip=ip or None,
    )


def audit_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return the fields whose values differ between ``before`` and ``after``, as two dicts of those fields
    alone (a field only one side has counts as changed, the other side holding None)."""
    changed = [key for key in {**before, **after} if before.get(key) != after.get(key)]
    return {key: before.get(key) for key in changed}, {key: after.get(key) for key in changed}


def audit_revision(
    *, actor: Actor, action: AuditEntry.Action, object_type: str, object_id: object, what: str, number: int,
    before: Mapping[str, Any] | None, after: Mapping[str, Any], note: str = "", project: Project | None = None,
) -> AuditEntry | None:
    """Record a revision of a record that keeps them (a skill, an agent profile), its changed fields before
    and after (all of them, the first). A revision nobody made — shipped, imported from the command line,
    made on first use — is no one's decision: recorded only when ``actor`` is a person, else None."""
    if isinstance(actor, str) or actor is None or not actor.is_authenticated:
        return None
    changed_before, changed_after = audit_changes(before or {}, after)
    summary = f"{'Edited' if before is not None else 'Created'} {what} (revision {number})"
    return audit_record(actor=actor, action=action, object_type=object_type, object_id=object_id, project=project,
                        before=changed_before if before is not None else None, after=changed_after,
                        summary=f"{summary}: {note}" if note.strip() else summary)


def sign_in_failed_record(sender: object, credentials: Mapping[str, Any], request: HttpRequest | None = None,
                          **kwargs: Any) -> None:
    """``user_login_failed`` receiver: a sign-in that failed (a wrong password, an unknown or locked-out
    name) is recorded with the name tried and the address it came from. Django has already hidden the
    password in ``credentials``; only the name is read."""
    tried = str(credentials.get("username") or "")[:USERNAME_KEPT]
    audit_record(actor=tried, action=AuditEntry.Action.SIGN_IN_FAILED, object_type="user", object_id=tried,
                 summary=f"Failed to sign in as {tried or '(no name)'}", ip=_address(request))


def audit_run_name(run: WorkGraphRun) -> str:
    """A run as a summary names it: the start of its id and its task's title."""
    return f"run {str(run.pk)[:8]} of \u201c{run.task.title}\u201d"


def _address(request: HttpRequest | None) -> str | None:
    # REMOTE_ADDR is the client's, behind a proxy too: daphne's --proxy-headers sets it (console/settings.py).
    address = request.META.get("REMOTE_ADDR", "") if request is not None else ""
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


def _actor(actor: Actor) -> tuple[AbstractBaseUser | None, str]:
    if isinstance(actor, str):
        return None, actor[:USERNAME_KEPT]
    if actor is None or not actor.is_authenticated:
        return None, ""
    return actor, actor.get_username()
