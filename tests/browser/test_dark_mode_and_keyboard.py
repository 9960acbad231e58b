"""In a real browser against daphne: pages follow a dark system theme with legible text, and the
keyboard alone reaches the content, a node of the DAG, its panel and back."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

# WCAG contrast of an element's text colour on the background it sits on (the nearest opaque one).
CONTRAST = """
(selector) => {
  const rgb = (value) => value.match(/[\\d.]+/g).slice(0, 4).map(Number);
  const lum = ([r, g, b]) => {
    const channel = (c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
    const [R, G, B] = [r, g, b].map(channel);
    return 0.2126 * R + 0.7152 * G + 0.0722 * B;
  };
  return [...document.querySelectorAll(selector)].map((el) => {
    const clear = (node) => rgb(getComputedStyle(node).backgroundColor)[3] === 0;
    let ground = el;
    while (ground && clear(ground)) ground = ground.parentElement;
    const fg = lum(rgb(getComputedStyle(el).color));
    const bg = lum(rgb(getComputedStyle(ground || document.body).backgroundColor));
    const [hi, lo] = fg > bg ? [fg, bg] : [bg, fg];
    return { text: el.textContent.trim().slice(0, 30), ratio: (hi + 0.05) / (lo + 0.05) };
  });
}
"""


def test_a_dark_system_theme_darkens_the_pages_and_keeps_text_legible(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("draft"), node("review", "draft")], "edges": []},
                      status="awaiting_approval")
    page = chromium.new_page(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/tasks/{task.pk}/", "alice")
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(15, 19, 26)"
    low = [item for item in page.evaluate(CONTRAST, "h1, h2, p, .muted, .status, a, button, label")
           if item["text"] and item["ratio"] < 4.5]
    assert low == []
    page.screenshot(path=str(ARTIFACTS / "dark-task.png"), full_page=True)

    page.goto(f"{console_server}/runs/{run.run_id}/")
    page.wait_for_selector("#dag[data-placed='true']")
    stage = page.evaluate("() => getComputedStyle(document.querySelector('#dag .dag-stage')).backgroundColor")
    assert stage == "rgb(19, 24, 33)"
    page.screenshot(path=str(ARTIFACTS / "dark-run-graph.png"))


def test_the_keyboard_reaches_a_node_its_panel_and_back(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("draft"), node("review", "draft")], "edges": []})
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{run.run_id}/", "alice")
    page.wait_for_selector("#dag[data-placed='true']")

    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "main"

    for _ in range(30):  # Tab through the page's controls to the first node's box
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.dataset?.nodeId"):
            break
    focused = page.evaluate("() => document.activeElement.dataset.nodeId")
    assert focused, "a node's box is reachable with Tab"
    ring = page.evaluate("() => getComputedStyle(document.activeElement.querySelector('rect')).strokeWidth")
    assert ring == "3px", "the focused box shows it with a thick ring"

    page.keyboard.press("Enter")
    page.wait_for_selector("#panel:not([hidden])")
    assert page.evaluate("() => document.activeElement.id") == "panel-title"
    page.keyboard.press("Escape")
    page.wait_for_selector("#panel", state="hidden")
    assert page.evaluate("() => document.activeElement.dataset.nodeId") == focused
