"""The project page's Check the agent button: a lead's POST checks the project's runner and the page says
what was found; others neither see the button nor may post."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.clients import signed_in
from tests.standins.anthropic_api import error, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def claude_project(project, real_claude):
    project.agent = "claude"
    project.save(update_fields=["agent"])
    return project


@pytest.mark.sandbox
def test_a_lead_checks_the_agent_and_reads_the_words_on_the_project_page(claude_project, alice, real_claude):
    client = signed_in(alice)
    page = client.get(reverse("project_detail", args=[claude_project.slug]))
    assert b'id="agent-check-button"' in page.content

    real_claude.script = lambda _request: text("ready")
    answer = client.post(reverse("project_agent_check", args=[claude_project.slug]), follow=True)
    assert answer.redirect_chain[-1][0] == reverse("project_detail", args=[claude_project.slug])
    assert "Check the agent: The claude agent, version 2.1.332 (Claude Code), works: it answered " \
           "\N{LEFT DOUBLE QUOTATION MARK}ready\N{RIGHT DOUBLE QUOTATION MARK}." in answer.content.decode()

    real_claude.script = lambda _request: error(401, "authentication_error", "invalid x-api-key")
    answer = client.post(reverse("project_agent_check", args=[claude_project.slug]), follow=True)
    assert "The API refused the agent&#x27;s credentials" in answer.content.decode()


def test_a_reviewer_sees_no_button_and_may_not_check(project, bob, scripted_runner):
    client = signed_in(bob)
    page = client.get(reverse("project_detail", args=[project.slug]))
    assert b"agent-check-button" not in page.content

    assert client.post(reverse("project_agent_check", args=[project.slug])).status_code == 403
    assert scripted_runner.calls == []


def test_a_stranger_gets_not_found_and_a_get_is_refused(project, alice, charlie):
    assert signed_in(charlie).post(reverse("project_agent_check", args=[project.slug])).status_code == 404
    assert signed_in(alice).get(reverse("project_agent_check", args=[project.slug])).status_code == 405
