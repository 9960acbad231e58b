"""In a real browser against daphne: the dashboard follows a run to its end without a reload — its chip
in "Runs in flight" reads each status, then the run leaves the list and its task reads succeeded."""

from __future__ import annotations

import pytest

from tests.browser.conftest import PAGE_WAIT_MS, console_served, sign_in
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def paced_console(transactional_db):
    """The console served by daphne, each offline agent call lasting about a second."""
    with console_served(WORKGRAPH_OFFLINE_CALL_SECONDS="1.0") as url:
        yield url


def test_the_dashboard_follows_a_run_to_its_end(chromium, paced_console, alice, task):
    nodes = [node("a"), node("b", "a"), node("c", "b")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="awaiting_approval")
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{paced_console}/", "alice")
    row = f"#in-flight [data-run-id='{run.run_id}']"
    page.wait_for_selector(f"{row} .status[data-status='awaiting_approval']")

    # Approved and started elsewhere (another tab): this page hears of it over the run's socket.
    page.request.post(f"{paced_console}/runs/{run.run_id}/approve/",
                      form={"csrfmiddlewaretoken": _csrf(page), "start": "1"}, max_redirects=0)
    page.wait_for_selector(f"{row} .status[data-status='running']")
    page.wait_for_selector(row, state="detached")
    page.wait_for_selector("#in-flight:has-text('Nothing is running.')")
    page.wait_for_selector(f"#recent-tasks tr:has(a[href='/tasks/{task.pk}/']) .status[data-status='succeeded']")
    assert int(page.evaluate("document.documentElement.dataset.liveRenders")) >= 1


def _csrf(page) -> str:
    return next(cookie["value"] for cookie in page.context.cookies() if cookie["name"] == "csrftoken")
