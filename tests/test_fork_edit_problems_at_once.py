"""A fork's edit names every problem of its submission at once: a field the node does not have beside what is
wrong with the one it has, and every bad argument of an argv; the fork-edit page shows the same set on its
field in the API's words, and nothing is made."""

from __future__ import annotations

import html
import json
import re

import pytest

from graphs.models import WorkGraphRun
from tests.clients import signed_in
from tests.run_builders import finished_build_check_tests

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished(task, scripted_runner, inline_executor) -> WorkGraphRun:
    return finished_build_check_tests(task, inline_executor)


def api_problems(response) -> dict[str, list[str]]:
    assert response.json()["code"] == "invalid_edit"
    problems: dict[str, list[str]] = {}
    for problem in response.json()["fields"]:
        problems.setdefault(problem["field"], []).append(problem["message"])
    return problems


def page_problems(response) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {}
    for name, message in re.findall(r'<p class="error" id="error-([a-z_]+)">(.*?)</p>', response.content.decode(),
                                    re.S):
        problems.setdefault(name, []).append(html.unescape(message))
    return problems


def fork(client, run: WorkGraphRun, body: dict):
    return client.post(f"/api/runs/{run.run_id}/fork", data=json.dumps(body), content_type="application/json")


def test_an_argv_for_an_agent_node_is_named_beside_its_empty_prompt(alice, finished):
    answer = fork(signed_in(alice), finished, {"node_id": "check", "prompt": "  ", "argv": ["python3", "-V"]})

    assert answer.status_code == 400
    assert api_problems(answer) == {"argv": ["check is an agent node: it has a prompt and runs no argv."],
                                    "prompt": ["The prompt cannot be empty."]}
    assert WorkGraphRun.objects.count() == 1


def test_a_prompt_for_a_command_node_is_named_beside_its_unchanged_argv(alice, finished):
    current = finished.graph_manifest["nodes"][2]["command"]

    answer = fork(signed_in(alice), finished, {"node_id": "tests", "prompt": "Run them.", "argv": current})

    assert api_problems(answer) == {
        "prompt": ["tests is a command node: it runs its argv and has no prompt."],
        "argv": ["This is the node's current argv: change it, or fork without an edit."]}
    assert WorkGraphRun.objects.count() == 1


def test_every_bad_argument_of_an_argv_is_named_on_the_page_as_in_the_api(alice, finished):
    client = signed_in(alice)
    argv = ["", "python3", "", "-V"]

    api = fork(client, finished, {"node_id": "tests", "argv": argv})
    page = client.post(f"/runs/{finished.run_id}/fork/edit/", {"node_id": "tests", "argv": json.dumps(argv)})

    assert (api.status_code, page.status_code) == (400, 400)
    assert api_problems(api) == {"argv": ["The argv[0] must be a non-empty string, not ''",
                                          "The argv[2] must be a non-empty string, not ''"]}
    assert page_problems(page) == api_problems(api)
    assert WorkGraphRun.objects.count() == 1
