// The run graph's side panel: one node's latest attempt — status, judgment, failure, every attempt,
// output, prompt and live log — kept true while the run moves.
//
// The panel never trusts what it drew: whenever the run reports a change to its node (a new attempt,
// another status), the run's own status changes, or the node's log says the attempt finished, it
// fetches the attempt's facts again (/executions/<id>/detail.json) and redraws. A fetch overtaken by a
// later one is dropped, so the panel ends on the latest facts; sections the reader unfolded stay open.
import { connectLog } from "./live.js";
import { describeLine } from "./log-line.js";
import { statusChip } from "./status-chip.js";
import { el, failureBlock, judgmentBlock, technicalDetails } from "./judgment-view.js";

function section(title, content, open = false) {
  const details = el("details", { "data-section": title });
  if (open) details.open = true;
  details.append(el("summary", {}, title), content);
  return details;
}

// One attempt of the node: its status, what caused it, and for a failed one why, with its judgment.
function attemptItem(attempt, current) {
  const item = el("li", { "data-attempt": String(attempt.attempt) });
  if (attempt.node_exec_id === current) item.classList.add("current");
  item.append(el("a", { href: `/executions/${attempt.node_exec_id}/` }, `attempt ${attempt.attempt}`),
    " ", statusChip(attempt.status),
    " ", el("span", { class: "muted" }, attempt.cause_text));
  if (attempt.node_exec_id !== current) {
    item.append(" ", el("a", { class: "small", href: `/executions/${attempt.node_exec_id}/compare/${current}/` }, "compare with latest"));
  }
  if (attempt.failure_reading) {
    item.append(" ", el("span", { class: "tag", "data-category": attempt.failure_reading.category }, attempt.failure_reading.words));
  }
  if (attempt.reason) item.append(el("p", { class: "error small reason" }, attempt.reason));
  if (attempt.tool_failures_reading && attempt.node_exec_id !== current) {
    item.append(el("p", { class: "small", "data-tool-failures": String(attempt.tool_failures_reading.count) }, attempt.tool_failures_reading.words));
  }
  if (attempt.judgment_reading && attempt.node_exec_id !== current) {
    item.append(section(`Judgment: ${attempt.judgment_reading.verdict}`, judgmentBlock(attempt.judgment_reading, attempt.judgment_result)));
  }
  return item;
}

// Tool calls the agent made that failed: a call can answer, and be judged, while its tools failed.
function toolFailuresBlock(reading) {
  const block = el("p", { class: "notice", "data-tool-failures": String(reading.count) }, `${reading.words}: `);
  block.append(el("q", {}, reading.first));
  return block;
}

/**
 * Mount the panel on its elements. `latestOf(nodeId)` answers the node's latest attempt as the page
 * knows it ({label, node_exec_id, status}, or null for no such node); `runStatus()` the run's status;
 * `attemptFinished(status)` and `runFinished(status)` whether a status is final; `forkControl(nodeId)`
 * a fork form, or null.
 */
export function nodePanelMount({ panel, title, body, latestOf, runStatus, attemptFinished, runFinished, forkControl }) {
  let nodeId = null;
  let shown = null; // {execId, status} of the attempt drawn
  let generation = 0;
  let log = null; // {execId, connection, list}

  function logClose() {
    log?.connection.close();
    log = null;
  }

  function logFor(execId) {
    if (log?.execId === execId) return log.list;
    logClose();
    const list = el("ol", { class: "log-lines" });
    const connection = connectLog(`/ws/node-executions/${execId}/log/?after=0`, {
      onLine(line) {
        list.append(el("li", {}, `${line.seq} ${(line.ts || "").slice(11, 23)} ${line.event} ${describeLine(line)}`));
        list.scrollTop = list.scrollHeight;
        if (line.event === "node_finished" && line.committed) refresh();
      },
    });
    log = { execId, connection, list };
    return list;
  }

  function openSections() {
    return new Set([...body.querySelectorAll("details[data-section]")].filter((d) => d.open).map((d) => d.dataset.section));
  }

  function draw(parts, stateName) {
    const open = openSections();
    body.replaceChildren(...parts);
    for (const details of body.querySelectorAll("details[data-section]")) {
      if (open.has(details.dataset.section)) details.open = true;
    }
    body.dataset.state = stateName;
  }

  async function refresh() {
    if (nodeId === null) return;
    const mine = ++generation;
    const node = latestOf(nodeId);
    if (!node) {
      title.textContent = nodeId;
      draw([el("p", { class: "muted" }, "This run has no such node.")], "missing");
      return;
    }
    title.textContent = node.label;
    if (!node.node_exec_id) {
      logClose();
      shown = null;
      const words = runFinished(runStatus()) ? "This node did not run: the run ended before it." : "This node has not started yet.";
      draw([el("p", { class: "muted" }, words)], "not-started");
      return;
    }
    let detail;
    try {
      const response = await fetch(`/executions/${node.node_exec_id}/detail.json`, { credentials: "same-origin" });
      if (!response.ok) throw new Error(String(response.status));
      detail = await response.json();
    } catch {
      if (mine === generation) draw([el("p", { class: "error" }, "Could not load this node.")], "error");
      return;
    }
    if (mine !== generation || nodeId !== detail.node_id) return;
    shown = { execId: detail.node_exec_id, status: detail.status };
    render(detail);
  }

  function render(detail) {
    const isFinished = attemptFinished(detail.status);
    const facts = el("p");
    facts.append(statusChip(detail.status), " ",
      el("span", { class: "muted" }, `${detail.org_node || ""} · attempt ${detail.attempt} · ${detail.cause_text}`));
    const parts = [facts];
    const fork = detail.is_planning ? null : forkControl(detail.node_id);
    if (fork) parts.push(fork);
    if (detail.failure_reading) parts.push(failureBlock(detail.failure_reading));
    if (detail.tool_failures_reading) parts.push(toolFailuresBlock(detail.tool_failures_reading));
    if (detail.judgment_reading) {
      parts.push(el("h3", {}, "Judgment"), judgmentBlock(detail.judgment_reading, detail.judgment_result));
    }
    const attempts = el("ol", { class: "attempts" });
    for (const attempt of detail.attempts) attempts.append(attemptItem(attempt, detail.node_exec_id));
    parts.push(el("h3", {}, "Attempts"), attempts);
    const output = detail.output || (isFinished ? "(no output)" : "(no output yet)");
    parts.push(section("Output", el("pre", { class: "output", "data-field": "output" }, output), true));
    parts.push(section("Prompt", el("pre", { class: "output" }, detail.prompt || "(not built yet)")));
    const technical = [["attempt id", detail.node_exec_id], ["worker", detail.worker || "—"]];
    if (detail.failure_reading?.decided_by) technical.push(["classified by", detail.failure_reading.decided_by]);
    parts.push(technicalDetails(technical));
    const page = detail.is_planning ? `/runs/${detail.run_id}/planning/#call-${detail.node_exec_id}` : `/executions/${detail.node_exec_id}/`;
    parts.push(el("h3", {}, isFinished ? "Log" : "Live log"), logFor(detail.node_exec_id),
      el("a", { href: page }, detail.is_planning ? "Open the planning inspector →" : "Open the node page →"));
    draw(parts, detail.status);
  }

  return {
    open(id) {
      panel.hidden = false;
      if (id !== nodeId) {
        logClose();
        shown = null;
        body.replaceChildren();
      }
      nodeId = id;
      return refresh();
    },
    close() {
      panel.hidden = true;
      nodeId = null;
      shown = null;
      generation += 1;
      logClose();
    },
    /** The run reported these attempts' states: redraw when one is the panel's node and differs from what it shows. */
    nodesChanged(states) {
      if (nodeId === null) return;
      const mine = states.filter((state) => state.node_id === nodeId);
      if (mine.some((state) => !shown || state.node_exec_id !== shown.execId || state.status !== shown.status)) refresh();
    },
    /** The run's status changed (or a fresh snapshot came): what the panel shows may be stale. */
    runChanged() {
      if (nodeId !== null) refresh();
    },
  };
}
