// Run graph page: the DAG (or "as it ran" timeline), live over /ws/runs/<id>/, with a side panel.
import { connectLog, connectRun } from "./live.js";
import { createRunGraph } from "./dag/run-graph.js";
import { spendSummary, spendTotal } from "./spend.js";
import { diffViewsShow } from "./diff-view.js";

diffViewsShow();

const container = document.getElementById("dag");
const panel = document.getElementById("panel");
const panelTitle = document.getElementById("panel-title");
const panelBody = document.getElementById("panel-body");
const statusEl = document.getElementById("run-status");
const progressEl = document.getElementById("run-progress");
const spendEl = document.getElementById("run-spend");
const stoppedEl = document.getElementById("run-stopped");
const spend = spendTotal();
let panelLog = null;
let latestData = null;

/** A failed attempt's classification, as text only: its evidence quotes what the attempt printed. */
function failureBlock(failure) {
  const block = el("div", { class: "failure", "data-category": failure.category });
  block.append(el("p", {}, `${failure.category} · confidence ${failure.confidence.toFixed(2)}`));
  const evidence = el("ul", { class: "evidence" });
  for (const line of failure.evidence) evidence.append(el("li", {}, line));
  block.append(evidence);
  if (failure.note) block.append(el("p", { class: "muted small" }, failure.note));
  return block;
}

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text) node.textContent = text;
  return node;
}

function setRunStatus(status) {
  statusEl.replaceChildren(el("span", { class: `status status-${status}`, "data-status": status }, status));
}

// The run's cost and tokens: every attempt graph.json lists, then each attempt an event reports ended.
function addSpend(attempts) {
  for (const attempt of attempts) spend.set(attempt);
  spendEl.textContent = spendSummary(spend.total);
}

function showStopped(run) {
  if (run.error_code !== "budget_exceeded") return;
  stoppedEl.textContent = `Budget exceeded — ${run.error}`;
  stoppedEl.hidden = false;
}

async function fetchGraph() {
  const response = await fetch(container.dataset.graphUrl, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`graph.json answered ${response.status}`);
  latestData = await response.json();
  addSpend(latestData.attempts);
  showStopped(latestData.run);
  return latestData;
}

function section(title, content, open = false) {
  const details = el("details");
  if (open) details.open = true;
  details.append(el("summary", {}, title), content);
  return details;
}

async function openPanel(nodeId) {
  const node = latestData?.nodes.find((n) => n.node_id === nodeId);
  if (!node) return;
  panel.hidden = false;
  panelTitle.textContent = node.label;
  panelLog?.close();
  panelLog = null;
  if (!node.latest_exec_id) {
    panelBody.replaceChildren(el("p", { class: "muted" }, "This node has not started yet."));
    return;
  }
  const response = await fetch(`/executions/${node.latest_exec_id}/detail.json`, { credentials: "same-origin" });
  if (!response.ok) {
    panelBody.replaceChildren(el("p", { class: "error" }, "Could not load this node."));
    return;
  }
  const detail = await response.json();
  const facts = el("p");
  facts.append(
    el("span", { class: `status status-${detail.status}` }, detail.status), " ",
    el("span", { class: "muted" }, `${detail.org_node || ""} · attempt ${detail.attempt} · ${detail.cause}`),
  );
  const attempts = el("ol", { class: "attempts" });
  for (const attempt of detail.attempts) {
    const item = el("li");
    item.append(el("a", { href: `/executions/${attempt.node_exec_id}/` }, `attempt ${attempt.attempt}`),
      " ", el("span", { class: `status status-${attempt.status}` }, attempt.status),
      " ", el("span", { class: "muted" }, attempt.cause + (attempt.cause_node_id ? ` from ${attempt.cause_node_id}` : "")));
    attempts.append(item);
  }
  const log = el("ol", { class: "log-lines" });
  const parts = [facts];
  if (detail.error) parts.push(el("p", { class: "error" }, detail.error));
  if (detail.failure) parts.push(failureBlock(detail.failure));
  parts.push(el("h3", {}, "Attempts"), attempts);
  if (detail.judgment) parts.push(section("Judgment", el("pre", { class: "output" }, JSON.stringify(detail.judgment, null, 2)), true));
  parts.push(section("Output", el("pre", { class: "output" }, detail.output || "(no output yet)"), true));
  parts.push(section("Prompt", el("pre", { class: "output" }, detail.prompt || "(not built yet)")));
  parts.push(el("h3", {}, "Live log"), log, el("a", { href: `/executions/${detail.node_exec_id}/` }, "Open the node page →"));
  panelBody.replaceChildren(...parts);
  panelLog = connectLog(`/ws/node-executions/${detail.node_exec_id}/log/?after=0`, {
    onLine(line) {
      const text = line.text ?? line.message ?? line.status ?? "";
      log.append(el("li", {}, `${line.seq} ${line.event} ${text}`));
      log.scrollTop = log.scrollHeight;
    },
  });
}

document.getElementById("panel-close").addEventListener("click", () => {
  panel.hidden = true;
  panelLog?.close();
  panelLog = null;
});

// The graph module brings its own toolbar: graph / "as it ran", zoom and fit.
const graph = createRunGraph(container, { onSelect: openPanel });

fetchGraph().then((data) => graph.load(data)).then(() => {
  let snapshots = 0;
  connectRun(container.dataset.wsUrl, {
    // A snapshot comes on every (re)connect, and whenever the run changed without an event reaching
    // this page (another process ran it, or events were lost): redraw from it and from graph.json.
    async onSnapshot(snapshot) {
      setRunStatus(snapshot.run?.status ?? snapshot.status);
      if (snapshot.progress) progressEl.textContent = snapshot.progress.summary;
      snapshots += 1;
      if (snapshots > 1) await graph.append(await fetchGraph());
      graph.updateNodes(snapshot.nodes ?? []);
    },
    async onEvent(event) {
      if (event.event === "nodes") {
        graph.updateNodes(event.nodes);
        addSpend(event.nodes);
        if (event.nodes.some((n) => n.cause === "loop_back" || n.cause === "dynamic_loop_back")) {
          await graph.append(await fetchGraph());
        }
      } else if (event.event === "nodes_appended") {
        await graph.append(await fetchGraph());
      } else if (event.event === "run_status") {
        setRunStatus(event.status);
        showStopped(event);
      } else if (event.event === "run_stopping") {
        showStopped(event);
      } else if (event.event === "progress") {
        progressEl.textContent = event.summary;
      }
    },
  });
}).catch((error) => {
  container.textContent = `The graph could not be loaded: ${error.message}`;
});
