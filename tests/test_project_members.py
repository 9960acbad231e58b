"""A project's members, changed by username and role; a project always keeps a lead."""

from __future__ import annotations

import pytest

from graphs.models import ProjectMembership
from graphs.projects.members import MemberRefused, member_add, member_remove, member_role_set, project_members
from tests import factories

pytestmark = pytest.mark.django_db


def refused(call, **kwargs) -> str:
    with pytest.raises(MemberRefused) as raised:
        call(**kwargs)
    return raised.value.code


def test_members_are_listed_leads_first(project, alice, bob):
    factories.member(project, "aaron", role="viewer")

    assert [(m.user.username, m.role) for m in project_members(project)] == [
        ("alice", "lead"), ("bob", "reviewer"), ("aaron", "viewer")]


def test_a_user_is_added_by_username_given_a_role_and_removed(project, alice, charlie):
    member_add(project=project, username="charlie", role="reviewer")
    member_role_set(project=project, username="charlie", role="lead")
    assert ProjectMembership.objects.get(project=project, user=charlie).role == "lead"

    member_remove(project=project, username="charlie")
    assert not ProjectMembership.objects.filter(project=project, user=charlie).exists()


@pytest.mark.parametrize(("username", "role", "code"), [
    ("nobody", "viewer", "unknown_user"),
    ("charlie", "owner", "bad_role"),
    ("bob", "viewer", "already_member"),
    ("x\x00", "viewer", "unknown_user"),
    ("x" * 151, "viewer", "unknown_user"),
])
def test_a_failing_add_is_refused_with_its_reason_and_changes_nothing(project, alice, bob, charlie, username, role,
                                                                       code):
    before = list(ProjectMembership.objects.values_list("user__username", "role").order_by("pk"))

    assert refused(member_add, project=project, username=username, role=role) == code
    assert list(ProjectMembership.objects.values_list("user__username", "role").order_by("pk")) == before


def test_an_inactive_user_cannot_be_added(project, alice):
    factories.UserFactory(username="eve", is_active=False)

    assert refused(member_add, project=project, username="eve", role="viewer") == "unknown_user"


def test_the_last_lead_can_be_neither_removed_nor_demoted(project, alice, bob):
    assert refused(member_remove, project=project, username="alice") == "last_lead"
    assert refused(member_role_set, project=project, username="alice", role="viewer") == "last_lead"
    assert ProjectMembership.objects.get(project=project, user=alice).role == "lead"


def test_a_lead_may_step_down_once_another_leads(project, alice, bob):
    member_role_set(project=project, username="bob", role="lead")
    member_remove(project=project, username="alice")

    assert list(ProjectMembership.objects.filter(project=project).values_list("user__username", "role")) == [
        ("bob", "lead")]


def test_changing_someone_who_is_not_a_member_says_so(project, alice, charlie):
    assert refused(member_role_set, project=project, username="charlie", role="viewer") == "not_member"
    assert refused(member_remove, project=project, username="charlie") == "not_member"
