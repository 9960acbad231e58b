"""The planning page lists every command a plan runs, escaped, for a reviewer to see before approving it:
command nodes, command judgments, and a validator's test script, as the engine will run it."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from graphs.planning.planner import plan_work_graph
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


def _test_script(node_id: str, *deps: str) -> dict:
    return node(node_id, *deps, node_type="test_script")


def _plan_rows(page: str) -> str:
    return page.split('id="plan-commands"', 1)[1].split("</table>", 1)[0]


def test_a_validators_test_script_is_listed_as_the_engine_will_run_it(bob, task, commands_allowed, settings):
    settings.WORKGRAPH_COMMAND_TIMEOUT = 600
    run = planned_run(task, {"nodes": [node("impl"), _test_script("export tests", "impl")], "edges": []},
                      org_node="validator", status="awaiting_approval")

    rows = _plan_rows(_page(bob, run))

    assert rows.count("<tr><td>") == 1
    assert ("<tr><td>export tests</td><td>the validator's test script</td>"
            "<td><code>python3 export_tests.py</code></td>") in rows
    assert "<td>600 s</td>" in rows


def test_a_script_another_node_runs_already_or_no_validator_planned_is_not_listed_again(bob, task, commands_allowed):
    runs_it = {"node_id": "run_tests", "depends_on": ["tests"], "node_type": "run_test_script",
               "command": ["python3", "tests.py"]}
    validators = planned_run(task, {"nodes": [_test_script("tests"), runs_it], "edges": []}, org_node="validator",
                             status="awaiting_approval")
    planners = planned_run(task, {"nodes": [_test_script("tests")], "edges": []}, status="awaiting_approval")

    rows = _plan_rows(_page(bob, validators))
    assert rows.count("<tr><td>") == 1 and "<tr><td>run_tests</td><td>node</td>" in rows
    assert "Commands this plan runs" not in _page(bob, planners)


def test_a_validators_append_shows_the_test_script_it_adds(reviewed, commands_allowed, task, scripted_runner, bob):
    run = planned_run(task, {"nodes": [node("impl")], "edges": []}, status="running")
    scripted_runner.replies[("plan", "validator")] = "```json\n" + json.dumps(
        {"nodes": [_test_script("checks", "impl")]}) + "\n```\n"
    plan_work_graph("validator", task, task.goal_text, append_to_run_id=run.run_id)

    page = _page(bob, run)

    added = page.split('class="card append-review"', 1)[1].split("</table>", 1)[0]
    assert "the validator's test script, run once its judgment passed: <code>python3 checks.py</code>" in added
    assert "<tr><td>checks</td><td>the validator's test script</td>" in _plan_rows(page)
