"""The distributed mode as separate hosts: two daphnes and two Celery workers, each in a network namespace
of its own on one bridge, sharing nothing but PostgreSQL and Redis (reached over the bridge, as from
other machines) — no disk, no log directory, no host name. The browser and the test's own WebSocket
client reach each daphne host through a loopback port relayed to it (``tests.netns``).

A run whose two parallel nodes go to the two worker hosts is watched live by a browser page on each
daphne host, and by a WebSocket client that moves from one daphne host to the other mid-stream with
``?after=``: each of them gets every line of the watched node's log exactly once, in order, as stored.

Making namespaces needs root and iproute2: elsewhere the test skips and says why; under CI=true it
fails instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from graphs.engine import run_start
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile, WorkGraphRun
from tests.browser.conftest import chromium_launched
from tests.celery_worker import Broker, Worker, current_database_url, wait_until
from tests.clients import signed_in
from tests.conftest import IN_CI
from tests.netns import Host, NetnsUnavailable, Network, answers, network_create
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# The offline agent's pause between output lines: the watched node talks for about three seconds.
LINE_DELAY = "0.25"
PORT = 8000
STARTUP_TIMEOUT = 40.0
RUN_TIMEOUT = 40.0
# The moving listener leaves the first daphne after this many lines (the node has 17).
MOVE_AFTER = 5


def _unavailable(reason: str) -> NoReturn:
    if IN_CI:
        pytest.fail(f"CI=true runs the distributed hosts test, but {reason}")
    pytest.skip(reason)


@dataclass(frozen=True)
class Cluster:
    daphnes: tuple[Host, Host]
    workers: tuple[Host, Host]
    # Where this namespace reaches each daphne host, by the host's name.
    urls: dict[str, str]


@pytest.fixture
def network() -> Iterator[Network]:
    try:
        made = network_create(["d1", "d2", "w1", "w2"])
    except NetnsUnavailable as error:
        _unavailable(f"the hosts' network namespaces cannot be made here: {error}")
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def cluster(broker, network, tmp_path) -> Cluster:
    """PostgreSQL and Redis relayed to the gateway, a daphne on d1 and d2 (each relayed to a loopback port
    here), a worker on w1 and w2, all ready.

    ``network`` comes after ``broker``, so the workers are gone before their queue is deleted. Each
    process's output is in ``tmp_path``, ``<host>.log``.
    """
    database = urlsplit(current_database_url())
    redis = urlsplit(broker.url)
    daphnes = (network.hosts["d1"], network.hosts["d2"])
    workers = (network.hosts["w1"], network.hosts["w2"])
    reached = network.relay(
        services={database.port: (database.hostname, database.port), redis.port: (redis.hostname, redis.port)},
        exposed=[(host, PORT) for host in daphnes], log_dir=tmp_path, cwd=settings.BASE_DIR)
    urls = {host.name: f"http://127.0.0.1:{reached[(host.name, PORT)]}" for host in daphnes}

    def log_path(host: Host) -> Path:
        return tmp_path / f"{host.name}.log"

    servers = [
        network.spawn(host, [sys.executable, "-m", "daphne", "-b", host.address, "-p", str(PORT),
                             "console.asgi:application"],
                      env=_host_env(network, host, broker, tmp_path, ALLOWED_HOSTS="127.0.0.1"),
                      log_path=log_path(host), cwd=settings.BASE_DIR)
        for host in daphnes
    ]
    # One job at a time per worker: the run's two parallel nodes cannot both go to the same host.
    consumers = [
        network.spawn(host, [sys.executable, "-m", "celery", "-A", "console", "worker", "-n", f"{host.name}@%h",
                             "-l", "INFO", "--pool=prefork", "--concurrency=1", "--without-gossip",
                             "--without-mingle"],
                      env=_host_env(network, host, broker, tmp_path, WORKGRAPH_AGENT="offline",
                                    WORKGRAPH_OFFLINE_LINE_DELAY=LINE_DELAY),
                      log_path=log_path(host), cwd=settings.BASE_DIR)
        for host in workers
    ]
    # All four start at once; each is then waited for, through the relays from here.
    for host, process in zip(daphnes, servers, strict=True):
        wait_until(lambda host=host: answers(f"{urls[host.name]}/login/"), timeout=STARTUP_TIMEOUT, alive=process,
                   message=lambda host=host: f"daphne did not answer on {host.address}:\n{_tail(log_path(host))}")
    for host, process in zip(workers, consumers, strict=True):
        Worker(name=host.name, process=process, log_path=log_path(host)).wait_ready(timeout=STARTUP_TIMEOUT)
    return Cluster(daphnes=daphnes, workers=workers, urls=urls)


def _host_env(network: Network, host: Host, broker: Broker, tmp_path: Path, **extra: str) -> dict[str, str]:
    """A host's environment: the services at the gateway's address, a folder of its own, no log directory."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"DJANGO_ALLOW_ASYNC_UNSAFE"}}
    var_dir = tmp_path / f"{host.name}-var"
    var_dir.mkdir()
    env.update({
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": _through(current_database_url(), network.gateway),
        "REDIS_URL": _through(broker.url, network.gateway),
        "WORKGRAPH_CELERY_QUEUE": broker.queue,
        "WORKGRAPH_VAR_DIR": str(var_dir),
        "PYTHONUNBUFFERED": "1",
        **extra,
    })
    return env


def _through(url: str, gateway: str) -> str:
    """``url`` with its host replaced by the gateway, where the forwarder listens on the same port."""
    parts = urlsplit(url)
    credentials, _, _ = parts.netloc.rpartition("@")
    address = f"{gateway}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{credentials}@{address}" if credentials else address))


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-3000:] if path.exists() else ""


@pytest.fixture
def browser():
    with chromium_launched(_unavailable) as launched:
        yield launched


class MovingListener(threading.Thread):
    """A WebSocket client that reads the log from one daphne, leaves mid-stream and resumes on another."""

    def __init__(self, *, first: Host, second: Host, urls: dict[str, str], path: str, cookie: str) -> None:
        super().__init__(daemon=True)
        self.first, self.second, self.urls, self.path, self.cookie = first, second, urls, path, cookie
        self.before: list[dict] = []
        self.after: list[dict] = []
        self.moved_at = 0.0
        self.end: dict | None = None
        self.error: BaseException | None = None
        # Each socket's frames as read, for the failure message: which host sent what, and in what order.
        self.frames: list[tuple[str, str]] = []

    def run(self) -> None:
        try:
            self._read(self.first, after=0, into=self.before, stop_after=MOVE_AFTER)
            self.moved_at = time.time()
            self._read(self.second, after=self.before[-1]["seq"], into=self.after, stop_after=None)
        except BaseException as error:
            self.error = error

    def _read(self, host: Host, *, after: int, into: list[dict], stop_after: int | None) -> None:
        origin = self.urls[host.name]
        uri = f"ws://{origin.removeprefix('http://')}{self.path}?after={after}"
        deadline = time.monotonic() + RUN_TIMEOUT
        with connect(uri, origin=origin, additional_headers={"Cookie": self.cookie}, open_timeout=10) as socket:
            while stop_after is None or len(into) < stop_after:
                message = json.loads(socket.recv(timeout=max(0.1, deadline - time.monotonic())))
                self.frames.append((host.name, _frame_summary(message)))
                if message["type"] == "end":
                    self.end = message
                    return
                into += [message["line"]] if message["type"] == "line" else message["lines"]


    def account(self, daphne_logs: list[Path]) -> str:
        """What the listener read, how its socket ended, and the daphnes' output: why it did not get its lines."""
        ended = self.error
        if isinstance(ended, ConnectionClosed):
            ended = f"{ended!r}: received {ended.rcvd}, sent {ended.sent}, received first: {ended.rcvd_then_sent}"
        tails = "\n".join(f"--- {path.name}\n{_tail(path)}" for path in daphne_logs)
        return f"frames {self.frames}\nended by {ended}\n{tails}"


def _frame_summary(message: dict) -> str:
    if message["type"] == "line":
        return f"line {message['line']['seq']}"
    if message["type"] == "lines":
        return f"lines {message['lines'][0]['seq']}-{message['lines'][-1]['seq']}"
    return json.dumps(message)


def test_a_run_on_two_worker_hosts_streams_each_line_once_to_watchers_on_two_daphne_hosts(alice, task, cluster,
                                                                                          browser, tmp_path):
    d1, d2 = cluster.daphnes
    # Sessions live in the database: one sign-in holds on every daphne host.
    session = signed_in(alice).cookies[settings.SESSION_COOKIE_NAME].value
    pages = {}
    for host in (d1, d2):
        context = browser.new_context()
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session,
                              "url": cluster.urls[host.name]}])
        page = context.new_page()
        page.set_default_timeout(RUN_TIMEOUT * 1000)
        # Signed in and warmed up: the first request a daphne serves is slow, and the log would not wait.
        page.goto(f"{cluster.urls[host.name]}/")
        assert page.url == f"{cluster.urls[host.name]}/", page.url
        frames: list[dict] = []
        # The log's socket only: the node page also follows its run on the run's socket.
        page.on("websocket", lambda socket, frames=frames: "/log/" in socket.url and socket.on(
            "framereceived", lambda payload, frames=frames: frames.append(json.loads(payload))))
        pages[host] = (page, frames)

    nodes = [node("left", node_type="test_script"), node("right", node_type="test_script"),
             node("join", "left", "right")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    watched = run.executions.get(node_id="left")

    mover = MovingListener(first=d1, second=d2, urls=cluster.urls, path=f"/ws/node-executions/{watched.pk}/log/",
                           cookie=f"{settings.SESSION_COOKIE_NAME}={session}")
    mover.start()
    for host, (page, _) in pages.items():
        page.goto(f"{cluster.urls[host.name]}/executions/{watched.pk}/", wait_until="commit")
    for page, _ in pages.values():
        page.wait_for_selector("#log-state:text-is('log complete')")
    mover.join(RUN_TIMEOUT)
    wait_until(lambda: _ended(run), timeout=RUN_TIMEOUT, message=lambda: f"the run is still {run.status}")

    assert run.status == "succeeded", run.error
    # Each worker host ran one of the parallel nodes (the host name is the first part of ``worker``).
    executions = latest(run)
    hosts = {name: execution.worker.split(":")[0] for name, execution in executions.items()}
    assert {hosts["left"], hosts["right"]} == {host.hostname for host in cluster.workers}, hosts

    log_file = ExecutionLogFile.objects.get(node_exec=watched)
    stored = log_read(log_file=log_file)
    last = log_file.last_seq
    assert (log_file.status, [line["seq"] for line in stored]) == ("closed", list(range(1, last + 1)))
    assert sum(line["event"] == "agent_output" for line in stored) >= 10

    for host, (page, frames) in pages.items():
        shown = page.eval_on_selector_all(
            "#log-lines li", "items => items.map(i => [Number(i.dataset.seq), i.querySelector('.event').textContent])"
        )
        assert shown == [[line["seq"], line["event"]] for line in stored], host.name
        # What the server rendered plus what its socket sent: every line once, and most of them live.
        rendered = int(page.get_attribute("#log-lines", "data-last-seq"))
        sent = [line["seq"] for frame in frames if frame["type"] != "end"
                for line in ([frame["line"]] if frame["type"] == "line" else frame["lines"])]
        assert sent == list(range(rendered + 1, last + 1)), (host.name, rendered, sent)
        assert len(sent) >= last // 2, (host.name, rendered)
        assert frames[-1] == {"type": "end", "last_seq": last}, host.name

    account = mover.account([tmp_path / f"{host.name}.log" for host in (d1, d2)])
    assert mover.error is None, account
    assert mover.before + mover.after == stored, account
    assert mover.end == {"type": "end", "last_seq": last}, account
    # The second daphne served lines written after the listener came to it: it moved mid-stream.
    assert any(datetime.fromisoformat(line["ts"]).timestamp() > mover.moved_at for line in mover.after), (
        mover.moved_at, mover.after)


def test_the_hosts_network_changes_nothing_in_this_machines_own_namespace():
    # A browser here would take any change for a network change, and fail the requests it has waiting.
    before = _links_and_addresses()
    try:
        made = network_create(["d1", "w1"])
    except NetnsUnavailable as error:
        _unavailable(f"the hosts' network namespaces cannot be made here: {error}")
    try:
        assert _links_and_addresses() == before
    finally:
        made.close()
    assert _links_and_addresses() == before


def _links_and_addresses() -> str:
    return "".join(subprocess.run(["ip", "-br", what], capture_output=True, text=True, check=True).stdout
                   for what in ("link", "addr"))


def _ended(run) -> bool:
    run.refresh_from_db()
    return run.status in WorkGraphRun.FINISHED_STATUSES
