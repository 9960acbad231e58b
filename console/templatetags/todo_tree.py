"""The to-do tree's node rows, rendered in Python.

A run can hold hundreds of nodes with their attempts; the same markup written as template tags cost
about thirty variable lookups per node and dominated the task page at 1,000 nodes. Every value still
goes through ``format_html``, so agent-authored text stays escaped.
"""

from __future__ import annotations

from django import template
from django.middleware.csrf import get_token
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from console.templatetags.console_words import words
from graphs.attempt_words import attempt_cause_text, attempt_failure_reason
from graphs.selectors import TreeNode

register = template.Library()


@register.simple_tag(takes_context=True)
def todo_nodes(context, nodes: list[TreeNode], *, run, can_fork: bool) -> SafeString:
    fork_token = get_token(context["request"]) if can_fork and run.is_forkable() else None
    return mark_safe("".join(_node(node, run_id=run.run_id, fork_token=fork_token) for node in nodes))  # noqa: S308


def _node(node: TreeNode, *, run_id, fork_token: str | None) -> str:
    latest = node.latest
    spec = node.spec
    name = (format_html('<a href="/executions/{}/">{}</a>', latest.pk, node.node_id) if latest
            else format_html("{}", node.node_id))
    label = spec.get("artifact_type") or spec.get("node_type")
    count = len(node.attempts)
    parts = [
        _status(node.status),
        name,
        format_html('<span class="tag">{}</span>', label) if label else "",
        format_html('<span class="muted" data-attempts>{} attempt{}</span>', count, "" if count == 1 else "s"),
    ]
    duration = latest.duration() if latest else None
    if duration is not None:
        parts.append(format_html('<span class="muted">{} s</span>', f"{duration.total_seconds():.1f}"))
    judgment = latest.judgment_result if latest else None
    if judgment and judgment.get("kind") != "none":
        ok = bool(judgment.get("ok"))
        parts.append(format_html('<span class="judgment {}">judged {}</span>', "ok" if ok else "bad",
                                 "ok" if ok else "not ok"))
    reruns = sum(1 for attempt in node.attempts if attempt.cause in _LOOP_BACK_CAUSES)
    if reruns:
        parts.append(format_html(
            '<span class="loop-mark" title="attempts caused by a loop-back">↺ looped back {}{}</span>', _TIMES, reruns
        ))
    if node.failure_role is not None:
        parts.append(format_html('<span class="failure-role failure-role--{}">{}</span>', node.failure_role.role,
                                 node.failure_role.label()))
    if spec.get("depends_on"):
        parts.append(format_html('<span class="muted small">after {}</span>', ", ".join(spec["depends_on"])))
    attempts = format_html_join("", "<li>{}</li>", ((_attempt(attempt),) for attempt in node.attempts)) or mark_safe(
        '<li class="muted">Not started.</li>'
    )
    fork = ""
    if fork_token and latest:
        fork = format_html(
            '<form method="post" action="/runs/{}/fork/" class="inline">'
            '<input type="hidden" name="csrfmiddlewaretoken" value="{}">'
            '<input type="hidden" name="node_id" value="{}">'
            '<button type="submit" class="secondary small">Fork from here</button></form>',
            run_id, fork_token, node.node_id,
        )
    # Why each attempt failed is on the row itself: the reason a lead opens the tree for.
    failures = format_html_join(
        "", '<li data-attempt="{}">attempt {}: {}</li>',
        ((attempt.attempt, attempt.attempt, reason) for attempt, reason in _failures(node.attempts)),
    )
    return format_html(
        '<li class="todo-item" data-node-id="{}"><details><summary>{}</summary><ol class="attempts">{}</ol>{}'
        "</details>{}</li>",
        node.node_id, mark_safe(" ".join(str(part) for part in parts if part)), attempts, fork,  # noqa: S308
        format_html('<ul class="attempt-failures">{}</ul>', failures) if failures else "",
    )


_LOOP_BACK_CAUSES = frozenset({"loop_back", "dynamic_loop_back"})
_TIMES = "\N{MULTIPLICATION SIGN}"


def _failures(attempts) -> list[tuple[object, str]]:
    reasons = ((attempt, attempt_failure_reason(status=attempt.status, error=attempt.error,
                                                judgment_result=attempt.judgment_result)) for attempt in attempts)
    return [(attempt, reason) for attempt, reason in reasons if reason]


def _attempt(attempt) -> str:
    return format_html(
        '{} <a href="/executions/{}/">attempt {}</a> <span class="muted">{}</span>',
        _status(attempt.status), attempt.pk, attempt.attempt, attempt_cause_text(attempt.cause, attempt.cause_node_id),
    )


def _status(status: str) -> str:
    return format_html('<span class="status status-{}" data-status="{}">{}</span>', status, status, words(status))
