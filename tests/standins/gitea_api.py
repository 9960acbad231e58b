"""A local stand-in of Gitea's REST API (v1), which Forgejo serves too, written from Gitea's Swagger
description (go-gitea/gitea, templates/swagger/v1_json.tmpl):

- ``repoListPullRequests`` — ``GET /repos/{owner}/{repo}/pulls``, ``state`` (open, closed, all), paged by
  ``page`` and ``limit``: ``PullRequest`` items (``number``, ``state``, ``merged``, ``html_url``, ``head`` and
  ``base`` with ``ref`` and ``sha``);
- ``repoCreatePullRequest`` — ``POST /repos/{owner}/{repo}/pulls`` with a ``CreatePullRequestOption``
  (``head``, ``base``, ``title``, ``body``, …): 201 ``PullRequest``; 409 (an ``APIError``: ``message``, ``url``)
  when one is open for the same head and base; 422 ``validationError`` for what it lacks;
- ``repoGetPullRequest`` — ``GET /repos/{owner}/{repo}/pulls/{index}``;
- ``repoGetCombinedStatusByRef`` — ``GET /repos/{owner}/{repo}/commits/{ref}/status``: ``CombinedStatus``
  (``state``, ``statuses`` of ``CommitStatus``: ``context``, ``status``, ``target_url``, ``description``);
- ``repoListPullReviews`` and ``repoGetPullReviewComments`` — ``GET …/pulls/{index}/reviews`` (``PullReview``:
  ``id``, ``state`` APPROVED/PENDING/COMMENT/REQUEST_CHANGES/REQUEST_REVIEW, ``body``, ``user``, ``dismissed``)
  and ``…/reviews/{id}/comments`` (``PullReviewComment``: ``path``, ``position``, ``body``).

Every request must carry ``Authorization: token <token>`` (the ``AuthorizationHeaderToken`` security
definition), else 401.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.standins.forge_base import Answer, ForgeStandin, Request

OWNER_REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
DOCS = "https://gitea.example/api/swagger"
_OPTION_FIELDS = {"assignee", "assignees", "base", "body", "due_date", "head", "labels", "milestone", "title",
                  "reviewers", "team_reviewers"}


@dataclass
class GiteaStandin(ForgeStandin):
    repo: str = "acme/app"
    prefix = "/api/v1"
    pulls: list[dict[str, Any]] = field(default_factory=list)
    statuses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    review_comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def routes(self):
        return [
            ("GET", f"{OWNER_REPO}/pulls", self._list),
            ("POST", f"{OWNER_REPO}/pulls", self._create),
            ("GET", rf"{OWNER_REPO}/pulls/(?P<index>\d+)", self._get),
            ("GET", f"{OWNER_REPO}/commits/(?P<ref>[^/]+)/status", self._status),
            ("GET", rf"{OWNER_REPO}/pulls/(?P<index>\d+)/reviews", self._reviews),
            ("GET", rf"{OWNER_REPO}/pulls/(?P<index>\d+)/reviews/(?P<review>\d+)/comments", self._review_comments),
        ]

    def authenticated(self, request: Request) -> Answer | None:
        if request.headers.get("authorization") != f"token {self.token}":
            self.violation(f"{request.method} {request.path}: Authorization is not 'token <the token>'")
            return 401, {"message": "token is required", "url": DOCS}
        return None

    def pull_request_add(self, *, head: str, base: str, state: str = "open", merged: bool = False) -> dict[str, Any]:
        """A pull request made on the forge by someone else."""
        with self.lock:
            return self._made(head=head, base=base, title="Someone else's", body="", state=state, merged=merged)

    def _known(self, owner: str, repo: str) -> bool:
        return f"{owner}/{repo}" == self.repo

    def _list(self, request: Request, owner: str, repo: str) -> Answer:
        if not self._known(owner, repo):
            return 404, {"message": "The target couldn't be found.", "url": DOCS}
        state = request.query.get("state", "open")
        found = [pull for pull in self.pulls if state == "all" or pull["state"] == state]
        return 200, _page(found, request)

    def _create(self, request: Request, owner: str, repo: str) -> Answer:
        if not self._known(owner, repo):
            return 404, {"message": "The target couldn't be found.", "url": DOCS}
        body = request.body or {}
        unknown = set(body) - _OPTION_FIELDS
        missing = [name for name in ("head", "base", "title") if not body.get(name)]
        if unknown or missing:
            self.violation(f"repoCreatePullRequest: missing {missing}, not in CreatePullRequestOption:"
                           f" {sorted(unknown)}")
            return 422, {"message": f"{', '.join(missing) or 'body'}: Required", "url": DOCS}
        if self.remote is not None and self.branch_head(body["head"]) is None:
            return 404, {"message": f"branch {body['head']} does not exist", "url": DOCS}
        for pull in self.pulls:
            if pull["state"] == "open" and (pull["head"]["ref"], pull["base"]["ref"]) == (body["head"], body["base"]):
                return 409, {"message": f"pull request already exists for these targets [id: {pull['id']}, issue_id:"
                                        f" {pull['number']}, head_repo_id: 1, base_repo_id: 1, head_branch:"
                                        f" {body['head']}, base_branch: {body['base']}]", "url": DOCS}
        return 201, self._made(head=body["head"], base=body["base"], title=body["title"], body=body.get("body") or "")

    def _get(self, request: Request, owner: str, repo: str, index: str) -> Answer:
        pull = next((pull for pull in self.pulls if pull["number"] == int(index)), None)
        return (200, pull) if pull and self._known(owner, repo) else (404, {"message": "Not Found", "url": DOCS})

    def _status(self, request: Request, owner: str, repo: str, ref: str) -> Answer:
        statuses = self.statuses.get(ref, [])
        states = {status["status"] for status in statuses}
        combined = "failure" if states & {"error", "failure"} else "pending" if not statuses or "pending" in states \
            else "success"
        return 200, {"state": combined, "sha": ref, "total_count": len(statuses), "statuses": statuses}

    def _reviews(self, request: Request, owner: str, repo: str, index: str) -> Answer:
        return 200, _page(self.reviews.get(int(index), []), request)

    def _review_comments(self, request: Request, owner: str, repo: str, index: str, review: str) -> Answer:
        return 200, self.review_comments.get(int(review), [])

    def _made(self, *, head: str, base: str, title: str, body: str, state: str = "open",
              merged: bool = False) -> dict[str, Any]:
        number = len(self.pulls) + 1
        pull = {
            "id": 700 + number, "number": number, "title": title, "body": body, "state": state, "merged": merged,
            "html_url": f"https://gitea.example/{self.repo}/pulls/{number}",
            "head": {"ref": head, "sha": self.branch_head(head) or "0" * 40, "label": head},
            "base": {"ref": base, "sha": self.branch_head(base) or "0" * 40, "label": base},
        }
        self.pulls.append(pull)
        return pull


def _page(items: list[Any], request: Request) -> list[Any]:
    size, page = int(request.query.get("limit", 30)), int(request.query.get("page", 1))
    return items[(page - 1) * size: page * size]
