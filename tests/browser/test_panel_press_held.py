"""In a real browser against daphne: the run graph's side panel never swaps a link out from under a press.

A browser sends a click to the element both the press and the release landed on; a panel redrawn between
them would send it to their common ancestor, and the link pressed would not be followed. So an answer
that arrives while a press in the panel is under way waits for the release: the click goes to the link
pressed, and the panel shows the answer after it. An answer saying what the panel already shows leaves its
elements as they are. Nor does the attempt's log, streaming into the panel's end, move a link from under
a press.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from graphs.engine.record import attempt_finish
from graphs.logs.store import log_append, log_file_close, log_file_open, log_writes_wait
from graphs.models import WorkNodeExecution
from tests import factories
from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.run_builders import node, planned_run, run_with_attempts

pytestmark = pytest.mark.django_db(transaction=True)

LINK = "#panel-body a:has-text('Open the node page')"
OUTPUT = "#panel-body pre[data-field='output']"
# Every panel answer handled so far (drawn, kept as it was, or waiting for a release).
ANSWERS = "() => Number(document.getElementById('panel-body').dataset.answers || 0)"
LOG_LINES = "#panel-body ol.log-lines li"
WORKER = "host:1:press"


class PanelAnswers:
    """The panel's fetches as the page makes them, held at the network while ``holding``, let go together."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.holding = False
        self.held: list = []
        page.route("**/panel/?*", self._route)

    def _route(self, route) -> None:
        if self.holding:
            self.held.append(route)
        else:
            route.continue_()

    def asked_and_held(self) -> None:
        """Ask the panel again (a click on its node's box), and wait until that fetch is held here."""
        self.holding = True
        self.page.click(".dag-box[data-node-id='write']")
        # The route handler runs while Playwright is waiting: poll the condition it sets.
        for _ in range(PAGE_WAIT_MS // 50):
            if self.held:
                return
            self.page.wait_for_timeout(50)
        raise AssertionError("the panel was never asked again")

    def let_go(self) -> None:
        self.holding = False
        for route in self.held:
            route.continue_()
        self.held.clear()


def _panel_open(chromium, console_server: str, run) -> tuple[Page, PanelAnswers]:
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{run.run_id}/?node=write", "alice")
    expect(page.locator(OUTPUT)).to_have_text("the first words")
    page.wait_for_selector("#dag[data-painted='true']")
    return page, PanelAnswers(page)


def _pressed(page: Page) -> None:
    page.locator(LINK).scroll_into_view_if_needed()
    box = page.locator(LINK).bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()


def _finished_run(task):
    run = run_with_attempts(task, nodes=["write"])
    WorkNodeExecution.objects.filter(run=run).update(output_payload={"text": "the first words"})
    return run


def _answer_waits_for_release(page: Page, answers: PanelAnswers, run) -> None:
    """Press the panel's link, have the panel's next answer say something new, and see it wait."""
    answers.asked_and_held()
    _pressed(page)
    WorkNodeExecution.objects.filter(run=run).update(output_payload={"text": "the second words"})
    answers.let_go()
    page.wait_for_function(f"""() => document.getElementById('panel-body').dataset.waitsForRelease === 'true'
        || document.querySelector("{OUTPUT}").textContent === 'the second words'""")
    expect(page.locator(OUTPUT)).to_have_text("the first words")


def test_a_link_pressed_while_the_panel_is_answered_anew_is_followed(chromium, console_server, alice, task):
    run = _finished_run(task)
    page, answers = _panel_open(chromium, console_server, run)
    link = page.locator(LINK).element_handle()
    attempt = WorkNodeExecution.objects.get(run=run)

    _answer_waits_for_release(page, answers, run)
    assert link.evaluate("(a) => a.isConnected"), "the link pressed was swapped out under the press"

    with page.expect_navigation():
        page.mouse.up()
    assert page.url == f"{console_server}/executions/{attempt.pk}/"
    page.close()


def test_a_press_released_elsewhere_lets_the_answer_show(chromium, console_server, alice, task):
    run = _finished_run(task)
    page, answers = _panel_open(chromium, console_server, run)
    url = page.url

    _answer_waits_for_release(page, answers, run)
    page.mouse.move(1, 1)
    page.mouse.up()

    expect(page.locator(OUTPUT)).to_have_text("the second words")
    expect(page.locator("#panel-body")).not_to_have_attribute("data-waits-for-release", "true")
    assert page.url == url
    page.close()


def test_an_answer_saying_what_the_panel_shows_keeps_its_elements(chromium, console_server, alice, task):
    run = _finished_run(task)
    page, answers = _panel_open(chromium, console_server, run)
    link = page.locator(LINK).element_handle()
    handled = page.evaluate(ANSWERS)

    answers.asked_and_held()
    answers.let_go()
    page.wait_for_function(f"() => ({ANSWERS})() > {handled}")

    assert link.evaluate("(a) => a.isConnected")
    expect(page.locator(OUTPUT)).to_have_text("the first words")
    page.close()


def test_a_link_pressed_while_the_log_streams_into_the_panel_is_followed(chromium, console_server, alice, task):
    # The lines are written here, as a worker writes them, while the press is under way.
    run = planned_run(task, {"nodes": [node("write")], "edges": []}, status="running")
    attempt = factories.ExecutionFactory(run=run, node_id="write", status="running", worker=WORKER)
    log_file_open(execution=attempt)
    log_append(execution=attempt, event="node_start", attempt=1, cause="initial", worker=WORKER)
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{run.run_id}/?node=write", "alice")
    page.wait_for_selector("#dag[data-painted='true']")
    expect(page.locator(LOG_LINES)).to_have_count(1)

    _pressed(page)
    for _ in range(30):
        log_append(execution=attempt, event="agent_output", text="still writing")
    assert log_writes_wait()
    expect(page.locator(LOG_LINES)).to_have_count(31)
    with page.expect_navigation():
        page.mouse.up()
    assert page.url == f"{console_server}/executions/{attempt.pk}/"

    attempt_finish(attempt, worker=WORKER, status="succeeded", output={"text": "written"})
    log_file_close(execution=attempt)
    page.close()
