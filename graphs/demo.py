"""Demo data for the embedded console: one project, one lead, two tasks and two skills. Safe to load
repeatedly."""

from __future__ import annotations

import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Permission
from django.db import transaction

from graphs.engine import pipeline_start
from graphs.executors import InlineExecutor, executor_set
from graphs.models import Project, ProjectMembership, Skill, Task
from graphs.skills.revisions import skill_save
from graphs.skills.statuses import skill_status_change
from graphs.skills.team_templates import TEMPLATE_EXAMPLE

DEMO_USERNAME = "demo"
# The documented login of `make run`, which turns DEBUG on; without DEBUG a random password is made.
DEMO_DEBUG_PASSWORD = "workgraph-demo"  # noqa: S105
DEMO_PROJECT_SLUG = "demo"
DEMO_TASK_TITLE = "CSV export for the reports page"
DEMO_WAITING_TASK_TITLE = "Audit log for account changes"
# The demo task's deliverable and its unit tests, copied into the demo project's folder: the offline
# validator's test script runs those tests, so the demo's verdict rests on tests that ran.
DEMO_PROJECT_FILES = Path(__file__).resolve().parent / "demo_project"
# Two skills an admin can open at once: plain guidance, and one whose team template guides a plan.
DEMO_SKILLS = (
    {
        "skill_id": "csv-exports",
        "name": "CSV exports",
        "description": "How this codebase writes CSV files users download",
        "owner_org_node": "coder",
        "body": "# CSV exports\n\n- Stream rows; never build the whole file in memory.\n"
                "- Write a header row, UTF-8 with a BOM so spreadsheets read accents.\n"
                "- Dates in UTC, ISO 8601.\n",
    },
    {
        "skill_id": "sourced-research",
        "name": "Sourced research",
        "description": "Answer a question from official figures, each with its source",
        "owner_org_node": "planner",
        "body": "# Sourced research\n\nCollect first, then write; every figure cites where it came from.\n\n"
                + TEMPLATE_EXAMPLE + "\n",
    },
)


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str | None  # None: the login existed and kept the password it had
    created: bool


@transaction.atomic
def demo_data_load(*, password: str | None) -> tuple[DemoLogin, Task]:
    """Create (or refresh) the demo login, project and tasks; return the login and the task to run.

    The login gets ``password``; with None, a new login gets a random one and an existing login keeps
    its own.
    """
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(
        username=DEMO_USERNAME, defaults={"email": "demo@example.test", "is_staff": True, "is_superuser": True}
    )
    if password is None and created:
        password = secrets.token_urlsafe(16)
    # Setting the same password again would still change its hash, and so revoke the login's tokens.
    if password is not None and not user.check_password(password):
        user.set_password(password)
        user.save(update_fields=["password"])
    user.user_permissions.add(Permission.objects.get(codename="manage_skills"))

    target = Path(settings.VAR_DIR) / "demo-project"
    target.mkdir(parents=True, exist_ok=True)
    demo_project_files_copy(target)
    # The demo's validator runs its test script (a command node), so the project allows commands; a
    # project an earlier version created keeps its setting, as an admin may have chosen it.
    project, _ = Project.objects.get_or_create(
        slug=DEMO_PROJECT_SLUG,
        defaults={"name": "Demo project", "target_folder": str(target), "allow_commands": True},
    )
    ProjectMembership.objects.get_or_create(
        user=user, project=project, defaults={"role": ProjectMembership.Role.LEAD}
    )
    finished_task, _ = Task.objects.get_or_create(
        project=project,
        title=DEMO_TASK_TITLE,
        defaults={
            "goal_text": "Let users export the reports table as a CSV file from the reports page.",
            "deliverables": ["An 'Export CSV' button on the reports page", "A CSV download endpoint"],
            "acceptance_criteria": [
                "The file opens in a spreadsheet with one row per report",
                "Filters on the page apply to the export",
            ],
            "constraints": ["No new runtime dependencies", "Exports over 10,000 rows stream"],
            "resources": ["reports/views.py"],
            "created_by": user,
        },
    )
    Task.objects.get_or_create(
        project=project,
        title=DEMO_WAITING_TASK_TITLE,
        defaults={
            "goal_text": "Record who changed which account setting, when, and show it to account admins.",
            "deliverables": ["An audit-log table", "An 'Activity' tab on the account page"],
            "acceptance_criteria": ["Every settings change appears within a second", "Entries cannot be edited"],
            "constraints": ["Keep a year of history"],
            "created_by": user,
        },
    )
    _demo_skills(author=user)
    return DemoLogin(username=user.username, password=password, created=created), finished_task


def demo_project_files_copy(target: Path) -> list[Path]:
    """Copy the demo project's files into ``target``, only those missing there: what someone changed
    in the folder stays. Return the files copied."""
    copied = []
    for source in sorted(DEMO_PROJECT_FILES.rglob("*")):
        if not source.is_file() or "__pycache__" in source.parts:
            continue
        destination = target / source.relative_to(DEMO_PROJECT_FILES)
        if destination.exists():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
        copied.append(destination)
    return copied


def _demo_skills(*, author: AbstractBaseUser) -> None:
    for fields in DEMO_SKILLS:
        if Skill.objects.filter(skill_id=fields["skill_id"]).exists():
            continue  # an admin may have edited it since; the demo never writes over their work
        skill = Skill(skill_id=fields["skill_id"], name=fields["name"], description=fields["description"],
                      owner_org_node=fields["owner_org_node"])
        skill_save(skill=skill, body=fields["body"], author=author, note="demo skill")
        skill_status_change(skill=skill, status=Skill.Status.ACTIVE, reason="ready to use in the demo", by=author)


def demo_pipeline_run(*, task: Task) -> None:
    """Run the offline pipeline for ``task`` in this thread, once, so the demo opens on a finished run."""
    if task.runs.exists():
        return
    executor = InlineExecutor()
    previous = executor_set(executor)
    try:
        pipeline_start(task=task)
        executor.drain()
    finally:
        executor_set(previous)
