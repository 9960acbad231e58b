"""In a real browser against daphne: the navigation's inbox count follows what waits on a lead on pages that
follow no run of it — the dashboard and her project's members page — while a plan in another of her projects comes to
wait for approval and is approved there: after each, the count equals a reload's, fetched on its own
(``data-inbox-renders``) without the page re-rendering for it."""

from __future__ import annotations

import pytest

from graphs.models import ProjectMembership, WorkGraphRun
from tests import factories
from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.browser.reloads import OpenPages

pytestmark = pytest.mark.django_db(transaction=True)

# For page.wait_for_function: the navigation's count was fetched on its own at least `arg` times.
INBOX_RENDERS_REACH = "(count) => Number(document.documentElement.dataset.inboxRenders || 0) >= count"


@pytest.fixture
def elsewhere(alice):
    """A task of another project, which requires plan approval: Dora leads it, Alice reviews it."""
    project = factories.ProjectFactory(require_plan_approval=True)
    dora = factories.member(project, "dora", role="lead")
    ProjectMembership.objects.create(user=alice, project=project, role="reviewer")
    return factories.TaskFactory(project=project, created_by=dora)


def test_a_plan_waiting_in_another_project_shows_in_the_count_of_pages_that_follow_no_run(
    chromium, console_server, project, alice, elsewhere
):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_WAIT_MS)
    sign_in(context.new_page(), f"{console_server}/", "alice")
    pages = OpenPages(context)
    dashboard = pages.open(f"{console_server}/")
    members = pages.open(f"{console_server}/projects/{project.slug}/members/")
    # Whenever its socket opens, before the plan waits or after, the page hears of it: the socket says so
    # when the count is not the one the page was rendered with.
    for page in (dashboard, members):
        assert page.locator("#inbox-count").is_hidden()

    dora = chromium.new_context().new_page()
    dora.set_default_timeout(PAGE_WAIT_MS)
    sign_in(dora, f"{console_server}/tasks/{elsewhere.pk}/", "dora")
    dora.click("form[action$='/plan/'] button[type=submit]")

    for page in (dashboard, members):
        page.wait_for_function(INBOX_RENDERS_REACH, arg=1)
        page.wait_for_selector("#inbox-count:not([hidden]):text-is('1')")
    assert WorkGraphRun.objects.get(task=elsewhere).status == "awaiting_approval"
    assert members.evaluate("() => document.documentElement.dataset.liveRenders") is None, "the page re-rendered"
    assert members.get_attribute("#inbox-count", "aria-label") == "1 waiting on you"
    pages.equal_to_reloads("a plan coming to wait in another project")

    dora.goto(f"{console_server}/inbox/")
    dora.locator("#inbox-items button[data-action='approve']").click()
    dora.wait_for_url(f"{console_server}/runs/*/")

    for page in (dashboard, members):
        page.wait_for_function(INBOX_RENDERS_REACH, arg=2)
        page.wait_for_selector("#inbox-count[hidden]", state="attached")
    pages.equal_to_reloads("the plan approved in its project")
    context.close()
