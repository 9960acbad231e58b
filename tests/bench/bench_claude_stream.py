"""The claude runner on a stream of events: its cost per event, and an event's way from the CLI's stdout
to a browser.

Run on demand (the normal suite does not collect ``bench_*.py``; ``make bench`` runs them all)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python -m pytest tests/bench/bench_claude_stream.py -s -p no:cacheprovider \\
        -o python_files='bench_*.py'

Both parts run on a database of their own, ``bench_claude_stream`` on the PostgreSQL server of
``DATABASE_URL`` (dropped and created anew; a SQLite file without one), which
``tests/bench/live_log_producer.py setup`` migrates and gives a user, a project and a task. The CLI is
``tests/fake_claude.py`` playing a stream that ``stream_events`` generates: documented stream-json
events, the mix a working agent prints — assistant text, ``Read`` calls and their results (one in
``LARGE_EVERY`` a file of ``LARGE_CHARS`` characters, which the runner cuts to its limit), a ``Task``
call whose subagent's prompt, text, ``Grep`` call and result carry its ``parent_tool_use_id``, now
and then an ``api_retry`` — between the ``system/init`` and the ``result`` event.

1. The runner's cost per event (``test_the_runner_cost_per_streamed_event``): ``EVENTS`` events,
   printed as fast as the fake can, played ``ROUNDS`` times (after one warm-up round) three ways by
   turns in one process, ``tests/bench/claude_stream.py rounds``:

   - ``floor``: the fake CLI's stdout read line by line from its pipe, and nothing else done;
   - ``runner alone``: ``ClaudeRunner(bin=fake).run(call)`` with an ``on_event`` that does nothing —
     the floor plus decoding, parsing and mapping each line into its log fields, on threads;
   - ``runner → log store``: the engine's ``attempt_agent_call`` for a real running attempt, each
     event through ``log_append`` (numbered, cut to the line cap, queued), COPYed by the writer
     thread in batches on PostgreSQL and handed to the channels-redis publisher, until
     ``log_writes_wait`` says every line is stored.

   How to read the table: per event is a round's time over ``EVENTS``; p50 and p95 are over the
   rounds (of 9, the p95 is near the slowest). CPU is the measuring process's, all its threads — not
   PostgreSQL's or Redis's; "CLI CPU" is the fake CLI's own. "÷ floor" divides a row's p50 by the
   floor's: what the runner (and the store) cost on top of reading the bytes. The fake CLI keeps one
   of the machine's two cores busy printing, so a wall time near the floor's (and near the CLI's CPU)
   means the reader kept up with the printer.

2. An event on stdout → a browser (``test_an_event_on_stdout_reaches_a_browser``): one node of a real
   run, executed by a real ``celery -A console worker`` (prefork) whose claude runner is pointed at
   the fake CLI. The fake waits until the listener has joined the attempt's log, then prints
   ``LATENCY_RATE`` events a second for ``LATENCY_SECONDS``, each stamped with the wall-clock time it
   was printed, in its text, tool input or tool result (which the runner carries into the log line).
   The path measured: the CLI's stdout pipe → the runner's reader thread → ``StreamReader`` →
   ``AgentCall.emit_event`` → the engine's ``on_event`` → ``log_append`` → the writer thread's COPY
   (PostgreSQL) → channels-redis pub/sub → a real daphne's log consumer → a WebSocket → a
   ``websockets`` client, signed in with a session cookie, in a process of its own.

   How to read the table: "printed/s" is the rate the fake CLI achieved (on a fixed schedule of
   ``LATENCY_RATE``); p50, p95 and max are receipt minus printing over the stamped lines; lost
   and duplicated count the log's seqs, 1 to the ``last_seq`` of its ``end``, missing from or repeated
   in what the listener received — they must be 0, and every stamped event must arrive. The line
   batches wait up to ``DRAIN_WINDOW_SECONDS`` (20 ms) to be stored together and the publisher up to
   its ``COALESCE_SECONDS``, so a p50 near their sum is the design, not a stall.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.db import connection

from tests.bench.live_console import (
    REDIS_URL,
    ConsoleSetup,
    ListenerResult,
    clients_process,
    console_env,
    console_set_up,
    daphne,
    database_fresh,
    redis_reachable,
)
from tests.celery_worker import BASE_DIR, broker_create, broker_delete, worker_env, worker_start

EVENTS = 10_000
ROUNDS = 9
LATENCY_RATE = 200
LATENCY_SECONDS = 10.0
# The listener gives up on a log not ended this long after its last event (the table shows what arrived).
DRAIN_SECONDS = 30.0
# The stream's shape: one Read result in LARGE_EVERY is a file of LARGE_CHARS characters; one cycle of
# events in RETRY_EVERY ends with an api_retry.
LARGE_EVERY = 10
LARGE_CHARS = 40_000
RETRY_EVERY = 25
# The fake CLI puts the time of printing where the stream has this text.
STAMP = "@PRINTED_AT@"
STAMPED = re.compile(r"printed_at=(\d+\.\d+)")
SESSION = "5b0f6c7e-2d7a-4a51-9a63-0c1f4f2f8e11"
MODEL = "claude-sonnet-4-5-20250929"
DATABASE = "bench_claude_stream"
PLAYS = ("floor", "runner", "store")
PLAY_NAMES = {"floor": "floor: read the pipe line by line", "runner": "runner alone (on_event does nothing)",
              "store": "runner → log store (PostgreSQL)"}
ROUNDS_TIMEOUT = 1800
FAKE_CLAUDE = BASE_DIR / "tests" / "fake_claude.py"


@dataclass(frozen=True)
class Console:
    env: dict[str, str]
    setup: ConsoleSetup
    scratch: Path


@pytest.fixture(scope="module")
def console() -> Iterator[Console]:
    if not redis_reachable(REDIS_URL):
        pytest.skip(f"needs a reachable Redis at {REDIS_URL}")
    with tempfile.TemporaryDirectory(prefix="bench-claude-stream-") as scratch:
        with database_fresh(DATABASE, Path(scratch)) as database_url:
            env = console_env(tree=BASE_DIR, database_url=database_url, scratch=Path(scratch), name="claude")
            yield Console(env=env, setup=console_set_up(tree=BASE_DIR, env=env, executions=0), scratch=Path(scratch))


def test_the_runner_cost_per_streamed_event(console):
    fixture = _fixture_write(console.scratch / "fast.json", stream_events(EVENTS))
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.claude_stream", "rounds", str(fixture), str(ROUNDS + 1),
         console.setup.task],
        cwd=BASE_DIR, env=console.env, capture_output=True, text=True, timeout=ROUNDS_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    plays = [json.loads(line) for line in done.stdout.splitlines()]
    measured = [play for play in plays if play["round"] > 0]  # round 0 warms up
    assert all(play["lines"] == EVENTS for play in measured if play["play"] == "floor")
    # Every event is a line of the attempt's log, after the engine's agent_call line.
    assert all(play["stored_lines"] == EVENTS + 1 for play in measured if play["play"] == "store")
    _cost_table_print(measured, fixture_bytes=_stdout_bytes(fixture))


def test_an_event_on_stdout_reaches_a_browser(console, tmp_path):
    count = int(LATENCY_RATE * LATENCY_SECONDS)
    events = stream_events(count, stamp=STAMP)
    gate = console.scratch / "latency-gate"
    fixture = _fixture_write(console.scratch / "steady.json", events, first={"fake": "wait_for_gate"},
                             line_rate=LATENCY_RATE, stamp=STAMP)
    broker = broker_create(prefix="workgraph-bench-stream")
    env = worker_env(
        broker=broker, DATABASE_URL=console.env["DATABASE_URL"], WORKGRAPH_VAR_DIR=console.env["WORKGRAPH_VAR_DIR"],
        TMPDIR=console.env["TMPDIR"], WORKGRAPH_AGENT="claude", WORKGRAPH_CLAUDE_BIN=str(FAKE_CLAUDE),
        FAKE_CLAUDE_FIXTURE=str(fixture), FAKE_CLAUDE_GATE=str(gate),
        # The CLI's sandbox must see the fixture and the gate, in the benchmark's scratch folder.
        WORKGRAPH_SANDBOX_WRITABLE=str(console.scratch),
    )
    worker = worker_start(name="bench-stream", env=env, log_dir=tmp_path)
    try:
        with daphne(tree=BASE_DIR, env=console.env) as port:
            worker.wait_ready()
            started = _node_start(env=env, task=console.setup.task)
            listener = _listened(port=port, cookie=console.setup.cookie, execution=started["execution"], gate=gate)
    finally:
        worker.stop()
        broker_delete(broker)
    stamped = len(listener.latencies)
    expected = set(range(1, (listener.last_seq or 0) + 1))
    lost, duplicated = len(expected - set(listener.seqs)), len(listener.seqs) - len(set(listener.seqs))
    _latency_table_print(listener, count=count, lost=lost, duplicated=duplicated)
    assert listener.ended, f"the log did not end within {LATENCY_SECONDS + DRAIN_SECONDS:g} s; worker log:\n" + \
        worker.log_text()[-4000:]
    assert (lost, duplicated, stamped) == (0, 0, _stamped_count(events)), "the listener lost or repeated lines"


def stream_events(count: int, *, stamp: str = "") -> list[dict]:
    """``count`` documented stream-json events: ``system/init``, the mix, and a ``result``.

    With ``stamp``, every text, tool input and tool result carries ``printed_at=<stamp>`` (at the head
    of a result, which the runner may cut).
    """
    mark = f" printed_at={stamp}" if stamp else ""
    file_text = "".join(f"{n:>6}\t    total = step(total, {n})  # keeps the running sum\n" for n in range(1, 1000))
    large = (file_text * (LARGE_CHARS // len(file_text) + 1))[:LARGE_CHARS]
    middle: list[dict] = []
    cycle = 0
    while len(middle) < count - 2:
        read, survey, grep = (f"toolu_{cycle:06d}{name}" for name in ("Read", "Task", "Grep"))
        content = large if cycle % LARGE_EVERY == LARGE_EVERY - 1 else file_text[:600]
        middle += [
            _assistant(cycle, {"type": "text", "text": f"Step {cycle}: I'll read the next module.{mark}"}),
            _assistant(cycle, {"type": "tool_use", "id": read, "name": "Read",
                               "input": {"file_path": f"/srv/project/src/module_{cycle}.py", "description": mark}}),
            _user(cycle, {"type": "tool_result", "tool_use_id": read, "content": mark + content}),
            _assistant(cycle, {"type": "tool_use", "id": survey, "name": "Task",
                               "input": {"description": f"Survey module {cycle}{mark}", "subagent_type": "Explore",
                                         "prompt": "List the functions and what each one does."}}),
            _user(cycle, {"type": "text", "text": f"List the functions and what each one does.{mark}"}, parent=survey),
            _assistant(cycle, {"type": "text", "text": f"Looking for the definitions.{mark}"}, parent=survey),
            _assistant(cycle, {"type": "tool_use", "id": grep, "name": "Grep",
                               "input": {"pattern": f"^def {mark}", "path": "src", "output_mode": "count"}},
                       parent=survey),
            _user(cycle, {"type": "tool_result", "tool_use_id": grep, "content": f"src/reports.py:7{mark}"},
                  parent=survey),
            _user(cycle, {"type": "tool_result", "tool_use_id": survey,
                          "content": [{"type": "text", "text": f"module_{cycle} has 7 functions.{mark}"}]}),
        ]
        if cycle % RETRY_EVERY == RETRY_EVERY - 1:
            middle.append({"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10,
                           "retry_delay_ms": 1200, "error_status": 529, "error": "overloaded",
                           "uuid": _uuid(cycle, 9), "session_id": SESSION})
        cycle += 1
    return [_init(), *middle[: count - 2], _result(turns=cycle)]


def _assistant(cycle: int, block: dict, *, parent: str | None = None) -> dict:
    return {
        "type": "assistant",
        "message": {"id": f"msg_{cycle:012d}", "type": "message", "role": "assistant", "model": MODEL,
                    "content": [block], "stop_reason": None, "stop_sequence": None,
                    "usage": {"input_tokens": 4, "cache_creation_input_tokens": 1200,
                              "cache_read_input_tokens": 5000, "output_tokens": 120}},
        "parent_tool_use_id": parent, "session_id": SESSION, "uuid": _uuid(cycle, 1),
    }


def _user(cycle: int, block: dict, *, parent: str | None = None) -> dict:
    return {"type": "user", "message": {"role": "user", "content": [block]}, "parent_tool_use_id": parent,
            "session_id": SESSION, "uuid": _uuid(cycle, 2)}


def _init() -> dict:
    return {"type": "system", "subtype": "init", "cwd": "/srv/project", "session_id": SESSION,
            "tools": ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "WebFetch", "TodoWrite"],
            "mcp_servers": [], "model": MODEL, "permissionMode": "auto", "apiKeySource": "ANTHROPIC_API_KEY",
            "claude_code_version": "2.1.59", "uuid": _uuid(0, 0)}


def _result(*, turns: int) -> dict:
    usage = {"input_tokens": 12, "cache_creation_input_tokens": 5812, "cache_read_input_tokens": 20133,
             "output_tokens": 1874}
    return {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 41873,
            "duration_api_ms": 40212, "num_turns": turns, "result": "The modules are surveyed.",
            "stop_reason": "end_turn", "session_id": SESSION, "total_cost_usd": 0.2113,
            "usage": {**usage, "service_tier": "standard"},
            "modelUsage": {MODEL: {"inputTokens": 12, "outputTokens": 1874, "costUSD": 0.2113}},
            "permission_denials": [], "uuid": _uuid(turns, 3)}


def _uuid(cycle: int, kind: int) -> str:
    return f"00000000-0000-4000-8{kind:03d}-{cycle:012d}"


def _stamped_count(events: list[dict]) -> int:
    return sum(STAMP in json.dumps(event) for event in events)


def _fixture_write(path: Path, events: list[dict], *, first: dict | None = None, line_rate: int | None = None,
                   stamp: str | None = None) -> Path:
    """A fixture for the fake CLI; each event is written as its line of JSON, so the fake only prints it.
    Without ``line_rate`` the fake prints as fast as it can."""
    fixture = {"stdout": [*([first] if first else []), *map(json.dumps, events)],
               **({"line_rate": line_rate} if line_rate else {}), **({"stamp": stamp} if stamp else {})}
    path.write_text(json.dumps(fixture))
    return path


def _stdout_bytes(fixture: Path) -> int:
    return sum(len(line) + 1 for line in json.loads(fixture.read_text())["stdout"] if isinstance(line, str))


def _node_start(*, env: dict[str, str], task: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "tests.bench.claude_stream", "start", task], cwd=BASE_DIR, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.splitlines()[-1])


def _listened(*, port: int, cookie: str, execution: str, gate: Path) -> ListenerResult:
    """Follow the attempt's log with one listener; open the fake CLI's gate once it has joined."""
    context = multiprocessing.get_context("fork")  # the child needs no Django, only the arguments
    ready = context.Event()
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(
        target=clients_process, args=([f"ws://127.0.0.1:{port}/ws/node-executions/{execution}/log/"], cookie),
        kwargs={"listeners": 1, "resume_at_seq": None, "sent_at": _printed_at,
                "seconds": 60 + LATENCY_SECONDS + DRAIN_SECONDS, "ready": ready, "sending": sending},
        daemon=True,
    )
    child.start()
    try:
        assert ready.wait(60), "the listener never received a line of the attempt's log"
        gate.touch()
        assert receiving.poll(90 + LATENCY_SECONDS + DRAIN_SECONDS), "the listener never reported"
        return receiving.recv()[0]
    finally:
        child.join(5)
        if child.is_alive():
            child.kill()


def _printed_at(line: dict) -> float | None:
    found = STAMPED.search(json.dumps(line, ensure_ascii=False))
    return float(found.group(1)) if found else None


def _quantile(values: list[float], q: int) -> float:
    """The ``q``-th percentile (``statistics.quantiles``' default, exclusive method)."""
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def _cost_table_print(plays: list[dict], *, fixture_bytes: int) -> None:
    per_event = {name: {key: [1e6 * play[key] / EVENTS for play in plays if play["play"] == name]
                        for key in ("wall_s", "cpu_s", "cli_cpu_s")} for name in PLAYS}
    floor = {key: statistics.median(per_event["floor"][key]) for key in ("wall_s", "cpu_s")}
    rounds = len(per_event["floor"]["wall_s"])
    print()
    print(f"claude runner, {EVENTS:,} stream-json events ({fixture_bytes / 1e6:.1f} MB of stdout) printed as fast as"
          f" the fake CLI can; {rounds} rounds after 1 warm-up, by turns; µs per event; {os.cpu_count()} cores,"
          f" load average {os.getloadavg()[0]:.2f}")
    header = (f"{'play':<38} {'wall p50':>9} {'wall p95':>9} {'CPU p50':>9} {'CPU p95':>9} "
              f"{'wall ÷ floor':>12} {'CPU ÷ floor':>11} {'CLI CPU p50':>11}")
    print(header)
    print("-" * len(header))
    for name in PLAYS:
        wall, cpu = per_event[name]["wall_s"], per_event[name]["cpu_s"]
        print(f"{PLAY_NAMES[name]:<38} {statistics.median(wall):>9.1f} {_quantile(wall, 95):>9.1f} "
              f"{statistics.median(cpu):>9.1f} {_quantile(cpu, 95):>9.1f} "
              f"{statistics.median(wall) / floor['wall_s']:>11.2f}x {statistics.median(cpu) / floor['cpu_s']:>10.2f}x "
              f"{statistics.median(per_event[name]['cli_cpu_s']):>11.1f}")
    returned = [1e6 * play["returned_s"] / EVENTS for play in plays if play["play"] == "store"]
    print(f"runner → log store: the call returned at {statistics.median(returned):.1f} µs an event (p50); the rest"
          " is the writer storing the last lines")
    store_wall, store_cpu = (statistics.median(per_event["store"][key]) for key in ("wall_s", "cpu_s"))
    print(f"runner → log store: {1e6 / store_wall:,.0f} events stored a second (wall p50); at its CPU per event one"
          f" process's core would store {1e6 / store_cpu:,.0f} a second")


def _latency_table_print(listener: ListenerResult, *, count: int, lost: int, duplicated: int) -> None:
    latencies = [1000 * latency for latency in listener.latencies]
    print()
    print(f"claude event printed → received in a browser socket: {count:,} events at {LATENCY_RATE}/s, one node on a"
          f" Celery worker, channels-redis ({REDIS_URL}), daphne, {connection.vendor}")
    header = (f"{'events':>7} {'printed/s':>9} {'stamped':>8} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'lost':>5} "
              f"{'duplicated':>10}")
    print(header)
    print("-" * len(header))
    p50 = _quantile(latencies, 50) if latencies else math.nan
    p95 = _quantile(latencies, 95) if latencies else math.nan
    span = max(listener.sent, default=0) - min(listener.sent, default=0)
    rate = (len(listener.sent) - 1) / span if span else math.nan
    print(f"{count:>7} {rate:>9.0f} {len(latencies):>8} {p50:>8.1f} {p95:>8.1f} "
          f"{max(latencies, default=math.nan):>8.1f} {lost:>5} {duplicated:>10}")
    if listener.drops:
        print(f"note: the listener's connection dropped {listener.drops} time(s) and resumed")
    if not listener.ended:
        print("note: the listener never saw the log's end")
