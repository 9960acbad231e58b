"""Gitea's REST API (v1), which Forgejo serves too, as Gitea's Swagger description
(go-gitea/gitea, templates/swagger/v1_json.tmpl) describes it.

Every request carries ``Authorization: token <token>``. A pull request is opened with
``POST /repos/{owner}/{repo}/pulls`` (``repoCreatePullRequest``: ``head``, ``base``, ``title``, ``body``);
one open already for the same branches is a 409, and is found among ``GET /repos/{owner}/{repo}/pulls
?state=open`` by its head and base refs. A merged pull request is ``closed`` with ``merged`` true. A
commit's checks are its statuses (``GET /repos/{owner}/{repo}/commits/{ref}/status``); reviews and their
comments are ``repoListPullReviews`` and ``repoGetPullReviewComments``. A ``CommitStatus`` names its state
``status`` (the ``CombinedStatus`` around them, ``state``).
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

_STATUS_STATES = {"success": ("completed", "success"), "failure": ("completed", "failure"),
                  "error": ("completed", "failure"), "warning": ("completed", "neutral"),
                  "pending": ("in_progress", None)}
_REVIEW_STATES = {"APPROVED": "approved", "REQUEST_CHANGES": "changes_requested", "COMMENT": "commented",
                  "PENDING": "pending", "REQUEST_REVIEW": "pending"}


class GiteaClient:
    forge = "gitea"

    def __init__(self, *, api_url: str, repo: str, token: Secret, timeout: float) -> None:
        self._repo = repo
        self._http = ForgeHttp(forge="Gitea", base_url=api_url, token=token, timeout=timeout,
                               headers={"Authorization": f"token {token.value}", "Accept": "application/json"})

    def pull_request_find(self, *, head: str, base: str) -> PullRequest | None:
        for found in self._http.pages(f"/repos/{self._repo}/pulls", {"state": "open"}, size_name="limit"):
            if found["head"]["ref"] == head and found["base"]["ref"] == base:
                return _pull_request(found)
        return None

    def pull_request_open(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        try:
            return _pull_request(self._http.post(f"/repos/{self._repo}/pulls",
                                                 {"head": head, "base": base, "title": title, "body": body}))
        except ForgeError as error:
            if error.status == 409:
                raise PullRequestExists(str(error), status=409) from error
            raise

    def pull_request_get(self, *, number: int) -> PullRequest:
        return _pull_request(self._http.get(f"/repos/{self._repo}/pulls/{number}"))

    def checks_list(self, *, ref: str) -> list[Check]:
        combined = self._http.get(f"/repos/{self._repo}/commits/{ref}/status")
        checks = []
        for status in combined.get("statuses") or []:
            state, conclusion = _STATUS_STATES.get(status.get("status") or "", ("queued", None))
            checks.append(Check(name=status.get("context") or "", status=state, conclusion=conclusion,
                                url=status.get("target_url") or "", summary=status.get("description") or ""))
        return checks

    def check_log(self, *, check: Check) -> str:
        # A commit status carries its description and a link, no log.
        return ""

    def reviews_list(self, *, number: int) -> list[Review]:
        return [_review(found) for found in self._reviews(number)]

    def review_comments_list(self, *, number: int) -> list[ReviewComment]:
        comments = []
        for review in self._reviews(number):
            for found in self._http.get(f"/repos/{self._repo}/pulls/{number}/reviews/{review['id']}/comments") or []:
                comments.append(ReviewComment(
                    id=str(found["id"]), review_id=str(review["id"]), path=found.get("path") or "",
                    line=found.get("position") or None, body=found.get("body") or "",
                    author=(found.get("user") or {}).get("login", ""), url=found.get("html_url") or ""))
        return comments

    def _reviews(self, number: int) -> list[dict[str, Any]]:
        return list(self._http.pages(f"/repos/{self._repo}/pulls/{number}/reviews", {}, size_name="limit"))


def _pull_request(found: dict[str, Any]) -> PullRequest:
    state = "merged" if found.get("merged") else found["state"]
    return PullRequest(number=int(found["number"]), url=found["html_url"], state=state,
                       head_branch=found["head"]["ref"], base_branch=found["base"]["ref"],
                       head_sha=found["head"].get("sha") or "")


def _review(found: dict[str, Any]) -> Review:
    state = "dismissed" if found.get("dismissed") else _REVIEW_STATES.get(found["state"], found["state"].lower())
    return Review(id=str(found["id"]), state=state, body=found.get("body") or "",
                  author=(found.get("user") or {}).get("login", ""), url=found.get("html_url") or "",
                  commit=found.get("commit_id") or "")
