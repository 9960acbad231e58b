"""A real Prometheus (Debian's ``prometheus``) scrapes the console and a Celery worker while a pipeline
runs, and a PromQL query over its HTTP API returns the run counts by status the database holds.

The console is served by daphne (as the browser tests serve it) on the test database; the worker is a
real ``celery worker`` whose two pool processes serve their counters on ports of their own. Every wait
polls against a deadline. Under CI=true a Prometheus that cannot start fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphs.engine import pipeline_start
from graphs.models import Task, WorkGraphRun
from tests.browser.conftest import console_served
from tests.celery_worker import wait_until

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

IN_CI = os.environ.get("CI", "").lower() == "true"
TOKEN = "prometheus-test-token"
PIPELINE_TIMEOUT = 120.0
SCRAPE_TIMEOUT = 60.0


def _missing(reason: str):
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


def _free_ports(count: int) -> int:
    """The first of ``count`` consecutive ports free now (a worker's pool processes take one each)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            first = probe.getsockname()[1]
        if first + count > 65535:
            continue
        try:
            for port in range(first, first + count):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError("no run of free ports")


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def _query(base: str, promql: str) -> list[dict]:
    answer = _get_json(f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}")
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


@pytest.fixture
def prometheus(tmp_path) -> Iterator:
    """Start Debian's Prometheus with the scrape config the test writes; yield ``start(targets)``."""
    binary = shutil.which("prometheus")
    if binary is None:
        _missing("Prometheus is not installed (make prometheus, or apt-get install prometheus)")
    processes: list[subprocess.Popen] = []

    def start(*, console: str, workers: list[str]) -> str:
        port = _free_ports(1)
        config = tmp_path / "prometheus.yml"
        jobs = [("console", [console]), ("worker", workers)]
        config.write_text(json.dumps({  # JSON is YAML
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [
                {"job_name": job, "metrics_path": "/metrics", "authorization": {"credentials": TOKEN},
                 "static_configs": [{"targets": targets}]}
                for job, targets in jobs
            ],
        }))
        log = open(tmp_path / "prometheus.log", "wb")
        process = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT,
        )
        processes.append(process)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as response:
                    if response.status == 200:
                        return base
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                _missing(f"Prometheus did not start:\n{Path(log.name).read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)

    yield start
    for process in processes:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_prometheus_scrapes_the_console_and_a_worker_and_promql_returns_the_run_counts(task, workers, prometheus):
    worker_port = _free_ports(2)
    worker = workers("metrics", WORKGRAPH_AGENT="offline", WORKGRAPH_OFFLINE_LINE_DELAY="0.005",
                     WORKGRAPH_METRICS_TOKEN=TOKEN, WORKGRAPH_WORKER_METRICS_PORT=str(worker_port))
    worker.wait_ready()
    with console_served(WORKGRAPH_METRICS_TOKEN=TOKEN) as console:
        base = prometheus(console=console.removeprefix("http://"),
                          workers=[f"127.0.0.1:{worker_port}", f"127.0.0.1:{worker_port + 1}"])

        pipeline_start(task=task)
        wait_until(lambda: Task.objects.get(pk=task.pk).status in {"succeeded", "failed", "cancelled"},
                   timeout=PIPELINE_TIMEOUT,
                   message=lambda: f"the pipeline did not finish:\n{worker.log_text()[-3000:]}")
        expected = Counter(WorkGraphRun.objects.values_list("status", flat=True))
        assert expected["succeeded"] >= 1

        def run_counts() -> dict[str, int]:
            rows = _query(base, 'sum by (status) (workgraph_runs{job="console"})')
            return {row["metric"]["status"]: int(float(row["value"][1])) for row in rows}

        wait_until(lambda: {status: n for status, n in run_counts().items() if n} == dict(expected),
                   timeout=SCRAPE_TIMEOUT, message=lambda: f"PromQL said {run_counts()}, the database {dict(expected)}")

        # Both pool processes are up as targets, and the agent calls they made reach Prometheus from them.
        def workers_seen() -> tuple[int, float]:
            up = _query(base, 'sum(up{job="worker"})')
            calls = _query(base, f'sum(workgraph_agent_calls_total{{job="worker",project="{task.project.slug}"}})')
            return (int(float(up[0]["value"][1])) if up else 0, float(calls[0]["value"][1]) if calls else 0.0)

        wait_until(lambda: workers_seen()[0] == 2 and workers_seen()[1] > 0, timeout=SCRAPE_TIMEOUT,
                   message=lambda: f"workers up, agent calls: {workers_seen()}")
