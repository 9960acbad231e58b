"""A forge's webhook event received for a project (``POST /api/forge/<slug>/events``): verified the way its
forge signs it, read (graphs.delivery.forge_payloads), and handed to the feedback (graphs.delivery.feedback).

Each forge proves an event is its own with the secret both sides hold, here the value of the variable the
project names in ``forge_webhook_secret_env``:

- GitHub: ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>``;
- GitLab: ``X-Gitlab-Token``, the secret itself;
- Gitea and Forgejo: ``X-Gitea-Signature`` (Forgejo also sends ``X-Forgejo-Signature``), the hex
  HMAC-SHA256 of the raw body with no prefix.

Every comparison is constant-time. An event that cannot be verified — no such project, a project whose
forge or webhook secret is not set, a signature missing or wrong — is refused (``ForgeEventRefused``) and
recorded on the audit log with its forge, its event and why, never the secret or the body. A verified event
about a branch or pull request the console did not deliver is accepted and changes nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from graphs.audit import audit_record
from graphs.delivery.feedback import news_apply
from graphs.delivery.forge_payloads import forge_news
from graphs.errors import WorkGraphError
from graphs.models import AuditEntry, Project, ProjectDelivery

EVENT_HEADERS = {"github": ("X-GitHub-Event",), "gitlab": ("X-Gitlab-Event",),
                 "gitea": ("X-Gitea-Event", "X-Forgejo-Event")}
SIGNATURE_HEADERS = {"github": ("X-Hub-Signature-256",), "gitlab": ("X-Gitlab-Token",),
                     "gitea": ("X-Gitea-Signature", "X-Forgejo-Signature")}
# How much of an event's header a refusal keeps: it is the sender's text.
_HEADER_KEPT = 60


class ForgeEventRefused(WorkGraphError):
    """An event that could not be verified as the project's forge's; the message says why, in words."""


@dataclass(frozen=True)
class EventReceived:
    """A verified event: its forge and event name, and what the console did with it, in words."""

    forge: str
    event: str
    outcome: str


def forge_event_receive(*, slug: str, headers: Mapping[str, str], body: bytes) -> EventReceived:
    """Verify the event posted for project ``slug`` and act on it. ``headers`` are the request's, read
    without regard to case. Raises ``ForgeEventRefused`` (after recording it) when it cannot be verified."""
    project = Project.objects.filter(slug=slug).first()
    setting = ProjectDelivery.objects.filter(project=project).first() if project is not None else None
    forge = setting.forge if setting is not None else ""
    event = _header(headers, EVENT_HEADERS.get(forge, ()))
    problem = _unverified(project, setting, headers, body)
    if problem is not None:
        audit_record(actor=None, action=AuditEntry.Action.FORGE_EVENT_REFUSED, object_type="project",
                     object_id=slug[:200], project=project,
                     after={"forge": forge, "event": event[:_HEADER_KEPT], "reason": problem},
                     summary=f"Refused a forge event for {slug[:50]}: {problem}")
        raise ForgeEventRefused(problem)
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return EventReceived(forge, event, "ignored: its body is not JSON")
    if not isinstance(payload, dict):
        return EventReceived(forge, event, "ignored: its body is not a JSON object")
    news = forge_news(forge, event, payload)
    if not news.says_anything():
        return EventReceived(forge, event, "ignored: the console does not act on this event")
    return EventReceived(forge, event, news_apply(project, news))


def _unverified(project: Project | None, setting: ProjectDelivery | None, headers: Mapping[str, str],
                body: bytes) -> str | None:
    """Why the event cannot be taken for the project's forge's; None when its signature holds."""
    if project is None:
        return "no project has this slug."
    if setting is None or not setting.forge:
        return "the project names no forge in its delivery settings."
    if not setting.forge_webhook_secret_env:
        return "the project's forge_webhook_secret_env names no variable, so no event can be verified."
    secret = os.environ.get(setting.forge_webhook_secret_env, "")
    if not secret:
        return f"the variable {setting.forge_webhook_secret_env} (forge_webhook_secret_env) is not set."
    sent = _header(headers, SIGNATURE_HEADERS[setting.forge])
    if not sent:
        return f"it carries no {SIGNATURE_HEADERS[setting.forge][0]} header."
    if not hmac.compare_digest(sent.encode(), _expected(setting.forge, secret, body).encode()):
        return f"its {SIGNATURE_HEADERS[setting.forge][0]} does not match the secret."
    return None


def _expected(forge: str, secret: str, body: bytes) -> str:
    """What the forge sends for ``body`` signed with ``secret``."""
    if forge == "gitlab":
        return secret
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}" if forge == "github" else digest


def _header(headers: Mapping[str, str], names: tuple[str, ...]) -> str:
    for name in names:
        value = headers.get(name)
        if value:
            return value
    return ""
