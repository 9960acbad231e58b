"""Reliability under load on real Celery workers: fifty runs at once, a cancel and a fork among busy runs.

"Two workers" here means two ``celery -A console worker`` instances per test (``load-a`` and ``load-b``
in the load test), each with the fixture's default prefork pool of two processes. Two instances are what
the distributed mode is about: independent consumers of one queue, as on two machines, claiming nodes of
the same runs and taking the same run locks; two processes of one instance would share one parent, one
broker connection and one prefetch. Their four pool processes on this two-core machine are the load the
console must stay responsive under.

The agent is the offline one (outside the engine under test), slowed by ``WORKGRAPH_OFFLINE_LINE_DELAY``
per line it prints: a generic node prints four lines, a ``test_script`` node eleven. Every wait polls
the database against a deadline; the one timing assertion is that a cancel stops running agents within
5 s. How fast the pages answer under the load is measured, not asserted (a busy machine slows them):
``-s`` prints their p50 and p95, and ``tests/bench/bench_pages.py`` is the benchmark of record.

The offline agent answers the same node the same way every time, so a fork cannot make the node that
failed pass; the fork is taken upstream of it, and what is checked is which nodes run again and which
are copied. A fork that goes on to succeed is covered with a scripted agent in
``test_engine_cancel_fork_reap.py``.
"""

from __future__ import annotations

import re
import statistics
import time
from datetime import datetime, timedelta

import pytest
from django.test import Client

from graphs.engine import run_cancel, run_fork, run_start
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile, Task, WorkGraphRun, WorkNodeExecution
from tests import factories
from tests.celery_worker import Worker, wait_until
from tests.clients import signed_in
from tests.run_builders import edges_for, lanes_manifest, latest, node, node_rows, planned_run

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

FAST_AGENT = {"WORKGRAPH_AGENT": "offline", "WORKGRAPH_OFFLINE_LINE_DELAY": "0.002"}
# The load test's agent takes a little longer, so the load lasts long enough for its p95s to rest on
# many samples rather than on the slowest few: the faster the engine, the shorter the load.
LOAD_AGENT = {"WORKGRAPH_AGENT": "offline", "WORKGRAPH_OFFLINE_LINE_DELAY": "0.006"}
# Half a second per line: a generic node takes 2 s, a test_script node 5.5 s; the heartbeat that
# notices a cancel beats every 0.2 s.
SLOW_AGENT = {"WORKGRAPH_AGENT": "offline", "WORKGRAPH_OFFLINE_LINE_DELAY": "0.5",
              "WORKGRAPH_HEARTBEAT_SECONDS": "0.2"}
SCRIPT_LINES = 11  # what the offline agent prints for a test_script node

LOAD_RUNS = 50
LOAD_TIMEOUT = 150.0
# A pause between rounds of page requests, like a person's page polling, so the sampler does not take a
# whole core from the workers it watches.
PAGE_ROUND_PAUSE = 0.1
CANCEL_WITHIN = 5.0
RUN_TIMEOUT = 60.0

# Celery's worker log line for a finished task.
_JOB_DONE = re.compile(r"Task graphs\.job\[[0-9a-f-]+\] succeeded in")


def _two_workers(workers, prefix: str, **env: str) -> list[Worker]:
    """Start both workers, then wait for both: work published afterwards can go to either."""
    pair = [workers(f"{prefix}-a", **env), workers(f"{prefix}-b", **env)]
    for worker in pair:
        worker.wait_ready()
    return pair


def _new_run(project, alice, manifest: dict) -> WorkGraphRun:
    """A planned run of a task of its own, as a project of many tasks has them."""
    return planned_run(factories.TaskFactory(project=project, created_by=alice), manifest)


def _logs(pair: list[Worker]) -> str:
    return "\n".join(f"--- {worker.name}:\n{worker.log_text()[-2000:]}" for worker in pair)


def _wait_finished(runs: list[WorkGraphRun], *, timeout: float, pair: list[Worker]) -> None:
    ids = [run.pk for run in runs]

    def unfinished() -> list[tuple]:
        return list(WorkGraphRun.objects.filter(pk__in=ids).exclude(status__in=WorkGraphRun.FINISHED_STATUSES)
                    .values_list("run_id", "status"))

    wait_until(lambda: not unfinished(), timeout=timeout,
               message=lambda: f"runs still unfinished: {unfinished()}\n{_logs(pair)}")


def _assert_every_node_succeeded_once(runs: list[WorkGraphRun], manifest: dict) -> None:
    expected = sorted((n["node_id"], 1, "succeeded") for n in manifest["nodes"])
    for run in runs:
        run.refresh_from_db()
        assert run.status == "succeeded", run.error
        assert sorted(node_rows(run).values_list("node_id", "attempt", "status")) == expected


def _log_lines(execution: WorkNodeExecution) -> list[dict]:
    """The execution's JSONL log, or no lines when it never opened one (no worker ever ran it)."""
    log_file = ExecutionLogFile.objects.filter(node_exec=execution).first()
    return log_read(log_file=log_file) if log_file is not None else []


def _agent_lines(execution: WorkNodeExecution) -> list[dict]:
    return [line for line in _log_lines(execution) if line["event"] == "agent_output"]


def _percentiles(values: list[float]) -> tuple[float, float]:
    """(p50, p95) of at least two values."""
    return statistics.median(values), statistics.quantiles(values, n=20)[-1]


# --- load -------------------------------------------------------------------------------------------------


def _sample_pages_while_running(client: Client, runs: list[WorkGraphRun]) -> dict[str, list[float]]:
    """Request the dashboard, a task detail page and a run's graph JSON over and over while any run is
    unfinished; return each page's server times in ms. Each round picks another unfinished run."""
    ids = [run.pk for run in runs]
    timings: dict[str, list[float]] = {"dashboard": [], "task detail": [], "graph.json": []}
    deadline = time.monotonic() + LOAD_TIMEOUT
    round_number = 0
    while True:
        unfinished = list(
            WorkGraphRun.objects.filter(pk__in=ids).exclude(status__in=WorkGraphRun.FINISHED_STATUSES)
            .order_by("run_id").values_list("run_id", "task_id")
        )
        if not unfinished:
            return timings
        assert time.monotonic() < deadline, f"{len(unfinished)} runs still unfinished after {LOAD_TIMEOUT:g} s"
        run_id, task_id = unfinished[round_number % len(unfinished)]
        round_number += 1
        for page, url in (("dashboard", "/"), ("task detail", f"/tasks/{task_id}/"),
                          ("graph.json", f"/runs/{run_id}/graph.json")):
            started = time.perf_counter()
            response = client.get(url)
            timings[page].append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, (url, response.status_code)
        time.sleep(PAGE_ROUND_PAUSE)


def test_fifty_runs_at_once_all_succeed_on_two_workers_while_the_pages_answer(project, alice, workers):
    pair = _two_workers(workers, "load", **LOAD_AGENT)
    manifest = lanes_manifest(lanes=6, length=3)  # one root fans out to six lanes of three that join
    assert len(manifest["nodes"]) == 20
    runs = [_new_run(project, alice, manifest) for _ in range(LOAD_RUNS)]
    client = signed_in(alice)
    # Warm the templates and the URL resolver, as a serving process that has answered once has them.
    for url in ("/", f"/tasks/{runs[0].task_id}/", f"/runs/{runs[0].run_id}/graph.json"):
        assert client.get(url).status_code == 200

    started = time.monotonic()
    for run in runs:
        run_start(run=run)
    timings = _sample_pages_while_running(client, runs)
    wall = time.monotonic() - started

    _assert_every_node_succeeded_once(runs, manifest)
    jobs = {worker.name: len(_JOB_DONE.findall(worker.log_text())) for worker in pair}
    # Both workers took their share. A job runs a dependant it readied itself while it is young (the
    # engine's continuation), so there are fewer jobs than nodes, and at least one per run; a run's end
    # past the limit of runs at once submits one more, admitting a queued run.
    assert all(jobs.values()), jobs
    assert LOAD_RUNS <= sum(jobs.values()) <= LOAD_RUNS * 21, jobs
    durations = [
        (run.finished_at - run.started_at).total_seconds()
        for run in WorkGraphRun.objects.filter(pk__in=[run.pk for run in runs])
    ]
    print(f"\n{LOAD_RUNS} runs x 20 nodes on {len(pair)} workers in {wall:.1f} s; jobs per worker {jobs}; "
          f"run duration p50 {statistics.median(durations):.1f} s, max {max(durations):.1f} s")
    # Every page answered (each request asserts its 200) while runs were still running.
    assert all(timings.values()), timings
    for page, values in timings.items():
        p50, p95 = _percentiles(values) if len(values) > 1 else (values[0], values[0])
        print(f"{page:<12} {len(values):>4} requests  p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  max {max(values):6.1f} ms")


# --- cancel under load ------------------------------------------------------------------------------------


def test_cancelling_a_run_among_busy_runs_stops_its_agents_within_five_seconds(project, alice, workers):
    pair = _two_workers(workers, "cancel", **SLOW_AGENT)
    # Two long agents side by side (5.5 s each), and a join that must never start.
    victim_nodes = [node("left", node_type="test_script"), node("right", node_type="test_script"),
                    node("join", "left", "right")]
    victim = _new_run(project, alice, {"nodes": victim_nodes, "edges": edges_for(victim_nodes)})
    busy_manifest = lanes_manifest(lanes=2, length=1)  # four 2-second nodes, three deep
    busy = [_new_run(project, alice, busy_manifest) for _ in range(3)]
    for run in (victim, *busy):
        run_start(run=run)

    def agents_mid_way() -> bool:
        running = list(node_rows(victim).filter(status="running"))
        busy_running = node_rows(*busy).filter(status="running").count()
        return len(running) == 2 and busy_running >= 2 and all(_agent_lines(row) for row in running)

    # All four pool processes busy: both of the victim's agents printing, two nodes of other runs.
    wait_until(agents_mid_way, timeout=RUN_TIMEOUT,
               message=lambda: f"the victim's agents never ran beside other runs:\n{_logs(pair)}")
    run_cancel(run=victim)
    victim.refresh_from_db()
    cancelled_at = victim.cancel_requested_at
    wait_until(lambda: not node_rows(victim).filter(status="running").exists(), timeout=CANCEL_WITHIN,
               message=lambda: f"the victim's agents still run {CANCEL_WITHIN:g} s after the cancel:\n{_logs(pair)}")
    wait_until(lambda: WorkGraphRun.objects.get(pk=victim.pk).is_finished(), timeout=CANCEL_WITHIN,
               message=lambda: f"the victim is still {WorkGraphRun.objects.get(pk=victim.pk).status}")

    victim.refresh_from_db()
    assert (victim.status, victim.error) == ("cancelled", "cancelled")
    assert Task.objects.get(pk=victim.task_id).status == "cancelled"
    rows = latest(victim)
    latencies = {}
    for node_id in ("left", "right"):
        row = rows[node_id]
        assert (row.attempt, row.status, row.error) == (1, "cancelled", "stopped: the run was cancelled")
        latencies[node_id] = (row.finished_at - cancelled_at).total_seconds()
        assert 0 < latencies[node_id] < CANCEL_WITHIN
        printed = _agent_lines(row)
        assert 1 <= len(printed) < SCRIPT_LINES, f"{node_id}'s agent was not stopped mid-way: {len(printed)} lines"
        assert datetime.fromisoformat(printed[-1]["ts"]) <= row.finished_at
        assert [line["status"] for line in _log_lines(row) if line["event"] == "node_finished"] == ["cancelled"]
    join = rows["join"]
    assert (join.status, join.error, join.worker) == ("cancelled", "stopped: the run was cancelled", "")
    settled = sorted(node_rows(victim).values_list("node_id", "attempt", "status", "started_at", "finished_at"))
    printed_when_settled = {node_id: len(_agent_lines(rows[node_id])) for node_id in ("left", "right")}
    print(f"\ncancel -> running attempts ended: {', '.join(f'{n} {s:.2f} s' for n, s in latencies.items())}")

    # The other runs are untouched and finish; meanwhile nothing of the victim starts or prints again.
    _wait_finished(busy, timeout=RUN_TIMEOUT, pair=pair)
    _assert_every_node_succeeded_once(busy, busy_manifest)
    assert sorted(node_rows(victim).values_list("node_id", "attempt", "status", "started_at", "finished_at")) == settled
    assert not node_rows(victim).filter(started_at__gt=cancelled_at).exists()
    assert {node_id: len(_agent_lines(rows[node_id])) for node_id in ("left", "right")} == printed_when_settled


# --- fork under load --------------------------------------------------------------------------------------


def _release_manifest() -> dict:
    """spec fans out to api and ui; gate checks api for a verdict the offline agent never writes;
    release joins api_tests, gate and docs. The run fails at gate and release is blocked."""
    nodes = [
        node("spec"),
        node("api", "spec"),
        node("ui", "spec"),
        node("api_tests", "api"),
        node("gate", "api", judgment={"kind": "mechanical", "check_ref": "verdict_says_pass"},
             on_fail={"action": "hard_fail"}),
        node("docs", "ui"),
        node("release", "api_tests", "gate", "docs"),
    ]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def test_a_fork_among_busy_runs_reruns_only_the_chosen_node_and_its_downstream(project, alice, workers):
    pair = _two_workers(workers, "fork", **FAST_AGENT)
    original = _new_run(project, alice, _release_manifest())
    busy_manifest = lanes_manifest(lanes=6, length=3)
    busy = [_new_run(project, alice, busy_manifest) for _ in range(16)]
    for run in (original, *busy):
        run_start(run=run)
    _wait_finished([original], timeout=RUN_TIMEOUT, pair=pair)
    original.refresh_from_db()
    assert (original.status, original.error) == ("failed", "nodes that did not succeed: gate, release")
    before = latest(original)
    assert {node_id: row.status for node_id, row in before.items()} == {
        "spec": "succeeded", "api": "succeeded", "ui": "succeeded", "api_tests": "succeeded", "docs": "succeeded",
        "gate": "failed", "release": "blocked",
    }
    assert before["gate"].error == "judgment failed: the output has no line that starts with 'VERDICT:'"
    original_rows = sorted(node_rows(original).values_list("pk", "status", "finished_at"))
    # A second wave of busy runs starts with the fork: the first may be done by now, however fast it went.
    second_wave = [_new_run(project, alice, busy_manifest) for _ in range(16)]
    for run in second_wave:
        run_start(run=run)
    busy += second_wave
    assert node_rows(*busy).filter(status__in=WorkNodeExecution.ACTIVE_STATUSES).exists(), (
        "the other runs finished before the fork: it would not run under load"
    )

    fork = run_fork(run=original, node_id="api")
    _wait_finished([fork], timeout=RUN_TIMEOUT, pair=pair)

    fork.refresh_from_db()
    assert (fork.forked_from_id, fork.fork_node_id) == (original.run_id, "api")
    # The offline agent writes the same api output again, so gate fails the same way and release stays blocked.
    assert (fork.status, fork.error) == ("failed", "nodes that did not succeed: gate, release")
    assert sorted(node_rows(fork).values_list("node_id", "attempt", "cause", "status")) == [
        ("api", 1, "fork", "succeeded"), ("api_tests", 1, "initial", "succeeded"), ("docs", 1, "fork", "succeeded"),
        ("gate", 1, "initial", "failed"), ("release", 1, "initial", "blocked"), ("spec", 1, "fork", "succeeded"),
        ("ui", 1, "fork", "succeeded"),
    ]
    after = latest(fork)
    for node_id in ("spec", "ui", "docs"):  # neither the chosen node nor downstream of it: copied, not run
        copy, source = after[node_id], before[node_id]
        assert copy.output_payload == {**source.output_payload, "reused_from": str(source.pk)}
        assert copy.output_payload["text"] == source.output_payload["text"]
        assert (copy.worker, copy.started_at) == ("", copy.finished_at)
        assert _log_lines(copy) == []
    for node_id in ("api", "api_tests", "gate"):  # the chosen node and downstream: run again by an agent
        rerun, source = after[node_id], before[node_id]
        assert rerun.worker and rerun.started_at > fork.created_at
        assert [line["purpose"] for line in _log_lines(rerun) if line["event"] == "agent_call"] == ["node"]
        # The same upstream outputs reached the agent: the prompt is the original attempt's, word for word.
        assert rerun.input_payload["prompt"] == source.input_payload["prompt"]
    assert before["spec"].output_payload["text"] in after["api"].input_payload["prompt"]
    assert after["api"].input_payload["upstream"] == ["spec"]
    assert after["gate"].error == before["gate"].error
    assert (after["release"].error, after["release"].worker) == ("blocked: upstream gate did not succeed", "")
    assert sorted(node_rows(original).values_list("pk", "status", "finished_at")) == original_rows

    # Under load: the other runs' nodes ran while the fork was in flight. The window is the fork's whole
    # life, not only its three agent calls: those take milliseconds with this agent, and the workers may
    # well run them back to back between two of the other runs' nodes.
    overlapping = node_rows(*busy).filter(started_at__lt=fork.finished_at, finished_at__gt=fork.created_at).count()
    assert overlapping, "no node of the other runs ran while the fork was in flight"
    _wait_finished(busy, timeout=RUN_TIMEOUT, pair=pair)
    _assert_every_node_succeeded_once(busy, busy_manifest)
    fork_wall = (fork.finished_at - fork.started_at) / timedelta(seconds=1)
    print(f"\nfork ran in {fork_wall:.2f} s beside {overlapping} attempts of the other runs")
