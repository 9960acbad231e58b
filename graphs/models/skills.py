"""Skills: the instruction documents agents run with, their revisions, and the labels a revision carries (the
label model agent profiles share)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from graphs.domain.revisions import LABELS


class Skill(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        ACTIVE = "active", "Active"
        DEPRECATED = "deprecated", "Deprecated"

    class Source(models.TextChoices):
        CONSOLE = "console", "Written in the console"
        IMPORT = "import", "Imported from a folder"

    skill_id = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    owner_org_node = models.CharField(max_length=100, blank=True, db_index=True)
    file_path = models.CharField(max_length=1000, blank=True)
    current_git_commit_sha = models.CharField(max_length=40, blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CONSOLE)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT, db_index=True)
    status_reason = models.TextField(blank=True)
    body = models.TextField(blank=True)
    team_template = models.JSONField(null=True, blank=True)
    template_warnings = models.JSONField(default=list, blank=True)
    defect_reported_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when a validator named this skill as the root cause of a failure."
    )
    defect_note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["skill_id"]
        permissions = [("manage_skills", "Can manage skills")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["draft", "active", "deprecated"]), name="skill_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.skill_id


class SkillRevision(models.Model):
    """A skill's content as one save left it: every field its editor changes, so that a save made on an
    older revision is seen as one (graphs.skills.revisions)."""

    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    name = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    owner_org_node = models.CharField(max_length=100, blank=True)
    body = models.TextField()
    git_commit_sha = models.CharField(max_length=40, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["skill", "number"]
        constraints = [
            models.UniqueConstraint(fields=["skill", "number"], name="skill_revision_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.skill_id} r{self.number}"


class RevisionLabel(models.Model):
    """A label (``production``, ``staging``) one revision of a record carries: one revision per label, moved
    only through graphs.revisions.revision_label_move. Each kind of record's label model adds its foreign keys
    to the record and to the revision, and ``label_constraints`` in its ``Meta``."""

    label = models.CharField(max_length=16, choices=[(label, label) for label in LABELS])
    moved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    moved_at = models.DateTimeField()

    class Meta:
        abstract = True


def label_constraints(owner: str, name: str) -> list[models.BaseConstraint]:
    """A label model's constraints: one revision per label of each ``owner``, and only the labels of LABELS;
    named ``<name>_unique`` and ``<name>_valid``."""
    return [
        models.UniqueConstraint(fields=[owner, "label"], name=f"{name}_unique"),
        models.CheckConstraint(condition=Q(label__in=LABELS), name=f"{name}_valid"),
    ]


class SkillLabel(RevisionLabel):
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="labels")
    revision = models.ForeignKey(SkillRevision, on_delete=models.CASCADE, related_name="labels")

    class Meta:
        ordering = ["skill", "label"]
        constraints = label_constraints("skill", "skill_label")

    def __str__(self) -> str:
        return f"{self.skill_id} {self.label}"
