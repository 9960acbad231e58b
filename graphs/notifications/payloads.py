"""What a notification says: the JSON payload webhooks receive (its schema is in docs/notifications.md), the
Slack incoming-webhook message, and an email's subject and text."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.urls import reverse

from graphs.models import WorkGraphRun
from graphs.notifications import Notification

# The payload's schema version: a change that removes or renames a field makes a new one.
PAYLOAD_VERSION = 1
# What each event says in a sentence, after the task's title.
_SAID = {
    "run.succeeded": "run succeeded",
    "run.failed": "run failed",
    "run.cancelled": "run was cancelled",
    "run.rejected": "run was rejected by its reviewer",
    "approval.waiting": "waits for a reviewer's approval",
    "budget.exceeded": "run spent its budget and is stopping",
    "external.waiting": "waits for an external report",
    "node.failed": "has a node that failed for good",
    "review.waiting": "has a change waiting for a reviewer",
    "run.delivered": "run was delivered to its project's remote",
    "delivery.failed": "run could not be delivered",
}


@dataclass(frozen=True)
class Subject:
    """The run a notification is about, as its payload names it."""

    project_slug: str
    project_name: str
    task_id: str
    task_title: str
    run_id: str
    run_status: str
    url: str | None


def notification_subject(notification: Notification) -> tuple[Subject, int]:
    """The run ``notification`` is about and its project's id."""
    run = WorkGraphRun.objects.select_related("task__project").get(pk=notification.run_id)
    project = run.task.project
    url = None
    if settings.WORKGRAPH_PUBLIC_URL:
        url = settings.WORKGRAPH_PUBLIC_URL.rstrip("/") + reverse("run_graph", kwargs={"run_id": run.pk})
    subject = Subject(project_slug=project.slug, project_name=project.name, task_id=str(run.task_id),
                      task_title=run.task.title, run_id=str(run.pk), run_status=run.status, url=url)
    return subject, project.pk


def notification_sentence(notification: Notification, subject: Subject) -> str:
    node = notification.facts.get("node_id")
    where = f" (node {node})" if node else ""
    return f"[{subject.project_name}] {subject.task_title}: {_SAID[notification.event]}{where}"


def payload_json(notification: Notification, subject: Subject, *, message_id: str) -> dict[str, Any]:
    return {
        "version": PAYLOAD_VERSION,
        "id": message_id,
        "type": notification.event,
        "timestamp": notification.at.isoformat(),
        "data": {
            "project": {"slug": subject.project_slug, "name": subject.project_name},
            "task": {"id": subject.task_id, "title": subject.task_title},
            "run": {"id": subject.run_id, "status": subject.run_status, "url": subject.url},
            "facts": notification.facts,
        },
    }


def payload_slack(notification: Notification, subject: Subject) -> dict[str, Any]:
    """A Slack incoming-webhook message: ``text`` for notifications, ``blocks`` for the channel."""
    text = notification_sentence(notification, subject)
    lines = [f"*{_slack_escape(text)}*"]
    lines += [f"{_slack_escape(str(name))}: `{_slack_escape(str(value))}`"
              for name, value in notification.facts.items()]
    blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)[:2900]}}]
    if subject.url:
        blocks.append({"type": "actions", "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": "Open the run"}, "url": subject.url}]})
    return {"text": text, "blocks": blocks}


def body_bytes(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"), sort_keys=True, default=str)


def email_text(notification: Notification, subject: Subject) -> str:
    lines = [notification_sentence(notification, subject), "", f"Run {subject.run_id}: {subject.run_status}"]
    lines += [f"{name}: {value}" for name, value in notification.facts.items()]
    if subject.url:
        lines += ["", subject.url]
    return "\n".join(lines)


def _slack_escape(text: str) -> str:
    # Slack reads &, < and > as markup: data from agents and tasks must stay plain text.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
