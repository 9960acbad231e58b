"""The console's daphne stops when told to (SIGTERM), requests in flight or not: a deployment's restart
and ``make run``'s Ctrl-C end the process instead of leaving it waiting on a request for good."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest

from tests.browser.conftest import daphne_serving
from tests.celery_worker import wait_until

# A page, a static file, an API miss and a page miss: each takes a different way through the middleware.
PATHS = ("/login/", "/static/js/live.js", "/api/no-such-thing", "/no-such-page/")
ASKERS_PER_PATH = 2
# A bound against the hang, not a pace: daphne gives its open requests up to 10 s to finish.
STOP_LIMIT_SECONDS = 60
# daphne caught with a request mid-way through the middleware hung in most tries, not every one.
ROUNDS = 3


@pytest.mark.django_db(transaction=True)
def test_daphne_stops_on_sigterm_while_requests_are_in_flight():
    for _ in range(ROUNDS):
        _stopped_while_asked()


def _stopped_while_asked() -> None:
    with daphne_serving(DEBUG="1") as daphne:
        answered: list[str] = []
        asking = threading.Event()
        asking.set()

        def keep_asking(path: str) -> None:
            while asking.is_set():
                try:
                    urlopen(f"{daphne.url}{path}", timeout=30).read()
                except HTTPError:
                    pass  # an answer all the same (the misses)
                except OSError:  # daphne is going: refused or cut off
                    time.sleep(0.05)
                    continue
                answered.append(path)

        askers = [threading.Thread(target=keep_asking, args=(path,)) for path in PATHS * ASKERS_PER_PATH]
        for asker in askers:
            asker.start()
        try:
            wait_until(lambda: set(answered) == set(PATHS) and len(answered) >= 40, timeout=300,
                       message=lambda: f"daphne answered {len(answered)} requests", alive=daphne.process)
            daphne.process.send_signal(signal.SIGTERM)
            try:
                daphne.process.wait(timeout=STOP_LIMIT_SECONDS)
            except subprocess.TimeoutExpired:
                pytest.fail(f"daphne was still running {STOP_LIMIT_SECONDS} s after SIGTERM")
        finally:
            asking.clear()
            for asker in askers:
                asker.join()
