// What one log line says, in a few words: the same rule as graphs/logs/lines.py, which renders the
// lines the page starts with. Every field comes from an agent or the engine: it is only ever put in
// textContent, never parsed as HTML.

function cost(value) {
  return typeof value === "number" ? `$${value.toFixed(4)}` : "";
}

const SUMMARIES = {
  agent_init: (line) => [line.model, line.session_id && `session ${line.session_id}`],
  tool_call: (line) => [line.name, line.input],
  tool_result: (line) => [line.is_error ? "error" : "", line.content],
  api_retry: (line) => [
    `attempt ${line.attempt ?? "?"}`,
    line.retry_delay_ms != null && `retry in ${line.retry_delay_ms} ms`,
    line.error_status != null && `status ${line.error_status}`,
    line.error,
  ],
  agent_result: (line) => [
    line.subtype,
    line.num_turns != null && `${line.num_turns} turns`,
    cost(line.total_cost_usd),
  ],
  command_start: (line) => [(line.argv ?? []).join(" ")],
  command_output: (line) => [line.stream === "stderr" && "stderr", line.text],
  command_exit: (line) => [
    line.timed_out ? "timed out" : line.exit_code != null && `exit code ${line.exit_code}`,
    line.duration_ms != null && `${line.duration_ms} ms`,
    line.output_dropped_bytes && `${line.output_dropped_bytes} bytes dropped`,
  ],
};

export function describeLine(line) {
  const summary = SUMMARIES[line.event];
  if (summary) return summary(line).filter(Boolean).join(" · ");
  return line.text ?? line.message ?? line.status ?? line.reason ?? "";
}
