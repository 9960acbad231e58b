"""The to-do tree's node rows, rendered in Python.

A run can hold hundreds of nodes with their attempts; the same markup written as template tags cost
about thirty variable lookups per node and dominated the task page at 1,000 nodes. ``format_html``
did too, once the tags were gone: each of its arguments passes through Django's lazy-string wrappers,
some 170,000 calls for a 1,000-node run. So every value is escaped here with ``html.escape`` (what
Django's ``escape`` calls) as it goes into the markup, and only the finished rows are marked safe.
"""

from __future__ import annotations

from html import escape

from django import template
from django.middleware.csrf import get_token
from django.utils.safestring import SafeString, mark_safe

from console.templatetags.console_words import words
from graphs.domain.attempt_words import attempt_cause_text, attempt_failure_reason
from graphs.domain.duration_words import duration_text
from graphs.reads.todo_tree import TreeNode

register = template.Library()


@register.simple_tag(takes_context=True)
def todo_nodes(context, nodes: list[TreeNode], *, run, can_fork: bool) -> SafeString:
    fork_token = get_token(context["request"]) if can_fork and run.is_forkable() else None
    return mark_safe("".join(_node(node, run_id=run.run_id, fork_token=fork_token) for node in nodes))  # noqa: S308


def _e(value: object) -> str:
    return escape(str(value))


def _node(node: TreeNode, *, run_id, fork_token: str | None) -> str:
    latest = node.latest
    spec = node.spec
    node_id = _e(node.node_id)
    name = f'<a href="/executions/{latest.pk}/">{node_id}</a>' if latest else node_id
    label = spec.get("artifact_type") or spec.get("node_type")
    count = len(node.attempts)
    parts = [
        _status(node.status),
        name,
        f'<span class="tag">{_e(label)}</span>' if label else "",
        f'<span class="muted" data-attempts>{count} attempt{"" if count == 1 else "s"}</span>',
    ]
    duration = latest.duration() if latest else None
    if duration is not None:
        parts.append(f'<span class="muted">{duration_text(duration)}</span>')
    judgment = latest.judgment_result if latest else None
    if judgment and judgment.get("kind") != "none":
        ok = bool(judgment.get("ok"))
        parts.append(f'<span class="judgment {"ok" if ok else "bad"}">judged {"ok" if ok else "not ok"}</span>')
    reruns = sum(1 for attempt in node.attempts if attempt.cause in _LOOP_BACK_CAUSES)
    if reruns:
        parts.append(
            f'<span class="loop-mark" title="attempts caused by a loop-back">↺ looped back {_TIMES}{reruns}</span>'
        )
    if node.failure_role is not None:
        role = node.failure_role
        parts.append(f'<span class="failure-role failure-role--{_e(role.role)}">{_e(role.label())}</span>')
    if spec.get("depends_on"):
        parts.append(f'<span class="muted small">after {_e(", ".join(spec["depends_on"]))}</span>')
    attempts = "".join(f"<li>{_attempt(attempt)}</li>" for attempt in node.attempts) or (
        '<li class="muted">Not started.</li>'
    )
    fork = ""
    if fork_token and latest:
        fork = (
            f'<form method="post" action="/runs/{run_id}/fork/" class="inline">'
            f'<input type="hidden" name="csrfmiddlewaretoken" value="{_e(fork_token)}">'
            f'<input type="hidden" name="node_id" value="{node_id}">'
            '<button type="submit" class="secondary small">Fork from here</button></form>'
        )
    # Why each attempt failed is on the row itself: the reason a lead opens the tree for.
    failures = "".join(
        f'<li data-attempt="{attempt.attempt}">attempt {attempt.attempt}: {_e(reason)}</li>'
        for attempt, reason in _failures(node.attempts)
    )
    if failures:
        failures = f'<ul class="attempt-failures">{failures}</ul>'
    summary = " ".join(part for part in parts if part)
    return (
        f'<li class="todo-item" data-node-id="{node_id}"><details><summary>{summary}</summary>'
        f'<ol class="attempts">{attempts}</ol>{fork}</details>{failures}</li>'
    )


_LOOP_BACK_CAUSES = frozenset({"loop_back", "dynamic_loop_back"})
_TIMES = "\N{MULTIPLICATION SIGN}"


def _failures(attempts) -> list[tuple[object, str]]:
    reasons = ((attempt, attempt_failure_reason(status=attempt.status, error=attempt.error,
                                                judgment_result=attempt.judgment_result)) for attempt in attempts)
    return [(attempt, reason) for attempt, reason in reasons if reason]


def _attempt(attempt) -> str:
    return (
        f'{_status(attempt.status)} <a href="/executions/{attempt.pk}/">attempt {attempt.attempt}</a> '
        f'<span class="muted">{_e(attempt_cause_text(attempt.cause, attempt.cause_node_id))}</span>'
    )


def _status(status: str) -> str:
    code = _e(status)
    return f'<span class="status status-{code}" data-status="{code}">{_e(words(status))}</span>'
