"""Demo data for the embedded console: one project, one lead, one task. Safe to load repeatedly."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import transaction

from graphs.models import Project, ProjectMembership, Task

DEMO_USERNAME = "demo"
DEMO_PROJECT_SLUG = "demo"
DEMO_TASK_TITLE = "CSV export for the reports page"


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str
    created: bool


@transaction.atomic
def demo_data_load(*, password: str) -> DemoLogin:
    """Create (or refresh) the demo login, project and task; return the login to print."""
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(
        username=DEMO_USERNAME, defaults={"email": "demo@example.test", "is_staff": True, "is_superuser": True}
    )
    user.set_password(password)
    user.save(update_fields=["password"])
    user.user_permissions.add(Permission.objects.get(codename="manage_skills"))

    target = Path(settings.VAR_DIR) / "demo-project"
    target.mkdir(parents=True, exist_ok=True)
    project, _ = Project.objects.get_or_create(
        slug=DEMO_PROJECT_SLUG, defaults={"name": "Demo project", "target_folder": str(target)}
    )
    ProjectMembership.objects.get_or_create(
        user=user, project=project, defaults={"role": ProjectMembership.Role.LEAD}
    )
    Task.objects.get_or_create(
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
    return DemoLogin(username=user.username, password=password, created=created)
