"""Where agents would run unconfined, every signed-in page and ``check --deploy`` say so, and why; a
sandbox asked for that cannot run fails the call with the reason, never silently unconfined."""

from __future__ import annotations

import pytest
from django.urls import reverse

from graphs.agents import AgentCall, AgentError, ClaudeRunner
from graphs.workspaces.command_process import command_run
from graphs.workspaces.sandbox import sandbox_deploy_check
from tests.clients import signed_in
from tests.conftest import FAKE_CLAUDE
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db


def _pages(task, user) -> dict[str, str]:
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    client = signed_in(user)
    urls = [reverse("project_detail", args=[task.project.slug]), reverse("task_detail", args=[task.pk]),
            reverse("run_graph", args=[run.run_id]), reverse("run_planning", args=[run.run_id])]
    return {url: client.get(url).content.decode() for url in urls}


@pytest.mark.sandbox
def test_sandboxed_pages_carry_no_notice(task, alice, settings):
    settings.WORKGRAPH_SANDBOX = "bwrap"

    assert not [url for url, page in _pages(task, alice).items() if "agents-unconfined" in page]
    assert sandbox_deploy_check() == []


@pytest.mark.parametrize(("setting", "binary", "reason"), [
    ("none", "bwrap", "WORKGRAPH_SANDBOX is none"),
    ("auto", "/nowhere/bwrap", "bubblewrap (/nowhere/bwrap) is not installed"),
])
def test_unconfined_agents_are_named_on_every_page_and_by_the_deploy_check(task, alice, settings, setting, binary,
                                                                          reason):
    settings.WORKGRAPH_SANDBOX, settings.WORKGRAPH_BWRAP_BIN = setting, binary

    pages = _pages(task, alice)
    [warning] = sandbox_deploy_check()

    assert all('id="agents-unconfined"' in page and reason in page for page in pages.values()), list(pages)
    assert warning.id == "workgraph.W001" and reason in warning.msg


def test_the_sign_in_page_says_nothing_of_the_sandbox(client, settings):
    settings.WORKGRAPH_SANDBOX = "none"

    assert "agents-unconfined" not in client.get(reverse("login")).content.decode()


def test_a_sandbox_asked_for_that_cannot_run_fails_every_call_with_the_reason(settings, tmp_path):
    settings.WORKGRAPH_SANDBOX, settings.WORKGRAPH_BWRAP_BIN = "bwrap", "/nowhere/bwrap"

    with pytest.raises(AgentError) as caught:
        ClaudeRunner(bin=str(FAKE_CLAUDE)).run(AgentCall(org_node="coder", prompt="hi", cwd=tmp_path, timeout=10))
    command = command_run(["true"], cwd=tmp_path, timeout=10, env={"PATH": "/usr/bin:/bin"}, output_max_bytes=1024,
                          on_output=lambda stream, text: None)

    assert caught.value.kind == "sandbox" and not caught.value.transient
    assert "bubblewrap (/nowhere/bwrap) is not installed" in str(caught.value)
    assert command.exit_code is None
    assert "the sandbox cannot run: bubblewrap (/nowhere/bwrap) is not installed" in command.start_error
