"""Heartbeats of the attempts a process is running: one thread per process beats for all of them.

A running attempt's row carries ``heartbeat_at``; the reaper fails attempts whose beat stopped (their
worker died). The beat also carries news back: when the run was cancelled, or the row was taken away
(reaped, finished by someone else), the attempt's ``cancel_event`` is set and its agent stops.

Why one thread and not one per attempt: starting and joining a thread for every node cost more than
the rest of a quick node's bookkeeping — the node's thread waits for the beating thread to be
scheduled twice, and Python hands the interpreter over only every few milliseconds. One thread also
beats a fan-out's many attempts with one query per beat instead of one each.

An attempt's first beat comes ``WORKGRAPH_HEARTBEAT_SECONDS`` after it starts and then one every
interval, as if it had a timer of its own; a quick node never causes a beat.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, connection
from django.utils import timezone

from graphs.models import WorkNodeExecution

logger = logging.getLogger(__name__)


def worker_name() -> str:
    """This thread's name as a worker: host, process and thread, so every claim says who holds it."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


@dataclass
class _Beating:
    worker: str
    cancel_event: threading.Event
    due: float  # monotonic time of the next beat


class _Heart:
    def __init__(self) -> None:
        self._beating: dict[Any, _Beating] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, pk: Any, *, worker: str, cancel_event: threading.Event) -> None:
        due = time.monotonic() + settings.WORKGRAPH_HEARTBEAT_SECONDS
        with self._lock:
            self._beating[pk] = _Beating(worker=worker, cancel_event=cancel_event, due=due)
            if self._thread is None:
                self._thread = threading.Thread(target=self._beat_forever, name="heartbeat", daemon=True)
                self._thread.start()
        self._wake.set()  # the new attempt may be due before whatever the thread sleeps for

    def remove(self, pk: Any) -> None:
        with self._lock:
            self._beating.pop(pk, None)
            idle = not self._beating
        if idle:
            self._wake.set()  # to let go of its connection now

    def _beat_forever(self) -> None:
        close_old_connections()
        while True:
            with self._lock:
                next_due = min((entry.due for entry in self._beating.values()), default=None)
            if next_due is None:
                # Nothing beats: an idle heart pins no database backend (and a test database can be dropped).
                connection.close()
            timeout = settings.WORKGRAPH_HEARTBEAT_SECONDS if next_due is None else next_due - time.monotonic()
            if timeout > 0:
                self._wake.wait(timeout)
                self._wake.clear()
                continue
            try:
                self._beat_due()
            except (OperationalError, InterfaceError):
                # A dropped connection costs one beat, not the heartbeat: the next one reconnects.
                connection.close()
            except Exception:
                logger.exception("heartbeat failed")
                connection.close()  # its transaction may have ended part way: the next beat starts afresh

    def _beat_due(self) -> None:
        now = time.monotonic()
        interval = settings.WORKGRAPH_HEARTBEAT_SECONDS
        with self._lock:
            due = {pk: entry for pk, entry in self._beating.items() if entry.due <= now}
            for entry in due.values():
                entry.due = now + interval
        owners = dict(
            WorkNodeExecution.objects.filter(
                pk__in=list(due), status=WorkNodeExecution.Status.RUNNING, run__cancel_requested_at__isnull=True
            ).values_list("pk", "worker")
        )
        alive = [pk for pk, entry in due.items() if owners.get(pk) == entry.worker]
        if alive:
            WorkNodeExecution.objects.filter(pk__in=alive, status=WorkNodeExecution.Status.RUNNING).update(
                heartbeat_at=timezone.now()
            )
        for pk, entry in due.items():
            if owners.get(pk) != entry.worker:
                entry.cancel_event.set()
                self.remove(pk)


_heart = _Heart()


def _forget_after_fork() -> None:
    # A forked child (a Celery prefork process) inherits the registry and lock but not the thread.
    global _heart
    _heart = _Heart()


os.register_at_fork(after_in_child=_forget_after_fork)


@contextmanager
def execution_heartbeat(
    execution: WorkNodeExecution, *, worker: str, cancel_event: threading.Event
) -> Iterator[None]:
    """Beat while the body runs; set ``cancel_event`` when the run is cancelled or the row is taken away."""
    heart = _heart
    heart.add(execution.pk, worker=worker, cancel_event=cancel_event)
    try:
        yield
    finally:
        heart.remove(execution.pk)
