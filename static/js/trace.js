/**
 * An attempt's trace, folded from its log lines one at a time: the same rule for the lines the page
 * starts with and for each line that arrives live, so a line reads the same whichever way it came.
 *
 * The trace is a list of groups, one per agent call (an `agent_call` line opens one, labeled by its
 * purpose: the node's call, then its judge's). A group holds its entries in log order: the agent's
 * text, its plain output, API retries, and its tool calls. A tool call whose `tool_use_id` is another
 * line's `parent_tool_use_id` started a subagent: that line goes inside the call instead. A call's
 * `tool_result` fills the call in; a call without one is running until its group has ended.
 *
 * This module builds plain objects and touches no DOM (trace-view.js renders them): every field is
 * agent text and is only ever shown as text.
 *
 * @example
 * const trace = traceCreate();
 * for (const line of lines) for (const change of traceAdd(trace, line)) render(change);
 */

import { usdText } from "./money.js";

const PURPOSE_LABELS = new Map([["node", "Node call"], ["judge", "Judge call"], ["plan", "Planning call"]]);
const TOKEN_FIELDS = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"];
const TOKEN_LABELS = ["input", "output", "cache write", "cache read"];
// Which input field says what a call does, by tool; any other tool shows its input as compact JSON.
// (Maps, not objects: a tool an agent names "__proto__" must find nothing.)
const INPUT_FIELDS = new Map(Object.entries({
  Bash: "command", Read: "file_path", Write: "file_path", Edit: "file_path", MultiEdit: "file_path",
  NotebookEdit: "notebook_path", Grep: "pattern", Glob: "pattern", WebFetch: "url", WebSearch: "query",
  Task: "description",
}));
const SUMMARY_CHARS = 120;

/**
 * @typedef {object} TraceCall
 * @property {"call"} kind
 * @property {number} seq
 * @property {string} toolUseId
 * @property {string} name
 * @property {string} input        The input as the runner logged it: JSON text, maybe cut.
 * @property {number|null} inputChars  Its whole length before any cut.
 * @property {string} summary      One line saying what the call does.
 * @property {string} ts
 * @property {{seq: number, ts: string, content: string, contentChars: number|null, isError: boolean}|null} result
 * @property {number|null} durationMs  From the call's line to its result's.
 * @property {TraceEntry[]} entries    What the subagent it started did.
 */

/**
 * @typedef {TraceCall
 *   | {kind: "text", seq: number, text: string}
 *   | {kind: "output", seq: number, text: string, stream?: string}  (a command's has its stream)
 *   | {kind: "retry", seq: number, attempt: any, maxRetries: any, retryDelayMs: any, errorStatus: any, error: any}
 *   | {kind: "result", seq: number, toolUseId: string, content: string, isError: boolean}} TraceEntry
 *   (a `result` entry is a tool result whose call is not in the trace)
 */

/**
 * @typedef {object} TraceGroup
 * @property {string|null} purpose
 * @property {string} label
 * @property {string|null} command   The argv of a command's group, joined.
 * @property {string|null} model
 * @property {string|null} sessionId
 * @property {object|null} outcome   The call's `agent_result` line, or a command's `command_exit`.
 * @property {boolean} ended         Its result came, or a later call began.
 * @property {TraceEntry[]} entries
 * @property {Map<string, TraceCall>} calls  Its tool calls by id, subagents' included.
 */

/**
 * @typedef {object} Totals  What the calls reported, summed: the header while the attempt runs.
 * @property {string|null} model       The last one named.
 * @property {string|null} session_id  The last one named.
 * @property {number|null} num_turns   Null until a call has reported its result.
 * @property {Record<string, number>|null} usage  Null until a call has reported its result.
 * @property {number|null} cost_usd    Null until a call has reported a cost.
 */

/**
 * @typedef {{type: "group", group: TraceGroup}
 *   | {type: "entry", entry: TraceEntry, parent: TraceGroup|TraceCall, group: TraceGroup}
 *   | {type: "result", call: TraceCall, group: TraceGroup}
 *   | {type: "group-info", group: TraceGroup}
 *   | {type: "totals"}} TraceChange  What one line changed, for a renderer to show.
 */

/** An empty trace. */
export function traceCreate() {
  return {
    /** @type {TraceGroup[]} */
    groups: [],
    lastSeq: 0,
    finished: false,
    /** @type {Totals} */
    totals: { model: null, session_id: null, num_turns: null, cost_usd: null, usage: null },
  };
}

/**
 * Fold one log line into the trace; return what changed. A line whose seq is not past the last one
 * folded is dropped (the page's first lines and the live ones may meet at the seam).
 *
 * @param {ReturnType<typeof traceCreate>} trace
 * @param {{seq: number, ts: string, event: string, purpose?: string}} line
 * @returns {TraceChange[]}
 */
export function traceAdd(trace, line) {
  if (line.seq <= trace.lastSeq) return [];
  trace.lastSeq = line.seq;
  return Object.hasOwn(FOLDS, line.event) ? FOLDS[line.event](trace, line) : [];
}

/** Mark the log complete: calls still without a result have none coming. */
export function traceFinish(trace) {
  trace.finished = true;
}

/**
 * How a call stands: "ok", "error", "running", or "no-result" once its group or the log has ended.
 *
 * @param {ReturnType<typeof traceCreate>} trace
 * @param {TraceGroup} group
 * @param {TraceCall} call
 */
export function callState(trace, group, call) {
  if (call.result) return call.result.isError ? "error" : "ok";
  return group.ended || trace.finished ? "no-result" : "running";
}

const COMMAND_LABELS = new Map([["node", "Command"], ["judge", "Judge command"]]);

const FOLDS = {
  agent_call(trace, line) {
    const changes = endCurrent(trace);
    const group = newGroup(line.purpose ?? null);
    trace.groups.push(group);
    return [...changes, { type: "group", group }];
  },
  // A command (a command node's, or a command judgment's) is a group of its own: its argv, its
  // output lines, and how it exited.
  command_start(trace, line) {
    const changes = endCurrent(trace);
    const group = newGroup(line.purpose ?? null);
    group.label = COMMAND_LABELS.get(line.purpose) ?? "Command";
    group.command = Array.isArray(line.argv) ? line.argv.map(String).join(" ") : "";
    trace.groups.push(group);
    return [...changes, { type: "group", group }];
  },
  command_output: (trace, line) => (String(line.text ?? "").trim()
    ? entryAdd(trace, line, { kind: "output", seq: line.seq, text: String(line.text), stream: line.stream ?? "stdout" })
    : []),
  command_exit(trace, line) {
    const [group, changes] = groupFor(trace, line);
    group.outcome = line;
    group.ended = true;
    return [...changes, { type: "group-info", group }];
  },
  agent_init(trace, line) {
    const [group, changes] = groupFor(trace, line);
    group.model = line.model ?? group.model;
    group.sessionId = line.session_id ?? group.sessionId;
    trace.totals.model = line.model ?? trace.totals.model;
    trace.totals.session_id = line.session_id ?? trace.totals.session_id;
    return [...changes, { type: "group-info", group }, { type: "totals" }];
  },
  agent_result(trace, line) {
    const [group, changes] = groupFor(trace, line);
    group.outcome = line;
    group.ended = true;
    group.model = line.model ?? group.model;
    group.sessionId = line.session_id ?? group.sessionId;
    const totals = trace.totals;
    totals.model = line.model ?? totals.model;
    totals.session_id = line.session_id ?? totals.session_id;
    if (typeof line.num_turns === "number") totals.num_turns = (totals.num_turns ?? 0) + line.num_turns;
    if (typeof line.total_cost_usd === "number") totals.cost_usd = (totals.cost_usd ?? 0) + line.total_cost_usd;
    if (line.usage && typeof line.usage === "object") {
      totals.usage ??= Object.fromEntries(TOKEN_FIELDS.map((field) => [field, 0]));
      for (const field of TOKEN_FIELDS) {
        if (typeof line.usage[field] === "number") totals.usage[field] += line.usage[field];
      }
    }
    return [...changes, { type: "group-info", group }, { type: "totals" }];
  },
  agent_text: (trace, line) => entryAdd(trace, line, { kind: "text", seq: line.seq, text: String(line.text ?? "") }),
  // A blank line of plain output says nothing in a trace (the raw log keeps it).
  agent_output: (trace, line) => (String(line.text ?? "").trim()
    ? entryAdd(trace, line, { kind: "output", seq: line.seq, text: String(line.text) }) : []),
  api_retry: (trace, line) =>
    entryAdd(trace, line, {
      kind: "retry", seq: line.seq, attempt: line.attempt, maxRetries: line.max_retries,
      retryDelayMs: line.retry_delay_ms, errorStatus: line.error_status, error: line.error,
    }),
  tool_call(trace, line) {
    const input = typeof line.input === "string" ? line.input : JSON.stringify(line.input ?? null);
    const call = {
      kind: "call", seq: line.seq, toolUseId: line.tool_use_id, name: String(line.name ?? "tool"), input,
      inputChars: line.input_chars ?? null, summary: toolInputSummary(line.name, input), ts: line.ts,
      result: null, durationMs: null, entries: [],
    };
    const changes = entryAdd(trace, line, call);
    const group = changes.at(-1).group;
    if (call.toolUseId != null && !group.calls.has(call.toolUseId)) group.calls.set(call.toolUseId, call);
    return changes;
  },
  tool_result(trace, line) {
    const [group, changes] = groupFor(trace, line);
    const call = group.calls.get(line.tool_use_id);
    const content = String(line.content ?? "");
    const isError = line.is_error === true;
    if (!call || call.result) {
      return entryAdd(trace, line, { kind: "result", seq: line.seq, toolUseId: line.tool_use_id, content, isError });
    }
    call.result = { seq: line.seq, ts: line.ts, content, contentChars: line.content_chars ?? null, isError };
    const elapsed = Date.parse(line.ts) - Date.parse(call.ts);
    call.durationMs = Number.isFinite(elapsed) ? Math.max(0, elapsed) : null;
    return [...changes, { type: "result", call, group }];
  },
};

function newGroup(purpose) {
  return {
    purpose, label: PURPOSE_LABELS.get(purpose) ?? (purpose ? `${purpose} call` : "Agent call"), command: null,
    model: null, sessionId: null, outcome: null, ended: false, entries: [], calls: new Map(),
  };
}

/** End the group under way, if any: its calls without a result will get none. */
function endCurrent(trace) {
  const current = trace.groups.at(-1);
  if (!current || current.ended) return [];
  current.ended = true;
  return [{ type: "group-info", group: current }];
}

/**
 * The group a line belongs to: the current one, unless the line names another purpose (or there is
 * none yet, as when the page's lines start after the call's first line): then a new one.
 */
function groupFor(trace, line) {
  const current = trace.groups.at(-1);
  if (current && (line.purpose == null || line.purpose === current.purpose)) return [current, []];
  const changes = endCurrent(trace);
  const group = newGroup(line.purpose ?? null);
  trace.groups.push(group);
  return [group, [...changes, { type: "group", group }]];
}

function entryAdd(trace, line, entry) {
  const [group, changes] = groupFor(trace, line);
  const parent = group.calls.get(line.parent_tool_use_id) ?? group;
  parent.entries.push(entry);
  return [...changes, { type: "entry", entry, parent, group }];
}

/**
 * One line saying what a tool call does: Bash's command, the file a Read/Write/Edit touches, the
 * pattern of a Grep/Glob, …; else its input as compact JSON. Cut to about 120 characters.
 *
 * @param {string} name
 * @param {string} input  The logged input: JSON text, which a long input has cut short (" …[cut]").
 */
export function toolInputSummary(name, input) {
  let parsed;
  try {
    parsed = JSON.parse(input);
  } catch {
    return oneLine(input);  // cut short: the text as it is
  }
  const field = INPUT_FIELDS.get(name);
  const value = field && parsed && typeof parsed === "object" && Object.hasOwn(parsed, field) ? parsed[field] : undefined;
  return oneLine(typeof value === "string" ? value : JSON.stringify(parsed));
}

function oneLine(text) {
  // Only line breaks are folded: other spaces may matter (a Grep pattern's trailing one).
  const flat = String(text).replace(/[ \t]*[\r\n]+[ \t]*/g, " ");
  return flat.length > SUMMARY_CHARS ? `${flat.slice(0, SUMMARY_CHARS - 1)}…` : flat;
}

/** How long a call took, to read at a glance: `840 ms`, `4.2 s`, `3 min 5 s`. */
export function formatDuration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/**
 * The header's words for a set of totals, as graphs/reads/node_trace.py's TraceHeader renders an attempt row's.
 *
 * @param {Totals} totals
 * @returns {{turns: string, tokens: string, tokens_detail: string, cost: string, resume: string}}
 */
export function headerWords({ num_turns, cost_usd, session_id, usage }) {
  const counts = TOKEN_FIELDS.map((field) => usage?.[field] ?? 0);
  return {
    turns: num_turns == null ? "—" : grouped(num_turns),
    tokens: usage == null ? "—" : grouped(counts.reduce((sum, count) => sum + count, 0)),
    tokens_detail: usage == null ? ""
      : counts.map((count, index) => `${grouped(count)} ${TOKEN_LABELS[index]}`).join(" · "),
    cost: usdText(cost_usd),
    resume: session_id ? `claude --resume ${session_id}` : "",
  };
}

/** A count with thousands separators: `27,831`. */
export function grouped(number) {
  return String(number).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
