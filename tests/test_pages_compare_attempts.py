"""Comparing two attempts of a node: prompt, input payload, output and judgment side by side with their
line diff; the earlier attempt on the left; agent text escaped; a pair of attempts of different nodes or
tasks is the console's own page saying why; non-members get 404; the queries do not grow with the texts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from graphs.models import WorkNodeExecution
from tests import factories
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db

HOSTILE = '</script><script>alert(1)</script><img src=x onerror="alert(2)">'
START = datetime(2025, 6, 1, 10, tzinfo=UTC)


@pytest.fixture
def client(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def run(task):
    return planned_run(task, {"nodes": [node("draft")], "edges": []}, status="succeeded")


def attempt(run, number: int, *, node_id: str = "draft", prompt: str = "Write the draft.", output: str = "",
            judgment: dict | None = None, status: str = "succeeded", **extra) -> WorkNodeExecution:
    return WorkNodeExecution.objects.create(
        run=run, node_id=node_id, subagent_type="planner", attempt=number, status=status,
        cause="initial" if number == 1 else "retry_self",
        input_payload={"prompt": prompt, "upstream": {"brief": "the brief"}},
        output_payload={"text": output}, judgment_result=judgment,
        started_at=START, finished_at=START + timedelta(seconds=number), **extra,
    )


def compare_url(a: WorkNodeExecution, b: WorkNodeExecution) -> str:
    return f"/executions/{a.pk}/compare/{b.pk}/"


def test_it_shows_what_went_in_and_came_out_of_both_attempts_with_their_diff(client, run):
    first = attempt(run, 1, output="Title\nOld body", judgment={"ok": False, "issues": ["too short"]},
                    status="failed")
    second = attempt(run, 2, prompt="Write the draft.\nFeedback: too short", output="Title\nNew body\nMore",
                     judgment={"ok": True, "issues": []})

    response = client.get(compare_url(first, second))

    assert response.status_code == 200
    parts = {part.slug: part.diff for part in response.context["comparison"].parts}
    assert list(parts) == ["prompt", "input", "output", "judgment"]
    assert parts["prompt"].summary() == "+1 \N{MINUS SIGN}0 lines"
    assert parts["input"].identical, "the input payload is compared without its prompt, shown apart"
    assert [(row.kind, row.old, row.new) for row in parts["output"].rows if row.kind != "same"] == [
        ("changed", "Old body", "New body"), ("added", None, "More"),
    ]
    assert not parts["judgment"].identical
    html = response.content.decode()
    assert "Feedback: too short" in html and "New body" in html and "too short" in html
    assert 'data-diff-part="output"' in html


def test_the_earlier_attempt_is_on_the_left_whichever_way_the_link_names_them(client, run):
    first, second = attempt(run, 1, output="one"), attempt(run, 2, output="two")
    response = client.get(compare_url(second, first))
    assert (response.context["old"], response.context["new"]) == (first, second)


def test_agent_text_is_escaped_everywhere_on_the_page(client, run):
    first = attempt(run, 1, prompt=HOSTILE, output=HOSTILE, judgment={"ok": False, "issues": [HOSTILE]},
                    error=HOSTILE, status="failed")
    second = attempt(run, 2, prompt=f"{HOSTILE}\n{HOSTILE}", output="fine", model=HOSTILE, agent_calls=1)

    html = client.get(compare_url(first, second)).content.decode()

    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x" in html


def test_attempts_of_two_different_nodes_get_the_consoles_page_saying_why(client, task):
    run = planned_run(task, {"nodes": [node("draft"), node("review", "draft")], "edges": []})
    draft, review = attempt(run, 1), attempt(run, 1, node_id="review")

    response = client.get(compare_url(draft, review))

    assert response.status_code == 404
    assert response.templates[0].name == "console/compare_attempts.html"
    html = response.content.decode()
    assert "two different nodes (draft and review)" in html
    assert f"/executions/{draft.pk}/" in html and f"/executions/{review.pk}/" in html


def test_attempts_of_two_tasks_are_refused_even_for_the_same_node_id(client, run, project, alice):
    other_task = factories.TaskFactory(project=project, created_by=alice)
    other_run = planned_run(other_task, {"nodes": [node("draft")], "edges": []})
    response = client.get(compare_url(attempt(run, 1), attempt(other_run, 1)))
    assert response.status_code == 404
    assert "two different tasks" in response.content.decode()


def test_an_attempt_of_a_fork_compares_with_the_attempt_of_the_run_it_came_from(client, run, task):
    fork = planned_run(task, {"nodes": [node("draft")], "edges": []})
    fork.forked_from, fork.fork_node_id = run, "draft"
    fork.save(update_fields=["forked_from", "fork_node_id"])
    response = client.get(compare_url(attempt(run, 1, output="before"), attempt(fork, 1, output="after")))
    assert response.status_code == 200
    assert "run of" in response.content.decode()


def test_someone_outside_the_project_gets_404_and_sees_nothing(run, charlie):
    first, second = attempt(run, 1, output="secret words"), attempt(run, 2)
    client = Client()
    client.force_login(charlie)
    response = client.get(compare_url(first, second))
    assert response.status_code == 404
    assert "secret words" not in response.content.decode()


def test_a_member_of_one_project_gets_404_for_an_attempt_of_another(client, run):
    elsewhere = planned_run(factories.TaskFactory(), {"nodes": [node("draft")], "edges": []})
    response = client.get(compare_url(attempt(run, 1), attempt(elsewhere, 1, output="not yours")))
    assert response.status_code == 404
    assert "not yours" not in response.content.decode()
    assert client.get(f"/executions/{attempt(run, 2).pk}/compare/00000000-0000-0000-0000-000000000000/"
                      ).status_code == 404


def test_the_queries_do_not_grow_with_the_length_of_the_texts(client, run):
    def queries_for(lines: int) -> int:
        WorkNodeExecution.objects.filter(run=run).delete()
        text = "\n".join(f"line {n}" for n in range(lines))
        first, second = attempt(run, 1, prompt=text, output=text), attempt(run, 2, prompt=text + "\nmore", output="x")
        with CaptureQueriesContext(connection) as queries:
            assert client.get(compare_url(first, second)).status_code == 200
        return len(queries)

    assert queries_for(3) == queries_for(2000)


def test_the_node_page_links_every_other_attempt_to_compare_with(client, run):
    first, second, third = attempt(run, 1), attempt(run, 2), attempt(run, 3)
    html = client.get(f"/executions/{second.pk}/").content.decode()
    assert f'href="{compare_url(first, second)}">compare with #1</a>' in html
    assert f'href="{compare_url(third, second)}">compare with #3</a>' in html
    assert "compare with #2" not in html
