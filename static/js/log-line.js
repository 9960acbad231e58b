// What one log line says, in a few words: the same rule as graphs/logs/lines.py, which renders the
// lines the page starts with (tests/fixtures/log_lines/summaries.json holds both to the same cases).
// Every event kind the engine, the planner and the agent runners write has its words; a kind without
// them reads as its fields, so no line is ever blank. Every field comes from an agent or the engine: it
// is only ever put in textContent, never parsed as HTML.

import { usdText } from "./money.js";

// The fields every line has, or that only say where the line came from: never part of its words.
const FRAME = new Set(["seq", "ts", "event", "purpose"]);

function cost(value) {
  return typeof value === "number" ? usdText(value) : "";
}

function list(values) {
  return Array.isArray(values) ? values.map(String).join(", ") : "";
}

/** A field's value as text: lists joined, objects as compact JSON, numbers as JSON writes them. */
export function valueText(value) {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.map(valueText).join(", ");
  if (typeof value === "object") return JSON.stringify(value);
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

function fieldsText(line) {
  return Object.entries(line)
    .filter(([key, value]) => !FRAME.has(key) && value !== null && value !== undefined && value !== "")
    .map(([key, value]) => `${key} ${valueText(value)}`)
    .join(" · ");
}

function onFail(line) {
  const action = line.action ?? "on_fail";
  if (line.outcome === "looped_back") {
    const target = line.target ?? (line.root_cause && `${line.stage ?? line.root_cause} (root cause ${line.root_cause})`);
    return [[`${action} → ${target ?? "?"}`, line.rerun && `rerun ${list(line.rerun)}`].filter(Boolean).join(", ")];
  }
  if (line.outcome === "retrying") return [`${action}: retrying`];
  if (line.outcome === "terminal") return [`${action}: no rerun`, line.reason];
  return [line.action && line.outcome ? `${action}: ${line.outcome}` : line.action, line.reason];
}

const SUMMARIES = {
  node_start: (line) => [
    line.attempt != null && `attempt ${line.attempt}`,
    line.cause && `cause ${line.cause}`,
    line.org_node && `org node ${line.org_node}`,
    line.append && "append",
    line.sandbox && `sandbox ${line.sandbox}`,
  ],
  node_finished: (line) => [line.status, line.error, line.committed === false && "not recorded: the attempt had moved on"],
  node_completed: (line) => [line.new_node_ids?.length ? `added ${list(line.new_node_ids)}` : "added no node"],
  planning_failed: (line) => [line.reason, list(line.errors)],
  planning_cancelled: (line) => [line.reason],
  append_awaiting_approval: (line) => [`waiting for a reviewer: ${list(line.new_node_ids)}`],
  repair_requested: (line) => [`asked to repair: ${(line.errors ?? []).map(String).join("; ")}`],
  agent_call: (line) => [line.purpose && `${line.purpose} call`, line.org_node],
  agent_retry: (line) => [line.kind, line.delay != null && `retry in ${line.delay} s`, line.message],
  agent_error: (line) => [line.kind, line.transient && "transient", line.message],
  transient_retry_skipped: (line) => [line.kind, line.reason],
  commands_disabled: (line) => [line.reason],
  worker_lost: (line) => ["the worker stopped beating", line.worker],
  judgment: (line) => [
    line.ok ? "pass" : "fail",
    line.kind && `judged by ${line.kind}`,
    (line.issues ?? []).map(String).join("; "),
  ],
  failure_classified: (line) => [
    line.category,
    typeof line.confidence === "number" && `confidence ${line.confidence.toFixed(2)}`,
    (line.evidence ?? []).map(String).join("; "),
  ],
  on_fail: onFail,
  result_reported: (line) => [line.ok ? "pass" : "fail", (line.issues ?? []).map(String).join("; ")],
  external_wait: (line) => [`waiting for a report until ${line.deadline_at}`,
    line.deadline_seconds != null && `${line.deadline_seconds} s`],
  external_timeout: (line) => [`no report came within ${line.deadline_seconds} s`],
  aggregated: (line) => [`aggregated ${list(line.upstream)}`],
  change_landed: (line) => [line.commit && `landed ${String(line.commit).slice(0, 12)}`,
    line.files != null && `${line.files} files`],
  change_kept: (line) => [line.ref && `kept on ${line.ref}`, line.files != null && `${line.files} files`],
  change_not_kept: (line) => ["not kept", (line.issues ?? []).map(String).join("; ")],
  merge_conflict: (line) => [`conflict in ${list(line.files)}`, line.ref && `kept on ${line.ref}`],
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
  agent_event: (line) => [line.event_type, line.subtype, line.raw],
  command_start: (line) => [line.purpose === "judgment" && "judgment", (line.argv ?? []).join(" ")],
  command_output: (line) => [line.stream === "stderr" && "stderr", line.text],
  command_exit: (line) => [
    line.timed_out ? "timed out" : line.exit_code != null && `exit code ${line.exit_code}`,
    line.duration_ms != null && `${line.duration_ms} ms`,
    line.output_dropped_bytes && `${line.output_dropped_bytes} bytes dropped`,
    line.start_error,
  ],
};

/** The line's own words: a tool call's name and input, an on_fail's target and reruns, a judgment's
 * verdict and issues…; a line of another kind, its text or else its fields. */
export function describeLine(line) {
  const summary = SUMMARIES[line.event];
  const words = summary ? summary(line).filter(Boolean).join(" · ") : (line.text ?? line.message ?? line.reason ?? "");
  return words === "" ? fieldsText(line) : String(words);
}
