"""On-demand benchmark of the run graph visualizer (static/js/dag/) in headless Chromium.

Run: ``.venv/bin/python -m pytest tests/bench/bench_dag_paint.py -o python_files='bench_*.py' -s``

A local http.server on 127.0.0.1 serves the harness page (tests/bench/dag_harness/), static/,
elkjs's lib/ at /static/vendor/elkjs/ (as STATICFILES_DIRS does) and fixture payloads from
``dag_fixture``. Two paths, for 100, 1,000 and 3,000 nodes:

- the server's layout: the payload carries, as graph.json's ``layout.placed``, the layout the server
  computes for it — ``graphs.layout.compute.layout_compute`` on ``layout_input`` of the payload, Node.js run at
  setup exactly as the background job runs it (its time is printed on lines of its own);
- the browser fallback: the same payload without it (no Node.js, or the layout not ready yet), laid out
  by ELK in the page's worker after a quick sketch, as before.

Payloads are served as the console serves graph.json: compact (``graphs.reads.graph_json.graph_compact``),
tagged with an ETag and ``Cache-Control: private, no-cache``, and answered 304 to a browser sending
the tag back, whose page then reads the body from its HTTP cache.

Each is measured in a fresh browser context (empty HTTP cache and localStorage): navigation to
``dag:painted`` (the first full drawing), to ``dag:placed`` (the drawing with ELK's layout) and the
main thread's long tasks until placed; then a revisit of the same run in that context (its graph.json
a 304, counted on the revisit's row). At 1,000 nodes
it drives wheel zooms and drags and counts animation frames, and times every frame of a scripted pan
with the minimap shown (median and 95th percentile against 60 fps).
Targets (printed with the measured value, the ratio and met / not met, as the other benchmarks print
theirs: a busy machine misses them without anything being wrong): with the server's layout, 1,000
nodes placed in < 1 s and 3,000 in < 2 s (medians), no main-thread task > 100 ms, a revisit of either
in < 0.3 s. What is asserted is behaviour: on the server's path the layout worker is never loaded.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
import threading
import time
from functools import cache
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from graphs.layout.compute import LayoutComputed, layout_compute, layout_input
from graphs.reads.graph_json import graph_compact
from tests.bench.dag_fixture import dag_payload, small_payload

sync_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).resolve().parent / "dag_harness"
CHROMIUM = "/usr/bin/chromium"
NODE = shutil.which("node") or ""
SIZES = (100, 1000, 3000)
REPEATS = 3
TARGET_PLACED_MS = {1000: 1000, 3000: 2000}
TARGET_REVISIT_MS = 300
MAX_BLOCK_MS = 100
VIEWPORT = {"width": 1440, "height": 900}
# The worker's script and ELK's: on the server's path neither may be fetched.
WORKER_SCRIPTS = ("layout-worker.js", "elk.bundled.js")


@cache
def _server_layout(size: int) -> LayoutComputed:
    """What the background job computes for the run: the same function on the same input."""
    if not NODE:
        pytest.skip("Node.js is not installed: the server's layout cannot be computed")
    return layout_compute(drawing=layout_input(dag_payload(size)), previous=None, node_binary=NODE, timeout=300)


@cache
def _fixture_bytes(name: str) -> bytes | None:
    """``small``; ``dag-<n>``, graph.json with the server's layout; ``dag-<n>-browser``, without it."""
    if name == "small":
        return _as_sent(small_payload())
    size, _, path = name.removeprefix("dag-").partition("-")
    if not name.startswith("dag-") or not size.isdigit() or path not in ("", "browser"):
        return None
    payload = dag_payload(int(size))
    if path == "":
        payload["layout"] = {"state": "ready", "error": "", "placed": _server_layout(int(size)).layout}
    return _as_sent(payload)


def _as_sent(payload: dict) -> bytes:
    """The bytes of ``payload`` as the console sends graph.json (console.views.runs.run_graph_json)."""
    return json.dumps(graph_compact(payload), separators=(",", ":")).encode()


class _Handler(SimpleHTTPRequestHandler):
    """Maps URL prefixes onto the repository the way the Django static setup does."""

    # As the console's server speaks: Chromium keeps no revalidatable copy of an HTTP/1.0 answer.
    protocol_version = "HTTP/1.1"
    not_modified = 0  # graph.json answers 304 so far
    mounts = (
        ("/static/vendor/elkjs/", ROOT / "node_modules" / "elkjs" / "lib"),
        ("/static/", ROOT / "static"),
        ("/harness/", HARNESS),
    )

    def translate_path(self, path: str) -> str:
        path = urlsplit(path).path
        for prefix, folder in self.mounts:
            if path.startswith(prefix):
                target = (folder / path[len(prefix) :]).resolve()
                if target.is_relative_to(folder.resolve()):
                    return str(target)
        return str(HARNESS / "missing")

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path.startswith("/fixtures/") and path.endswith(".json"):
            body = _fixture_bytes(path[len("/fixtures/") : -len(".json")])
            if body is None:
                self.send_error(404)
                return
            etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
            fresh = self.headers.get("If-None-Match") == etag
            _Handler.not_modified += fresh
            self.send_response(304 if fresh else 200)
            self.send_header("ETag", etag)
            self.send_header("Cache-Control", "private, no-cache")
            if fresh:
                self.end_headers()
                return
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def harness_url():
    for size in SIZES:
        _fixture_bytes(f"dag-{size}")
        _fixture_bytes(f"dag-{size}-browser")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/harness/index.html"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


def _wait_placed(page) -> dict:
    """Waits for ELK's drawing (after the first paint when that was a sketch)."""
    page.wait_for_function("window.__dag && (window.__dag.placed || window.__dag.error)", timeout=60_000)
    result = page.evaluate(
        "({painted: window.__dag.painted, placed: window.__dag.placed, error: window.__dag.error,"
        " longTasks: window.__dag.longTasks.filter((task) => task.start <= window.__dag.placed.at),"
        " scripts: performance.getEntriesByType('resource').map((entry) => entry.name)})"
    )
    assert not result["error"], result["error"]
    return result


def _measure(page, url: str) -> dict:
    page.goto(url)
    result = _wait_placed(page)
    durations = [task["duration"] for task in result["longTasks"]]
    return {
        "ms": result["painted"]["at"],
        "placed_ms": result["placed"]["at"],
        "long": len(durations),
        "max_long": max(durations, default=0.0),
        "worker": any(script.endswith(WORKER_SCRIPTS) for script in result["scripts"]),
    }


def _row(label: str, runs: list[dict]) -> str:
    times = [run["ms"] for run in runs]
    worst = max(run["max_long"] for run in runs)
    longs = max(run["long"] for run in runs)
    over = "yes" if worst > MAX_BLOCK_MS else "no"
    placed = statistics.median(run["placed_ms"] for run in runs)
    worker = "yes" if any(run["worker"] for run in runs) else "no"
    return (
        f"{label:<30} {statistics.median(times):>8.0f} {min(times):>7.0f} {max(times):>7.0f} {placed:>8.0f}"
        f" {longs:>9d} {worst:>12.0f} {over:>9} {worker:>7}"
    )


def _target(name: str, measured: float, target: float) -> str:
    met = "met" if measured < target else "NOT MET"
    return f"  {name:<44} {measured:>7.0f} ms  target < {target:,.0f} ms  ratio {measured / target:.2f}  {met}"


def test_time_to_painted_and_long_tasks(browser, harness_url):
    lines = ["", "Server layout (graphs.layout.compute.layout_compute: a Node.js process, as the job runs it)"]
    for size in SIZES[1:]:
        computed = [_server_layout.__wrapped__(size) for _ in range(REPEATS)]
        lines.append(
            f"  {size:,} nodes: {statistics.median(c.total_ms for c in computed):,.0f} ms the whole call"
            f" (min {min(c.total_ms for c in computed):,}), ELK and placement"
            f" {statistics.median(c.elk_ms for c in computed):,.0f} ms"
        )
    header = (
        f"{'run':<30} {'median':>8} {'min':>7} {'max':>7} {'placed':>8}"
        f" {'long>50ms':>9} {'max long ms':>12} {f'>{MAX_BLOCK_MS} ms?':>9} {'worker':>7}"
    )
    lines += [
        "",
        "Navigation → dag:painted (ms: median, min, max) and → dag:placed (median), main-thread long tasks"
        " until placed, and whether the layout worker was loaded",
        header,
        "-" * len(header),
    ]
    server: dict[int, dict[str, list[dict]]] = {}
    for path in ("", "-browser"):
        for size in SIZES:
            url = f"{harness_url}?fixture=dag-{size}{path}"
            cold, warm = [], []
            for _ in range(REPEATS):
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                cold.append(_measure(page, url))
                answered = _Handler.not_modified
                warm.append(_measure(page, url))
                # The revisit's graph.json came from the browser's cache, revalidated by a 304.
                assert _Handler.not_modified > answered
                context.close()
            edges = len(dag_payload(size)["edges"])
            label = f"{size} nodes/{edges} edges" + (", browser" if path else ", server")
            lines.append(_row(label, cold))
            lines.append(_row("  revisit", warm))
            if not path:
                server[size] = {"cold": cold, "warm": warm}
    placed = {size: statistics.median(run["placed_ms"] for run in server[size]["cold"]) for size in TARGET_PLACED_MS}
    revisit = {size: statistics.median(run["placed_ms"] for run in server[size]["warm"]) for size in (1000, 3000)}
    longest = max(run["max_long"] for runs in server.values() for run in runs["cold"] + runs["warm"])
    lines += [
        "",
        "Targets (the server's layout; medians of the first visits, a fresh browser context each)",
        _target("1,000 nodes placed on a first visit", placed[1000], TARGET_PLACED_MS[1000]),
        _target("3,000 nodes placed on a first visit", placed[3000], TARGET_PLACED_MS[3000]),
        _target("longest main-thread task (all sizes, visits)", longest, MAX_BLOCK_MS),
        _target("1,000 nodes revisited", revisit[1000], TARGET_REVISIT_MS),
        _target("3,000 nodes revisited", revisit[3000], TARGET_REVISIT_MS),
    ]
    print("\n".join(lines))
    assert not any(run["worker"] for runs in server.values() for run in runs["cold"] + runs["warm"])


_COUNT_FRAMES = """() => {
  window.__frames = { count: 0, worst: 0, last: performance.now(), start: performance.now() };
  const tick = (now) => {
    const frames = window.__frames;
    frames.worst = Math.max(frames.worst, now - frames.last);
    frames.last = now;
    frames.count += 1;
    if (!frames.stop) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""
_STOP_FRAMES = """() => {
  const frames = window.__frames;
  frames.stop = true;
  return { fps: frames.count / ((performance.now() - frames.start) / 1000), worst: frames.worst };
}"""


def _interact(page, zoom_in_first: bool) -> dict:
    box = page.locator(".dag-stage").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx, cy)
    if zoom_in_first:
        for _ in range(12):
            page.mouse.wheel(0, -120)
        page.wait_for_timeout(200)
    page.evaluate(_COUNT_FRAMES)
    started = time.perf_counter()
    for step in range(40):
        page.mouse.wheel(0, -60 if step % 20 < 10 else 60)
        page.wait_for_timeout(16)
    page.mouse.down()
    page.mouse.move(cx - 300, cy - 200, steps=60)
    page.mouse.move(cx + 200, cy + 150, steps=60)
    page.mouse.up()
    result = page.evaluate(_STOP_FRAMES)
    result["seconds"] = time.perf_counter() - started
    return result


def test_pan_zoom_frame_rate_at_1000_nodes(browser, harness_url):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.goto(f"{harness_url}?fixture=dag-1000")
    _wait_placed(page)
    whole = _interact(page, zoom_in_first=False)
    page.locator(".dag-button", has_text="Fit").click()
    close = _interact(page, zoom_in_first=True)
    context.close()
    print(
        "\nPan/zoom at 1,000 nodes (canvas): 40 wheel steps + 120 drag moves\n"
        f"  whole graph in view: {whole['fps']:.0f} fps, worst frame {whole['worst']:.0f} ms\n"
        f"  zoomed in (labels):  {close['fps']:.0f} fps, worst frame {close['worst']:.0f} ms"
    )
    assert whole["fps"] > 20 and close["fps"] > 20


# Every animation frame's time, from the one before, while recording.
_RECORD_FRAME_TIMES = """() => {
  window.__frameTimes = { times: [], last: null, stop: false };
  const tick = (now) => {
    const record = window.__frameTimes;
    if (record.last !== null) record.times.push(now - record.last);
    record.last = now;
    if (!record.stop) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""
_STOP_FRAME_TIMES = "() => { window.__frameTimes.stop = true; return window.__frameTimes.times; }"
# 60 fps, with a millisecond for the jitter of a frame clock at 60 Hz (a frame on time measures 16-17.5 ms).
TARGET_FRAME_MS = 1000 / 60 + 1


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _pan_frame_times(page) -> list[float]:
    box = page.locator(".dag-stage").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx, cy)
    page.evaluate(_RECORD_FRAME_TIMES)
    for dx, dy in ((-400, -250), (300, 200), (-200, 150), (300, -100)):
        page.mouse.down()
        page.mouse.move(cx + dx, cy + dy, steps=90)
        page.mouse.up()
        page.mouse.move(cx, cy)
    return page.evaluate(_STOP_FRAME_TIMES)


def test_pan_frame_times_at_1000_nodes_with_the_minimap(browser, harness_url):
    """A scripted pan of the 1,000-node graph as it opens (legible, so with the minimap shown): the time
    of every frame drawn meanwhile, median and 95th percentile, against 60 fps; then the same pan with
    the minimap hidden, for its share."""
    rows = {}
    for label, hidden in (("minimap shown", False), ("minimap hidden", True)):
        context = browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        page.goto(f"{harness_url}?fixture=dag-1000")
        _wait_placed(page)
        page.locator(".dag-minimap").wait_for(state="visible")
        if hidden:
            page.add_style_tag(content=".dag-minimap { display: none !important; }")
        rows[label] = _pan_frame_times(page)
        context.close()
    lines = ["", "Pan at 1,000 nodes, legible zoom (canvas): 4 drags of 90 moves"]
    for label, times in rows.items():
        median, p95 = statistics.median(times), _percentile(times, 0.95)
        lines.append(
            f"  {label:<15} {len(times)} frames, median {median:.1f} ms ({1000 / median:.0f} fps), p95 {p95:.1f} ms"
        )
    shown = rows["minimap shown"]
    lines += [
        _target("median frame time, minimap shown", statistics.median(shown), TARGET_FRAME_MS),
        _target("95th percentile frame time, minimap shown", _percentile(shown, 0.95), TARGET_FRAME_MS),
    ]
    print("\n".join(lines))
    assert all(len(times) > 30 for times in rows.values())
