"""Who may do what in a project: the actions each role allows, and a user's role in one.

A viewer reads; a reviewer also approves or rejects plans and reviews changes; a lead also creates tasks
and plans, starts, cancels and forks runs, raises a stopped run's budget, delivers runs, imports DAG specs,
edits the project, manages its members and reads its audit log. The console's permission checks
(console.permissions), the inbox and the engine's own refusals read the same table.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from graphs.models import ProjectMembership

Role = ProjectMembership.Role

ACTIONS: dict[str, frozenset[str]] = {
    "read": frozenset({Role.VIEWER, Role.REVIEWER, Role.LEAD}),
    "review_plan": frozenset({Role.REVIEWER, Role.LEAD}),
    # Approving an attempt's change, asking for changes to it or commenting on its lines.
    "review_change": frozenset({Role.REVIEWER, Role.LEAD}),
    "create_task": frozenset({Role.LEAD}),
    "plan": frozenset({Role.LEAD}),
    "start_run": frozenset({Role.LEAD}),
    "cancel_run": frozenset({Role.LEAD}),
    "fork_run": frozenset({Role.LEAD}),
    # Spending more than the run was given is the lead's decision, as starting it was.
    "raise_budget": frozenset({Role.LEAD}),
    # An imported spec creates a task and a planned run at once: what a lead does by hand.
    "import_dag_spec": frozenset({Role.LEAD}),
    # A path on the machine the agents run on: it tells others nothing they need.
    "see_target_folder": frozenset({Role.LEAD}),
    "edit_project": frozenset({Role.LEAD}),
    # Pushing a run's branch and opening its pull request, again or for the first time, speaks for the project.
    "deliver": frozenset({Role.LEAD}),
    "manage_members": frozenset({Role.LEAD}),
    # What the project's experiments measure skills against: the lead's to choose, every member's to read.
    "edit_datasets": frozenset({Role.LEAD}),
    "run_experiments": frozenset({Role.LEAD}),
    # Who decided what in the project: its leads (and the console's administrators, who read every log).
    "read_audit": frozenset({Role.LEAD}),
}


def project_role(user: AbstractBaseUser, project_id: Any) -> str | None:
    """Return the user's role in the project, or None when they are not a member."""
    if not user.is_authenticated:
        return None
    return (
        ProjectMembership.objects.filter(user=user, project_id=project_id).values_list("role", flat=True).first()
    )
