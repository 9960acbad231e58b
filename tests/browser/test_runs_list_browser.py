"""In a real browser against daphne: the runs list filtered by status and searched by node id through
its filter row, on a desktop window and on a phone (390 px) where nothing scrolls sideways."""

from __future__ import annotations

import pytest

from tests import factories
from tests.browser.conftest import ARTIFACTS, sign_in
from tests.browser.test_narrow_layout import OVERFLOW
from tests.graphs import run_with_attempts

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
    page.set_default_timeout(20_000)
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
    page.set_default_timeout(20_000)
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
    assert row.locator("td[data-label=Run] .status").inner_text() == "failed"
    assert page.evaluate(OVERFLOW)["scroll"] == 0

    page.goto(f"{console_server}/runs/?status=succeeded")
    assert _listed(page) == [str(runs["succeeded"].pk)]
    overflow = page.evaluate(OVERFLOW)
    page.screenshot(path=str(ARTIFACTS / "runs-list-390.png"), full_page=True)
    assert overflow["scroll"] == 0, overflow
