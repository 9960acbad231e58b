"""The console's real pages in Chromium for the live regions benchmark, and what they are watched by.

Every page of the benchmark's browser context runs ``WATCH`` before its own scripts. It changes nothing
the page does; it records, on ``window.__bench``:

- ``snapshots``: run snapshots received on the page's run sockets (a page counts as following once it
  had one);
- ``heard``: each node state a ``nodes`` event brought, with when its frame arrived (epoch ms), and
  ``drawn``: when the run graph's canvas next finished a drawing after that. A graph of more than a few
  hundred boxes is drawn on a canvas, which has no element per box to observe, so the drawing is
  timed where the canvas renderer starts it (its ``clearRect``; the page's socket handler has applied
  the event to the model by then) and stamped once that drawing's script has run (a microtask after it).

Resource Timing keeps every request the page makes (the buffer is enlarged for that), so each page's
region fetches can be counted and timed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1440, "height": 900}
READY_MS = 120_000

WATCH = """
(() => {
  const bench = (window.__bench = { snapshots: 0, heard: [], opened: 0, closed: [], errors: [] });
  window.addEventListener("error", (event) => bench.errors.push(String(event.message)));
  bench.fetches = [];
  const nativeFetch = window.fetch;
  window.fetch = (input, init) => {
    const entry = { url: String(input), started: now(), ended: null, outcome: "pending" };
    bench.fetches.push(entry);
    return nativeFetch(input, init).then(
      (response) => { entry.ended = now(); entry.outcome = String(response.status); return response; },
      (error) => { entry.ended = now(); entry.outcome = String(error); throw error; },
    );
  };
  window.addEventListener("unhandledrejection", (event) => bench.errors.push(String(event.reason)));
  const now = () => performance.timeOrigin + performance.now();
  let waiting = [];
  performance.setResourceTimingBufferSize(100000);
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => { bench.opened += 1; });
      this.addEventListener("close", (event) => { bench.closed.push(event.code); });
      this.addEventListener("message", (event) => {
        const message = JSON.parse(event.data);
        if (message.type === "snapshot") bench.snapshots += 1;
        if (message.type !== "event" || message.event.event !== "nodes") return;
        const heard = now();
        for (const node of message.event.nodes) {
          const entry = { node: node.node_id, status: node.status, heard, drawn: null };
          bench.heard.push(entry);
          waiting.push(entry);
        }
      });
    }
  };
  const clearRect = CanvasRenderingContext2D.prototype.clearRect;
  CanvasRenderingContext2D.prototype.clearRect = function (...args) {
    if (waiting.length && this.canvas.classList.contains("dag-canvas")) {
      const drawing = waiting;
      waiting = [];
      queueMicrotask(() => {
        const drawn = now();
        for (const entry of drawing) entry.drawn = drawn;
      });
    }
    return clearRect.apply(this, args);
  };
})();
"""

# Each region fetch the page made (its URL given), as epoch ms of its start.
FETCHES = """
(url) => performance.getEntriesByType("resource")
  .filter((entry) => entry.initiatorType === "fetch" && new URL(entry.name).pathname === url)
  .map((entry) => performance.timeOrigin + entry.startTime)
"""

# Whether each box the SVG renderer drew shows the status its node id maps to, and no box is missing.
BOXES_SHOW = """
(expected) => Object.entries(expected).every(([id, status]) =>
  document.querySelector(`#dag g.dag-box[data-node-id="${CSS.escape(id)}"]`)?.dataset.status === status)
"""

PageTimeout = sync_api.TimeoutError


@contextmanager
def browser_context(*, origin: str, cookie_name: str, cookie: str) -> Iterator:
    """A Chromium context signed in to the console at ``origin``, every page watched."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-renderer-backgrounding",
                  "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows",
                  "--disable-features=IntensiveWakeUpThrottling"],
        )
        try:
            context = browser.new_context(viewport=VIEWPORT)
            context.add_cookies([{"name": cookie_name, "value": cookie, "url": origin}])
            context.add_init_script(WATCH)
            yield context
        finally:
            browser.close()


def graph_page_open(context, *, origin: str, run_id: str):
    """The run's graph page, drawn (ELK's layout placed) and following the run's socket."""
    page = context.new_page()
    page.goto(f"{origin}/runs/{run_id}/", timeout=READY_MS)
    page.wait_for_selector("#dag[data-placed='true']", state="attached", timeout=READY_MS)
    page.wait_for_function("() => window.__bench.snapshots > 0", timeout=READY_MS)
    return page


def task_page_open(context, *, origin: str, task_id: str):
    """The task's page, following its runs' sockets."""
    page = context.new_page()
    page.goto(f"{origin}/tasks/{task_id}/", timeout=READY_MS)
    page.wait_for_function("() => window.__bench.snapshots > 0", timeout=READY_MS)
    return page
