"""Forge webhook events as each forge sends them, for the tests: the body, the event header and the signature
header made the way each forge's documentation says (GitHub: ``X-Hub-Signature-256: sha256=<HMAC-SHA256>``;
GitLab: ``X-Gitlab-Token``, the secret; Gitea: ``X-Gitea-Signature``, the bare HMAC-SHA256 hex), and
payloads shaped as each forge documents them, carrying only the fields a real one always sends that the
console reads, plus a few it ignores."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

EVENT_HEADER = {"github": "X-GitHub-Event", "gitlab": "X-Gitlab-Event", "gitea": "X-Gitea-Event"}


def signed_headers(forge: str, event: str, body: bytes, secret: str) -> dict[str, str]:
    """The headers ``forge`` sends with ``body`` for ``event``, signed with ``secret``."""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    signature = {"github": ("X-Hub-Signature-256", f"sha256={digest}"), "gitlab": ("X-Gitlab-Token", secret),
                 "gitea": ("X-Gitea-Signature", digest)}[forge]
    return {EVENT_HEADER[forge]: event, signature[0]: signature[1], "User-Agent": f"{forge}-Hookshot/test"}


def event_post(client, slug: str, forge: str, event: str, payload: dict[str, Any], *, secret: str | None,
               headers: dict[str, str] | None = None):
    """POST the event to the console as the forge would (signed with ``secret``; unsigned when None)."""
    body = json.dumps(payload).encode()
    sent = signed_headers(forge, event, body, secret) if secret is not None else {EVENT_HEADER[forge]: event}
    return client.post(f"/api/forge/{slug}/events", data=body, content_type="application/json",
                       headers={**sent, **(headers or {})})


def github_check_run(*, name: str, head_sha: str, branch: str, number: int, conclusion: str = "failure",
                     summary: str = "", text: str = "") -> dict[str, Any]:
    """A ``check_run`` event, action ``completed`` (docs.github.com: webhook events, check_run)."""
    return {"action": "completed", "check_run": {
        "id": 4, "name": name, "head_sha": head_sha, "status": "completed", "conclusion": conclusion,
        "html_url": "https://github.example/acme/app/runs/4", "details_url": "https://ci.example/4",
        "output": {"title": f"{name} {conclusion}", "summary": summary, "text": text},
        "check_suite": {"id": 5, "head_branch": branch, "head_sha": head_sha},
        "pull_requests": [{"number": number, "head": {"ref": branch, "sha": head_sha}, "base": {"ref": "main"}}],
    }, "repository": {"full_name": "acme/app"}, "sender": {"login": "ci-bot"}}


def github_status(*, sha: str, context: str, state: str = "failure", description: str = "") -> dict[str, Any]:
    """A ``status`` event (docs.github.com: webhook events, status)."""
    return {"id": 6, "sha": sha, "name": "acme/app", "state": state, "context": context, "description": description,
            "target_url": "https://ci.example/status/6", "branches": [], "repository": {"full_name": "acme/app"}}


def pull_request_event(*, number: int, branch: str, sha: str, state: str, merged: bool = False,
                       action: str = "closed") -> dict[str, Any]:
    """A ``pull_request`` event, GitHub's and Gitea's alike (both carry number and pull_request)."""
    return {"action": action, "number": number, "pull_request": {
        "number": number, "state": state, "merged": merged, "html_url": f"https://forge.example/pull/{number}",
        "head": {"ref": branch, "sha": sha}, "base": {"ref": "main"}}, "repository": {"full_name": "acme/app"}}


def github_review(*, number: int, branch: str, sha: str, state: str = "changes_requested",
                  review_id: int = 80) -> dict[str, Any]:
    """A ``pull_request_review`` event, action ``submitted`` (its review's state in lower case)."""
    return {"action": "submitted", "review": {"id": review_id, "state": state, "body": "Quote the fields.",
                                              "commit_id": sha, "user": {"login": "rita"}},
            **{key: value for key, value in pull_request_event(number=number, branch=branch, sha=sha,
                                                                state="open", action="submitted").items()
               if key != "action"}}


def gitea_review(*, number: int, branch: str, sha: str, rejected: bool = True) -> dict[str, Any]:
    """A ``pull_request_review_rejected`` (or ``_approved``) event: the pull request and ``review`` {type, content}."""
    kind = "pull_request_review_rejected" if rejected else "pull_request_review_approved"
    return {**pull_request_event(number=number, branch=branch, sha=sha, state="open", action="reviewed"),
            "review": {"type": kind, "content": "Quote the fields."}}


def gitlab_pipeline(*, sha: str, branch: str, iid: int, job: str, status: str = "failed",
                    failure_reason: str = "script_failure") -> dict[str, Any]:
    """A ``Pipeline Hook`` (docs.gitlab.com: webhook events, pipeline events)."""
    return {"object_kind": "pipeline", "object_attributes": {
        "id": 31, "ref": branch, "tag": False, "sha": sha, "status": status, "detailed_status": status,
        "url": "https://gitlab.example/acme/platform/app/-/pipelines/31"},
        "merge_request": {"id": 99, "iid": iid, "source_branch": branch, "target_branch": "main"},
        "builds": [{"id": 380, "stage": "test", "name": job, "status": status, "failure_reason": failure_reason,
                    "allow_failure": False}, {"id": 381, "stage": "build", "name": "build", "status": "success",
                                              "allow_failure": False}],
        "project": {"path_with_namespace": "acme/platform/app"}}


def gitlab_merge_request(*, iid: int, branch: str, sha: str, state: str = "merged", action: str = "merge",
                         reviewers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A ``Merge Request Hook`` (docs.gitlab.com: webhook events, merge request events)."""
    return {"object_kind": "merge_request", "event_type": "merge_request", "user": {"username": "rita"},
            "object_attributes": {"id": 99, "iid": iid, "state": state, "action": action, "source_branch": branch,
                                  "target_branch": "main", "last_commit": {"id": sha}},
            "reviewers": reviewers or [], "project": {"path_with_namespace": "acme/platform/app"}}


def gitlab_note(*, iid: int, branch: str) -> dict[str, Any]:
    """A ``Note Hook`` on a merge request's diff (docs.gitlab.com: webhook events, comment events)."""
    return {"object_kind": "note", "event_type": "note", "user": {"username": "rita"},
            "object_attributes": {"id": 1244, "note": "Quote it.", "noteable_type": "MergeRequest", "type": "DiffNote",
                                  "position": {"new_path": "src/export.py", "new_line": 1}},
            "merge_request": {"id": 99, "iid": iid, "source_branch": branch, "target_branch": "main"}}
