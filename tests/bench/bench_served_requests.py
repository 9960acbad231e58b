"""Requests through daphne, the console's own server: the whole middleware chain in the mode it runs in
under ASGI, which the test client (sync) never takes.

Each path is asked ``REQUESTS`` times one after another, then by ``ASKERS`` askers at once; the table
gives the median and p95 of each request's time as the asker saw it (the network is the loopback).
daphne runs with the test settings, which look each static file up on disk (as DEBUG does).
Run on demand: ``pytest tests/bench/bench_served_requests.py -o python_files='bench_*.py' -s``.
"""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest
from django.test import Client

from tests import factories
from tests.browser.conftest import daphne_serving
from tests.run_builders import edges_for, node, planned_run

REQUESTS = 300
ASKERS = 8


def _asked(url: str, cookie: str) -> float:
    started = time.perf_counter()
    try:
        urlopen(Request(url, headers={"Cookie": cookie}), timeout=60).read()
    except HTTPError as answer:  # the page miss is asked on purpose
        answer.read()
    return (time.perf_counter() - started) * 1000


def _times(url: str, cookie: str, *, askers: int) -> list[float]:
    _asked(url, cookie)  # warm: templates, the static file's lookup
    if askers == 1:
        return [_asked(url, cookie) for _ in range(REQUESTS)]
    with ThreadPoolExecutor(max_workers=askers) as pool:
        return list(pool.map(lambda _: _asked(url, cookie), range(REQUESTS)))


@pytest.mark.django_db(transaction=True)
def test_served_request_time(project, alice):
    task = factories.TaskFactory(project=project)
    nodes = [node(f"n{index}", *([f"n{index - 1}"] if index else [])) for index in range(10)]
    planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    client = Client()
    client.force_login(alice)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    paths = {
        "sign-in page": "/login/",
        "a static file (run-graph-page.js)": "/static/js/run-graph-page.js",
        "dashboard, signed in": "/",
        "task page, 10 nodes, signed in": f"/tasks/{task.pk}/",
        "a page miss (404)": "/no-such-page/",
    }
    with daphne_serving() as daphne:
        print(f"\n{'request':<36} {'alone p50':>10} {'p95':>7} {f'{ASKERS} at once p50':>16} {'p95':>7}  (ms)")
        for name, path in paths.items():
            alone = _times(f"{daphne.url}{path}", cookie, askers=1)
            together = _times(f"{daphne.url}{path}", cookie, askers=ASKERS)
            print(f"{name:<36} {statistics.median(alone):>10.1f} {statistics.quantiles(alone, n=20)[-1]:>7.1f}"
                  f" {statistics.median(together):>16.1f} {statistics.quantiles(together, n=20)[-1]:>7.1f}")
