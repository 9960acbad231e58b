"""A run's pull request as the console writes it: the task's title, and a body — rendered by the server from
``templates/delivery/pull_request.md`` — carrying the goal, the acceptance criteria, the run's to-do tree
with each node's status and verdict, the final verdict, what the run cost and a link to it.

Text from the task and from agents (a node's id, a verdict line) is untrusted: it is escaped so that it
reads as the words it is, never as a heading, a list, a link, an image, a code fence or HTML. Lists are
bounded, so a run of a thousand nodes still fits a forge's limit on a body.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.urls import reverse

from graphs.domain.case_manifests import acceptance_criteria_with_ids
from graphs.domain.judgment_words import judgment_reading
from graphs.models import WorkGraphRun
from graphs.reads.task_runs import task_outcome
from graphs.reads.todo_tree import task_run_trees

TEMPLATE = "delivery/pull_request.md"
# GitHub's body holds 65,536 characters; a body is cut below that, however long the run.
BODY_MAX_CHARS = 60_000
TITLE_MAX_CHARS = 250
GOAL_MAX_CHARS = 8_000
ITEM_MAX_CHARS = 500
CRITERIA_MAX = 50
NODES_MAX = 150
# Characters that make Markdown of plain text wherever they stand, and those that do at a line's start.
_INLINE = re.compile(r"([\\`*_\[\]<>!&~|])")
_LINE_START = re.compile(r"^(\s*)([#>+\-=]|\d+[.)])")


def markdown_text(text: str, *, one_line: bool = True, limit: int = ITEM_MAX_CHARS) -> str:
    """``text`` escaped to read as itself in Markdown (GitHub's, GitLab's, Gitea's), cut to ``limit``
    characters; ``one_line`` joins its lines, else each line stays and loses its indentation (no code block)."""
    text = text.replace("\r\n", "\n")
    if len(text) > limit:
        text = text[:limit].rstrip() + " …"
    lines = [" ".join(text.split())] if one_line else [line.strip() for line in text.split("\n")]
    return "\n".join(_LINE_START.sub(r"\1\\\2", _INLINE.sub(r"\\\1", line)) for line in lines)


def pull_request_title(run: WorkGraphRun) -> str:
    """The task's title on one line: a forge shows its title as text, so it needs no escaping."""
    title = " ".join(run.task.title.split())
    return title if len(title) <= TITLE_MAX_CHARS else title[: TITLE_MAX_CHARS - 1].rstrip() + "…"


def pull_request_body(run: WorkGraphRun) -> str:
    """The pull request's body for ``run``, in Markdown."""
    task = run.task
    # The body lists the run's nodes: its tree read whole, never folded by stage.
    trees = task_run_trees(task, fold=False)
    tree = next(tree for tree in trees if tree.run.pk == run.pk)
    outcome = task_outcome(task, [each.run for each in trees])
    verdict = outcome.verdict if outcome.run is not None and outcome.run.pk == run.pk else None
    nodes = [(stage.title, node) for stage in tree.stages for node in stage.nodes]
    stages: dict[str, list[dict[str, Any]]] = {}
    for title, node in nodes[:NODES_MAX]:
        stages.setdefault(title, []).append(_node_line(node))
    url = None
    if settings.WORKGRAPH_PUBLIC_URL:
        url = settings.WORKGRAPH_PUBLIC_URL.rstrip("/") + reverse("run_graph", kwargs={"run_id": run.pk})
    body = render_to_string(TEMPLATE, {
        "goal": markdown_text(task.goal_text, one_line=False, limit=GOAL_MAX_CHARS),
        "criteria": [{"id": markdown_text(item.ac_id), "text": markdown_text(item.text)}
                     for item in acceptance_criteria_with_ids(task.acceptance_criteria)[:CRITERIA_MAX]],
        "more_criteria": max(len(task.acceptance_criteria) - CRITERIA_MAX, 0),
        "stages": [{"title": markdown_text(title), "nodes": lines} for title, lines in stages.items()],
        "more_nodes": max(len(nodes) - NODES_MAX, 0),
        "verdict": markdown_text(verdict.verdict) if verdict else "",
        "verdict_line": markdown_text(verdict.line) if verdict and verdict.line else "",
        "cost": tree.spend.summary() if tree.spend else "no agent calls",
        "run_url": url, "run_id": str(run.pk), "project": markdown_text(task.project.name),
        "base_commit": tree.workspace.base_commit[:12] if tree.workspace else "",
    })
    if len(body) > BODY_MAX_CHARS:
        body = body[:BODY_MAX_CHARS].rstrip() + "\n\n… (cut: the whole run is in the console)\n"
    return body


def _node_line(node: Any) -> dict[str, Any]:
    latest = node.latest
    reading = judgment_reading(latest.judgment_result) if latest is not None else None
    status = latest.status if latest is not None else "not started"
    words = status.replace("_", " ")
    if latest is not None and latest.attempt > 1:
        words += f" at attempt {latest.attempt}"
    if reading is not None:
        words += f", judged {reading['verdict']}"
    return {"node_id": markdown_text(node.node_id), "done": status == "succeeded", "words": words}
