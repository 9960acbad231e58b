"""In a real browser against daphne: every page of the demo, at 1440 px and 390 px, light and dark,
drawn without a script error and screenshotted into test-artifacts/tour/.

`make screenshots` runs this module with SCREENSHOTS_DIR=docs/screenshots, which also writes the few
pictures the docs' page tour (docs/pages.md) shows (TOUR_PICTURES) there.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from graphs.demo import demo_data_load, demo_pipeline_run
from graphs.domain.fork_edits import editable_field
from graphs.domain.manifest_graph import manifest_node_ids
from graphs.engine.state import manifest_node
from graphs.models import Skill, WorkGraphRun
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, ROOT, sign_in
from tests.experiment_pairs import experiment_pair

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct horse battery staple"
WIDTHS = {"1440": {"width": 1440, "height": 900}, "390": {"width": 390, "height": 844}}
# What each page waits for before its picture: its drawing, where it has one.
READY = {"run-graph": "#dag[data-placed='true']", "timeline": "#dag[data-view='timeline'] .dag-box--attempt",
         "planning": ".mini-dag[data-painted='true']"}
TOUR_PICTURES = [
    "dashboard-1440-light", "runs-1440-light", "task-1440-light", "run-graph-1440-light", "run-graph-1440-dark",
    "timeline-1440-light", "planning-1440-light", "node-1440-light", "compare-attempts-1440-light",
    "skill-edit-1440-light", "run-graph-390-light", "task-390-dark", "project-new-1440-light",
    "agent-planner-1440-light", "fork-edit-1440-light",
]


@pytest.fixture
def demo():
    login, task = demo_data_load(password=PASSWORD)
    demo_pipeline_run(task=task)
    run = WorkGraphRun.objects.get(task=task)
    looped = run.executions.filter(cause="loop_back").order_by("created_at").first()
    first = run.executions.get(node_id=looped.node_id, attempt=1)
    editable = next(node_id for node_id in manifest_node_ids(run.graph_manifest)
                    if editable_field(manifest_node(run.graph_manifest, node_id)))
    return {"user": login.username, "task": task, "run": run, "node": looped, "first": first,
            "editable": editable, "skill": Skill.objects.order_by("skill_id").last(),
            "experiments": experiment_pair(task.project)}


def _tour(demo) -> dict[str, str]:
    run = demo["run"]
    return {
        "dashboard": "/",
        "tasks": "/tasks/",
        "runs": "/runs/",
        "task": f"/tasks/{demo['task'].pk}/",
        "run-graph": f"/runs/{run.run_id}/",
        "timeline": f"/runs/{run.run_id}/?view=timeline",
        "planning": f"/runs/{run.run_id}/planning/",
        "node": f"/executions/{demo['node'].pk}/",
        "compare-attempts": f"/executions/{demo['first'].pk}/compare/{demo['node'].pk}/",
        "skills": "/skills/",
        "skill-edit": f"/skills/{demo['skill'].skill_id}/edit/",
        "agents": "/agents/",
        "agent-planner": "/agents/planner/",
        "project": f"/projects/{demo['task'].project.slug}/",
        "project-new": "/projects/new/",
        "project-members": f"/projects/{demo['task'].project.slug}/members/",
        "datasets": f"/projects/{demo['task'].project.slug}/datasets/",
        "experiment": f"/experiments/{demo['experiments'][0].pk}/",
        "compare-experiments": "/experiments/compare/?a={}&b={}".format(*(e.pk for e in demo["experiments"])),
        "project-delivery": f"/projects/{demo['task'].project.slug}/delivery/",
        "project-datasets": f"/projects/{demo['task'].project.slug}/datasets/",
        "project-notifications": f"/projects/{demo['task'].project.slug}/notifications/",
        "project-audit": f"/projects/{demo['task'].project.slug}/audit/",
        "inbox": "/inbox/",
        "audit": "/audit/",
        "fork-edit": f"/runs/{run.run_id}/fork/edit/?node={demo['editable']}",
        "not-found": "/runs/00000000-0000-0000-0000-000000000000/",
    }


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_draws_at_each_width_and_scheme(chromium, console_server, demo, width, scheme):
    tour = ARTIFACTS / "tour"
    tour.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page(viewport=WIDTHS[width], color_scheme=scheme)
    page.set_default_timeout(PAGE_WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, f"{console_server}/login/", demo["user"])
    page.wait_for_selector("h1")
    for name, path in _tour(demo).items():
        response = page.goto(f"{console_server}{path}")
        assert response.status == (404 if name == "not-found" else 200), f"{name}: {response.status}"
        page.wait_for_selector(READY.get(name, "h1"))
        page.wait_for_load_state("networkidle")
        picture = tour / f"{name}-{width}-{scheme}.png"
        page.screenshot(path=str(picture), full_page=name not in READY)
        assert picture.stat().st_size > 0
    assert errors == []
    _publish(tour, width=width, scheme=scheme)


def _publish(tour: Path, *, width: str, scheme: str) -> None:
    """Copy this width's and scheme's tour pictures to SCREENSHOTS_DIR (make screenshots)."""
    target = os.environ.get("SCREENSHOTS_DIR")
    if not target:
        return
    folder = ROOT / target
    folder.mkdir(parents=True, exist_ok=True)
    for name in TOUR_PICTURES:
        if name.endswith(f"-{width}-{scheme}"):
            shutil.copyfile(tour / f"{name}.png", folder / f"{name}.png")
