"""A forge's webhook event read into what the console acts on (``ForgeNews``), in the forge clients' words.

Each forge's payloads as its documentation describes them:

- GitHub (docs.github.com, "Webhook events and payloads"; the event in ``X-GitHub-Event``): ``check_run``
  (``check_run``: name, head_sha, status, conclusion, html_url, output {title, summary, text},
  pull_requests), ``check_suite`` (``check_suite``: head_branch, head_sha, conclusion, pull_requests),
  ``status`` (sha, state, context, description, target_url, branches), ``pull_request`` (number,
  ``pull_request``: state, merged, head {ref, sha}) and ``pull_request_review`` (``review``: state,
  commit_id; ``pull_request``);
- GitLab (docs.gitlab.com, "Webhook events"; ``X-Gitlab-Event``): ``Pipeline Hook`` (``object_attributes``:
  ref, sha, status, url; ``builds``: name, status, failure_reason, allow_failure; ``merge_request``),
  ``Merge Request Hook`` (``object_attributes``: iid, state, source_branch, last_commit; ``reviewers`` with
  their ``state``) and ``Note Hook`` (``merge_request``, ``object_attributes.noteable_type``);
- Gitea and Forgejo (``X-Gitea-Event``, or ``X-Forgejo-Event``): ``pull_request`` (number,
  ``pull_request``: state, merged, head {ref, sha}), ``pull_request_review_approved`` /
  ``_rejected`` / ``_comment`` (the same, with ``review``) and ``status`` (sha, state, context,
  description, target_url).

What an event does not carry — a review's line comments, a GitLab reviewer's notes — is read through the
project's forge client afterwards (``reviews_to_read``). An event of any other kind says nothing here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from graphs.delivery.forge_clients.base import Check

# A GitHub commit status's and a Gitea status's state, as a check's status and conclusion (as the clients read).
_STATUS_STATES = {"success": ("completed", "success"), "failure": ("completed", "failure"),
                  "error": ("completed", "failure"), "warning": ("completed", "neutral"),
                  "pending": ("in_progress", None)}
_GITLAB_JOB_STATES = {"success": ("completed", "success"), "failed": ("completed", "failure"),
                      "canceled": ("completed", "cancelled"), "skipped": ("completed", "skipped")}
_GITLAB_MR_STATES = {"opened": "open", "locked": "open", "merged": "merged", "closed": "closed"}
# Gitea's review events: a review that requests changes is "rejected".
_GITEA_REVIEW_EVENTS = ("pull_request_review_approved", "pull_request_review_rejected",
                        "pull_request_review_comment")


@dataclass(frozen=True)
class ForgeNews:
    """What an event says of a pull request or a commit: where (``branch``, ``pull_request_number``,
    ``head_sha`` — whichever the event names), the checks it reports of ``head_sha``, the pull request's
    state when it says it (open, merged, closed), and whether a review may ask for changes
    (``reviews_to_read``: its comments are read through the client)."""

    branch: str = ""
    pull_request_number: int | None = None
    head_sha: str = ""
    checks: tuple[Check, ...] = ()
    pull_request_state: str = ""
    reviews_to_read: bool = False

    def says_anything(self) -> bool:
        return bool(self.checks or self.pull_request_state or self.reviews_to_read)


def forge_news(forge: str, event: str, payload: Mapping[str, Any]) -> ForgeNews:
    """What the ``event`` (its header's value) of ``forge`` with ``payload`` says; empty news for an event
    the console does not act on."""
    reader = _READERS.get(forge, {}).get(event)
    if reader is None and forge == "gitea" and event in _GITEA_REVIEW_EVENTS:
        reader = _gitea_review
    return reader(payload) if reader is not None else ForgeNews()


def _github_check_run(payload: Mapping[str, Any]) -> ForgeNews:
    run = _dict(payload.get("check_run"))
    output = _dict(run.get("output"))
    summary = "\n\n".join(str(part) for part in (output.get("title"), output.get("summary"), output.get("text"))
                          if part)
    status = run.get("status") if run.get("status") in ("in_progress", "completed") else "queued"
    check = Check(name=str(run.get("name") or ""), status=str(status), conclusion=run.get("conclusion"),
                  url=str(run.get("html_url") or run.get("details_url") or ""), summary=summary)
    pulls = _list(run.get("pull_requests"))
    return ForgeNews(branch=str(_dict(run.get("check_suite")).get("head_branch") or ""),
                     pull_request_number=_number(pulls[0].get("number")) if pulls else None,
                     head_sha=str(run.get("head_sha") or ""), checks=(check,))


def _github_check_suite(payload: Mapping[str, Any]) -> ForgeNews:
    suite = _dict(payload.get("check_suite"))
    if suite.get("status") != "completed" or suite.get("conclusion") in (None, "success", "neutral", "skipped"):
        return ForgeNews()
    app = str(_dict(suite.get("app")).get("name") or "check suite")
    pulls = _list(suite.get("pull_requests"))
    check = Check(name=app, status="completed", conclusion=str(suite.get("conclusion")), url="",
                  summary=f"The check suite of {app} concluded {suite.get('conclusion')}.")
    return ForgeNews(branch=str(suite.get("head_branch") or ""), head_sha=str(suite.get("head_sha") or ""),
                     pull_request_number=_number(pulls[0].get("number")) if pulls else None, checks=(check,))


def _status(payload: Mapping[str, Any]) -> ForgeNews:
    state, conclusion = _STATUS_STATES.get(str(payload.get("state") or ""), ("queued", None))
    check = Check(name=str(payload.get("context") or ""), status=state, conclusion=conclusion,
                  url=str(payload.get("target_url") or ""), summary=str(payload.get("description") or ""))
    return ForgeNews(head_sha=str(payload.get("sha") or ""), checks=(check,))


def _pull_request(payload: Mapping[str, Any]) -> ForgeNews:
    pull = _dict(payload.get("pull_request"))
    head = _dict(pull.get("head"))
    state = "merged" if pull.get("merged") else str(pull.get("state") or "")
    return ForgeNews(branch=str(head.get("ref") or ""), head_sha=str(head.get("sha") or ""),
                     pull_request_number=_number(payload.get("number") or pull.get("number")),
                     pull_request_state=state if state in ("open", "merged", "closed") else "")


def _github_review(payload: Mapping[str, Any]) -> ForgeNews:
    news = _pull_request(payload)
    review = _dict(payload.get("review"))
    wants = payload.get("action") == "submitted" and str(review.get("state") or "").lower() == "changes_requested"
    return ForgeNews(branch=news.branch, pull_request_number=news.pull_request_number, head_sha=news.head_sha,
                     reviews_to_read=wants)


def _gitea_review(payload: Mapping[str, Any]) -> ForgeNews:
    news = _pull_request(payload)
    review = _dict(payload.get("review"))
    return ForgeNews(branch=news.branch, pull_request_number=news.pull_request_number, head_sha=news.head_sha,
                     reviews_to_read=review.get("type") == "pull_request_review_rejected")


def _gitlab_pipeline(payload: Mapping[str, Any]) -> ForgeNews:
    pipeline = _dict(payload.get("object_attributes"))
    checks = []
    for build in _list(payload.get("builds")):
        status, conclusion = _GITLAB_JOB_STATES.get(str(build.get("status") or ""), ("in_progress", None))
        if conclusion == "failure" and build.get("allow_failure"):
            conclusion = "neutral"
        checks.append(Check(name=str(build.get("name") or ""), status=status, conclusion=conclusion,
                            url=f"{pipeline.get('url') or ''}", summary=str(build.get("failure_reason") or ""),
                            log_ref=str(build.get("id") or "")))
    merge_request = _dict(payload.get("merge_request"))
    return ForgeNews(branch=str(pipeline.get("ref") or ""), head_sha=str(pipeline.get("sha") or ""),
                     pull_request_number=_number(merge_request.get("iid")), checks=tuple(checks))


def _gitlab_merge_request(payload: Mapping[str, Any]) -> ForgeNews:
    attributes = _dict(payload.get("object_attributes"))
    reviewers = _list(payload.get("reviewers"))
    return ForgeNews(branch=str(attributes.get("source_branch") or ""),
                     head_sha=str(_dict(attributes.get("last_commit")).get("id") or ""),
                     pull_request_number=_number(attributes.get("iid")),
                     pull_request_state=_GITLAB_MR_STATES.get(str(attributes.get("state") or ""), ""),
                     reviews_to_read=any(reviewer.get("state") == "requested_changes" for reviewer in reviewers))


def _gitlab_note(payload: Mapping[str, Any]) -> ForgeNews:
    note = _dict(payload.get("object_attributes"))
    merge_request = _dict(payload.get("merge_request"))
    if note.get("noteable_type") != "MergeRequest" or not merge_request:
        return ForgeNews()
    return ForgeNews(branch=str(merge_request.get("source_branch") or ""),
                     pull_request_number=_number(merge_request.get("iid")), reviews_to_read=True)


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_READERS: dict[str, dict[str, Callable[[Mapping[str, Any]], ForgeNews]]] = {
    "github": {"check_run": _github_check_run, "check_suite": _github_check_suite, "status": _status,
               "pull_request": _pull_request, "pull_request_review": _github_review},
    "gitlab": {"Pipeline Hook": _gitlab_pipeline, "Merge Request Hook": _gitlab_merge_request,
               "Note Hook": _gitlab_note},
    "gitea": {"pull_request": _pull_request, "status": _status},
}
