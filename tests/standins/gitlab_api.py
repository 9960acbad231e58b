"""A local stand-in of GitLab's REST API (v4), written from GitLab's API documentation (gitlabhq/gitlabhq
doc/api/merge_requests.md, pipelines.md, jobs.md, notes.md) and its merge request reviewers endpoint:

- ``GET /projects/:id/merge_requests`` — ``state`` (opened, closed, locked, merged, all), ``source_branch``,
  ``target_branch``; ``:id`` is the project's ID or URL-encoded path (``group%2Fapp``);
- ``POST /projects/:id/merge_requests`` — ``source_branch``, ``target_branch`` and ``title`` required,
  ``description`` optional: 201 with the merge request (``id``, ``iid``, ``state``, ``web_url``, ``sha``,
  ``source_branch``, ``target_branch``); 409 ``{"message": ["Another open merge request already exists for this
  source branch: !<iid>"]}`` for a second open one from the same source branch;
- ``GET /projects/:id/merge_requests/:merge_request_iid``;
- ``GET /projects/:id/pipelines?sha=…`` and ``GET /projects/:id/pipelines/:pipeline_id/jobs`` (``id``,
  ``name``, ``status``, ``web_url``, ``allow_failure``, ``failure_reason``);
- ``GET /projects/:id/jobs/:job_id/trace`` — the job's log as plain text (404 for a job it does not know);
- ``GET /projects/:id/merge_requests/:merge_request_iid/reviewers`` (``user``, ``state``) and ``…/notes`` (a
  ``DiffNote``'s ``position`` holds ``new_path`` and ``new_line``).

Every request must carry ``PRIVATE-TOKEN: <token>``, else 401 ``{"message": "401 Unauthorized"}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.standins.forge_base import Answer, ForgeStandin, PlainText, Request

PROJECT = r"/projects/(?P<project>[^/]+)"
_STATES = {"opened", "closed", "locked", "merged"}


@dataclass
class GitLabStandin(ForgeStandin):
    path: str = "acme/platform/app"
    prefix = "/api/v4"
    merge_requests: list[dict[str, Any]] = field(default_factory=list)
    pipelines: list[dict[str, Any]] = field(default_factory=list)
    jobs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    reviewers: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    notes: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    traces: dict[int, str] = field(default_factory=dict)

    def routes(self):
        return [
            ("GET", f"{PROJECT}/merge_requests", self._list),
            ("POST", f"{PROJECT}/merge_requests", self._create),
            ("GET", rf"{PROJECT}/merge_requests/(?P<iid>\d+)", self._get),
            ("GET", f"{PROJECT}/pipelines", self._pipelines),
            ("GET", rf"{PROJECT}/pipelines/(?P<pipeline>\d+)/jobs", self._jobs),
            ("GET", rf"{PROJECT}/jobs/(?P<job>\d+)/trace", self._trace),
            ("GET", rf"{PROJECT}/merge_requests/(?P<iid>\d+)/reviewers", self._reviewers),
            ("GET", rf"{PROJECT}/merge_requests/(?P<iid>\d+)/notes", self._notes),
        ]

    def authenticated(self, request: Request) -> Answer | None:
        if request.headers.get("private-token") != self.token:
            self.violation(f"{request.method} {request.path}: PRIVATE-TOKEN is not the token")
            return 401, {"message": "401 Unauthorized"}
        return None

    def merge_request_add(self, *, source: str, target: str, state: str = "opened") -> dict[str, Any]:
        """A merge request made on the forge by someone else."""
        with self.lock:
            return self._made(source=source, target=target, title="Someone else's", description="", state=state)

    def pipeline_add(self, *, sha: str, status: str, jobs: list[dict[str, Any]]) -> dict[str, Any]:
        with self.lock:
            pipeline = {"id": 500 + len(self.pipelines), "iid": len(self.pipelines) + 1, "sha": sha, "ref": "",
                        "status": status, "source": "push", "web_url": f"https://gitlab.example/-/pipelines/{sha[:8]}"}
            self.pipelines.append(pipeline)
            self.jobs[pipeline["id"]] = jobs
            return pipeline

    def _project_known(self, project: str) -> bool:
        if project == self.path:
            return True
        self.violation(f"project {project!r} is not the project's URL-encoded path {self.path!r}")
        return False

    def _list(self, request: Request, project: str) -> Answer:
        if not self._project_known(project):
            return 404, {"message": "404 Project Not Found"}
        state = request.query.get("state", "all")
        if state not in _STATES | {"all"}:
            self.violation(f"merge_requests: state {state!r}")
        found = [mr for mr in self.merge_requests if (state == "all" or mr["state"] == state)
                 and mr["source_branch"] == request.query.get("source_branch", mr["source_branch"])
                 and mr["target_branch"] == request.query.get("target_branch", mr["target_branch"])]
        return 200, _page(found, request)

    def _create(self, request: Request, project: str) -> Answer:
        if not self._project_known(project):
            return 404, {"message": "404 Project Not Found"}
        body = request.body or {}
        missing = [name for name in ("source_branch", "target_branch", "title") if not body.get(name)]
        if missing:
            self.violation(f"merge_requests create: missing {missing}")
            return 400, {"error": f"{', '.join(missing)} is missing"}
        if self.remote is not None and self.branch_head(body["source_branch"]) is None:
            self.violation(f"merge_requests create: source branch {body['source_branch']!r} was never pushed")
        source = body["source_branch"]
        existing = next((mr for mr in self.merge_requests if mr["state"] == "opened" and mr["source_branch"] == source),
                        None)
        if existing is not None:
            return 409, {"message": [f"Another open merge request already exists for this source branch:"
                                     f" !{existing['iid']}"]}
        return 201, self._made(source=source, target=body["target_branch"], title=body["title"],
                               description=body.get("description") or "")

    def _get(self, request: Request, project: str, iid: str) -> Answer:
        found = next((mr for mr in self.merge_requests if mr["iid"] == int(iid)), None)
        if found is None or not self._project_known(project):
            return 404, {"message": "404 Not found"}
        return 200, found

    def _pipelines(self, request: Request, project: str) -> Answer:
        sha = request.query.get("sha")
        found = [pipeline for pipeline in self.pipelines if sha is None or pipeline["sha"] == sha]
        if request.query.get("sort", "desc") == "desc":
            found = sorted(found, key=lambda pipeline: pipeline["id"], reverse=True)
        return 200, _page(found, request)

    def _jobs(self, request: Request, project: str, pipeline: str) -> Answer:
        return 200, _page(self.jobs.get(int(pipeline), []), request)

    def _trace(self, request: Request, project: str, job: str) -> Answer:
        if not self._project_known(project) or int(job) not in self.traces:
            return 404, {"message": "404 Not found"}
        return 200, PlainText(self.traces[int(job)])

    def _reviewers(self, request: Request, project: str, iid: str) -> Answer:
        return 200, self.reviewers.get(int(iid), [])

    def _notes(self, request: Request, project: str, iid: str) -> Answer:
        return 200, _page(self.notes.get(int(iid), []), request)

    def _made(self, *, source: str, target: str, title: str, description: str, state: str = "opened"
              ) -> dict[str, Any]:
        iid = len(self.merge_requests) + 1
        found = {
            "id": 9000 + iid, "iid": iid, "project_id": 3, "title": title, "description": description,
            "state": state, "source_branch": source, "target_branch": target,
            "sha": self.branch_head(source) or "0" * 40,
            "web_url": f"https://gitlab.example/{self.path}/-/merge_requests/{iid}",
            "references": {"short": f"!{iid}", "full": f"{self.path}!{iid}"},
        }
        self.merge_requests.append(found)
        return found


def _page(items: list[Any], request: Request) -> list[Any]:
    size, page = int(request.query.get("per_page", 20)), int(request.query.get("page", 1))
    return items[(page - 1) * size: page * size]
