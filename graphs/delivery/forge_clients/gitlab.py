"""GitLab's REST API (v4), as its documentation describes it (doc/api/merge_requests.md, pipelines.md,
jobs.md, notes.md).

Every request carries ``PRIVATE-TOKEN: <token>``; the project is named by its URL-encoded path
(``/projects/group%2Fapp``). A merge request is opened with ``POST /projects/:id/merge_requests``
(``source_branch``, ``target_branch``, ``title``, ``description``); one open already for the source branch
is a 409 ("Another open merge request already exists for this source branch"), and is found with
``GET /projects/:id/merge_requests?state=opened&source_branch=…&target_branch=…``. Its number is its
``iid``. A commit's checks are the jobs of its latest pipeline (``GET /projects/:id/pipelines?sha=…``,
``GET /projects/:id/pipelines/:pipeline_id/jobs``); a review is a reviewer's state
(``GET …/merge_requests/:iid/reviewers``) and line comments are the merge request's diff notes.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from graphs.delivery.credentials import Secret
from graphs.delivery.forge_clients.base import (
    Check,
    ForgeError,
    ForgeHttp,
    PullRequest,
    PullRequestExists,
    Review,
    ReviewComment,
)

# A job's (or pipeline's) status as a check's status and conclusion.
_JOB_STATUSES = {
    "success": ("completed", "success"), "failed": ("completed", "failure"), "canceled": ("completed", "cancelled"),
    "skipped": ("completed", "skipped"), "running": ("in_progress", None),
}
_MERGE_REQUEST_STATES = {"opened": "open", "locked": "open", "merged": "merged", "closed": "closed"}
_REVIEWER_STATES = {"approved": "approved", "requested_changes": "changes_requested", "reviewed": "commented",
                    "unapproved": "dismissed", "unreviewed": "pending"}


class GitLabClient:
    forge = "gitlab"

    def __init__(self, *, api_url: str, repo: str, token: Secret, timeout: float) -> None:
        self._project = f"/projects/{quote(repo, safe='')}"
        self._http = ForgeHttp(forge="GitLab", base_url=api_url, token=token, timeout=timeout,
                               headers={"PRIVATE-TOKEN": token.value})

    def pull_request_find(self, *, head: str, base: str) -> PullRequest | None:
        found = self._http.get(f"{self._project}/merge_requests",
                               {"state": "opened", "source_branch": head, "target_branch": base})
        return _merge_request(found[0]) if found else None

    def pull_request_open(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        path = f"{self._project}/merge_requests"
        try:
            return _merge_request(self._http.post(path, {"source_branch": head, "target_branch": base, "title": title,
                                                         "description": body}))
        except ForgeError as error:
            if error.status == 409:
                raise PullRequestExists(str(error), status=409) from error
            raise

    def pull_request_get(self, *, number: int) -> PullRequest:
        return _merge_request(self._http.get(f"{self._project}/merge_requests/{number}"))

    def checks_list(self, *, ref: str) -> list[Check]:
        pipelines = self._http.get(f"{self._project}/pipelines", {"sha": ref, "order_by": "id", "sort": "desc"})
        if not pipelines:
            return []
        pipeline = pipelines[0]
        jobs = list(self._http.pages(f"{self._project}/pipelines/{pipeline['id']}/jobs", {}, size_name="per_page"))
        if not jobs:
            return [_check("pipeline", pipeline)]
        return [_check(job["name"], job) for job in jobs]

    def check_log(self, *, check: Check) -> str:
        if not check.log_ref:
            return ""
        return self._http.text(f"{self._project}/jobs/{quote(check.log_ref, safe='')}/trace")

    def reviews_list(self, *, number: int) -> list[Review]:
        reviewers = self._http.get(f"{self._project}/merge_requests/{number}/reviewers")
        return [Review(id=str((reviewer.get("user") or {}).get("id", "")),
                       state=_REVIEWER_STATES.get(reviewer.get("state", ""), reviewer.get("state", "")), body="",
                       author=(reviewer.get("user") or {}).get("username", ""), url="")
                for reviewer in reviewers or []]

    def review_comments_list(self, *, number: int) -> list[ReviewComment]:
        notes = self._http.pages(f"{self._project}/merge_requests/{number}/notes",
                                 {"sort": "asc", "order_by": "created_at"}, size_name="per_page")
        return [ReviewComment(id=str(note["id"]), review_id=None, path=(note.get("position") or {}).get("new_path", ""),
                              line=(note.get("position") or {}).get("new_line"), body=note.get("body") or "",
                              author=(note.get("author") or {}).get("username", ""), url="")
                for note in notes if note.get("type") == "DiffNote" and not note.get("system")]


def _merge_request(found: dict[str, Any]) -> PullRequest:
    return PullRequest(number=int(found["iid"]), url=found["web_url"],
                       state=_MERGE_REQUEST_STATES.get(found["state"], "open"), head_branch=found["source_branch"],
                       base_branch=found["target_branch"], head_sha=found.get("sha") or "")


def _check(name: str, found: dict[str, Any]) -> Check:
    status, conclusion = _JOB_STATUSES.get(found["status"], ("queued", None))
    if conclusion == "failure" and found.get("allow_failure"):
        conclusion = "neutral"
    return Check(name=name, status=status, conclusion=conclusion, url=found.get("web_url") or "",
                 summary=found.get("failure_reason") or "", log_ref=str(found.get("id") or ""))
