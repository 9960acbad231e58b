"""A local stand-in of GitHub's REST API, written from GitHub's OpenAPI description (github/rest-api-description,
descriptions/api.github.com/api.github.com.2022-11-28.yaml):

- ``pulls/list`` — ``GET /repos/{owner}/{repo}/pulls``, filtered by ``state`` (default open), ``head``
  (``user:ref-name``) and ``base``, paged by ``per_page``/``page``: ``pull-request-simple`` items;
- ``pulls/create`` — ``POST /repos/{owner}/{repo}/pulls``, ``head`` and ``base`` required, ``title`` unless
  ``issue``: 201 with a ``pull-request``; 422 ``validation_failed`` (``message``, ``errors`` [{``resource``,
  ``field``, ``code``, ``message``}]) for a head or base that is no branch, and "A pull request already exists
  for owner:branch." for a second open one;
- ``pulls/get`` — ``GET /repos/{owner}/{repo}/pulls/{pull_number}``: ``state`` open or closed, ``merged``; an
  open pull request's ``head.sha`` is its branch's head, so a push to the branch moves it;
- ``checks/list-for-ref`` — ``GET /repos/{owner}/{repo}/commits/{ref}/check-runs``: ``total_count``,
  ``check_runs`` [``check-run``: name, status, conclusion, html_url, details_url, output];
- ``repos/get-combined-status-for-ref`` — ``GET …/commits/{ref}/status``: ``state``, ``statuses`` [context,
  state, target_url, description];
- ``pulls/list-reviews`` and ``pulls/list-review-comments`` — ``GET …/pulls/{pull_number}/reviews`` and
  ``…/comments``.

Every request must carry ``Authorization: Bearer <token>`` (else 401 "Bad credentials"), ``Accept:
application/vnd.github+json`` and ``X-GitHub-Api-Version: 2022-11-28`` (another version is a 400).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.standins.forge_base import Answer, ForgeStandin, Request

DOCS = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
OWNER_REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"


@dataclass
class GitHubStandin(ForgeStandin):
    repo: str = "acme/app"
    pulls: list[dict[str, Any]] = field(default_factory=list)
    check_runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    statuses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def routes(self):
        return [
            ("GET", f"{OWNER_REPO}/pulls", self._list),
            ("POST", f"{OWNER_REPO}/pulls", self._create),
            ("GET", rf"{OWNER_REPO}/pulls/(?P<number>\d+)", self._get),
            ("GET", f"{OWNER_REPO}/commits/(?P<ref>[^/]+)/check-runs", self._check_runs),
            ("GET", f"{OWNER_REPO}/commits/(?P<ref>[^/]+)/status", self._status),
            ("GET", rf"{OWNER_REPO}/pulls/(?P<number>\d+)/reviews", self._reviews),
            ("GET", rf"{OWNER_REPO}/pulls/(?P<number>\d+)/comments", self._comments),
        ]

    def authenticated(self, request: Request) -> Answer | None:
        if request.headers.get("authorization") != f"Bearer {self.token}":
            self.violation(f"{request.method} {request.path}: Authorization is not 'Bearer <the token>'")
            return 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest",
                         "status": "401"}
        if request.headers.get("accept") != "application/vnd.github+json":
            self.violation(f"{request.method} {request.path}: Accept is not application/vnd.github+json")
        version = request.headers.get("x-github-api-version")
        if version != "2022-11-28":
            self.violation(f"{request.method} {request.path}: X-GitHub-Api-Version is {version!r}")
            if version is not None:
                return 400, {"message": f"Unsupported 'X-GitHub-Api-Version' header: {version}"}
        return None

    def pull_request_add(self, *, head: str, base: str, title: str = "Someone else's", state: str = "open",
                         merged: bool = False) -> dict[str, Any]:
        """A pull request made on the forge by someone else (the console should find and reuse it)."""
        with self.lock:
            return self._made(head=head, base=base, title=title, body="", state=state, merged=merged)

    def _known(self, owner: str, repo: str) -> bool:
        return f"{owner}/{repo}" == self.repo

    def _list(self, request: Request, owner: str, repo: str) -> Answer:
        if not self._known(owner, repo):
            return 404, {"message": "Not Found"}
        state, head, base = request.query.get("state", "open"), request.query.get("head"), request.query.get("base")
        if head is not None and ":" not in head:
            self.violation(f"pulls/list: head {head!r} is not user:ref-name")
        found = [pull for pull in self.pulls if (state == "all" or pull["state"] == state)
                 and (head is None or f"{owner}:{pull['head']['ref']}" == head)
                 and (base is None or pull["base"]["ref"] == base)]
        return 200, _page([self._fresh(pull) for pull in found], request)

    def _create(self, request: Request, owner: str, repo: str) -> Answer:
        if not self._known(owner, repo):
            return 404, {"message": "Not Found"}
        body = request.body or {}
        missing = [name for name in ("head", "base") if not isinstance(body.get(name), str) or not body.get(name)]
        if not body.get("title") and body.get("issue") is None:
            missing.append("title")
        unknown = set(body) - {"title", "head", "head_repo", "base", "body", "maintainer_can_modify", "draft", "issue"}
        if missing or unknown:
            self.violation(f"pulls/create: missing {missing}, unknown {sorted(unknown)}")
            return 422, {"message": "Invalid request.", "documentation_url": DOCS}
        for name in ("head", "base"):
            if self.remote is not None and self.branch_head(body[name]) is None:
                return 422, {"message": "Validation Failed", "documentation_url": DOCS,
                             "errors": [{"resource": "PullRequest", "field": name, "code": "invalid"}]}
        if self.remote is not None and self.branch_head(body["head"]) == self.branch_head(body["base"]):
            return 422, {"message": "Validation Failed", "documentation_url": DOCS, "errors": [
                {"resource": "PullRequest", "code": "custom",
                 "message": f"No commits between {body['base']} and {body['head']}"}]}
        if any(pull["state"] == "open" and pull["head"]["ref"] == body["head"] and pull["base"]["ref"] == body["base"]
               for pull in self.pulls):
            return 422, {"message": "Validation Failed", "documentation_url": DOCS, "errors": [
                {"resource": "PullRequest", "code": "custom",
                 "message": f"A pull request already exists for {owner}:{body['head']}."}]}
        return 201, self._made(head=body["head"], base=body["base"], title=body["title"], body=body.get("body") or "")

    def _get(self, request: Request, owner: str, repo: str, number: str) -> Answer:
        pull = next((pull for pull in self.pulls if pull["number"] == int(number)), None)
        return (200, self._fresh(pull)) if pull and self._known(owner, repo) else (404, {"message": "Not Found"})

    def _fresh(self, pull: dict[str, Any]) -> dict[str, Any]:
        """The pull request as it is now: an open one's head is its branch's head (a push to it updates it)."""
        if pull["state"] == "open":
            pull["head"]["sha"] = self.branch_head(pull["head"]["ref"]) or pull["head"]["sha"]
        return pull

    def _check_runs(self, request: Request, owner: str, repo: str, ref: str) -> Answer:
        runs = self.check_runs.get(ref, [])
        return 200, {"total_count": len(runs), "check_runs": _page(runs, request)}

    def _status(self, request: Request, owner: str, repo: str, ref: str) -> Answer:
        statuses = self.statuses.get(ref, [])
        states = {status["state"] for status in statuses}
        combined = "failure" if states & {"error", "failure"} else "pending" if not statuses or "pending" in states \
            else "success"
        return 200, {"state": combined, "sha": ref, "total_count": len(statuses), "statuses": statuses}

    def _reviews(self, request: Request, owner: str, repo: str, number: str) -> Answer:
        return 200, _page(self.reviews.get(int(number), []), request)

    def _comments(self, request: Request, owner: str, repo: str, number: str) -> Answer:
        return 200, _page(self.comments.get(int(number), []), request)

    def _made(self, *, head: str, base: str, title: str, body: str, state: str = "open",
              merged: bool = False) -> dict[str, Any]:
        number = len(self.pulls) + 1
        pull = {
            "id": 1000 + number, "number": number, "state": state, "title": title, "body": body, "merged": merged,
            "merged_at": "2026-12-06T10:00:00Z" if merged else None,
            "url": f"{self.api_url}/repos/{self.repo}/pulls/{number}",
            "html_url": f"https://github.example/{self.repo}/pull/{number}",
            "head": {"ref": head, "sha": self.branch_head(head) or "0" * 40,
                     "label": f"{self.repo.split('/')[0]}:{head}"},
            "base": {"ref": base, "sha": self.branch_head(base) or "0" * 40},
        }
        self.pulls.append(pull)
        return pull


def _page(items: list[Any], request: Request) -> list[Any]:
    size, page = int(request.query.get("per_page", 30)), int(request.query.get("page", 1))
    return items[(page - 1) * size: page * size]
