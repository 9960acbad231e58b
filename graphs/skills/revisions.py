"""Saving a skill, each change of its content kept as a ``SkillRevision``, and the diff of two revisions.

Every change of a skill goes through ``skill_save``, which re-parses the team template and keeps a
``SkillRevision`` of every field its editor changes; the console pages, the Django admin and
``import_skills`` all call it. An editor names the revision it was made on: a save over a newer one is
a ``RevisionConflict`` and saves nothing.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from graphs.domain.revision_conflicts import revision_conflict_check
from graphs.domain.text_diffs import DiffLine, revisions_diff
from graphs.models import Skill, SkillRevision
from graphs.skills.templates import team_template_parse

# What a revision copies of its skill, and what makes two revisions differ.
CONTENT_FIELDS = ("name", "description", "owner_org_node", "body")
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
    with transaction.atomic():
        if skill.pk is not None:
            # Serializes revision numbering, and the conflict check, between concurrent saves of the skill.
            Skill.objects.select_for_update().filter(pk=skill.pk).first()
        latest = skill.revisions.order_by("-number").first() if skill.pk is not None else None
        content = skill_content(skill)
        revision_conflict_check(
            base=base_revision, latest=latest.number if latest else 0,
            theirs=skill_fields_text(skill_content(latest)) if latest else {},
            yours=skill_fields_text(content),
        )
        if skill.pk is not None:
            skill.save(update_fields=_SAVED_FIELDS)
        else:
            skill.save()
        if latest is not None and skill_content(latest) == content:
            return None
        return SkillRevision.objects.create(
            skill=skill, number=(latest.number + 1) if latest else 1, **content,
            git_commit_sha=git_commit_sha, author=author if author and author.is_authenticated else None,
            note=note,
        )


def skill_content(source: Skill | SkillRevision) -> dict[str, str]:
    """The content fields of a skill or a revision, as a revision stores them."""
    return {name: getattr(source, name) for name in CONTENT_FIELDS}


def skill_fields_text(content: dict[str, str]) -> dict[str, str]:
    """A skill's content as text by the label its editor gives each field."""
    return {"Name": content["name"], "Description": content["description"],
            "Owner org node": content["owner_org_node"], "Body": content["body"]}


def skill_text(source: Skill | SkillRevision) -> str:
    """A revision as the lines its diff compares: one line a field, then the body."""
    content = skill_content(source)
    return "\n".join([
        f"name: {content['name']}",
        f"description: {' '.join(content['description'].split())}",
        f"owner org node: {content['owner_org_node'] or '—'}",
        "", "body:", content["body"],
    ])


def skill_revisions_diff(*, old: SkillRevision, new: SkillRevision) -> list[DiffLine]:
    """A unified diff from ``old`` to ``new``, fields and body, for the page to render escaped."""
    return revisions_diff(old=skill_text(old), new=skill_text(new), old_number=old.number, new_number=new.number)
