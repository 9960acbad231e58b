"""OpenTelemetry traces of runs, made from what the engine records: a run is a trace, its attempts,
agent calls, tool calls and commands its spans.

- ``spans``: the spans of one attempt or run, as plain ``SpanSpec`` values (no SDK, no database)
- ``content``: what of prompts, outputs and tools' texts a span may carry
- ``ids``: trace and span ids, the same from any process
- ``export``: the per-process exporter (OTLP/HTTP, batched, bounded, counting what it drops) and the
  hooks the engine calls when an attempt's log closes and when a run ends
"""
