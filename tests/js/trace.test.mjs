// Unit tests of static/js/trace.js, the rule that folds log lines into the node page's trace:
// `node --test tests/js/`. The header's words are held to the cases graphs/reads/node_trace.py is held to.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  callState, formatDuration, headerWords, toolInputSummary, traceAdd, traceCreate, traceFinish,
} from "../../static/js/trace.js";

const SESSION = "5b0f6c7e-2d7a-4a51-9a63-0c1f4f2f8e11";
const START = Date.parse("2025-06-01T10:00:00.000+00:00");

/** Log lines as the engine writes them: numbered from 1, `at` milliseconds after START. */
function logOf(...specs) {
  return specs.map(([at, event, fields = {}], index) => ({
    seq: index + 1, ts: new Date(START + at).toISOString().replace("Z", "+00:00"), event, ...fields,
  }));
}

function build(lines) {
  const trace = traceCreate();
  for (const line of lines) traceAdd(trace, line);
  return trace;
}

/** A trace's entries as plain arrays, to compare whole. */
function outline(entries) {
  return entries.map((entry) => {
    if (entry.kind === "call") {
      const result = entry.result ? (entry.result.isError ? "error" : "ok") : "none";
      return ["call", entry.name, entry.summary, result, ...(entry.entries.length ? [outline(entry.entries)] : [])];
    }
    if (entry.kind === "retry") return ["retry", entry.attempt, entry.retryDelayMs, entry.errorStatus, entry.error];
    if (entry.kind === "result") return ["result", entry.toolUseId, entry.content];
    return [entry.kind, entry.text];
  });
}

const call = (id, name, input, extra = {}) => ({ purpose: "node", tool_use_id: id, name, input: JSON.stringify(input),
  parent_tool_use_id: null, ...extra });
const result = (id, content, extra = {}) => ({ purpose: "node", tool_use_id: id, is_error: false, content,
  content_chars: content.length, parent_tool_use_id: null, ...extra });
const inTask = { parent_tool_use_id: "toolu_02Task" };

// The lines of tests/fixtures/claude/streaming.json as a node's call logs them (see graphs/agents/claude.py).
const STREAM = logOf(
  [0, "node_start"],
  [5, "agent_call", { purpose: "node", org_node: "coder" }],
  [900, "agent_init", { purpose: "node", session_id: SESSION, model: "claude-sonnet-4-5", tool_count: 11 }],
  [1000, "agent_text", { purpose: "node", text: "I'll read the README first.", parent_tool_use_id: null }],
  [1100, "tool_call", call("toolu_01Read", "Read", { file_path: "/srv/project/README.md" })],
  [1142, "tool_result", result("toolu_01Read", "# Reports")],
  [2000, "tool_call", call("toolu_02Task", "Task", { description: "Survey the modules", prompt: "List them.",
    subagent_type: "Explore" })],
  [2010, "agent_event", { purpose: "node", event_type: "user", block_type: "text", ...inTask, raw: "{}" }],
  [2500, "tool_call", call("toolu_03Grep", "Grep", { pattern: "^def ", path: "src" }, inTask)],
  [2600, "tool_result", result("toolu_03Grep", "src/reports.py:7", inTask)],
  [2700, "agent_text", { purpose: "node", text: "Two modules.", ...inTask }],
  [6200, "tool_result", result("toolu_02Task", "src/reports.py builds the reports.")],
  [6300, "api_retry", { purpose: "node", attempt: 1, max_retries: 10, retry_delay_ms: 1200, error_status: 529,
    error: "overloaded" }],
  [8000, "agent_text", { purpose: "node", text: "The plan follows.", parent_tool_use_id: null }],
  [8100, "agent_result", { purpose: "node", subtype: "success", is_error: false, num_turns: 4, duration_ms: 8000,
    total_cost_usd: 0.2113, session_id: SESSION, model: "claude-sonnet-4-5",
    usage: { input_tokens: 12, output_tokens: 1874, cache_creation_input_tokens: 5812, cache_read_input_tokens: 20133 } }],
  [8200, "node_finished", { status: "succeeded" }],
);

test("a subagent's tool calls and text sit inside the Task call that started it, in log order", () => {
  const trace = build(STREAM);

  assert.equal(trace.groups.length, 1);
  assert.deepEqual(outline(trace.groups[0].entries), [
    ["text", "I'll read the README first."],
    ["call", "Read", "/srv/project/README.md", "ok"],
    ["call", "Task", "Survey the modules", "ok", [
      ["call", "Grep", "^def ", "ok"],
      ["text", "Two modules."],
    ]],
    ["retry", 1, 1200, 529, "overloaded"],
    ["text", "The plan follows."],
  ]);
});

test("a call's duration runs from its line to its result's", () => {
  const [group] = build(STREAM).groups;
  const [, read, task] = group.entries;

  assert.equal(read.durationMs, 42);
  assert.equal(task.durationMs, 4200);
  assert.equal(task.entries[0].durationMs, 100);
  assert.deepEqual([420, 4200, 59_940, 185_000].map(formatDuration), ["420 ms", "4.2 s", "59.9 s", "3 min 5 s"]);
});

test("a call without a result is running until its call ends, then it has none", () => {
  const lines = logOf(
    [0, "agent_call", { purpose: "node" }],
    [10, "tool_call", call("toolu_06Pytest", "Bash", { command: "pytest -q" })],
  );
  const trace = build(lines);
  const [group] = trace.groups;
  const [pytest] = group.entries;
  assert.equal(callState(trace, group, pytest), "running");
  assert.equal(pytest.durationMs, null);

  traceAdd(trace, { seq: 3, ts: lines[1].ts, event: "agent_result", purpose: "node", subtype: "error_during_execution",
    is_error: true });
  assert.equal(callState(trace, group, pytest), "no-result");

  const unfinished = build(lines);
  traceFinish(unfinished);
  assert.equal(callState(unfinished, unfinished.groups[0], unfinished.groups[0].entries[0]), "no-result");
});

test("a result fills in its call, live: the call is shown first, its result changes it later", () => {
  const trace = traceCreate();
  const [opened, called, answered] = logOf(
    [0, "agent_call", { purpose: "node" }],
    [10, "tool_call", call("toolu_06Pytest", "Bash", { command: "pytest -q" })],
    [420, "tool_result", result("toolu_06Pytest", "3 passed")],
  );
  traceAdd(trace, opened);

  const [shown] = traceAdd(trace, called);
  assert.equal(shown.type, "entry");
  assert.equal(shown.entry.name, "Bash");
  assert.equal(shown.parent, trace.groups[0]);

  const [filled] = traceAdd(trace, answered);
  assert.equal(filled.type, "result");
  assert.equal(filled.call, shown.entry);
  assert.equal(filled.call.result.content, "3 passed");
  assert.equal(callState(trace, filled.group, filled.call), "ok");
  assert.equal(filled.call.durationMs, 410);
});

test("an error result marks its call as failed and keeps what the tool said", () => {
  const trace = build(logOf(
    [0, "agent_call", { purpose: "node" }],
    [10, "tool_call", call("toolu_07Cat", "Bash", { command: "cat missing.txt" })],
    [30, "tool_result", result("toolu_07Cat", "cat: missing.txt: No such file or directory", { is_error: true })],
  ));
  const [group] = trace.groups;
  const [cat] = group.entries;

  assert.equal(callState(trace, group, cat), "error");
  assert.deepEqual([cat.result.isError, cat.result.content], [true, "cat: missing.txt: No such file or directory"]);
});

test("a result whose call is not in the trace is kept in its place", () => {
  const trace = build(logOf(
    [0, "agent_call", { purpose: "node" }],
    [10, "tool_result", result("toolu_gone", "orphaned output")],
  ));

  assert.deepEqual(outline(trace.groups[0].entries), [["result", "toolu_gone", "orphaned output"]]);
});

test("an API retry is an entry of its own with its attempt, delay, status and error", () => {
  const [group] = build(STREAM).groups;
  const retry = group.entries.find((entry) => entry.kind === "retry");

  assert.deepEqual(
    [retry.attempt, retry.maxRetries, retry.retryDelayMs, retry.errorStatus, retry.error],
    [1, 10, 1200, 529, "overloaded"],
  );
});

test("a line already folded is dropped, so lines rendered with the page and live ones may overlap", () => {
  const trace = build(STREAM);
  const before = JSON.stringify(outline(trace.groups[0].entries));

  for (const line of STREAM.slice(-6)) assert.deepEqual(traceAdd(trace, line), []);

  assert.equal(JSON.stringify(outline(trace.groups[0].entries)), before);
  assert.equal(trace.totals.num_turns, 4);
});

test("each agent call of the attempt is a group of its own, labeled by its purpose, and the totals add up", () => {
  const judgeCall = (extra) => ({ ...call("toolu_01Read", "Read", { file_path: "/srv/project/prd.md" }), ...extra });
  const lines = logOf(
    ...STREAM.map((line) => [Date.parse(line.ts) - START, line.event, line]),
    [9000, "agent_call", { purpose: "judge", org_node: "coder" }],
    [9100, "agent_init", { purpose: "judge", session_id: "judge-session", model: "claude-haiku-4-5" }],
    [9200, "tool_call", judgeCall({ purpose: "judge" })],
    [9300, "tool_result", result("toolu_01Read", "# PRD", { purpose: "judge" })],
    [9400, "agent_result", { purpose: "judge", subtype: "success", is_error: false, num_turns: 2,
      total_cost_usd: 0.0105, session_id: "judge-session",
      usage: { input_tokens: 3, output_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 900 } }],
  ).map((line, index) => ({ ...line, seq: index + 1 }));
  const trace = build(lines);

  assert.deepEqual(trace.groups.map((group) => [group.purpose, group.label, group.sessionId]),
    [["node", "Node call", SESSION], ["judge", "Judge call", "judge-session"]]);
  // The judge's call reuses a tool id of the node's session: it fills in its own group's call only.
  assert.deepEqual(outline(trace.groups[1].entries), [["call", "Read", "/srv/project/prd.md", "ok"]]);
  assert.equal(trace.groups[0].entries[1].result.content, "# Reports");
  assert.equal(trace.totals.num_turns, 6);
  assert.equal(trace.totals.cost_usd.toFixed(4), "0.2218");
  assert.equal(trace.totals.usage.cache_read_input_tokens, 21033);
  assert.deepEqual([trace.totals.model, trace.totals.session_id], ["claude-haiku-4-5", "judge-session"]);
});

test("a call's lines open a group of their purpose even when its agent_call line is not among them", () => {
  const trace = build(logOf(
    [0, "node_start"],
    [10, "tool_call", call("toolu_01Read", "Read", { file_path: "a.py" })],
    [20, "agent_output", { purpose: "node", text: "warning: slow disk" }],
    [30, "agent_output", { purpose: "node", text: "  " }],
  ));

  assert.deepEqual(trace.groups.map((group) => group.label), ["Node call"]);
  assert.deepEqual(outline(trace.groups[0].entries), [["call", "Read", "a.py", "none"], ["output", "warning: slow disk"]]);
});

test("the header's totals are unknown until a call reports its result", () => {
  const trace = build(STREAM.slice(0, 5));

  assert.deepEqual([trace.totals.model, trace.totals.session_id], ["claude-sonnet-4-5", SESSION]);
  assert.deepEqual(headerWords(trace.totals), {
    turns: "—", tokens: "—", tokens_detail: "", cost: "—",
    resume: `claude --resume ${SESSION}`,
  });
});

test("a tool call reads as the one input field that says what it does, else as compact JSON", () => {
  const long = { query: "x".repeat(200) };
  assert.equal(toolInputSummary("Bash", JSON.stringify({ command: "pytest -q\n  --maxfail=1", description: "Run" })),
    "pytest -q --maxfail=1");
  assert.equal(toolInputSummary("Edit", JSON.stringify({ file_path: "src/a.py", old_string: "a", new_string: "b" })),
    "src/a.py");
  assert.equal(toolInputSummary("Glob", JSON.stringify({ pattern: "**/*.py" })), "**/*.py");
  assert.equal(toolInputSummary("mcp__db__query", JSON.stringify({ sql: "select 1", limit: 5 })),
    '{"sql":"select 1","limit":5}');
  assert.equal(toolInputSummary("Lookup", JSON.stringify(long)), `${JSON.stringify(long).slice(0, 119)}…`);
  assert.equal(toolInputSummary("Bash", JSON.stringify({ description: "no command" })), '{"description":"no command"}');
  // An input the runner cut short is not JSON any more: its text as it is.
  assert.equal(toolInputSummary("Write", '{"file_path": "big.txt", "content": "aaaa …[cut]'),
    '{"file_path": "big.txt", "content": "aaaa …[cut]');
});

test("names an agent or a newer engine might use are data, never the rule's own properties", () => {
  const trace = build(logOf(
    [0, "agent_call", { purpose: "constructor" }],
    [10, "constructor", { purpose: "constructor" }],
    [20, "tool_call", { ...call("toolu_1", "__proto__", { command: "ls" }), purpose: "constructor" }],
  ));

  assert.deepEqual(trace.groups.map((group) => group.label), ["constructor call"]);
  assert.deepEqual(outline(trace.groups[0].entries), [["call", "__proto__", '{"command":"ls"}', "none"]]);
});

const headerCases = JSON.parse(readFileSync(new URL("../fixtures/trace/headers.json", import.meta.url)));

for (const { name, totals, header } of headerCases) {
  test(`the header reads the same as the server's for ${name}`, () => {
    assert.deepEqual(headerWords(totals), header);
  });
}

test("a command's lines are a group of their own: its argv, its output by stream, how it exited", () => {
  const trace = build(logOf(
    [0, "node_start"],
    [5, "command_start", { purpose: "node", argv: ["python3", "-m", "pytest", "-q"], cwd: "/w", timeout_seconds: 60 }],
    [40, "command_output", { purpose: "node", stream: "stdout", text: "3 passed" }],
    [41, "command_output", { purpose: "node", stream: "stderr", text: "a warning" }],
    [42, "command_output", { purpose: "node", stream: "stdout", text: "   " }],
    [50, "command_exit", { purpose: "node", exit_code: 0, duration_ms: 45, timed_out: false }],
    [60, "command_start", { purpose: "judge", argv: ["make", "lint"] }],
    [70, "command_exit", { purpose: "judge", exit_code: 2, duration_ms: 10, timed_out: true }],
  ));

  assert.deepEqual(trace.groups.map((group) => [group.label, group.command, group.ended]), [
    ["Command", "python3 -m pytest -q", true], ["Judge command", "make lint", true],
  ]);
  assert.deepEqual(trace.groups[0].entries.map((entry) => [entry.kind, entry.stream, entry.text]), [
    ["output", "stdout", "3 passed"], ["output", "stderr", "a warning"],
  ]);
  assert.equal(trace.groups[1].outcome.timed_out, true);
});
