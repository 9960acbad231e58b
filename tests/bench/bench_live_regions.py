"""The live targets with the run graph page's server-rendered regions: a status change reaching an open
graph page, what an event storm costs the server in region renders, and a log line reaching 20
listeners — in one sitting, on real daphnes, channels-redis, PostgreSQL and Chromium.

Run on demand (``make bench`` runs it with the others)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python -m pytest tests/bench/bench_live_regions.py -s -p no:cacheprovider -o python_files='bench_*.py'

A fresh database, ``bench_live_regions`` (``live_console.database_fresh``), is set up by
``live_regions_producer.py setup``: a running run of ``BIG_NODES`` nodes and, each in a task of its
own, one running run of ``STORM_NODES`` nodes per storm, every node with a queued attempt, every
run's layout computed as the server's background job would. One daphne serves this tree, writing its
access log; the producer, a process of its own, changes node statuses as the engine does (the row
updated and its ``nodes`` event emitted in one transaction, delivered on commit), so every event
crosses Redis to the daphne. The pages are the console's own, in headless Chromium, signed in as the
run's lead and watched by ``live_regions_pages.WATCH``.

1. **A status change → an open graph page.** The big run's graph page is open (drawn on a canvas at
   this size); ``CHANGES`` nodes spread over the run are moved one at a time, ``CHANGE_EVERY_SECONDS``
   apart. Latency is from the emit (just before the producer's commit) to the page's socket hearing
   it, and to the canvas finishing the drawing that shows it. Target: p95 of the drawn latency < 1 s.
2. **An event storm.** ``GRAPH_LISTENERS`` graph pages and ``TASK_LISTENERS`` task pages follow a
   storm run; the producer makes ``STORM_RATE`` status changes a second for each of ``STORM_SECONDS``,
   each its own UPDATE and ``nodes`` event, then ends the run (``run_status_set``: succeeded). Each page
   shows one region document (the run graph's ``/runs/<id>/live/``, the task page itself), so every
   region fetch is one render of each region on the server. Renders per region per listener-second are
   the pages' fetches (Resource Timing) from the first emit to a second after the last, divided by the
   listeners and by the storm's span plus that second. Target ≤ 1, where one render per event would be
   hundreds. The table also gives the server's count from daphne's access log over the whole case (the
   storm, the wait for every page's final state and a settling pause) and the most fetches any one page
   made in one second. Every page must end showing the run's final state: the header's status and
   progress as the server renders them now, and on the graph pages each box's status.
3. **A log line → 20 listeners at 1,000 lines a second** on one daphne: ``bench_live_logs``'s
   database case, set up afresh, run first, before the browsers and storms load the machine. Target:
   p95 < 50 ms.

The module prints each part's table, then the targets as one markdown table (metric, measured,
target, met). What it asserts is behaviour only: every change reached the page and was drawn, every
page ended showing the final state, no log line was lost or repeated.
"""

from __future__ import annotations

import io
import json
import queue
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

from tests.bench.bench_live_logs import database_case_run
from tests.bench.live_console import (
    REDIS_URL,
    console_env,
    daphne,
    database_fresh,
    producer_close,
    redis_reachable,
)
from tests.bench.live_regions_pages import (
    BOXES_SHOW,
    FETCHES,
    PageTimeout,
    browser_context,
    graph_page_open,
    task_page_open,
)
from tests.bench.live_regions_producer import NEXT_STATUS
from tests.bench.report import load_average, p95, tables

PRODUCER = Path(__file__).with_name("live_regions_producer.py")
BIG_NODES = 3000
# Under the SVG renderer's limit with the planning call's box: each box an element whose status can be read.
STORM_NODES = 300
CHANGES = 40
CHANGE_EVERY_SECONDS = 1.5
STORM_RATE = 500
STORM_SECONDS = (1, 5)
GRAPH_LISTENERS = 5
TASK_LISTENERS = 5
LOG_RATE = 1000
LOG_LISTENERS = 20
# How long after every page shows the final state its last fetches are still counted.
SETTLE_SECONDS = 3.0
FINAL_TIMEOUT_MS = 60_000
SETUP_SECONDS = 900
TARGET_STATUS_P95_MS = 1000.0
TARGET_RENDERS = 1.0
TARGET_LOG_P95_MS = 50.0


@dataclass(frozen=True)
class StatusResult:
    heard_ms: list[float]
    drawn_ms: list[float]
    missing: int


@dataclass(frozen=True)
class StormResult:
    seconds: int
    changes: int
    achieved_rate: float
    span_seconds: float
    graph_renders: int
    task_renders: int
    # The pages' region fetches (each one render on the server) from the first emit to a second after the last.
    storm_renders: int
    most_in_a_second: int
    final_pages: int


def test_live_regions_keep_the_live_targets():
    if not redis_reachable(REDIS_URL):
        pytest.skip(f"needs a reachable Redis at {REDIS_URL}")
    loads = [load_average()]
    with tempfile.TemporaryDirectory(prefix="bench-live-regions-") as scratch_name:
        scratch = Path(scratch_name)
        # The log case first, before the browsers and the storms have loaded the machine.
        logs = database_case_run(scratch, rate=LOG_RATE, listeners=LOG_LISTENERS)
        loads.append(load_average())
        tree = _committed_tree(scratch / "tree")
        with database_fresh("bench_live_regions", scratch) as database_url:
            env = console_env(tree=tree, database_url=database_url, scratch=scratch, name="regions")
            env["WORKGRAPH_SERVER_LAYOUT"] = "1"
            setup = _set_up(tree, env)
            access_log = scratch / "access.log"
            with daphne(tree=tree, env=env, access_log=access_log) as port, _Producer(tree, env) as producer:
                origin = f"http://127.0.0.1:{port}"
                with browser_context(origin=origin, cookie_name=setup["cookie_name"],
                                     cookie=setup["cookie"]) as context:
                    status = _status_changes(context, producer, origin=origin, run=setup["big"])
                    loads.append(load_average())
                    storms = [
                        _storm(context, producer, origin=origin, run=run, seconds=seconds, access_log=access_log,
                               cookie=f"{setup['cookie_name']}={setup['cookie']}")
                        for run, seconds in zip(setup["storms"], STORM_SECONDS, strict=True)
                    ]
                    loads.append(load_average())
    _print(status, storms, logs, loads)
    assert status.missing == 0, f"{status.missing} status changes never reached the drawing"
    assert all(storm.final_pages == GRAPH_LISTENERS + TASK_LISTENERS for storm in storms), \
        "a page did not end showing the run's final state"
    assert logs.lost == 0 and logs.duplicated == 0, "a log listener lost or repeated lines"


def _committed_tree(destination: Path) -> Path:
    """The console as committed (HEAD), unpacked with this clone's front-end packages: what is measured
    is a version of the console, whatever the working tree holds while the benchmark runs."""
    archive = subprocess.run(["git", "-C", str(settings.BASE_DIR), "archive", "--format=tar", "HEAD"],
                             capture_output=True, check=True)
    destination.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(destination, filter="data")
    (destination / "node_modules").symlink_to(Path(settings.BASE_DIR) / "node_modules")
    return destination


def _set_up(tree: Path, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, str(PRODUCER), "setup", str(BIG_NODES), str(STORM_NODES), str(len(STORM_SECONDS))],
        cwd=tree, env=env, capture_output=True, text=True, timeout=SETUP_SECONDS,
    )
    if done.returncode != 0:
        raise RuntimeError(f"setting up the console failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


class _Producer:
    """``live_regions_producer.py produce``: one command a line, one answer a line, each with a deadline."""

    def __init__(self, tree: Path, env: dict[str, str]) -> None:
        self.tree = tree
        self.env = env
        self.lines: queue.Queue[str] = queue.Queue()

    def __enter__(self) -> _Producer:
        self.errors = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(
            [sys.executable, str(PRODUCER), "produce"], cwd=self.tree, env=self.env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
        )
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def ask(self, command: str, *, timeout: float = 60.0) -> list[str]:
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        try:
            answer = self.lines.get(timeout=timeout)
        except queue.Empty:
            answer = ""
        if not answer:
            self.errors.seek(0)
            raise RuntimeError(f"the producer did not answer {command!r}: {self.errors.read()[-3000:]}")
        return answer.split()[1:]

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.strip())
        self.lines.put("")

    def __exit__(self, *exc) -> None:
        producer_close(self.process, self.errors)


def _status_changes(context, producer: _Producer, *, origin: str, run: dict) -> StatusResult:
    """CHANGES nodes spread over the run, each moved once, and when the page heard and drew each."""
    page = graph_page_open(context, origin=origin, run_id=run["run"])
    nodes = run["nodes"]
    # 997 is prime to the run's size: the nodes picked are distinct and spread over the whole graph.
    picked = [nodes[(index * 997) % len(nodes)] for index in range(CHANGES)]
    emitted: dict[str, float] = {}
    missing = 0
    for node_id in picked:
        paced = time.monotonic() + CHANGE_EVERY_SECONDS
        emitted[node_id] = 1000 * float(producer.ask(f"change {run['run']} {node_id}")[0])
        try:
            page.wait_for_function("(node) => window.__bench.heard.some((e) => e.node === node && e.drawn)",
                                   arg=node_id, timeout=30_000, polling=50)
        except PageTimeout:
            missing += 1
        # Spaced out, so each change is measured alone (and the regions' fetch it caused has ended).
        time.sleep(max(0.0, paced - time.monotonic()))
    heard = {entry["node"]: entry for entry in page.evaluate("() => window.__bench.heard")}
    page.close()
    drawn = [heard[n]["drawn"] - emitted[n] for n in picked if n in heard and heard[n]["drawn"]]
    return StatusResult(heard_ms=[heard[n]["heard"] - emitted[n] for n in picked if n in heard], drawn_ms=drawn,
                        missing=missing)


def _storm(context, producer: _Producer, *, origin: str, run: dict, seconds: int, access_log: Path,
           cookie: str) -> StormResult:
    """The run's storm with its listeners open: renders counted, and whether each page ended right."""
    live_path, task_path = f"/runs/{run['run']}/live/", f"/tasks/{run['task']}/"
    graphs = [graph_page_open(context, origin=origin, run_id=run["run"]) for _ in range(GRAPH_LISTENERS)]
    tasks = [task_page_open(context, origin=origin, task_id=run["task"]) for _ in range(TASK_LISTENERS)]
    # A graph page fetches its regions once on its first snapshot: that fetch is the page's loading.
    for page in graphs:
        page.wait_for_function("() => Number(document.documentElement.dataset.liveRenders || 0) >= 1", timeout=60_000)
    before = _logged(access_log, live_path, task_path)
    changes = STORM_RATE * seconds
    rate, first, last = (float(value) for value in producer.ask(f"storm {run['run']} {STORM_RATE} {changes}",
                                                                  timeout=seconds * 20 + 60))
    producer.ask(f"finish {run['run']} succeeded")
    expected = _statuses_after(run["nodes"], changes)
    final = sum(_graph_final(page, expected) for page in graphs) + sum(_task_final(page, run) for page in tasks)
    time.sleep(SETTLE_SECONDS)  # fetches still under way once the pages show the final state are counted
    after = _logged(access_log, live_path, task_path)
    shown = _progress_shown(origin, run["run"], cookie)
    progress = [page.text_content("#run-progress") for page in graphs]
    progress += [page.text_content(f"#run-{run['run']} [data-progress]") for page in tasks]
    for text in progress:
        if text != shown:
            print(f"a page's progress reads {text!r}, the server's {shown!r}", flush=True)
    final -= sum(text != shown for text in progress)
    starts = [page.evaluate(FETCHES, path) for pages, path in ((graphs, live_path), (tasks, task_path))
              for page in pages]
    most = max(_most_in_a_second(page_starts, since=1000 * first) for page_starts in starts)
    storm_renders = sum(1000 * first <= start <= 1000 * (last + 1) for page_starts in starts for start in page_starts)
    for page in graphs + tasks:
        page.close()
    return StormResult(seconds=seconds, changes=changes, achieved_rate=rate, span_seconds=last - first,
                       graph_renders=after[0] - before[0], task_renders=after[1] - before[1],
                       storm_renders=storm_renders,
                       most_in_a_second=most, final_pages=final)


def _statuses_after(nodes: list[str], changes: int) -> dict[str, str]:
    """Each node's status once ``changes`` changes took the nodes in turn from queued."""
    statuses = dict.fromkeys(nodes, "queued")
    for index in range(changes):
        node_id = nodes[index % len(nodes)]
        statuses[node_id] = NEXT_STATUS[statuses[node_id]]
    return statuses


def _graph_final(page, expected: dict[str, str]) -> bool:
    try:
        page.wait_for_function(
            "(expected) => document.querySelector('#run-header')?.dataset.runStatus === 'succeeded'"
            f" && ({BOXES_SHOW})(expected)",
            arg=expected, timeout=FINAL_TIMEOUT_MS, polling=250,
        )
    except PageTimeout:
        wrong = page.evaluate(
            "(expected) => Object.entries(expected).filter(([id, status]) => document.querySelector("
            "`#dag g.dag-box[data-node-id=\"${CSS.escape(id)}\"]`)?.dataset.status !== status).length", expected)
        status = page.evaluate("() => document.querySelector('#run-header')?.dataset.runStatus")
        seen = page.evaluate("() => ({snapshots: window.__bench.snapshots, opened: window.__bench.opened, "
                             "closed: window.__bench.closed, errors: window.__bench.errors.slice(0, 5), "
                             "events: window.__bench.heard.length, "
                             "renders: document.documentElement.dataset.liveRenders, "
                             "fetches: window.__bench.fetches.slice(-6).map((f) => "
                             "[new URL(f.url, location.href).pathname, Math.round(f.started), f.outcome, "
                             "f.ended && Math.round(f.ended - f.started)])})")
        print(f"a graph page did not end right: run {status}, {wrong} boxes not as the run is; {seen}", flush=True)
        return False
    return True


def _task_final(page, run: dict) -> bool:
    try:
        page.wait_for_function(f"() => document.getElementById('run-{run['run']}')?.dataset.runStatus === 'succeeded'",
                               timeout=FINAL_TIMEOUT_MS, polling=100)
    except PageTimeout:
        status = page.evaluate(f"() => document.getElementById('run-{run['run']}')?.dataset.runStatus")
        print(f"a task page did not end right: run {status}", flush=True)
        return False
    return True


def _progress_shown(origin: str, run_id: str, cookie: str) -> str:
    """The run's progress as the server renders it now."""
    request = urllib.request.Request(f"{origin}/runs/{run_id}/live/", headers={"Cookie": cookie})
    with urllib.request.urlopen(request, timeout=30) as response:
        html = response.read().decode()
    return re.search(r'id="run-progress">([^<]*)<', html).group(1)


def _logged(access_log: Path, *paths: str) -> tuple[int, ...]:
    """How many GETs of each path the daphne answered so far."""
    text = access_log.read_text()
    return tuple(text.count(f'"GET {path}"') for path in paths)


def _most_in_a_second(starts: list[float], *, since: float) -> int:
    starts = sorted(start for start in starts if start >= since)
    return max((sum(1 for other in starts[index:] if other - start < 1000) for index, start in enumerate(starts)),
               default=0)


def _print(status: StatusResult, storms: list[StormResult], logs, loads: list[str]) -> None:
    print(f"\nlive regions: one daphne, channels-redis ({REDIS_URL}), PostgreSQL, Chromium; "
          f"load {' → '.join(loads)}")
    print(f"\nstatus change → open graph page, {BIG_NODES:,} nodes, {CHANGES} changes {CHANGE_EVERY_SECONDS:g} s apart")
    print(tables(["emit →", "p50 ms", "p95 ms", "max ms", "changes"], [
        [name, f"{statistics.median(values):.0f}", f"{p95(values):.0f}", f"{max(values):.0f}", str(len(values))]
        for name, values in (("socket heard it", status.heard_ms), ("canvas drew it", status.drawn_ms)) if values
    ]))
    listeners = GRAPH_LISTENERS + TASK_LISTENERS
    print(f"\nevent storms: {GRAPH_LISTENERS} graph pages and {TASK_LISTENERS} task pages of a {STORM_NODES}-node run")
    print(tables(
        ["storm", "changes/s", "span s", "graph renders", "task renders", "in the storm", "per listener-second",
         "per event and listener", "most in 1 s", "final pages"],
        [[f"{s.seconds} s", f"{s.achieved_rate:.0f}", f"{s.span_seconds:.2f}", str(s.graph_renders),
          str(s.task_renders), str(s.storm_renders), f"{_per_listener_second(s):.2f}",
          f"{(s.graph_renders + s.task_renders) / ((s.changes + 1) * listeners):.4f}", str(s.most_in_a_second),
          f"{s.final_pages}/{listeners}"] for s in storms],
    ))
    log_p95 = p95(logs.latencies_ms) if logs.latencies_ms else float("nan")
    print(f"\nlog lines: {LOG_LISTENERS} listeners at {LOG_RATE:,} lines/s, one daphne: "
          f"p50 {statistics.median(logs.latencies_ms):.1f} ms, p95 {log_p95:.1f} ms, "
          f"lost {logs.lost}, duplicated {logs.duplicated}")
    drawn_p95 = p95(status.drawn_ms) if status.drawn_ms else float("inf")
    rows = [[f"a status change of a {BIG_NODES:,}-node run → its open graph page, drawn, p95",
             f"{drawn_p95:.0f} ms", f"< {TARGET_STATUS_P95_MS:.0f} ms", _met(drawn_p95 < TARGET_STATUS_P95_MS)]]
    for s in storms:
        rate = _per_listener_second(s)
        rows.append([f"event storm, {STORM_RATE} changes/s for {s.seconds} s, {listeners} listeners: region renders "
                     f"per region per listener-second", f"{rate:.2f}", f"≤ {TARGET_RENDERS:g}",
                     _met(rate <= TARGET_RENDERS and s.final_pages == listeners)])
    rows.append([f"a log line → {LOG_LISTENERS} listeners at {LOG_RATE:,} lines/s, one daphne, p95",
                 f"{log_p95:.0f} ms", f"< {TARGET_LOG_P95_MS:.0f} ms", _met(log_p95 < TARGET_LOG_P95_MS)])
    print("\n" + tables(["metric", "measured", "target", "met"], rows).split("\n\n", 1)[1])


def _per_listener_second(storm: StormResult) -> float:
    """The renders the pages asked for while the storm lasted (and the second after it) per page-second:
    each page shows one region document (the run graph's regions, the task page), so this is per region."""
    listeners = GRAPH_LISTENERS + TASK_LISTENERS
    return storm.storm_renders / (listeners * (storm.span_seconds + 1))


def _met(met: bool) -> str:
    return "yes" if met else "no"
