"""Skills: saving with revisions, status transitions, team-template parsing, usage, import and export.

A skill body may embed one fenced block tagged ``team-template`` (or the seed runtime's
``beaver-team-template``) holding ``{"version": 1, "nodes": [...]}``. Parsing never fails the skill:
a body without the block has no template; a broken block leaves no template and a warning the admin sees.

Every change of a skill's body goes through ``skill_save``, which re-parses the template and keeps a
``SkillRevision``; the console pages, the Django admin and ``import_skills`` all call it.
"""

from __future__ import annotations

import difflib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from graphs.domain.markdown import fenced_blocks_find
from graphs.errors import InvalidTransitionError, WorkGraphError
from graphs.models import ProjectMembership, Skill, SkillRevision, Task, WorkGraphRun, WorkNodeExecution
from graphs.runs.evidence import EVIDENCE_KINDS
from graphs.workspaces.git import git_env, safe_config_argv

# The seed runtime's own tag is read too, so its skills import unchanged.
TEMPLATE_TAGS = ("team-template", "beaver-team-template")
TEMPLATE_VERSION = 1
# A template is a few levels deep; far deeper JSON only makes storing, showing and planning recurse.
TEMPLATE_MAX_JSON_DEPTH = 32
_TOO_DEEP = f"the team template nests deeper than {TEMPLATE_MAX_JSON_DEPTH} levels"
# The fields a template node (and a template-guided plan's node) may have, as the skill editor explains them.
TEMPLATE_NODE_FIELD_HELP = {
    "node_id": "a short readable id, unique in the template (required)",
    "task": "the worker's whole instructions: it sees only this text, the task and its dependencies' "
            "outputs (required)",
    "depends_on": "the node_ids whose output this node needs",
    "input_contract": "what the node reads",
    "output_contract": "what the node must produce",
    "requested_tools": "tools the worker may use, by their names in the tool registry below; planning "
                       "removes unknown and high-risk ones",
    "required_evidence": f"what the output must show before the node counts as done: {', '.join(EVIDENCE_KINDS)}",
    "validation_rules": "rules the output must respect",
    "constraints": "limits the worker must keep to",
    "required_for_completion": "false for a node the task can do without (default true)",
    "max_tool_iterations": "an upper bound on the worker's tool calls",
}
TEMPLATE_NODE_FIELDS = frozenset(TEMPLATE_NODE_FIELD_HELP)
# What the skill editor shows as a starting point; it parses without a warning (tests hold it to that).
TEMPLATE_EXAMPLE = """```team-template
{
  "version": 1,
  "nodes": [
    {"node_id": "collect", "task": "Collect the official figures the question needs, with their sources.",
     "requested_tools": ["web_search", "web_fetch"], "required_evidence": ["url"],
     "output_contract": "a table of figures, each with its source URL"},
    {"node_id": "report", "task": "Write the answer from the collected figures only.",
     "depends_on": ["collect"], "validation_rules": ["every figure cites its source"]}
  ]
}
```"""
# The risk levels of the tools a template-guided plan keeps; any other tool is removed.
PLANNABLE_TOOL_RISKS = frozenset({"low", "medium"})
# Template nodes are generic workers: a fixed role or agent identity is exactly what they replace.
ROLE_FIELDS = frozenset({"role", "agent", "agent_type", "subagent_type"})

# What skill_save writes to an existing skill. Status moves only through skill_status_change, and the
# engine flags defects concurrently: a skill loaded before either happened must not write them back.
_SAVED_FIELDS = [
    "name", "description", "owner_org_node", "file_path", "source", "current_git_commit_sha", "body",
    "team_template", "template_warnings", "updated_at",
]
SKILL_FILE = "SKILL.md"
_GIT_TIMEOUT_SECONDS = 10
USAGE_LIMIT = 200

_TRANSITIONS: dict[str, frozenset[str]] = {
    Skill.Status.DRAFT: frozenset({Skill.Status.ACTIVE}),
    Skill.Status.ACTIVE: frozenset({Skill.Status.DEPRECATED}),
    Skill.Status.DEPRECATED: frozenset({Skill.Status.ACTIVE}),
}


class SkillFileError(WorkGraphError):
    """A SKILL.md that cannot be imported (unreadable, or broken front matter)."""


# --- Team templates ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateParse:
    """The team template found in a skill body (None when there is none usable) and what was wrong."""

    template: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)


def team_template_parse(body: str) -> TemplateParse:
    """Find and check the body's ``team-template`` block; never raises.

    No block gives no template and no warning. Several blocks, invalid JSON or a wrong shape give no
    template and a warning saying which. A usable template may still carry warnings about fields
    planning will ignore or evidence it cannot check.
    """
    blocks = fenced_blocks_find(body, tags=TEMPLATE_TAGS)
    if not blocks:
        return TemplateParse(template=None)
    if len(blocks) > 1:
        return TemplateParse(
            template=None,
            warnings=[f"the skill has {len(blocks)} team-template blocks; a skill may hold one, so none is used"],
        )
    try:
        value = json.loads(blocks[0])
    except json.JSONDecodeError as error:
        return TemplateParse(
            template=None,
            warnings=[f"the team template is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"],
        )
    except RecursionError:  # nested deeper than the JSON parser itself goes
        return TemplateParse(template=None, warnings=[_TOO_DEEP])
    if _json_depth(value) > TEMPLATE_MAX_JSON_DEPTH:
        return TemplateParse(template=None, warnings=[_TOO_DEEP])
    errors = _template_shape_errors(value)
    if errors:
        return TemplateParse(template=None, warnings=errors)
    return TemplateParse(template=value, warnings=_template_notes(value))


def _json_depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (a scalar is 0), without recursing."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            if depth <= TEMPLATE_MAX_JSON_DEPTH:
                pending.extend((child, depth + 1) for child in children)
    return deepest


def _template_shape_errors(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [f"the team template must be a JSON object, not {_json_type(value)}"]
    errors = []
    version = value.get("version")
    if version != TEMPLATE_VERSION or isinstance(version, bool):
        errors.append(f"the team template needs \"version\": {TEMPLATE_VERSION} (found {json.dumps(version)})")
    nodes = value.get("nodes")
    if not isinstance(nodes, list) or not nodes:
        errors.append("the team template needs a non-empty \"nodes\" list")
        return errors
    ids: list[str] = []
    for index, node in enumerate(nodes):
        label = f"template node {index + 1}"
        if not isinstance(node, dict):
            errors.append(f"{label} must be a JSON object, not {_json_type(node)}")
            continue
        node_id, task = node.get("node_id"), node.get("task")
        if isinstance(node_id, str) and node_id.strip():
            label = f"template node {node_id!r}"
            if node_id in ids:
                errors.append(f"{label} is declared more than once")
            ids.append(node_id)
        else:
            errors.append(f"{label} needs a node_id string")
        if not (isinstance(task, str) and task.strip()):
            errors.append(f"{label} needs a task string")
        errors.extend(f"{label} has {name!r}; template nodes are generic workers, without roles or agents"
                      for name in sorted(ROLE_FIELDS & node.keys()))
        depends_on = node.get("depends_on", [])
        if not (isinstance(depends_on, list) and all(isinstance(dep, str) for dep in depends_on)):
            errors.append(f"{label}: depends_on must be a list of node_id strings")
    known = set(ids)
    for node in nodes:
        if isinstance(node, dict) and isinstance(node.get("depends_on"), list):
            errors.extend(f"template node {node.get('node_id')!r} depends on unknown node {dep!r}"
                          for dep in node["depends_on"] if isinstance(dep, str) and dep not in known)
    return errors


def _template_notes(template: dict[str, Any]) -> list[str]:
    notes = []
    for node in template["nodes"]:
        label = f"template node {node['node_id']!r}"
        notes.extend(f"{label}: field {name!r} is not a template field; planning ignores it"
                     for name in sorted(node.keys() - TEMPLATE_NODE_FIELDS))
        tools = node.get("requested_tools") or []
        registry = settings.WORKGRAPH_TOOL_REGISTRY
        for tool in tools if isinstance(tools, list) else [tools]:
            if tool not in registry:
                notes.append(f"{label}: tool {tool!r} is not in the tool registry; planning removes it")
            elif registry[tool] not in PLANNABLE_TOOL_RISKS:
                notes.append(f"{label}: tool {tool!r} is {registry[tool]} risk; planning removes it")
        required = node.get("required_evidence") or []
        notes.extend(f"{label}: evidence {kind!r} cannot be checked (use {', '.join(EVIDENCE_KINDS)})"
                     for kind in (required if isinstance(required, list) else [required])
                     if kind not in EVIDENCE_KINDS)
    return notes


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


# --- Saving and status ------------------------------------------------------------------------------


def skill_save(
    *, skill: Skill, body: str, author: AbstractBaseUser | None, note: str = "", git_commit_sha: str = ""
) -> SkillRevision | None:
    """Save ``skill`` (new or existing; name, description, owner and source as the caller set them) with ``body``.

    The team template is parsed again every time. A revision is created when the body differs from
    the latest revision's, or when the skill has none yet; returns it, or None when the body is as
    the latest revision has it.
    """
    # Browsers send textarea lines ending in CRLF; unnormalized, every save would look like a change.
    body = body.replace("\r\n", "\n")
    parsed = team_template_parse(body)
    skill.body = body
    skill.team_template = parsed.template
    skill.template_warnings = parsed.warnings
    if git_commit_sha:
        skill.current_git_commit_sha = git_commit_sha
    with transaction.atomic():
        if skill.pk is not None:
            # Serializes revision numbering between concurrent saves of the same skill.
            Skill.objects.select_for_update().filter(pk=skill.pk).first()
            skill.save(update_fields=_SAVED_FIELDS)
        else:
            skill.save()
        latest = skill.revisions.order_by("-number").first()
        if latest is not None and latest.body == body:
            return None
        return SkillRevision.objects.create(
            skill=skill, number=(latest.number + 1) if latest else 1, body=body,
            git_commit_sha=git_commit_sha, author=author if author and author.is_authenticated else None,
            note=note,
        )


def skill_status_change(*, skill: Skill, status: str, reason: str, by: AbstractBaseUser | None) -> Skill:
    """Move ``skill`` to ``status`` (draft → active → deprecated → active), recording why and who.

    Raises InvalidTransitionError naming both states for any other move, and WorkGraphError without
    a reason. The reason is kept on the skill; the move is also written to the skill's admin history.
    """
    reason = reason.strip()
    if not reason:
        raise WorkGraphError("say why the status changes")
    current = skill.status
    if status not in _TRANSITIONS.get(current, frozenset()):
        raise InvalidTransitionError(entity="skill", current=current, requested=status)
    moved = Skill.objects.filter(pk=skill.pk, status=current).update(status=status, status_reason=reason)
    if moved != 1:
        skill.refresh_from_db(fields=["status"])
        raise InvalidTransitionError(entity="skill", current=skill.status, requested=status)
    skill.refresh_from_db()
    if by is not None and by.is_authenticated:
        LogEntry.objects.log_actions(
            user_id=by.pk, queryset=[skill], action_flag=CHANGE,
            change_message=f"status {current} → {status}: {reason}", single_object=True,
        )
    return skill


def skill_allowed_statuses(skill: Skill) -> list[str]:
    """The statuses ``skill`` may move to from its current one."""
    return sorted(_TRANSITIONS.get(skill.status, frozenset()))


def skill_status_history(skill: Skill) -> QuerySet[LogEntry]:
    """The recorded status changes (and admin edits) of ``skill``, newest first."""
    return LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(Skill), object_id=str(skill.pk)
    ).select_related("user").order_by("-action_time")


# --- Reads for the pages ----------------------------------------------------------------------------


def skills_for_admin(*, status: str = "", owner: str = "", text: str = "") -> QuerySet[Skill]:
    """Skills matching the filters, each annotated with revision, execution and run counts."""
    executions = WorkNodeExecution.objects.filter(skill_ref=OuterRef("pk"))
    skills = Skill.objects.annotate(
        revision_count=_count_of(SkillRevision.objects.filter(skill=OuterRef("pk")), group="skill", column="pk"),
        execution_count=_count_of(executions, group="skill_ref", column="pk"),
        run_count=_count_of(executions, group="skill_ref", column="run", distinct=True),
    )
    if status:
        skills = skills.filter(status=status)
    if owner:
        skills = skills.filter(owner_org_node=owner)
    if text:
        skills = skills.filter(
            Q(skill_id__icontains=text) | Q(name__icontains=text) | Q(description__icontains=text)
            | Q(body__icontains=text)
        )
    return skills.order_by("skill_id")


def _count_of(rows: QuerySet, *, group: str, column: str, distinct: bool = False) -> Coalesce:
    # A correlated subquery per count: joining executions and revisions in one query would multiply rows.
    counts = rows.order_by().values(group).annotate(n=Count(column, distinct=distinct)).values("n")
    return Coalesce(Subquery(counts[:1], output_field=IntegerField()), 0)


def skill_owners() -> list[str]:
    """The distinct owner org nodes of all skills, for the list filter."""
    return list(
        Skill.objects.exclude(owner_org_node="").order_by("owner_org_node")
        .values_list("owner_org_node", flat=True).distinct()
    )


@dataclass(frozen=True)
class SkillUsage:
    """Where a skill was used, as far as the viewer may see: the node executions (newest first, at most
    ``USAGE_LIMIT``), runs and tasks of the viewer's projects, and how many of each other projects hold."""

    executions: list[WorkNodeExecution]
    execution_count: int
    runs: list[WorkGraphRun]
    tasks: list[Task]
    hidden_execution_count: int
    hidden_run_count: int
    hidden_task_count: int


def skill_usage(*, skill: Skill, viewer: AbstractBaseUser) -> SkillUsage:
    """The executions and runs that referenced ``skill`` and the tasks that chose it, in ``viewer``'s
    projects; of the others only their number (six queries).

    Managing skills is no project membership: titles and names of other projects stay hidden.
    """
    projects = ProjectMembership.objects.filter(user=viewer).values("project_id")
    executions = WorkNodeExecution.objects.filter(skill_ref=skill)
    runs = WorkGraphRun.objects.filter(pk__in=executions.values("run_id"))
    tasks = Task.objects.filter(skill=skill)
    execution_counts = _visible_counts(executions, Q(run__task__project__in=projects))
    run_counts = _visible_counts(runs, Q(task__project__in=projects))
    task_counts = _visible_counts(tasks, Q(project__in=projects))
    return SkillUsage(
        executions=list(
            executions.filter(run__task__project__in=projects).select_related("run__task__project")
            .order_by("-created_at")[:USAGE_LIMIT]
        ),
        execution_count=execution_counts["visible"],
        runs=list(runs.filter(task__project__in=projects).select_related("task__project").order_by("-created_at")),
        tasks=list(tasks.filter(project__in=projects).select_related("project").order_by("-created_at")[:USAGE_LIMIT]),
        hidden_execution_count=execution_counts["total"] - execution_counts["visible"],
        hidden_run_count=run_counts["total"] - run_counts["visible"],
        hidden_task_count=task_counts["total"] - task_counts["visible"],
    )


def _visible_counts(rows: QuerySet, visible: Q) -> dict[str, int]:
    return rows.aggregate(total=Count("pk"), visible=Count("pk", filter=visible))


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "header", "hunk", "add", "del" or "same"
    text: str


def skill_revisions_diff(*, old: SkillRevision, new: SkillRevision) -> list[DiffLine]:
    """A unified diff from ``old`` to ``new``, line by line, for the page to render escaped."""
    lines = difflib.unified_diff(
        old.body.splitlines(), new.body.splitlines(),
        fromfile=f"revision {old.number}", tofile=f"revision {new.number}", lineterm="",
    )
    return [DiffLine(kind=_diff_kind(line), text=line) for line in lines]


def _diff_kind(line: str) -> str:
    if line.startswith(("---", "+++")):
        return "header"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "same")


# --- Import and export ------------------------------------------------------------------------------


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
