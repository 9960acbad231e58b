"""A pull request's title and body as the server writes them from the run: the task's title; the goal, the
acceptance criteria, the run's to-do tree with each node's status and verdict, what it cost and a link to the
run — and task text that would be Markdown (a heading, a link, an image, HTML, a code fence) reads as the
words it is when a forge renders the body."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from graphs.delivery.pull_requests import (
    BODY_MAX_CHARS,
    NODES_MAX,
    markdown_text,
    pull_request_body,
    pull_request_title,
)
from tests.deliveries import succeeded_run
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db
HOSTILE_GOAL = ("Export the report.\n# Not a heading\n    not code either\n```sh\nrm -rf /\n```\n"
                "<img src=x onerror=alert(1)> and [click](javascript:alert(1)) ![pic](https://evil.example/p.png)")


def rendered(body: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(body)


def test_the_body_carries_goal_criteria_tree_cost_and_a_link_to_the_run(
        repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks, settings):
    settings.WORKGRAPH_PUBLIC_URL = "https://console.example/"
    repo_task.acceptance_criteria = ["AC-EXPORT-1: rows are written as CSV", "an empty report writes a header"]
    repo_task.save()
    run = succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)

    body = pull_request_body(run)

    assert body.startswith(markdown_text(repo_task.goal_text, one_line=False))
    assert "- **AC-EXPORT-1** rows are written as CSV\n" in body
    assert "- **AC-2** an empty report writes a header\n" in body
    assert "- [x] export: succeeded, judged pass\n" in body
    assert "· 1 agent call\n" in body.split("## Cost", 1)[1]
    assert f"[The run in Work Graph Console](https://console.example/runs/{run.run_id}/)" in body
    assert "Opened by the console, not by an agent." in body
    assert pull_request_title(run) == repo_task.title


def test_task_text_that_would_be_markdown_reads_as_the_words_it_is(
        repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks):
    repo_task.title = "Export\n CSV   now"
    repo_task.goal_text = HOSTILE_GOAL
    repo_task.acceptance_criteria = ["<script>alert(1)</script>", "1. not a list item", "| not | a table |"]
    repo_task.save()
    run = succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)

    html = rendered(pull_request_body(run))

    assert [tag for tag in ("<h1", "<img", "<script", "<pre", "<ol", "<table", 'href="javascript') if tag in html] == []
    assert html.count("<h2>") == 3, "only the body's own sections are headings"
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "# Not a heading" in html
    assert pull_request_title(run) == "Export CSV now"


def test_a_run_of_many_nodes_is_cut_to_fit_a_forges_body(repo_task):
    nodes = [node(f"n{index}") for index in range(NODES_MAX + 30)]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})

    body = pull_request_body(run)

    assert "… and 30 more nodes, in the console." in body
    assert "- [ ] n0: not started\n" in body
    assert len(body) <= BODY_MAX_CHARS + 100
