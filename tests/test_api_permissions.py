"""Every API route as every persona: alice leads P, bob reviews P, charlie has no access, dana administers skills.

The table must name every route the API serves: a new route without an entry fails
``test_the_table_covers_every_api_route``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.test import Client

from console.api import api
from graphs.collaboration.relay import RelaySpec, relay_attach
from graphs.engine import run_start
from graphs.models import Dataset, Experiment, ProjectDelivery, Skill, WorkGraphRun, WorkNodeExecution
from graphs.planning.dag_specs import dag_spec_import
from graphs.skills.revisions import skill_save
from graphs.tokens import token_create
from tests import factories
from tests.repos import repository_init
from tests.run_builders import edges_for, node, planned_run

OK, DENIED, HIDDEN, ANON = "ok", 403, 404, 401
READ = {"alice": OK, "bob": OK, "charlie": HIDDEN, "dana": HIDDEN}
LEAD = {"alice": OK, "bob": DENIED, "charlie": HIDDEN, "dana": HIDDEN}
REVIEW = {"alice": OK, "bob": OK, "charlie": HIDDEN, "dana": HIDDEN}
ANYONE = {"alice": OK, "bob": OK, "charlie": OK, "dana": OK}
# Creating a project takes Django's add_project permission, which none of them has.
CREATOR = {"alice": DENIED, "bob": DENIED, "charlie": DENIED, "dana": DENIED}
# Checking a folder: those who create projects or lead one.
ANY_LEAD = {"alice": OK, "bob": DENIED, "charlie": DENIED, "dana": DENIED}
# Skills and agent profiles: every member of a project reads them, and skill admins; only skill admins write.
SKILLS_READ = {"alice": OK, "bob": OK, "charlie": DENIED, "dana": OK}
SKILLS_WRITE = {"alice": DENIED, "bob": DENIED, "charlie": DENIED, "dana": OK}
# The whole audit log: the console's administrators (staff), which none of them is.
STAFF = {"alice": DENIED, "bob": DENIED, "charlie": DENIED, "dana": DENIED}
# A forge's webhook: neither a session nor a token counts, only the forge's signature
# (tests/test_forge_webhook_signatures.py), which none of them sends.
FORGE_SIGNED = {"alice": 401, "bob": 401, "charlie": 401, "dana": 401}


@dataclass
class World:
    project: object
    task: object
    done: object
    waiting: object
    ready: object
    running: object
    reported_task: object
    # A task with nothing under way and one ended run: a new plan, pipeline or fork is accepted for it.
    idle_task: object
    idle_done: object
    # A run imported from a DAG spec, which it downloads.
    imported: object


SMALL_SPEC = {"title": "S", "tasks": [{"id": "a", "executor": "pi", "subtask_prompt": "Do a."}]}


def chain(**extra) -> dict:
    nodes = [node("a", **extra), node("b", "a", **extra)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


@pytest.fixture
def world(project, alice, bob, charlie, dana, task, scripted_runner, inline_executor) -> World:
    done = planned_run(task, chain())
    run_start(run=done)
    idle_task = factories.TaskFactory(project=project)
    idle_done = planned_run(idle_task, chain())
    run_start(run=idle_done)
    inline_executor.drain()
    waiting = planned_run(task, chain(), status="awaiting_approval")
    ready = planned_run(task, chain(), status="ready")
    running = planned_run(task, chain())
    run_start(run=running)
    reported_task = factories.TaskFactory(project=project)
    reported = planned_run(reported_task, chain(executor="external"))
    run_start(run=reported)
    # The queued jobs of the last two runs are dropped: their nodes stay queued for cancel and report.
    inline_executor.discard()
    relay_attach(task=task, parent_node_id="", bot_id="relay-bot", user=alice,
                 spec=RelaySpec(title="R", instruction="Relay it", objective="O", acceptances=[]))
    imported = dag_spec_import(project=project, spec=SMALL_SPEC)
    return World(project, task, done, waiting, ready, running, reported_task, idle_task, idle_done, imported)


def first_exec(run) -> str:
    return str(run.executions.get(node_id="a").pk)


def a_webhook(w: World):
    return w.project.webhooks.create(url="https://93.184.216.34/hook", events=["run.failed"], secret="whsec_AAAA")


def a_dataset(w: World) -> Dataset:
    """A dataset of the project, whose folder is made a git repository so that a case has a commit to start from."""
    folder = Path(w.project.target_folder)
    if not (folder / ".git").exists():
        repository_init(folder)
    return Dataset.objects.get_or_create(project=w.project, name="Regressions")[0]


def an_experiment(w: World) -> Experiment:
    """An experiment of a dataset of the project with one case (started by nobody: nothing runs)."""
    dataset = a_dataset(w)
    if not dataset.cases.exists():
        dataset.cases.create(title="T", goal_text="G", base_commit="a" * 40)
    return Experiment.objects.get_or_create(project=w.project, dataset=dataset, name="baseline")[0]


def a_delivering_run(w: World) -> str:
    """The URL delivering the succeeded run of a project that delivers (the job stays queued: nothing is pushed)."""
    ProjectDelivery.objects.update_or_create(project=w.project, defaults={
        "deliver": "push", "remote_url": w.project.target_folder + "-remote"})
    return f"/api/runs/{w.done.run_id}/deliver"


def a_skill(w: World) -> Skill:
    skill = Skill.objects.filter(skill_id="research").first()
    if skill is None:
        skill = Skill(skill_id="research")
        skill_save(skill=skill, body="# Research", author=None)
    return skill


def a_redeliver_url(w: World) -> str:
    hook = a_webhook(w)
    delivery = hook.deliveries.create(event="run.failed", event_key="k", body="{}", status="failed")
    return f"/api/projects/{w.project.slug}/webhooks/{hook.pk}/deliveries/{delivery.message_id}/redeliver"


ROUTES = {
    "GET /api/projects": (ANYONE, lambda w: ("/api/projects", None)),
    "POST /api/projects": (CREATOR, lambda w: ("/api/projects", {
        "slug": "new", "name": "New", "target_folder": w.project.target_folder})),
    "POST /api/projects/folder-check": (ANY_LEAD, lambda w: ("/api/projects/folder-check", {
        "target_folder": w.project.target_folder})),
    "GET /api/projects/{slug}": (READ, lambda w: (f"/api/projects/{w.project.slug}", None)),
    "PATCH /api/projects/{slug}": (LEAD, lambda w: (f"/api/projects/{w.project.slug}", {"name": "Renamed"})),
    "GET /api/projects/{slug}/members": (READ, lambda w: (f"/api/projects/{w.project.slug}/members", None)),
    "POST /api/projects/{slug}/members": (LEAD, lambda w: (f"/api/projects/{w.project.slug}/members", {
        "username": "charlie", "role": "viewer"})),
    "PATCH /api/projects/{slug}/members/{username}": (LEAD, lambda w: (
        f"/api/projects/{w.project.slug}/members/bob", {"role": "viewer"})),
    "DELETE /api/projects/{slug}/members/{username}": (LEAD, lambda w: (
        f"/api/projects/{w.project.slug}/members/bob", None)),
    "GET /api/tasks": (ANYONE, lambda w: ("/api/tasks", None)),
    "GET /api/runs": (ANYONE, lambda w: ("/api/runs", None)),
    "POST /api/tasks": (LEAD, lambda w: ("/api/tasks", {
        "project": w.project.slug, "title": "T", "goal_text": "G", "deliverables": ["d"],
        "acceptance_criteria": ["a"]})),
    "GET /api/tasks/{task_id}": (READ, lambda w: (f"/api/tasks/{w.task.pk}", None)),
    "POST /api/tasks/{task_id}/plan": (LEAD, lambda w: (f"/api/tasks/{w.idle_task.pk}/plan", {})),
    "POST /api/tasks/{task_id}/pipeline": (LEAD, lambda w: (f"/api/tasks/{w.idle_task.pk}/pipeline", {})),
    "GET /api/runs/{run_id}": (READ, lambda w: (f"/api/runs/{w.done.run_id}", None)),
    "POST /api/forge/{slug}/events": (FORGE_SIGNED, lambda w: (f"/api/forge/{w.project.slug}/events", {})),
    "GET /api/runs/{run_id}/planning": (READ, lambda w: (f"/api/runs/{w.done.run_id}/planning", None)),
    "GET /api/executions/{node_exec_id}": (READ, lambda w: (f"/api/executions/{first_exec(w.done)}", None)),
    "GET /api/executions/{node_exec_id}/attempts": (
        READ, lambda w: (f"/api/executions/{first_exec(w.done)}/attempts", None)),
    "GET /api/executions/{node_exec_id}/log": (READ, lambda w: (f"/api/executions/{first_exec(w.done)}/log", None)),
    "GET /api/executions/{node_exec_id}/reviews": (
        READ, lambda w: (f"/api/executions/{first_exec(w.done)}/reviews", None)),
    "POST /api/executions/{node_exec_id}/reviews": (REVIEW, lambda w: (
        f"/api/executions/{a_change_waiting(w)}/reviews", {"decision": "comment", "body": "Reads well."})),
    "POST /api/runs/{run_id}/append": (LEAD, lambda w: (f"/api/runs/{w.ready.run_id}/append", {"org_node": "coder"})),
    "POST /api/runs/{run_id}/approve": (REVIEW, lambda w: (f"/api/runs/{w.waiting.run_id}/approve", {})),
    "POST /api/runs/{run_id}/reject": (REVIEW, lambda w: (f"/api/runs/{w.waiting.run_id}/reject", {"comment": "no"})),
    "POST /api/runs/{run_id}/start": (LEAD, lambda w: (f"/api/runs/{w.ready.run_id}/start", {})),
    "POST /api/runs/{run_id}/cancel": (LEAD, lambda w: (f"/api/runs/{w.running.run_id}/cancel", {})),
    "POST /api/runs/{run_id}/budget": (LEAD, lambda w: (f"/api/runs/{budget_stopped(w).run_id}/budget",
                                                       {"max_cost_usd": "9"})),
    "GET /api/inbox": (ANYONE, lambda w: ("/api/inbox", None)),
    "POST /api/runs/{run_id}/fork": (LEAD, lambda w: (f"/api/runs/{w.idle_done.run_id}/fork", {"node_id": "b"})),
    "POST /api/projects/{slug}/dag-specs": (LEAD, lambda w: (f"/api/projects/{w.project.slug}/dag-specs",
                                                             {"spec": SMALL_SPEC})),
    "GET /api/runs/{run_id}/dag-spec": (READ, lambda w: (f"/api/runs/{w.imported.run_id}/dag-spec", None)),
    "GET /api/projects/{slug}/webhooks": (LEAD, lambda w: (f"/api/projects/{w.project.slug}/webhooks", None)),
    "POST /api/projects/{slug}/webhooks": (LEAD, lambda w: (f"/api/projects/{w.project.slug}/webhooks", {
        "url": "https://93.184.216.34/hook", "events": ["run.failed"]})),
    "DELETE /api/projects/{slug}/webhooks/{webhook_id}": (LEAD, lambda w: (
        f"/api/projects/{w.project.slug}/webhooks/{a_webhook(w).pk}", None)),
    "GET /api/projects/{slug}/webhooks/{webhook_id}/deliveries": (LEAD, lambda w: (
        f"/api/projects/{w.project.slug}/webhooks/{a_webhook(w).pk}/deliveries", None)),
    "POST /api/projects/{slug}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": (LEAD, lambda w: (
        a_redeliver_url(w), None)),
    "GET /api/projects/{slug}/notifications/email": (READ, lambda w: (
        f"/api/projects/{w.project.slug}/notifications/email", None)),
    "PUT /api/projects/{slug}/notifications/email": (READ, lambda w: (
        f"/api/projects/{w.project.slug}/notifications/email", {"events": ["run.failed"]})),
    "GET /api/projects/{slug}/delivery": (READ, lambda w: (f"/api/projects/{w.project.slug}/delivery", None)),
    "PATCH /api/projects/{slug}/delivery": (LEAD, lambda w: (f"/api/projects/{w.project.slug}/delivery",
                                                             {"deliver": "off"})),
    "POST /api/runs/{run_id}/deliver": (LEAD, lambda w: (a_delivering_run(w), None)),
    "GET /api/projects/{slug}/audit": (LEAD, lambda w: (f"/api/projects/{w.project.slug}/audit", None)),
    "GET /api/audit": (STAFF, lambda w: ("/api/audit", None)),
    "GET /api/audit/export": (STAFF, lambda w: ("/api/audit/export", None)),
    "GET /api/projects/{slug}/datasets": (READ, lambda w: (f"/api/projects/{w.project.slug}/datasets", None)),
    "POST /api/projects/{slug}/datasets": (LEAD, lambda w: (f"/api/projects/{w.project.slug}/datasets",
                                                            {"name": "Flaky"})),
    "GET /api/datasets/{dataset_id}": (READ, lambda w: (f"/api/datasets/{a_dataset(w).pk}", None)),
    "PATCH /api/datasets/{dataset_id}": (LEAD, lambda w: (f"/api/datasets/{a_dataset(w).pk}", {"name": "Renamed"})),
    "POST /api/datasets/{dataset_id}/cases": (LEAD, lambda w: (f"/api/datasets/{a_dataset(w).pk}/cases", {
        "title": "T", "goal_text": "G", "deliverables": ["d"], "acceptance_criteria": ["a"], "base_commit": "HEAD"})),
    "GET /api/skills": (SKILLS_READ, lambda w: ("/api/skills", None)),
    "GET /api/skills/{skill_id}": (SKILLS_READ, lambda w: (f"/api/skills/{a_skill(w).skill_id}", None)),
    "POST /api/skills/{skill_id}/revisions": (SKILLS_WRITE, lambda w: (
        f"/api/skills/{a_skill(w).skill_id}/revisions", {"body": "# Research, sharper", "base_revision": 1})),
    "GET /api/agent-profiles": (SKILLS_READ, lambda w: ("/api/agent-profiles", None)),
    "GET /api/agent-profiles/{org_node}": (SKILLS_READ, lambda w: ("/api/agent-profiles/coder", None)),
    "POST /api/agent-profiles/{org_node}/revisions": (SKILLS_WRITE, lambda w: (
        "/api/agent-profiles/coder/revisions", {"base_revision": 1, "model": "sonnet"})),
    "POST /api/experiments": (LEAD, lambda w: ("/api/experiments", {"dataset": an_experiment(w).dataset_id,
                                                                    "name": "again"})),
    "GET /api/experiments/{experiment_id}": (READ, lambda w: (f"/api/experiments/{an_experiment(w).pk}", None)),
    "POST /api/experiments/{experiment_id}/cancel": (LEAD, lambda w: (
        f"/api/experiments/{an_experiment(w).pk}/cancel", None)),
    "GET /api/experiments/compare": (READ, lambda w: (
        f"/api/experiments/compare?a={an_experiment(w).pk}&b={an_experiment(w).pk}", None)),
    "PUT /api/skills/{skill_id}/labels/{label}": (SKILLS_WRITE, lambda w: (
        f"/api/skills/{a_skill(w).skill_id}/labels/staging", {"revision": 1})),
    "PUT /api/agent-profiles/{org_node}/labels/{label}": (SKILLS_WRITE, lambda w: (
        "/api/agent-profiles/coder/labels/staging", {"revision": 1})),
    "GET /api/tokens": (ANYONE, lambda w: ("/api/tokens", None)),
    "POST /api/tokens": (ANYONE, lambda w: ("/api/tokens", {"name": "ci"})),
    "DELETE /api/tokens/{token_id}": (ANYONE, None),
    "POST /api/v1/collaboration/tasks/execute": (LEAD, lambda w: ("/api/v1/collaboration/tasks/execute", {
        "task_spec": {"metadata": {"title": "T", "instruction": "Do it"},
                      "goal": {"objective": "O", "acceptances": [{"id": "ac1", "acceptance": "works"}]}},
        "source_type": "api", "execution_config": {"task_type": "dynamic", "project": w.project.slug}})),
    "GET /api/v1/collaboration/tasks/dashboard": (
        READ, lambda w: (f"/api/v1/collaboration/tasks/dashboard?task_id={w.task.pk}", None)),
    "POST /api/v1/collaboration/tasks/callback/report": (LEAD, lambda w: (
        "/api/v1/collaboration/tasks/callback/report",
        {"loop_task_id": f"{w.reported_task.pk}::a", "result": {"success": True, "data": {"result": "done"}}},
    )),
    "POST /api/v1/collaboration/tasks/bbs/attach": (LEAD, lambda w: ("/api/v1/collaboration/tasks/bbs/attach", {
        "task_id": str(w.task.pk), "bot_id": "relay-bot",
        "task_spec": {"metadata": {"title": "R", "instruction": "Relay it"},
                      "goal": {"objective": "O", "acceptances": [{"id": "ac1", "acceptance": "works"}]}}})),
    "POST /api/v1/collaboration/tasks/bbs/result": (LEAD, lambda w: ("/api/v1/collaboration/tasks/bbs/result", {
        "task_id": str(w.task.pk), "node_id": "relay_1", "bot_id": "relay-bot",
        "acceptance_result": {"verdict": "PASS"}, "output_patch": {"done": True}})),
}


def a_change_waiting(w: World) -> str:
    """An attempt of the running run whose change waits for a reviewer."""
    execution = w.running.executions.get(node_id="a")
    WorkNodeExecution.objects.filter(pk=execution.pk).update(status="awaiting_review")
    return str(execution.pk)


def budget_stopped(w: World):
    """A run of a task of its own that its budget stopped before its nodes started."""
    run = planned_run(factories.TaskFactory(project=w.project), chain(), status="failed")
    WorkGraphRun.objects.filter(pk=run.pk).update(error_code="budget_exceeded", max_cost_usd="1")
    return run


def served_routes() -> set[str]:
    routes = set()
    for prefix, router in api._routers:
        for path, view in router.path_operations.items():
            for operation in view.operations:
                for method in operation.methods:
                    routes.add(f"{method} /api{prefix.rstrip('/')}{path}".replace("/api//", "/api/"))
    return routes


def test_the_table_covers_every_api_route():
    assert served_routes() == set(ROUTES)


def _request(client: Client, method: str, url: str, body, **headers):
    if method == "GET":
        return client.get(url, **headers)
    if method == "DELETE":
        return client.delete(url, **headers)
    if method == "PATCH":
        return client.patch(url, data=json.dumps(body or {}), content_type="application/json", **headers)
    if method == "PUT":
        return client.put(url, data=json.dumps(body or {}), content_type="application/json", **headers)
    return client.post(url, data=json.dumps(body or {}), content_type="application/json", **headers)


@pytest.mark.django_db
@pytest.mark.parametrize("persona", ["alice", "bob", "charlie", "dana", "anonymous"])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_persona_gets_the_expected_answer(route, persona, world, django_user_model, settings):
    method, _ = route.split(" ", 1)
    expected_by_persona, build = ROUTES[route]
    client = Client()
    user = None
    if persona != "anonymous":
        user = django_user_model.objects.get(username=persona)
        client.force_login(user)
    if build is None:  # DELETE a token: each persona revokes one of their own
        owner = user or django_user_model.objects.get(username="alice")
        token, _ = token_create(user=owner, name="old")
        url, body = f"/api/tokens/{token.pk}", None
    else:
        url, body = build(world)
    response = _request(client, method, url, body)
    expected = ANON if persona == "anonymous" else expected_by_persona[persona]
    if expected == OK:
        assert 200 <= response.status_code < 300, (route, persona, response.status_code, response.content[:300])
    else:
        assert response.status_code == expected, (route, persona, response.content[:300])
        assert response.json()["code"] in {"unauthenticated", "forbidden", "not_found"}


@pytest.mark.django_db
def test_a_bearer_token_authenticates_like_its_owner(world, alice, charlie):
    _, raw = token_create(user=alice, name="cli")
    client = Client()
    assert client.get(f"/api/tasks/{world.task.pk}", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200
    _, stranger = token_create(user=charlie, name="cli")
    assert client.get(f"/api/tasks/{world.task.pk}", HTTP_AUTHORIZATION=f"Bearer {stranger}").status_code == 404
    assert client.get("/api/tasks", HTTP_AUTHORIZATION="Bearer wgc_made-up").status_code == 401
