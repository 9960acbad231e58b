"""The profile an agent call runs with: a project's override, else the console's profile of the org node.

The console's profiles of the shipped org nodes — and of any other org node a run calls — are created on
first use from ``graphs.domain.agent_profiles.shipped_profile``, so a fresh install runs with today's
identities and every attempt can name the revision it ran with.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, connections, transaction
from django.db.models.options import Options

from graphs.audit import audit_record
from graphs.domain.agent_profiles import ORG_NODE_NAME, ResolvedProfile, shipped_profile
from graphs.domain.revisions import RUN_LABEL
from graphs.models import (
    AgentProfile,
    AgentProfileLabel,
    AgentProfileRevision,
    AuditEntry,
    Project,
    WorkNodeExecution,
)
from graphs.profiles.revisions import profile_content, profile_save
from graphs.revisions import revision_for_runs

# The org nodes a pipeline calls; their profiles are listed even before a first run.
SHIPPED_ORG_NODES = ("planner", "coder", "validator")

# The profiles resolved within ``profiles_held``, by org node, project and the pins asked with.
_held: ContextVar[dict[tuple[str, int | None, str], ResolvedProfile] | None] = ContextVar("profiles_held",
                                                                                         default=None)


@contextmanager
def profiles_held() -> Iterator[None]:
    """Within it, an org node's profile is resolved once per project and pins, then reused.

    A node job holds them while it runs the chain of dependants it claims for itself (a few seconds at
    most, see graphs.engine.attempt): a chain of quick nodes otherwise sent the profile's statement
    once a node, a ninth of what the node sends. A revision saved or a label moved meanwhile is used
    from the next job on, as it would be had it come a moment later.
    """
    token = _held.set({})
    try:
        yield
    finally:
        _held.reset(token)


def profiles_ensure_shipped() -> None:
    """Create the console's profiles of the shipped org nodes that have none yet."""
    existing = set(AgentProfile.objects.filter(project__isnull=True, org_node__in=SHIPPED_ORG_NODES)
                   .values_list("org_node", flat=True))
    for org_node in SHIPPED_ORG_NODES:
        if org_node not in existing:
            profile_console(org_node)


def profile_console(org_node: str) -> AgentProfile | None:
    """The console's profile of ``org_node``, created from its shipped profile when it has none; None for
    a name no profile can be kept under (see ORG_NODE_NAME)."""
    if not ORG_NODE_NAME.match(org_node):
        return None
    profile = AgentProfile.objects.filter(project__isnull=True, org_node=org_node).first()
    if profile is not None:
        return profile
    shipped = shipped_profile(org_node)
    try:
        with transaction.atomic():
            profile = AgentProfile(
                org_node=org_node, description=shipped.description, instructions=shipped.instructions,
                allowed_tools=list(shipped.allowed_tools), permission_mode=shipped.permission_mode,
            )
            profile_save(profile=profile, author=None, note="shipped profile")
    except IntegrityError:  # created meanwhile by another call
        profile = AgentProfile.objects.get(project__isnull=True, org_node=org_node)
    return profile


def profile_resolve(*, org_node: str, project: Project | None,
                    pins: Mapping[str, Any] | None = None) -> ResolvedProfile:
    """The profile a call of ``org_node`` in ``project`` runs with, from the revision runs use: the one
    labelled ``production``, else the newest (graphs.revisions.revision_for_runs says the same) — or the
    revision of the console's profile its run pins (``pins``: a run's ``revision_pins``, an experiment's).

    One statement on every call but an org node's first: that revision of the project's override, else
    of the console's profile; none for one already resolved within ``profiles_held``.
    """
    held = _held.get()
    key = (org_node, project.pk if project else None, json.dumps(pins or {}, sort_keys=True, default=str))
    if held is not None and key in held:
        return held[key]
    resolved = _resolved(org_node=org_node, project=project, pinned=((pins or {}).get("profiles") or {}).get(org_node))
    model = (pins or {}).get("model")
    resolved = dataclasses.replace(resolved, model=model) if model else resolved
    if held is not None:
        held[key] = resolved
    return resolved


def _resolved(*, org_node: str, project: Project | None, pinned: int | None) -> ResolvedProfile:
    if pinned is not None:
        revision = AgentProfileRevision.objects.get(profile__project__isnull=True, profile__org_node=org_node,
                                                    number=pinned)
        return revision_resolved(revision, org_node=org_node)
    revision = _run_revision(org_node=org_node, project_id=project.pk if project else None)
    if revision is None:
        profile = profile_console(org_node)
        if profile is None:
            return shipped_profile(org_node)
        revision = revision_for_runs(profile) or profile_save(profile=profile, author=None, note="first revision")
        revision.owner_project_id = profile.project_id
    owned = revision.owner_project_id is not None and project is not None
    return revision_resolved(revision, org_node=org_node, project_slug=project.slug if owned else "")


@functools.cache
def _run_revision_sql(alias: str) -> str:
    """The SQL of ``AgentProfileRevision.objects.filter(Q(profile__project=None) | Q(profile__project=%s),
    profile__org_node=%s).order_by(F("profile__project").desc(nulls_last=True), "-number").first()``,
    with the profile's project as ``owner_project_id`` — among a profile's revisions only the one labelled
    ``production`` when one is (a LEFT JOIN of its label keeps the others where none is).

    An agent call runs it for every node: written once, it spares each call the queryset's building and
    compilation, which cost the worker several times what the database takes to answer it.
    """
    quote = connections[alias].ops.quote_name
    revisions, profiles, labels = AgentProfileRevision._meta, AgentProfile._meta, AgentProfileLabel._meta

    def column(meta: Options, name: str) -> str:
        return f"{quote(meta.db_table)}.{quote(meta.get_field(name).column)}"

    selected = ", ".join(f"{quote(revisions.db_table)}.{quote(field.column)}" for field in revisions.concrete_fields)
    owner = column(profiles, "project")
    return (
        f"SELECT {selected}, {owner} AS owner_project_id FROM {quote(revisions.db_table)}"  # noqa: S608
        f" INNER JOIN {quote(profiles.db_table)} ON ({column(revisions, 'profile')} = {column(profiles, 'id')})"
        f" LEFT OUTER JOIN {quote(labels.db_table)} ON ({column(labels, 'profile')} = {column(profiles, 'id')}"
        f" AND {column(labels, 'label')} = %s)"
        f" WHERE {column(profiles, 'org_node')} = %s AND ({owner} IS NULL OR {owner} = %s)"
        f" AND ({column(labels, 'id')} IS NULL OR {column(labels, 'revision')} = {column(revisions, 'id')})"
        f" ORDER BY ({owner} IS NULL) ASC, {column(revisions, 'number')} DESC LIMIT 1"
    )


def _run_revision(*, org_node: str, project_id: int | None) -> AgentProfileRevision | None:
    """The revision runs use of ``project_id``'s override of ``org_node``, else of the console's profile
    (at most one profile of each exists), with its profile's project as ``owner_project_id``."""
    rows = AgentProfileRevision.objects.raw(_run_revision_sql(connection.alias), [RUN_LABEL, org_node, project_id])
    return next(iter(rows), None)


def revision_resolved(revision: AgentProfileRevision, *, org_node: str, project_slug: str = "") -> ResolvedProfile:
    """``revision`` (of a profile of ``org_node``) as the profile a call runs with."""
    content = profile_content(revision)
    return ResolvedProfile(
        org_node=org_node,
        **{**content, "allowed_tools": tuple(content["allowed_tools"]),
           "disallowed_tools": tuple(content["disallowed_tools"])},
        revision_id=revision.pk, revision_number=revision.number, project_slug=project_slug,
    )


def profile_override_create(*, profile: AgentProfile, project: Project,
                            author: AbstractBaseUser | None) -> AgentProfile:
    """``project``'s override of the console's ``profile``, starting as a copy of it (or the one it has)."""
    existing = AgentProfile.objects.filter(project=project, org_node=profile.org_node).first()
    if existing is not None:
        return existing
    override = AgentProfile(org_node=profile.org_node, project=project, **profile_content(profile))
    profile_save(profile=override, author=author, note=f"override for {project.slug}, copied from the console's")
    return override


def profile_override_remove(*, override: AgentProfile, by: AbstractBaseUser | None) -> None:
    """Remove a project's override: the project's calls use the console's profile again."""
    with transaction.atomic():
        audit_record(actor=by, action=AuditEntry.Action.AGENT_PROFILE_EDITED, object_type="agent_profile",
                     object_id=override.org_node, project=override.project, before=profile_content(override),
                     summary=f"Removed {override.project.slug}'s override of the {override.org_node} agent profile")
        override.delete()


def attempt_profile(*, execution: WorkNodeExecution, org_node: str, purpose: str) -> ResolvedProfile:
    """The profile an agent call of ``execution`` runs with, recorded on the attempt.

    The attempt's own call (a node's, a planning call) records its revision; a judge or classifier call
    records it only on an attempt that has none yet (a command node's judge). A node's own call records
    it with the attempt's result (graphs.engine.record), in the same UPDATE; the others at once.
    """
    run = execution.run
    profile = profile_resolve(org_node=org_node, project=run.task.project, pins=run.revision_pins)
    if profile.revision_id is not None and (purpose in ("node", "plan") or execution.profile_revision_id is None):
        if purpose != "node":
            WorkNodeExecution.objects.filter(pk=execution.pk).update(profile_revision_id=profile.revision_id)
        execution.profile_revision_id = profile.revision_id
    return profile
