"""Browser-test fixtures: Debian's Chromium driven by Playwright, and the console served by daphne.

Under CI=true a missing browser fails the tests; elsewhere they skip with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest
from django.db import connections

from graphs.models import WorkNodeExecution
from tests.celery_worker import current_database_url
from tests.run_builders import edges_for, node, planned_run

if TYPE_CHECKING:
    from playwright.sync_api import Browser

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
DAPHNE_START_LIMIT_SECONDS = 300
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
IN_CI = os.environ.get("CI", "").lower() == "true"
# How long a browser test's page waits for the condition the test means before it fails. A bound against a
# hang, never a pace the test expects: a machine loaded several times over its cores takes many seconds for
# what a quiet one does at once, and a test that meant a pace would be a benchmark.
PAGE_WAIT_MS = 90_000
# For page.wait_for_function: every box of the run graph on screen, wholly inside the drawing's stage.
ALL_BOXES_IN_VIEW = """
() => {
  const stage = document.querySelector('#dag .dag-stage').getBoundingClientRect();
  const boxes = [...document.querySelectorAll('#dag .dag-box[data-node-id]')];
  return boxes.length > 0 && boxes.every((box) => {
    const r = box.getBoundingClientRect();
    return r.left >= stage.left - 1 && r.right <= stage.right + 1
      && r.top >= stage.top - 1 && r.bottom <= stage.bottom + 1;
  });
}
"""

# For page.evaluate: what scrolls sideways, if anything — the document's overflow, and the elements
# that stick out past the viewport.
OVERFLOW = """
() => {
  const width = document.documentElement.clientWidth;
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + (typeof el.className === 'string' && el.className ? '.' + el.className.split(' ').join('.') : '');
  const wide = [...document.querySelectorAll('body *')]
    .filter((el) => el.getBoundingClientRect().right > width + 1 && getComputedStyle(el).position !== 'fixed')
    .map(name);
  return { scroll: document.documentElement.scrollWidth - width, wide: wide.slice(0, 5) };
}
"""


def _missing(reason: str) -> NoReturn:
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


@contextmanager
def chromium_launched(missing: Callable[[str], NoReturn] = _missing) -> Iterator[Browser]:
    """A headless Chromium (Playwright's sync API); ``missing(reason)`` when there is none to launch."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (make test installs it)")
    if not CHROMIUM.exists():
        missing(f"Chromium is missing at {CHROMIUM} (apt-get install -y chromium)")
    # Playwright's sync API runs an event loop in this thread; the ORM calls the tests make around it
    # are ordinary blocking calls, which Django would otherwise refuse next to a running loop.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
            try:
                yield browser
            finally:
                browser.close()
                # The ORM calls made beside the browser's event loop had connections of their own, which
                # pytest-django does not close; left open, they keep the test database from being dropped.
                connections.close_all()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def chromium() -> Iterator[Browser]:
    """A headless Chromium browser for the browser tests."""
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium_launched() as browser:
        from playwright.sync_api import expect

        # Playwright's assertions wait for their condition up to the same bound as the pages' waits.
        expect.set_options(timeout=PAGE_WAIT_MS)
        yield browser


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[pytest.TestReport]:
    """A browser test that fails keeps what each of its open pages showed: a screenshot and the HTML, named in
    the report with the page's address, so a failure seen once can be read afterwards."""
    report = yield
    browser = item.funcargs.get("chromium") if hasattr(item, "funcargs") else None
    if report.when == "call" and report.failed and browser is not None:
        report.sections.append(("open pages", "\n".join(_pages_kept(browser, item.name))))
    return report


def _pages_kept(browser: Browser, test_name: str) -> list[str]:
    kept_in = ARTIFACTS / "failed"
    kept_in.mkdir(parents=True, exist_ok=True)
    said = []
    pages = [page for context in browser.contexts for page in context.pages]
    for number, page in enumerate(pages):
        stem = kept_in / f"{test_name}-{number}"
        try:
            page.screenshot(path=str(stem.with_suffix(".png")), full_page=True, timeout=30_000)
            stem.with_suffix(".html").write_text(page.content())
            stem.with_suffix(".txt").write_text(page_story(page))
            said.append(f"{page.url}: {stem}.png, .html and .txt")
        except Exception as error:  # a page that crashed or hangs: say so, and keep the test's own failure
            said.append(f"{page.url}: not kept ({error})")
    # What the console's server logged up to the failure (each request it answered among it), before the
    # next test of this process starts a daphne of its own over the same file.
    served = ARTIFACTS / f"daphne{os.environ.get('PYTEST_XDIST_WORKER', '')}.log"
    if pages and served.exists():
        shutil.copyfile(served, kept_in / f"{test_name}-daphne.log")
        said.append(f"the server's log: {kept_in / test_name}-daphne.log")
    return said


def page_story(page) -> str:
    """What went wrong in ``page`` as its browser saw it: what its console said above the info level
    (where a module script that failed to load is reported, not as a page error), what its scripts threw,
    and each request that failed or has not been answered yet."""
    lines = [f"{message.type}: {message.text} ({message.location.get('url', '')})"
             for message in page.console_messages() if message.type in {"error", "warning"}]
    lines += [f"threw: {error}" for error in page.page_errors()]
    for request in page.requests():
        if request.failure:
            lines.append(f"failed: {request.method} {request.url}: {request.failure}")
        elif request.existing_response is None:
            lines.append(f"unanswered: {request.method} {request.url}")
    return "\n".join(lines) or "nothing went wrong that the browser saw"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class Daphne:
    url: str
    process: subprocess.Popen


@contextmanager
def console_served(**settings: str) -> Iterator[str]:
    """The console served by a real daphne (pages, API and WebSockets) in the embedded mode, on the test
    database, with ``settings`` as extra environment; yields its base URL."""
    with daphne_serving(**settings) as daphne:
        yield daphne.url


@contextmanager
def daphne_serving(**settings: str) -> Iterator[Daphne]:
    """``console_served``'s daphne, yielded with its process; stopped (if it still runs) on the way out."""
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": current_database_url(),
        "WORKGRAPH_OFFLINE_LINE_DELAY": "0.03",
        "WORKGRAPH_EMBEDDED_WORKERS": "2",
        **settings,
    }
    env.pop("REDIS_URL", None)  # embedded: the server executes the pipeline itself
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    ARTIFACTS.mkdir(exist_ok=True)
    # Kept with the screenshots, to read when a test fails; one per xdist process.
    log = open(ARTIFACTS / f"daphne{os.environ.get('PYTEST_XDIST_WORKER', '')}.log", "wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "console.asgi:application"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        # A loaded machine may take minutes to import the console: wait while daphne lives, bounded only
        # so that a hung start still ends the test, saying what daphne said.
        deadline = time.monotonic() + DAPHNE_START_LIMIT_SECONDS
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    said = Path(log.name).read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"daphne did not start (exit code {server.poll()}):\n{said}") from None
                time.sleep(0.1)
        yield Daphne(f"http://127.0.0.1:{port}", server)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture
def console_server(transactional_db) -> Iterator[str]:
    """The console served by daphne, its offline agent writing a line every 30 ms."""
    with console_served() as url:
        yield url


@pytest.fixture
def slow_console_server(transactional_db) -> Iterator[str]:
    """The console served by daphne, its offline agent slow enough (a line every 0.4 s) to watch an
    attempt while it runs."""
    with console_served(WORKGRAPH_OFFLINE_LINE_DELAY="0.4") as url:
        yield url


def attempt_running(run, node_id: str, *, timeout: float = 20.0) -> WorkNodeExecution:
    """Wait for the console to start ``node_id`` of ``run``; return that attempt, running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        attempt = WorkNodeExecution.objects.filter(run=run, node_id=node_id, status="running").first()
        if attempt is not None:
            return attempt
        time.sleep(0.05)
    raise AssertionError(f"{node_id} did not start")


def build_and_check_finished(task):
    """A succeeded run of two prompt nodes, build then check, each with its one attempt recorded."""
    nodes = [node("build"), node("check", "build", task_prompt="Check everything.")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="succeeded")
    for node_id in ("build", "check"):
        WorkNodeExecution.objects.create(
            run=run, node_id=node_id, subagent_type="planner", attempt=1, status="succeeded",
            input_payload={"prompt": f"Do {node_id}."}, output_payload={"text": f"{node_id} done"},
        )
    return run


def no_sideways_scroll(page) -> None:
    """The page at a phone's width scrolls only down; the viewport is set back after."""
    page.set_viewport_size({"width": 390, "height": 844})
    overflow = page.evaluate(OVERFLOW)
    page.set_viewport_size({"width": 1280, "height": 900})
    assert overflow["scroll"] <= 0, overflow


def sign_in(page, url: str, username: str) -> None:
    """Sign in through the login form at ``url`` (which may carry ``?next=``) with the personas' password."""
    page.goto(url)
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "correct horse battery staple")
    page.click("button[type=submit]")


def raw_log_open(page) -> None:
    """Unfold the node page's raw log once the page's scripts have drawn it, from the keyboard: the page
    moves the summary down whenever a part above it grows (the trace drawn, the attempt's output come),
    and a click aimed just before lands where the summary was."""
    page.wait_for_selector("#log-lines[data-viewer='ready']", state="attached")
    page.locator("#raw-log summary").press("Enter")
    page.wait_for_selector("#raw-log[open]", state="attached")


class RunSnapshots:
    """Counts the ``snapshot`` frames the page's sockets for one run receive; attach it before navigating.

    A test that changes a run behind the page's back must wait for the socket's first snapshot: a change
    made before the socket subscribed is already in that snapshot, and no later one comes for it.
    """

    def __init__(self, page, run_id) -> None:
        self.count = 0
        self._page = page
        self._path = f"/ws/runs/{run_id}/"
        page.on("websocket", self._opened)

    def _opened(self, websocket) -> None:
        if self._path in websocket.url:
            websocket.on("framereceived", self._received)

    def _received(self, payload) -> None:
        if isinstance(payload, str) and json.loads(payload).get("type") == "snapshot":
            self.count += 1

    def wait_for(self, count: int, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while self.count < count:
            assert time.monotonic() < deadline, f"{self.count} of {count} snapshots came on {self._path}"
            self._page.wait_for_timeout(50)  # lets Playwright deliver the frames that came meanwhile
