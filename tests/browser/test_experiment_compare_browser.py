"""In a real browser against daphne: a member goes from the datasets page to an experiment, picks another
experiment of its dataset with Compare with, reads the flipped cases pass → fail first, and follows a
flipped case's link to its two runs' comparison; both pages fit a phone's width."""

from __future__ import annotations

import pytest

from graphs.models.experiments import ExperimentItem
from tests.browser.conftest import PAGE_WAIT_MS, no_sideways_scroll, sign_in
from tests.experiment_pairs import experiment_pair

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_reviewer_compares_two_experiments_and_opens_a_flipped_cases_runs(chromium, console_server, project, bob):
    a, b = experiment_pair(project)
    cases = list(a.dataset.cases.order_by("id").values_list("pk", flat=True))
    runs = {(item.experiment_id, item.case_id): str(item.run_id) for item in ExperimentItem.objects.all()}
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/projects/{project.slug}/datasets/", "bob")

    page.click(f"li[data-experiment='{a.pk}'] a")
    page.wait_for_url(f"**/experiments/{a.pk}/")
    no_sideways_scroll(page)
    page.select_option("#compare-b", str(b.pk))
    page.click("#compare-with button[type=submit]")
    page.wait_for_url(f"**/experiments/compare/?a={a.pk}&b={b.pk}")

    rows = page.locator("#flipped-cases tbody tr")
    assert [rows.nth(index).get_attribute("data-flip") for index in range(rows.count())] == ["pass-fail", "fail-pass"]
    assert [rows.nth(index).get_attribute("data-case") for index in range(rows.count())] == [
        str(cases[1]), str(cases[2])]
    assert rows.nth(0).locator("td").nth(1).inner_text() == "pass → fail"
    assert page.locator("tr[data-figure='total_cost_usd'] td[data-difference]").inner_text() == "+$0.0400"
    no_sideways_scroll(page)

    rows.nth(1).locator("a[data-compare-runs]").click()
    page.wait_for_url(f"**/runs/{runs[a.pk, cases[2]]}/compare/{runs[b.pk, cases[2]]}/")
    assert page.locator("h1").inner_text() == "Compare runs"
