"""GitHub's REST API (and GitHub Enterprise Server's, at its /api/v3), as GitHub's OpenAPI description
(github/rest-api-description, api.github.com.2022-11-28) describes it.

Every request carries ``Authorization: Bearer <token>``, ``Accept: application/vnd.github+json`` and
``X-GitHub-Api-Version: 2022-11-28``. A pull request is opened with ``POST /repos/{owner}/{repo}/pulls``
(``pulls/create``: ``title``, ``head``, ``base``, ``body``); one that exists already is a 422 whose
``errors`` say "A pull request already exists", and is found with ``GET /repos/{owner}/{repo}/pulls``
filtered by ``head`` (``owner:branch``), ``base`` and ``state=open``. A commit's checks are its check runs
(``checks/list-for-ref``) and its commit statuses (``repos/get-combined-status-for-ref``).
"""

from __future__ import annotations

from typing import Any

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

API_VERSION = "2022-11-28"
# A commit status's state, as a check's status and conclusion.
_STATUS_STATES = {"success": ("completed", "success"), "failure": ("completed", "failure"),
                  "error": ("completed", "failure"), "pending": ("in_progress", None)}
_REVIEW_STATES = {"APPROVED": "approved", "CHANGES_REQUESTED": "changes_requested", "COMMENTED": "commented",
                  "DISMISSED": "dismissed", "PENDING": "pending"}


class GitHubClient:
    forge = "github"

    def __init__(self, *, api_url: str, repo: str, token: Secret, timeout: float) -> None:
        self._repo = repo
        self._owner = repo.split("/", 1)[0]
        self._http = ForgeHttp(forge="GitHub", base_url=api_url, token=token, timeout=timeout,
                               headers={"Authorization": f"Bearer {token.value}",
                                        "Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION})

    def pull_request_find(self, *, head: str, base: str) -> PullRequest | None:
        found = self._http.get(f"/repos/{self._repo}/pulls",
                               {"state": "open", "head": f"{self._owner}:{head}", "base": base, "per_page": 100})
        return _pull_request(found[0]) if found else None

    def pull_request_open(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        path = f"/repos/{self._repo}/pulls"
        try:
            return _pull_request(self._http.post(path, {"title": title, "head": head, "base": base, "body": body}))
        except ForgeError as error:
            if error.status == 422 and "already exists" in str(error):
                raise PullRequestExists(str(error), status=422) from error
            raise

    def pull_request_get(self, *, number: int) -> PullRequest:
        return _pull_request(self._http.get(f"/repos/{self._repo}/pulls/{number}"))

    def checks_list(self, *, ref: str) -> list[Check]:
        runs = self._http.pages(f"/repos/{self._repo}/commits/{ref}/check-runs", {}, size_name="per_page",
                                items=lambda answer: answer["check_runs"])
        checks = [Check(name=run["name"], status=_run_status(run["status"]), conclusion=run.get("conclusion"),
                        url=run.get("html_url") or run.get("details_url") or "",
                        summary=_output_text(run.get("output") or {})) for run in runs]
        combined = self._http.get(f"/repos/{self._repo}/commits/{ref}/status", {"per_page": 100})
        for status in combined.get("statuses") or []:
            state, conclusion = _STATUS_STATES.get(status["state"], ("in_progress", None))
            checks.append(Check(name=status["context"], status=state, conclusion=conclusion,
                                url=status.get("target_url") or "", summary=status.get("description") or ""))
        return checks

    def check_log(self, *, check: Check) -> str:
        # A check run's output (title, summary, text) is its summary already; an Actions job's log is a
        # zip archive behind a redirect, not read.
        return ""

    def reviews_list(self, *, number: int) -> list[Review]:
        return [Review(id=str(review["id"]), state=_REVIEW_STATES.get(review["state"], review["state"].lower()),
                       body=review.get("body") or "", author=(review.get("user") or {}).get("login", ""),
                       url=review.get("html_url") or "", commit=review.get("commit_id") or "")
                for review in self._http.pages(f"/repos/{self._repo}/pulls/{number}/reviews", {},
                                               size_name="per_page")]

    def review_comments_list(self, *, number: int) -> list[ReviewComment]:
        return [ReviewComment(id=str(comment["id"]), review_id=_text_or_none(comment.get("pull_request_review_id")),
                              path=comment.get("path") or "", line=comment.get("line"), body=comment.get("body") or "",
                              author=(comment.get("user") or {}).get("login", ""), url=comment.get("html_url") or "")
                for comment in self._http.pages(f"/repos/{self._repo}/pulls/{number}/comments", {},
                                                size_name="per_page")]


def _pull_request(found: dict[str, Any]) -> PullRequest:
    state = "merged" if found.get("merged") or found.get("merged_at") else found["state"]
    return PullRequest(number=int(found["number"]), url=found["html_url"], state=state,
                       head_branch=found["head"]["ref"], base_branch=found["base"]["ref"],
                       head_sha=found["head"].get("sha") or "")


def _run_status(status: str) -> str:
    # GitHub Actions adds waiting, requested and pending to queued, in_progress and completed.
    return status if status in ("in_progress", "completed") else "queued"


def _output_text(output: dict[str, Any]) -> str:
    return "\n\n".join(part for part in (output.get("title"), output.get("summary"), output.get("text")) if part)


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
