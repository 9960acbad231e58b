"""In a real browser against daphne: the runs list filtered by status and org node and searched by a part
of a node id through its filter row, two runs or two attempts ticked to compare, a run under way changing
status without a reload, on a desktop window and on a phone (390 px) where nothing scrolls sideways."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.runs.status import run_status_set
from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.browser.test_narrow_layout import OVERFLOW
from tests.run_builders import run_with_attempts

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def runs(project, alice):
    """Three runs of alice's project, one of them failed; one with a long title, and one of a project
    alice is no member of."""
    login = factories.TaskFactory(project=project, title="Log in with a passkey")
    export = factories.TaskFactory(project=project, title="Export the quarterly report as CSV, with totals per "
                                                            "region, per product line and per sales representative")
    return {
        "failed": run_with_attempts(login, status="failed", nodes=["impl_login", "unit_test"], org_node="coder"),
        "succeeded": run_with_attempts(export, status="succeeded", nodes=["brd", "prd"]),
        "running": run_with_attempts(login, status="running", nodes=["impl_passkey"], org_node="coder"),
        "hidden": run_with_attempts(factories.TaskFactory(), status="failed", nodes=["impl_login"]),
    }


def _listed(page) -> list[str]:
    return page.locator(".run-table tr[data-run-id]").evaluate_all("rows => rows.map(row => row.dataset.runId)")


def test_a_lead_filters_the_runs_by_status_then_finds_one_by_node_id(chromium, console_server, runs):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/login/", "alice")
    page.click("nav >> text=Runs")
    page.wait_for_selector(".run-table")
    assert set(_listed(page)) == {str(runs[name].pk) for name in ("failed", "succeeded", "running")}

    page.select_option("select[name=status]", "failed")
    page.click(".run-filters button[type=submit]")
    page.wait_for_url("**/runs/?*status=failed*")
    assert _listed(page) == [str(runs["failed"].pk)]
    assert page.locator("select[name=status]").input_value() == "failed", "the filter stays chosen"

    page.select_option("select[name=status]", "")
    page.fill("input[name=q]", "impl_passkey")
    page.press("input[name=q]", "Enter")
    page.wait_for_url("**q=impl_passkey*")
    assert _listed(page) == [str(runs["running"].pk)]
    page.screenshot(path=str(ARTIFACTS / "runs-list-search.png"), full_page=True)

    page.click(f"tr[data-run-id='{runs['running'].pk}'] >> text=Graph")
    page.wait_for_url(f"**/runs/{runs['running'].pk}/")


def test_on_a_phone_the_filter_row_works_and_nothing_scrolls_sideways(chromium, console_server, runs):
    page = chromium.new_page(viewport={"width": 390, "height": 844})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/", "alice")
    page.wait_for_selector(".run-table")
    assert page.evaluate(OVERFLOW)["scroll"] == 0
    for control in page.locator(".run-filters select, .run-filters input, .run-filters button").all():
        box = control.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, control.get_attribute("name")

    page.fill("input[name=q]", "impl_login")
    page.click(".run-filters button[type=submit]")
    page.wait_for_url("**q=impl_login*")
    assert _listed(page) == [str(runs["failed"].pk)]
    row = page.locator(f"tr[data-run-id='{runs['failed'].pk}']")
    assert row.locator("[data-run-status] .status").inner_text() == "failed"
    assert page.evaluate(OVERFLOW)["scroll"] == 0

    page.goto(f"{console_server}/runs/?status=succeeded")
    assert _listed(page) == [str(runs["succeeded"].pk)]
    overflow = page.evaluate(OVERFLOW)
    page.screenshot(path=str(ARTIFACTS / "runs-list-390.png"), full_page=True)
    assert overflow["scroll"] == 0, overflow


# The runs list's script has run: a tick from now on is heard.
READY = "#compare-bar[data-ready='true']"


def _page(chromium, console_server):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/", "alice")
    page.wait_for_selector(".run-table")
    page.wait_for_selector(READY)
    return page


def _search(page, text: str) -> list[str]:
    page.fill("input[name=q]", text)
    page.press("input[name=q]", "Enter")
    page.wait_for_url(f"**q={text}*")
    page.wait_for_selector(READY)
    return _listed(page)


def test_a_part_of_a_node_id_finds_its_runs(chromium, console_server, project, alice):
    task = factories.TaskFactory(project=project, title="Sign-up screens")
    coder = run_with_attempts(task, status="succeeded", nodes=["coder_unit", "review"], org_node="coder")
    run_with_attempts(task, status="succeeded", nodes=["brd"])
    page = _page(chromium, console_server)

    assert _search(page, "coder") == [str(coder.pk)]
    assert _search(page, "unit") == [str(coder.pk)]
    matched = page.locator(f"tr[data-run-id='{coder.pk}'] .matched-attempts li")
    assert [" ".join(text.split()) for text in matched.all_inner_texts()] == ["coder_unit #1 succeeded"]


def test_the_org_node_filter_is_a_list_of_the_org_nodes_of_the_viewers_runs(chromium, console_server, runs):
    page = _page(chromium, console_server)
    options = page.locator("select[name=org_node] option").evaluate_all("options => options.map(o => o.value)")
    assert options == ["", "coder", "planner"], "someone else's run adds nothing"

    page.select_option("select[name=org_node]", "coder")
    page.click(".run-filters button[type=submit]")
    page.wait_for_url("**org_node=coder*")
    assert set(_listed(page)) == {str(runs["failed"].pk), str(runs["running"].pk)}


def test_ticking_two_runs_of_a_task_opens_their_compare_page(chromium, console_server, runs):
    page = _page(chromium, console_server)
    compare = page.locator("#compare-open")
    said = page.locator("#compare-said")

    page.check(f"tr[data-run-id='{runs['failed'].pk}'] input[data-pick=run]")
    expect(said).to_have_text(re.compile(r"^Picked .+: tick one more run of its task\.$"))
    page.check(f"tr[data-run-id='{runs['succeeded'].pk}'] input[data-pick=run]")
    expect(said).to_contain_text("These runs belong to two different tasks")
    assert compare.get_attribute("aria-disabled") == "true" and compare.get_attribute("href") is None

    page.uncheck(f"tr[data-run-id='{runs['succeeded'].pk}'] input[data-pick=run]")
    # The picks outlive a filter: the second run of the login task is found by a search.
    _search(page, "impl_passkey")
    expect(said).to_contain_text("tick one more run of its task")
    page.check(f"tr[data-run-id='{runs['running'].pk}'] input[data-pick=run]")
    assert compare.get_attribute("aria-disabled") == "false"
    compare.click()
    page.wait_for_url(f"**/runs/{runs['failed'].pk}/compare/{runs['running'].pk}/")
    assert page.locator("[data-compare-runs]").count() == 1
    page.screenshot(path=str(ARTIFACTS / "runs-list-compare.png"), full_page=True)


def test_ticking_two_attempts_of_a_node_opens_their_compare_page(chromium, console_server, project, alice):
    task = factories.TaskFactory(project=project, title="Coder twice")
    first = run_with_attempts(task, status="failed", nodes=["coder_unit"], org_node="coder")
    second = run_with_attempts(task, status="succeeded", nodes=["coder_unit"], org_node="coder")
    attempts = {run.pk: WorkNodeExecution.objects.get(run=run, node_id="coder_unit").pk for run in (first, second)}
    page = _page(chromium, console_server)
    _search(page, "unit")

    for run in (first, second):
        page.check(f"input[data-pick=attempt][value='{attempts[run.pk]}']")
    page.click("#compare-open")
    page.wait_for_url(f"**/executions/{attempts[first.pk]}/compare/{attempts[second.pk]}/")
    assert page.locator("[data-compare-facts]").count() == 1


def test_a_run_under_way_changes_status_without_a_reload(chromium, console_server, runs):
    page = _page(chromium, console_server)
    page.evaluate("window.notReloaded = true")
    chip = page.locator(f"tr[data-run-id='{runs['running'].pk}'] [data-run-status] .status")
    assert chip.inner_text() == "running"

    run = WorkGraphRun.objects.get(pk=runs["running"].pk)
    run_status_set(run=run, status=WorkGraphRun.Status.CANCELLED, error="cancelled")

    page.wait_for_selector(f"tr[data-run-id='{run.pk}'] [data-run-status] .status[data-status='cancelled']")
    assert chip.inner_text() == "cancelled"
    # Its row was fetched again: it has finished, so it says when.
    page.wait_for_selector(f"tr[data-run-id='{run.pk}']:not([data-live-run]) td[data-label=Finished] time")
    assert page.evaluate("window.notReloaded") is True
