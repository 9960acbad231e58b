"""The exporter of this process, and the hooks the engine calls: an attempt's log closed, a run ended.

Nothing here may hold a run up. A hook only puts an id on a bounded queue; one thread per process turns
ids into spans (reading the records, once the process is quiet) and sends them over OTLP/HTTP in
batches. A full queue, a record that cannot be read or a receiver that does not take a batch drops
spans: each is counted (``spans_dropped``) and logged as a warning.

The exporter starts on first use in each process, so a Celery worker forked from its parent starts its
own; it is off unless an OTLP endpoint is configured and ``OTEL_SDK_DISABLED`` is not true.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Sequence
from typing import Any

from celery.signals import worker_process_shutdown
from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import F

from graphs.models import ExecutionLogLine, WorkGraphRun, WorkNodeExecution
from graphs.telemetry.content import content_policy
from graphs.telemetry.ids import trace_id_ensure
from graphs.telemetry.spans import TRACE_EVENTS, SpanSpec, attempt_spans, run_span

logger = logging.getLogger("graphs.telemetry")

DEFAULT_SERVICE_NAME = "workgraph-console"
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
# Ids wait for a quiet process: one that used or waited for under this share of a core over the last window…
QUIET_CPU_SHARE = 0.2
QUIET_WINDOW_SECONDS = 0.25
# … but never longer than this, so a process that is never quiet still sends its traces.
MAX_DELAY_SECONDS = 30.0
# Ids made into spans together (three queries between them), and spans sent in one request.
BATCH_SIZE = 500
EXPORT_BATCH_SPANS = 512
_lock = threading.Lock()
_dropped = 0
_exporter: _Exporter | None = None


def tracing_enabled() -> bool:
    """Whether this environment asks for traces: an OTLP endpoint set and the SDK not disabled."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(os.environ.get(name, "").strip() for name in _ENDPOINTS)


def spans_dropped() -> int:
    """How many spans (or attempts and runs, before they became spans) this process dropped."""
    return _dropped


def _drop(count: int, reason: str) -> None:
    global _dropped
    with _lock:
        _dropped += count
    logger.warning("dropped %d span(s): %s (%d dropped in this process)", count, reason, _dropped)


def attempt_log_closed(execution: WorkNodeExecution, last_seq: int) -> None:
    """Log close listener: the attempt's lines are stored, its spans can be made (once committed)."""
    if tracing_enabled():
        pk = execution.pk
        transaction.on_commit(lambda: _exporter_of_process().submit(("attempt", pk)))


def run_ended(run_id: Any) -> None:
    """A run reached a finished status: its root span can be made (once committed)."""
    if tracing_enabled():
        transaction.on_commit(lambda: _exporter_of_process().submit(("run", run_id)))


def telemetry_flush(timeout: float = 30.0) -> bool:
    """Make the spans of everything submitted so far and send them; return whether all went in time."""
    exporter = _exporter
    if exporter is None or exporter.pid != os.getpid():
        return True
    return exporter.flush(timeout)


def telemetry_stop(timeout: float = 30.0) -> bool:
    """Flush and stop this process's exporter; the next span starts a new one, with the OTEL_* then set."""
    global _exporter
    with _lock:
        exporter, _exporter = _exporter, None
    if exporter is None or exporter.pid != os.getpid():
        return True
    flushed = exporter.flush(timeout)
    exporter.stop()
    return flushed


@worker_process_shutdown.connect(weak=False)
def _worker_process_stopping(**_: Any) -> None:
    """A Celery pool process may end without running atexit: it sends what it holds first."""
    telemetry_stop(5.0)


def _exporter_of_process() -> _Exporter:
    global _exporter
    with _lock:
        if _exporter is None or _exporter.pid != os.getpid():
            _exporter = _Exporter()
            atexit.register(_exporter.flush, 5.0)
        return _exporter


class _CountingExporter:
    """The OTLP exporter, counting the spans of each batch the receiver did not take."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self._inner.export(spans)
        except Exception as error:  # the receiver's failure must never reach a run
            logger.debug("export failed: %s", error)
            result = SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS:
            _drop(len(spans), "the trace receiver did not take them")
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()


class _Exporter:
    """This process's queue of ids and the one thread that turns them into spans and sends them.

    The thread lets ids wait while the process is busy (the engine's threads running nodes) and makes
    their spans once it is quiet, or once the oldest has waited ``MAX_DELAY_SECONDS``: spans made
    beside a busy engine would take its interpreter from it, and every one of its queries would wait for
    the interpreter again on returning. Ids waiting together are read with three queries, however many.
    """

    def __init__(self) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope

        self.pid = os.getpid()
        self.queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=settings.WORKGRAPH_OTEL_QUEUE_SIZE)
        named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
        self.resource = Resource.create({} if named else {"service.name": DEFAULT_SERVICE_NAME})
        self.scope = InstrumentationScope("graphs.telemetry")
        self.exporter = _CountingExporter(OTLPSpanExporter())
        self.thread = threading.Thread(target=self._run, name="telemetry-spans", daemon=True)
        self.thread.start()

    def submit(self, item: tuple[str, Any]) -> None:
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            _drop(1, f"the span queue is full (WORKGRAPH_OTEL_QUEUE_SIZE), {item[0]} {item[1]} left out")

    def flush(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        try:
            self.queue.put_nowait(("flush", None))  # ends the wait for a quiet process
        except queue.Full:
            pass  # the thread takes a full queue's ids without waiting anyway
        while self.queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.05)
        return not self.queue.unfinished_tasks

    def stop(self) -> None:
        try:
            self.queue.put(("stop", None), timeout=5.0)
        except queue.Full:
            pass  # the thread is stuck on a receiver: it is a daemon, and this process is moving on
        self.thread.join(timeout=5.0)
        self.exporter.shutdown()

    def _run(self) -> None:
        stopping = False
        while not stopping:
            items = self._gather()
            stopping = any(kind == "stop" for kind, _ in items)
            try:
                self._export([item for item in items if item[0] in {"attempt", "run"}])
            finally:
                for _ in items:
                    self.queue.task_done()
        connection.close()

    def _gather(self) -> list[tuple[str, Any]]:
        """The ids waiting, once the process is quiet, the oldest has waited ``MAX_DELAY_SECONDS``, a flush
        or a stop asks for them, or this thread holds as many as the queue does."""
        items = [self.queue.get()]
        deadline = time.monotonic() + MAX_DELAY_SECONDS
        cpu, wall = _cpu_demand(), time.monotonic()
        while items[-1][0] not in {"flush", "stop"} and len(items) < self.queue.maxsize:
            now = time.monotonic()
            if now >= deadline:
                break
            if now - wall >= QUIET_WINDOW_SECONDS:
                now_cpu = _cpu_demand()
                if now_cpu - cpu < QUIET_CPU_SHARE * (now - wall):
                    break
                cpu, wall = now_cpu, now
            try:
                items.append(self.queue.get(timeout=max(wall + QUIET_WINDOW_SECONDS - now, 0.01)))
            except queue.Empty:
                pass
        while items[-1][0] != "stop":
            try:
                items.append(self.queue.get_nowait())
            except queue.Empty:
                break
        return items

    def _export(self, items: list[tuple[str, Any]]) -> None:
        if not items:
            return
        for first in range(0, len(items), BATCH_SIZE):
            batch = items[first:first + BATCH_SIZE]
            try:
                close_old_connections()
                spans = [self._readable(spec, trace_id) for specs, trace_id in _specs(batch) for spec in specs]
            except Exception:  # spans that cannot be made are dropped, the runs go on
                logger.exception("spans of %d attempt(s) and run(s) not made", len(batch))
                _drop(len(batch), f"the records of {len(batch)} attempt(s) and run(s) could not be read")
                continue
            for start in range(0, len(spans), EXPORT_BATCH_SPANS):
                self.exporter.export(spans[start:start + EXPORT_BATCH_SPANS])

    def _readable(self, spec: SpanSpec, trace_id: str) -> Any:
        from opentelemetry.sdk.trace import ReadableSpan
        from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

        trace = int(trace_id, 16)
        flags = TraceFlags(TraceFlags.SAMPLED)
        parent = SpanContext(trace, spec.parent_id, is_remote=False, trace_flags=flags) if spec.parent_id else None
        status = Status(StatusCode.ERROR, spec.error) if spec.error is not None else Status(StatusCode.OK)
        return ReadableSpan(
            name=spec.name, context=SpanContext(trace, spec.span_id, is_remote=False, trace_flags=flags),
            parent=parent, resource=self.resource, attributes=spec.attributes,
            kind=SpanKind.CLIENT if spec.client else SpanKind.INTERNAL, status=status,
            start_time=_nanoseconds(spec.start), end_time=_nanoseconds(spec.end),
            instrumentation_scope=self.scope,
        )


# The columns of an attempt its spans read: not the run's (its manifest is large), nor the prompt and the
# answer unless content is captured.
_ATTEMPT_FIELDS = ("node_exec_id", "run_id", "node_id", "subagent_type", "attempt", "cause", "status", "error",
                   "failure", "judgment_result", "agent_calls", "cost_usd", "input_tokens", "output_tokens",
                   "calls_without_usage", "model", "started_at", "finished_at", "created_at")


def _cpu_demand() -> float:
    """Seconds of CPU this process's threads used or waited for on the run queue: on a loaded machine a
    busy process waits for a core as much as it runs, and must not pass for a quiet one. Where the kernel
    does not tell (no ``/proc/self/task/*/schedstat``), the CPU it used."""
    total = 0
    try:
        for task in os.scandir("/proc/self/task"):
            with open(f"{task.path}/schedstat", "rb") as stat:
                ran, waited, _ = stat.read().split()
            total += int(ran) + int(waited)
    except (OSError, ValueError):
        return time.process_time()
    return total / 1e9


def _specs(items: list[tuple[str, Any]]) -> list[tuple[list[SpanSpec], str]]:
    """The spans of the attempts and runs of ``items`` with their trace ids, read with two queries for the
    attempts and one for the runs."""
    attempt_ids = [key for kind, key in items if kind == "attempt"]
    run_ids = [key for kind, key in items if kind == "run"]
    made: list[tuple[list[SpanSpec], str]] = []
    if attempt_ids:
        content = content_policy()
        fields = _ATTEMPT_FIELDS + (("input_payload", "output_payload") if content.capture else ())
        executions = (WorkNodeExecution.objects.filter(pk__in=attempt_ids).only(*fields)
                      .annotate(project_agent=F("run__task__project__agent")))
        lines: dict[Any, list[dict[str, Any]]] = {}
        rows = (ExecutionLogLine.objects.filter(log_file_id__in=attempt_ids, event__in=TRACE_EVENTS)
                .order_by("log_file_id", "seq").values_list("log_file_id", "text"))
        for log_file_id, text in rows:
            lines.setdefault(log_file_id, []).append(json.loads(text))
        for execution in executions:
            runner = execution.project_agent or settings.WORKGRAPH_AGENT
            specs = attempt_spans(execution, lines=lines.get(execution.pk, []), runner=runner, content=content)
            made.append((specs, trace_id_ensure(execution.run_id)))
    if run_ids:
        runs = (WorkGraphRun.objects.filter(pk__in=run_ids).select_related("task__project")
                .only("run_id", "status", "error", "error_code", "created_at", "finished_at", "task_id",
                      "task__title", "task__project__slug"))
        for run in runs:
            span = run_span(run, task_title=run.task.title, project=run.task.project.slug)
            made.append(([span], trace_id_ensure(run.pk)))
    return made


def _nanoseconds(moment: Any) -> int:
    return int(moment.timestamp() * 1_000_000_000)
