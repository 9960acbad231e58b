"""What every forge client answers, in one vocabulary, and the HTTP they all speak.

A client is made for one project's forge: its API's address, the repository there and the token. Its
methods read and write what delivery needs now (a pull request found or opened) and what the feedback
from the forge needs (a pull request's state, the checks of a commit, reviews and their line comments),
each answer read into the dataclasses below whatever the forge calls things: a GitLab merge request is a
``PullRequest`` with its ``iid`` as ``number``; a Gitea commit status and a GitLab job are ``Check``\\ s
with GitHub's ``status`` and ``conclusion`` words.

Every request has an explicit timeout and follows no redirect. A forge that cannot be reached, times out
or answers 5xx or 429 raises ``ForgeError`` marked transient; any other 4xx is permanent, in words naming
the setting to correct (a refused token names its variable, never its value).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import httpx

from graphs.delivery.credentials import Secret, redacted
from graphs.delivery.failures import DeliveryFailed

# How much of a forge's error answer a failure quotes.
SAID_MAX_CHARS = 400
# Lists are read a page at a time, this many pages at most: a pull request's checks or reviews, not history.
PAGE_SIZE = 50
MAX_PAGES = 20
USER_AGENT = "WorkGraphConsole-Delivery/1"
# GitHub's words for a check's conclusion; a conclusion among these failed.
FAILED_CONCLUSIONS = frozenset({"failure", "timed_out", "action_required", "cancelled"})


@dataclass(frozen=True)
class PullRequest:
    """A pull request (GitLab: merge request) as the console reads it; ``state`` is open, merged or closed."""

    number: int
    url: str
    state: str
    head_branch: str
    base_branch: str
    head_sha: str


@dataclass(frozen=True)
class Check:
    """A check of a commit: a GitHub check run or commit status, a GitLab job, a Gitea status. ``status`` is
    queued, in_progress or completed; ``conclusion`` (once completed) success, failure, neutral, cancelled,
    skipped, timed_out or action_required."""

    name: str
    status: str
    conclusion: str | None
    url: str
    summary: str = ""
    # What the forge serves the check's log by, where it serves one apart (a GitLab job's id).
    log_ref: str = ""

    def failed(self) -> bool:
        """Return True once the check completed without succeeding."""
        return self.status == "completed" and self.conclusion in FAILED_CONCLUSIONS

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Review:
    """A review of a pull request: ``state`` approved, changes_requested, commented, dismissed or pending."""

    id: str
    state: str
    body: str
    author: str
    url: str
    commit: str = ""


@dataclass(frozen=True)
class ReviewComment:
    """A comment on a line of a pull request's change (``line`` in the new file; None when on no line)."""

    id: str
    review_id: str | None
    path: str
    line: int | None
    body: str
    author: str
    url: str


class ForgeError(DeliveryFailed):
    """A forge refused a request or could not be reached; ``status`` is its HTTP status, when it answered."""

    def __init__(self, message: str, *, status: int | None = None, transient: bool = False) -> None:
        super().__init__(message, transient=transient)
        self.status = status


class PullRequestExists(ForgeError):
    """The forge already has an open pull request for the branch: the caller finds it and reuses it."""


class ForgeClient(Protocol):
    """One forge's API for one repository, in the console's vocabulary."""

    forge: str

    def pull_request_find(self, *, head: str, base: str) -> PullRequest | None:
        """The open pull request from ``head`` into ``base``, or None."""
        ...

    def pull_request_open(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        """Open a pull request from ``head`` into ``base``; ``PullRequestExists`` when one is open already."""
        ...

    def pull_request_get(self, *, number: int) -> PullRequest:
        """The pull request ``number`` as it is now: open, merged or closed."""
        ...

    def checks_list(self, *, ref: str) -> list[Check]:
        """Every check of the commit ``ref``."""
        ...

    def check_log(self, *, check: Check) -> str:
        """The check's log as the forge serves it apart from the check, or "" where it serves none."""
        ...

    def reviews_list(self, *, number: int) -> list[Review]:
        """The reviews of pull request ``number``, oldest first."""
        ...

    def review_comments_list(self, *, number: int) -> list[ReviewComment]:
        """The comments on lines of pull request ``number``'s change, oldest first."""
        ...


class ForgeHttp:
    """JSON over HTTP to one forge's API, with its authentication headers, a timeout and no redirects."""

    def __init__(self, *, forge: str, base_url: str, headers: dict[str, str], token: Secret, timeout: float) -> None:
        self.forge = forge
        self._token = token
        self._options = {"base_url": base_url.rstrip("/"), "timeout": timeout, "follow_redirects": False,
                         "headers": {"User-Agent": USER_AGENT, **headers}}

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self.request("POST", path, json=body)

    def request(self, method: str, path: str, **options: Any) -> Any:
        """The decoded JSON answer of a 2xx; ``ForgeError`` otherwise (``PullRequestExists`` is the caller's)."""
        response = self._send(method, path, **options)
        return response.json() if response.content else None

    def text(self, path: str) -> str:
        """The text a GET of ``path`` answers (a log the API serves as plain text); ``ForgeError`` otherwise."""
        return self._send("GET", path).text

    def _send(self, method: str, path: str, **options: Any) -> httpx.Response:
        try:
            # A client a request: a delivery makes a few, and nothing is left open between them.
            with httpx.Client(**self._options) as client:
                response = client.request(method, path, **options)
        except httpx.TimeoutException:
            raise ForgeError(f"The {self.forge} API did not answer {method} {path} in time"
                             " (WORKGRAPH_DELIVERY_TIMEOUT_SECONDS).", transient=True) from None
        except httpx.HTTPError as error:
            raise ForgeError(f"Could not reach the {self.forge} API (forge_api_url):"
                             f" {self._said(type(error).__name__ + ': ' + str(error))}", transient=True) from None
        if response.is_success:
            return response
        raise self.refusal(response, method=method, path=path)

    def refusal(self, response: httpx.Response, *, method: str, path: str) -> ForgeError:
        """A failed answer in words: who refused what, and what the forge said."""
        code, said = response.status_code, self._said(response.text)
        where = f"The {self.forge} API answered {method} {path} with {code}"
        if code >= 500 or code == 429:
            return ForgeError(f"{where}: {said}", status=code, transient=True)
        if code in (401, 403):
            return ForgeError(f"{where}: it refused the token in {self._token.name} (forge_token_env), or the token"
                              f" may not do this. It said: {said}", status=code)
        if code == 404:
            return ForgeError(f"{where}: not found. Check forge_repo and forge_api_url. It said: {said}", status=code)
        return ForgeError(f"{where}: {said}", status=code)

    def pages(self, path: str, params: dict[str, Any], *, size_name: str, items: Callable[[Any], list] = list
              ) -> Iterator[Any]:
        """Every item of a paged list, a page at a time until a short page (``MAX_PAGES`` at most)."""
        for page in range(1, MAX_PAGES + 1):
            answer = self.get(path, {**params, size_name: PAGE_SIZE, "page": page})
            found = items(answer)
            yield from found
            if len(found) < PAGE_SIZE:
                return

    def _said(self, text: str) -> str:
        return redacted(" ".join(text.split()), [self._token])[:SAID_MAX_CHARS]
