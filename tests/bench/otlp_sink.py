"""A trace receiver that costs next to nothing: OTLP/HTTP ``POST /v1/traces`` answered 200 at once.

A benchmark of what traces cost the console must not also measure a receiver storing them on the same
cores. The sink keeps each request's body as it came and decodes them only when asked how many spans
arrived, after the timed runs.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class OtlpSink:
    server: ThreadingHTTPServer
    bodies: list[bytes] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def received_bytes(self) -> int:
        return sum(len(body) for body in self.bodies)

    def spans(self) -> int:
        """How many spans every request so far held."""
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        count = 0
        for body in list(self.bodies):
            request = ExportTraceServiceRequest.FromString(body)
            count += sum(len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans)
        return count

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def otlp_sink_start() -> OtlpSink:
    """Listen on a free local port, in a daemon thread, until ``stop``."""
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # the exporter keeps its connection, as with a real collector
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path != "/v1/traces":
                self.send_response(404)
            else:
                bodies.append(body)
                self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            """Thousands of spans a run are not news."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="otlp-sink", daemon=True).start()
    return OtlpSink(server=server, bodies=bodies)
