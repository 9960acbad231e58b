"""The audit log written: one entry per decision a person took, in the transaction that carries it out.

Every layer that carries out a decision (planning, the engine, projects, revisions, tokens,
notifications, the console) calls ``audit_record`` inside the same ``transaction.atomic()`` as the
change, so a decision and its entry are committed together or not at all. The vocabulary of actions
is ``AuditEntry.Action``; entries are never changed or deleted (graphs.models.audit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from graphs.models import AuditEntry, Project

Actor = AbstractBaseUser | AnonymousUser | str | None


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


def _actor(actor: Actor) -> tuple[AbstractBaseUser | None, str]:
    if isinstance(actor, str):
        return None, actor[:150]
    if actor is None or not actor.is_authenticated:
        return None, ""
    return actor, actor.get_username()
