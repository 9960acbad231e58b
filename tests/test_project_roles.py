"""What each role in a project may do, and a user's role in one (graphs.projects.roles)."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser

from graphs.projects.roles import ACTIONS, project_role
from tests import factories


def test_a_members_role_is_the_one_their_membership_names(project, alice, bob):
    assert project_role(alice, project.pk) == "lead"
    assert project_role(bob, project.pk) == "reviewer"


def test_a_stranger_and_a_visitor_have_no_role(project, charlie):
    assert project_role(charlie, project.pk) is None
    assert project_role(AnonymousUser(), project.pk) is None


def test_a_role_in_another_project_is_no_role_in_this_one(project, alice):
    other = factories.ProjectFactory()

    assert project_role(alice, other.pk) is None


def test_a_viewer_reads_a_reviewer_also_reviews_plans_and_changes_and_only_a_lead_changes_anything():
    may = {role: {action for action, roles in ACTIONS.items() if role in roles}
           for role in ("viewer", "reviewer", "lead")}

    assert may["viewer"] == {"read"}
    assert may["reviewer"] == {"read", "review_plan", "review_change"}
    assert may["lead"] == set(ACTIONS)
