"""Import and export of skill folders: ``<skill_id>/SKILL.md`` with YAML front matter, and the git
commit that holds them."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db.models import QuerySet

from graphs.errors import WorkGraphError
from graphs.models import Skill
from graphs.skills.revisions import skill_save
from graphs.workspaces.git import git_env, safe_config_argv

SKILL_FILE = "SKILL.md"
_GIT_TIMEOUT_SECONDS = 10


class SkillFileError(WorkGraphError):
    """A SKILL.md that cannot be imported (unreadable, or broken front matter)."""


@dataclass
class SkillImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    git_commit_sha: str = ""
    # The team-template warnings of each imported skill that has any, as its editor would show them.
    warnings: dict[str, list[str]] = field(default_factory=dict)


def skills_import(*, folder: Path, author: AbstractBaseUser | None = None) -> SkillImportReport:
    """Import every ``<skill_id>/SKILL.md`` under ``folder``.

    Front matter may set ``name``, ``description`` and ``owner``; the rest of the file is the body.
    When ``folder`` is in a git repository its HEAD commit is recorded on the skills and revisions.
    A revision is created only when a body changed; a skill whose body and front matter are as
    stored is reported unchanged. New skills start as drafts.
    """
    report = SkillImportReport(git_commit_sha=_git_head(folder))
    for directory in sorted(path for path in folder.iterdir() if path.is_dir()):
        path = directory / SKILL_FILE
        if not path.is_file():
            continue
        try:
            validate_slug(directory.name)
            meta, body = _skill_file_read(path)
        except ValidationError:
            report.skipped.append(f"{directory.name}: not a valid skill id (letters, digits, - and _ only)")
            continue
        except SkillFileError as error:
            report.skipped.append(f"{directory.name}: {error}")
            continue
        outcome, warnings = _skill_import_one(
            skill_id=directory.name, meta=meta, body=body, path=path, commit=report.git_commit_sha, author=author
        )
        getattr(report, outcome).append(directory.name)
        if warnings:
            report.warnings[directory.name] = warnings
    return report


def skills_export(*, folder: Path, skills: QuerySet[Skill] | None = None) -> list[Path]:
    """Write each skill to ``folder/<skill_id>/SKILL.md`` (front matter, then the body); return the paths."""
    written = []
    for skill in skills if skills is not None else Skill.objects.order_by("skill_id"):
        path = folder / skill.skill_id / SKILL_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_skill_file_text(skill), encoding="utf-8")
        written.append(path)
    return written


def _skill_import_one(
    *, skill_id: str, meta: dict[str, str], body: str, path: Path, commit: str, author: AbstractBaseUser | None
) -> tuple[str, list[str]]:
    """Import one skill; return how (created, updated, unchanged) and its team-template warnings."""
    skill = Skill.objects.filter(skill_id=skill_id).first()
    created = skill is None
    if skill is None:
        skill = Skill(skill_id=skill_id, source=Skill.Source.IMPORT)
    latest = None if created else skill.revisions.order_by("-number").first()
    fields = {
        "name": meta.get("name", skill.name),
        "description": meta.get("description", skill.description),
        "owner_org_node": meta.get("owner", skill.owner_org_node),
    }
    meta_changed = any(getattr(skill, name) != value for name, value in fields.items())
    body_changed = latest is None or latest.body != body
    for name, value in fields.items():
        setattr(skill, name, value)
    skill.file_path = str(path.resolve())
    if not (created or meta_changed or body_changed):
        # Same content: only where it lives and which commit holds it may have moved.
        Skill.objects.filter(pk=skill.pk).update(
            file_path=skill.file_path, current_git_commit_sha=commit or skill.current_git_commit_sha
        )
        return "unchanged", list(skill.template_warnings)
    skill.source = Skill.Source.IMPORT
    skill_save(skill=skill, body=body, author=author, note=f"imported from {path}", git_commit_sha=commit)
    return ("created" if created else "updated"), list(skill.template_warnings)


def _skill_file_read(path: Path) -> tuple[dict[str, str], str]:
    try:
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError) as error:
        raise SkillFileError(f"cannot read {SKILL_FILE}: {error}") from error
    if not text.startswith("---\n"):
        return {}, text
    # A file holding only front matter may end right after its closing ---, without a newline.
    end = (text + "\n").find("\n---\n", 3)
    if end == -1:
        raise SkillFileError("the front matter opened with --- is never closed")
    try:
        meta = yaml.safe_load(text[4:end]) or {}
    except yaml.YAMLError as error:
        raise SkillFileError(f"the front matter is not valid YAML: {error}") from error
    if not isinstance(meta, dict):
        raise SkillFileError("the front matter must be a mapping of keys to values")
    values = {key: str(meta[key]) for key in ("name", "description", "owner") if meta.get(key) is not None}
    return values, text[end + len("\n---\n"):].lstrip("\n")


def _skill_file_text(skill: Skill) -> str:
    meta = {
        key: value
        for key, value in (("name", skill.name), ("description", skill.description), ("owner", skill.owner_org_node))
        if value
    }
    if not meta:
        return skill.body
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1_000)
    return f"---\n{front}---\n\n{skill.body}"


def _git_head(folder: Path) -> str:
    """The HEAD commit of the git repository holding ``folder``, or "" when there is none."""
    try:
        result = subprocess.run(
            ["git", *safe_config_argv(), "-C", str(folder), "rev-parse", "--verify", "--quiet", "HEAD"],
            capture_output=True, text=True, env=git_env(), timeout=_GIT_TIMEOUT_SECONDS, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    sha = result.stdout.strip()
    return sha if result.returncode == 0 and len(sha) == 40 else ""
