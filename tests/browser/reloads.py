"""Live pages held against fresh loads of their own URLs, region by region, for the browser tests that
walk a run step by step while its pages stay open.

What is compared on a page: each live region (``[data-live-region][id]``) and each live part of the
node page (``[data-live-part]``) by its shown text, whether it is hidden; every run's ``data-run-status``;
the status chips in the page's main part; the graph's boxes with the status each is drawn in; and the
side panel's node, state and text. The messages flash (``main > .messages``) is the answer to the request
that made the page, not a fact of the run, so it is left out; so is the side panel's streamed log, whose
lines a fresh page fetches anew.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from tests.browser.conftest import ARTIFACTS, page_story

# For page.evaluate: what the page shows now, by region.
SEEN = """
() => {
  const words = (text) => text.replace(/\\s+/g, ' ').trim();
  const shown = (element) => words(element.innerText) + (element.closest('[hidden]') ? ' (hidden)' : '');
  const seen = {};
  for (const region of document.querySelectorAll('[data-live-region][id]')) seen[`#${region.id}`] = shown(region);
  for (const part of document.querySelectorAll('[data-live-part]')) seen[`part ${part.dataset.livePart}`] = shown(part);
  for (const run of document.querySelectorAll('[data-run-status]')) {
    seen[`run status of ${run.dataset.runId ?? run.id}`] = run.dataset.runStatus;
  }
  seen['status chips'] = [...document.querySelectorAll('main .status[data-status]')]
    .filter((chip) => !chip.closest('main > .messages, #panel-body'))
    .map((chip) => chip.dataset.status).join(' ');
  const boxes = [...document.querySelectorAll('#dag .dag-box[data-node-id]')];
  if (boxes.length) {
    seen['graph boxes'] = boxes.map((box) => `${box.dataset.nodeId}: ${box.dataset.status ?? '-'}`).sort().join(', ');
  }
  const panel = document.getElementById('panel');
  if (panel && !panel.hidden) {
    const body = document.getElementById('panel-body').cloneNode(true);
    body.querySelectorAll('.log-lines').forEach((lines) => lines.remove());
    const title = words(document.getElementById('panel-title').textContent);
    seen['side panel'] = `${title} [${body.dataset.state}] ${words(body.textContent)}`;
  }
  return seen;
}
"""

# Two loads a few seconds apart say "Waiting for 1 minute" and "Waiting for 2 minutes" of the same
# wait (the inbox's timesince); the moment it began, given beside it, is still compared.
RELATIVE_TIMES = (re.compile(r"Waiting for [^,]+, since"), "Waiting for …, since")

# How long a live page may take to follow: a change made in the test's process reaches the page's
# sockets at their next resync (3 s: a run's socket, or the inbox socket's fingerprint for the runs a
# list page does not follow), and the regions are fetched at most once a second.
FOLLOW_SECONDS = 40.0


def seen_on(page) -> dict[str, str]:
    """What ``page`` shows now, region by region, relative times normalised."""
    pattern, words = RELATIVE_TIMES
    return {name: pattern.sub(words, text) for name, text in page.evaluate(SEEN).items()}


def drawn(page) -> None:
    """Wait for what the page's scripts draw from the server's data: the run graph's boxes in their
    layout, and the side panel's node."""
    if page.locator("#dag").count():
        page.wait_for_selector("#dag[data-placed='true']", state="attached")
        if "node=" in page.url:
            page.wait_for_function("() => !!document.getElementById('panel-body').dataset.state")


@dataclass
class OpenPages:
    """Pages of one signed-in browser context, opened before a step of the run and kept open through it."""

    context: object
    pages: list = field(default_factory=list)
    # What the pages' scripts threw: a page that stopped following drifts, and this says why.
    errors: list = field(default_factory=list)

    def open(self, url: str):
        page = self._opened(url)
        self.pages.append(page)
        return page

    def _opened(self, url: str):
        page = self.context.new_page()
        page.on("pageerror", lambda error: self.errors.append(f"{page.url}: {error}"))
        page.goto(url)
        try:
            drawn(page)
        except Exception as error:
            raise AssertionError(f"{url} was never drawn; what its browser saw:\n{page_story(page)}") from error
        return page

    def equal_to_reloads(self, step: str) -> None:
        """Every open page, once it has followed the run, shows what a fresh load of its URL shows; else
        one failure naming each page that drifted, its regions and both texts of each."""
        drifts = []
        for page in self.pages:
            fresh = self._opened(page.url)
            try:
                drifts += _drift(page, fresh, step)
            finally:
                fresh.close()
        assert not drifts, f"after {step}:\n" + "\n".join(drifts) + f"\nthe pages' scripts threw: {self.errors}"
        assert not self.errors, f"after {step}, the pages' scripts threw: {self.errors}"


def _drift(live, fresh, step: str) -> list[str]:
    """Nothing once ``live`` shows what ``fresh`` does; past ``FOLLOW_SECONDS``, what differs."""
    deadline = time.monotonic() + FOLLOW_SECONDS
    while True:
        now, reloaded = seen_on(live), seen_on(fresh)
        if now == reloaded:
            return []
        if time.monotonic() > deadline:
            break
        live.wait_for_timeout(200)  # lets the pages' sockets and fetches be delivered meanwhile
    name = re.sub(r"\W+", "-", f"{step} {live.url.split('/', 3)[-1]}").strip("-")
    live.screenshot(path=str(ARTIFACTS / f"drift-{name}-live.png"), full_page=True)
    fresh.screenshot(path=str(ARTIFACTS / f"drift-{name}-reload.png"), full_page=True)
    return [f"{live.url} differs from its reload:"] + [
        f"  {region}:\n    live:   {now.get(region, '(absent)')!r}\n    reload: {reloaded.get(region, '(absent)')!r}"
        for region in sorted(set(now) | set(reloaded)) if now.get(region) != reloaded.get(region)
    ]
