"""The exporter of this process, and the hooks the engine calls: an attempt's log closed, a run ended.

Nothing here may hold a run up. A hook only puts an id on a bounded queue; one thread per process turns
ids into spans (reading the records) and hands them to the SDK's ``BatchSpanProcessor``, whose own thread
sends them over OTLP/HTTP. A full queue, a record that cannot be read or a receiver that does not take a
batch drops spans: each is counted (``spans_dropped``) and logged as a warning.

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

from graphs.models import ExecutionLogLine, WorkGraphRun, WorkNodeExecution
from graphs.telemetry.content import content_policy
from graphs.telemetry.ids import trace_id_ensure
from graphs.telemetry.spans import TRACE_EVENTS, SpanSpec, attempt_spans, run_span

logger = logging.getLogger("graphs.telemetry")

DEFAULT_SERVICE_NAME = "workgraph-console"
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
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
    exporter.queue.put(("stop", None))
    exporter.processor.shutdown()
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

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class _Exporter:
    """This process's queue of ids, its thread that makes spans, and the SDK processor that sends them."""

    def __init__(self) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self.pid = os.getpid()
        size = settings.WORKGRAPH_OTEL_QUEUE_SIZE
        self.queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=size)
        named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
        self.resource = Resource.create({} if named else {"service.name": DEFAULT_SERVICE_NAME})
        self.processor = BatchSpanProcessor(_CountingExporter(OTLPSpanExporter()), max_queue_size=size)
        self.thread = threading.Thread(target=self._run, name="telemetry-spans", daemon=True)
        self.thread.start()

    def submit(self, item: tuple[str, Any]) -> None:
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            _drop(1, f"the span queue is full (WORKGRAPH_OTEL_QUEUE_SIZE), {item[0]} {item[1]} left out")

    def flush(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.05)
        left = max(deadline - time.monotonic(), 0.0)
        return self.processor.force_flush(int(left * 1000)) and not self.queue.unfinished_tasks

    def _run(self) -> None:
        while True:
            kind, key = self.queue.get()
            if kind == "stop":
                connection.close()
                self.queue.task_done()
                return
            try:
                close_old_connections()
                specs, trace_id = (_attempt_specs(key) if kind == "attempt" else _run_specs(key))
                for spec in specs:
                    self.processor.on_end(self._readable(spec, trace_id))
            except Exception:  # a span that cannot be made is dropped, the run goes on
                logger.exception("spans of %s %s not made", kind, key)
                _drop(1, f"the records of {kind} {key} could not be read")
            finally:
                self.queue.task_done()

    def _readable(self, spec: SpanSpec, trace_id: str) -> Any:
        from opentelemetry.sdk.trace import ReadableSpan
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope
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
            instrumentation_scope=InstrumentationScope("graphs.telemetry"),
        )


def _attempt_specs(node_exec_id: Any) -> tuple[list[SpanSpec], str]:
    execution = WorkNodeExecution.objects.select_related("run__task__project").get(pk=node_exec_id)
    rows = (ExecutionLogLine.objects.filter(log_file_id=node_exec_id, event__in=TRACE_EVENTS)
            .order_by("seq").values_list("text", flat=True))
    lines = [json.loads(text) for text in rows]
    runner = execution.run.task.project.agent or settings.WORKGRAPH_AGENT
    specs = attempt_spans(execution, lines=lines, runner=runner, content=content_policy())
    return specs, trace_id_ensure(execution.run_id)


def _run_specs(run_id: Any) -> tuple[list[SpanSpec], str]:
    run = WorkGraphRun.objects.select_related("task__project").get(pk=run_id)
    span = run_span(run, task_title=run.task.title, project=run.task.project.slug)
    return [span], trace_id_ensure(run_id)


def _nanoseconds(moment: Any) -> int:
    return int(moment.timestamp() * 1_000_000_000)
