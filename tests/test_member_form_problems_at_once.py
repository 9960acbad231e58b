"""The members page names every problem of a member change at once — an unknown username beside a wrong role
when adding one, a wrong role beside someone who is no member when changing one — the same fields with the
same messages the members API names for the same input, and changes nothing."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse

from graphs.models import ProjectMembership
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


def members_now(project) -> list[tuple[str, str]]:
    return list(ProjectMembership.objects.filter(project=project).values_list("user__username", "role")
                .order_by("user__username"))


def page_problems(response) -> dict[str, str]:
    """Each field the add form marks as wrong, with its message as the page shows it."""
    form = re.search(r'<form [^>]*id="member-add".*?</form>', response.content.decode(), re.S).group(0)
    return {name: html.unescape(message)
            for name, message in re.findall(r'<p class="error" id="error-([a-z_]+)">(.*?)</p>', form, re.S)}


def page_notices(response) -> list[str]:
    return [html.unescape(text) for text in re.findall(r'<li class="message error">(.*?)</li>',
                                                       response.content.decode(), re.S)]


def api_problems(response) -> dict[str, str]:
    return {problem["field"]: problem["message"] for problem in response.json()["fields"]}


def through_api(client, method: str, url: str, body: dict):
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


def test_adding_an_unknown_user_in_a_wrong_role_names_both_on_the_page_as_the_api_does(project, alice):
    client = signed_in(alice)
    typed = {"username": "nobody", "role": "owner"}
    before = members_now(project)

    page = client.post(reverse("project_members", args=[project.slug]), typed)
    api = through_api(client, "post", f"/api/projects/{project.slug}/members", typed)

    assert (page.status_code, api.status_code, api.json()["code"]) == (400, 400, "invalid_member")
    assert api_problems(api) == {"username": "No active user is called 'nobody'.",
                                 "role": "A role is one of lead, reviewer, viewer."}
    assert page_problems(page) == api_problems(api)
    assert members_now(project) == before


def test_adding_a_member_twice_in_a_wrong_role_names_both(project, alice, bob):
    client = signed_in(alice)
    typed = {"username": "bob", "role": "admin"}

    page = client.post(reverse("project_members", args=[project.slug]), typed)
    api = through_api(client, "post", f"/api/projects/{project.slug}/members", typed)

    assert set(api_problems(api)) == {"username", "role"}
    assert "bob is a member already" in api_problems(api)["username"]
    assert page_problems(page) == api_problems(api)
    assert ProjectMembership.objects.get(project=project, user=bob).role == "reviewer"


def test_a_username_too_long_is_named_beside_the_role_on_the_page(project, alice):
    page = signed_in(alice).post(reverse("project_members", args=[project.slug]),
                                 {"username": "x" * 151, "role": "owner"})

    assert page_problems(page) == {"username": "A username has at most 150 characters and no NUL.",
                                   "role": "A role is one of lead, reviewer, viewer."}


def test_one_problem_keeps_its_own_code(project, alice):
    answer = through_api(signed_in(alice), "post", f"/api/projects/{project.slug}/members",
                         {"username": "nobody", "role": "viewer"})

    assert (answer.status_code, answer.json()["code"]) == (400, "unknown_user")
    assert api_problems(answer) == {"username": "No active user is called 'nobody'."}


def test_changing_the_role_of_someone_no_member_to_a_wrong_role_names_both(project, alice, charlie):
    client = signed_in(alice)
    before = members_now(project)

    page = client.post(reverse("project_member_change", args=[project.slug, "charlie"]),
                       {"action": "role", "role": "owner"}, follow=True)
    api = through_api(client, "patch", f"/api/projects/{project.slug}/members/charlie", {"role": "owner"})

    assert (api.status_code, api.json()["code"]) == (400, "invalid_member")
    assert api_problems(api) == {"role": "A role is one of lead, reviewer, viewer.",
                                 "username": f"'charlie' is not a member of {project.name}."}
    assert page_notices(page) == [api.json()["message"]]
    assert all(message in page_notices(page)[0] for message in api_problems(api).values())
    assert members_now(project) == before


def test_a_right_submission_still_adds_the_member(project, alice, charlie):
    answer = signed_in(alice).post(reverse("project_members", args=[project.slug]),
                                   {"username": "charlie", "role": "reviewer"})

    assert answer.status_code == 302
    assert ProjectMembership.objects.get(project=project, user=charlie).role == "reviewer"
