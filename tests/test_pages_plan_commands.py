"""The planning page lists every command a plan runs, escaped, for a reviewer to see before approving it."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('x')</script>"


def _page(user, run) -> str:
    client = Client()
    client.force_login(user)
    return client.get(f"/runs/{run.run_id}/planning/").content.decode()


def _plan_with_commands(task):
    nodes = [
        {"node_id": "tests", "depends_on": [], "command": ["sh", "-c", f"echo {SCRIPT}"], "timeout_seconds": 90},
        node("impl", judgment={"kind": "command", "command": ["python3", "<b>check</b>.py"]}),
        node("docs"),
    ]
    return planned_run(task, {"nodes": nodes, "edges": []}, status="awaiting_approval")


def test_a_reviewer_sees_each_command_of_the_plan_before_approving_it(bob, task, commands_allowed, settings):
    settings.WORKGRAPH_COMMAND_TIMEOUT = 600
    page = _page(bob, _plan_with_commands(task))

    assert page.index("Commands this plan runs") < page.index('data-action="approve"')
    assert SCRIPT not in page and "<b>check</b>" not in page
    assert "<code>sh -c &#x27;echo &lt;script&gt;alert(" in page
    assert "<code>python3 &#x27;&lt;b&gt;check&lt;/b&gt;.py&#x27;</code>" in page
    rows = page.split('id="plan-commands"', 1)[1].split("</table>", 1)[0]
    assert rows.count("<tr><td>") == 2
    assert "<tr><td>tests</td><td>node</td>" in rows and "<td>90 s</td>" in rows
    assert "<tr><td>impl</td><td>judgment</td>" in rows and "<td>600 s</td>" in rows
    assert "does not allow commands" not in page


def test_the_page_warns_when_the_project_would_refuse_the_plans_commands(bob, task):
    page = _page(bob, _plan_with_commands(task))

    assert "This project does not allow commands" in page


def test_a_plan_without_commands_shows_no_command_list(bob, task, commands_allowed):
    run = planned_run(task, {"nodes": [node("docs")], "edges": []}, status="awaiting_approval")

    assert "Commands this plan runs" not in _page(bob, run)
