"""Saving a skill, each change of its content kept as a ``SkillRevision``, and the diff of two revisions.

Every change of a skill goes through ``skill_save``, which re-parses the team template and keeps a
``SkillRevision`` of every field its editor changes; the console pages, the Django admin and
``import_skills`` all call it. An editor names the revision it was made on: a save over a newer one is
a ``RevisionConflict`` and saves nothing. Numbering, diffs, conflicts and labels are ``graphs.revisions``';
this module keeps what only a skill has: its fields, its team template and the git commit a revision names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from graphs.audit import audit_record, audit_revision
from graphs.domain.revisions import Content, DiffLine, RevisionField, revision_content, revisions_diff
from graphs.models import AuditEntry, Skill, SkillRevision
from graphs.revisions import revision_for_runs, revision_label_move, revision_pinned, revision_save
from graphs.skills.team_templates import team_template_parse

# What a revision copies of its skill, in its editor's order.
FIELDS = (
    RevisionField(name="name", label="Name", line="name"),
    RevisionField(name="description", label="Description", line="description"),
    RevisionField(name="owner_org_node", label="Owner org node", line="owner org node", empty="—"),
    RevisionField(name="body", label="Body", line="body", block=True),
)
# What skill_save writes to an existing skill. Status moves only through skill_status_change, and the
# engine flags defects concurrently: a skill loaded before either happened must not write them back.
_SAVED_FIELDS = [
    "name", "description", "owner_org_node", "file_path", "source", "current_git_commit_sha", "body",
    "team_template", "template_warnings", "updated_at",
]


def skill_save(
    *, skill: Skill, body: str, author: AbstractBaseUser | None, note: str = "", git_commit_sha: str = "",
    base_revision: int | None = None,
) -> SkillRevision | None:
    """Save ``skill`` (new or existing; name, description, owner and source as the caller set them) with ``body``.

    The team template is parsed again every time. A revision is created when the content (name,
    description, owner, body) differs from the latest revision's, or when the skill has none yet;
    returns it, or None when nothing changed. ``base_revision`` is the revision an editor was opened on
    (0: none yet): when a newer one exists, raises ``RevisionConflict`` and saves nothing.
    """
    # Browsers send textarea lines ending in CRLF; unnormalized, every save would look like a change.
    body = body.replace("\r\n", "\n")
    skill.description = skill.description.replace("\r\n", "\n")
    parsed = team_template_parse(body)
    skill.body = body
    skill.team_template = parsed.template
    skill.template_warnings = parsed.warnings
    if git_commit_sha:
        skill.current_git_commit_sha = git_commit_sha

    def write() -> None:
        if skill.pk is not None:
            skill.save(update_fields=_SAVED_FIELDS)
        else:
            skill.save()

    def create(number: int, content: Content) -> SkillRevision:
        return SkillRevision.objects.create(
            skill=skill, number=number, **content, git_commit_sha=git_commit_sha,
            author=author if author and author.is_authenticated else None, note=note,
        )

    def audit(revision: SkillRevision, before: Content | None, after: Content) -> None:
        audit_revision(actor=author, action=AuditEntry.Action.SKILL_EDITED, object_type="skill",
                       object_id=skill.skill_id, what=f"the skill {skill.skill_id}", number=revision.number,
                       before=before, after=after, note=note)

    return revision_save(record=skill, fields=FIELDS, base_revision=base_revision, record_write=write,
                         revision_create=create, revision_audit=audit)


def skill_content(source: Skill | SkillRevision) -> Content:
    """The content fields of a skill or a revision, as a revision stores them."""
    return revision_content(fields=FIELDS, source=source)


def skill_revisions_diff(*, old: SkillRevision, new: SkillRevision) -> list[DiffLine]:
    """A unified diff from ``old`` to ``new``, fields and body, for the page to render escaped."""
    return revisions_diff(fields=FIELDS, old=skill_content(old), new=skill_content(new), old_number=old.number,
                          new_number=new.number)


def skill_template_for_runs(skill: Skill, *, pinned: int | None = None) -> tuple[int | None, dict[str, Any] | None]:
    """The revision of ``skill`` runs of tasks plan with — its ``production`` revision, else its newest; revision
    ``pinned`` when a run pins one (an experiment's) — as its number and the team template its body embeds
    (None: none). A skill with no revision yet (saved around ``skill_save``) answers None and its own template."""
    revision = revision_pinned(record=skill, ref=pinned) if pinned is not None else revision_for_runs(skill)
    if revision is None:
        return None, skill.team_template
    # The newest revision's body is the skill's own, whose template skill_save parsed already.
    if revision.body == skill.body:
        return revision.number, skill.team_template
    return revision.number, team_template_parse(revision.body).template


def skill_label_move(*, skill: Skill, label: str, number: int, by: AbstractBaseUser | None,
                     details: Mapping[str, Any] | None = None) -> int | None:
    """Give ``label`` to revision ``number`` of ``skill`` (``graphs.revisions.revision_label_move``), recorded
    in the audit log with ``details`` (what justified the move); returns the number that had it."""

    def audit(before: int | None, after: int) -> None:
        was = f" (it was on revision {before})" if before is not None else ""
        audit_record(actor=by, action=AuditEntry.Action.SKILL_LABEL_MOVED, object_type="skill",
                     object_id=skill.skill_id, before={"label": label, "revision": before},
                     after={"label": label, "revision": after, **(details or {})},
                     summary=f"Labelled revision {after} of the skill {skill.skill_id} {label}{was}")

    return revision_label_move(record=skill, label=label, number=number, by=by, label_audit=audit)
