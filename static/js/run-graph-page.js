// Run graph page: the DAG (or "as it ran" timeline), live over /ws/runs/<id>/, with a side panel.
import { connectLog, connectRun } from "./live.js";
import { createRunGraph } from "./dag/run-graph.js";
import { spendSummary, spendTotal } from "./spend.js";
import { diffViewsShow } from "./diff-view.js";
import { statusChip } from "./status-chip.js";

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
  statusEl.replaceChildren(statusChip(status));
  // The run's controls (Start, Approve / Reject, Cancel) show only while they apply.
  for (const control of document.querySelectorAll("[data-show-when]")) {
    control.hidden = !control.dataset.showWhen.split(" ").includes(status);
  }
}

// Forking from the selected node: a copy of the page's fork form (with its CSRF token) in the panel.
const forkForm = document.getElementById("fork-form");

function forkControl(nodeId) {
  const form = forkForm.cloneNode(true);
  form.removeAttribute("id");
  form.hidden = false;
  form.elements.node_id.value = nodeId;
  form.dataset.confirm = `Fork the run from ${nodeId}? A new run reruns it and everything after it; this run is kept.`;
  const edit = form.querySelector("a[data-fork-edit]");
  if (edit) edit.search = `?node=${encodeURIComponent(nodeId)}`;
  return form;
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
  if (attempt.failure) item.append(" ", el("span", { class: "tag", "data-category": attempt.failure.category }, attempt.failure.category));
  if (attempt.reason) item.append(el("p", { class: "error small reason" }, attempt.reason));
  if (attempt.judgment_result) {
    item.append(section("Judgment", el("pre", { class: "output" }, JSON.stringify(attempt.judgment_result, null, 2))));
  }
  return item;
}

async function openPanel(nodeId) {
  const node = latestData?.nodes.find((n) => n.node_id === nodeId);
  panel.hidden = false;
  panelLog?.close();
  panelLog = null;
  if (!node) {
    panelTitle.textContent = nodeId;
    panelBody.replaceChildren(el("p", { class: "muted" }, "This run has no such node."));
    return;
  }
  panelTitle.textContent = node.label;
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
    statusChip(detail.status), " ",
    el("span", { class: "muted" }, `${detail.org_node || ""} · attempt ${detail.attempt} · ${detail.cause_text}`),
  );
  const attempts = el("ol", { class: "attempts" });
  for (const attempt of detail.attempts) attempts.append(attemptItem(attempt, detail.node_exec_id));
  const log = el("ol", { class: "log-lines" });
  const finished = new Set(latestData.statuses.finished).has(detail.status);
  const parts = [facts];
  if (forkForm && !detail.is_planning) parts.push(forkControl(detail.node_id));
  if (detail.failure) parts.push(failureBlock(detail.failure));
  parts.push(el("h3", {}, "Attempts"), attempts);
  parts.push(section("Output", el("pre", { class: "output" }, detail.output || (finished ? "(no output)" : "(no output yet)")), true));
  parts.push(section("Prompt", el("pre", { class: "output" }, detail.prompt || "(not built yet)")));
  const page = detail.is_planning ? `/runs/${detail.run_id}/planning/#call-${detail.node_exec_id}` : `/executions/${detail.node_exec_id}/`;
  parts.push(el("h3", {}, "Live log"), log,
    el("a", { href: page }, detail.is_planning ? "Open the planning inspector →" : "Open the node page →"));
  panelBody.replaceChildren(...parts);
  panelLog = connectLog(`/ws/node-executions/${detail.node_exec_id}/log/?after=0`, {
    onLine(line) {
      const text = line.text ?? line.message ?? line.status ?? "";
      log.append(el("li", {}, `${line.seq} ${(line.ts || "").slice(11, 23)} ${line.event} ${text}`));
      log.scrollTop = log.scrollHeight;
    },
  });
}

function closePanel() {
  panel.hidden = true;
  panelLog?.close();
  panelLog = null;
}

// The selected node and the view live in the URL (?node=…&view=timeline): a node can be linked, and
// Back steps through the nodes that were opened.
function urlWith(changes) {
  const url = new URL(window.location.href);
  for (const [key, value] of Object.entries(changes)) {
    if (value) url.searchParams.set(key, value);
    else url.searchParams.delete(key);
  }
  return url;
}

// The keyboard path: a node chosen (Enter on its box, or a click) takes the focus into the panel;
// closing the panel gives it back to the box it came from.
let chosenFrom = null;

function selectNode(nodeId) {
  if (new URL(window.location.href).searchParams.get("node") !== nodeId) {
    history.pushState(null, "", urlWith({ node: nodeId }));
  }
  chosenFrom = document.activeElement;
  openPanel(nodeId);
  panelTitle.focus({ preventScroll: !window.matchMedia("(max-width: 900px)").matches });
}

function unselectNode() {
  if (panel.hidden) return;
  history.pushState(null, "", urlWith({ node: null }));
  closePanel();
  if (chosenFrom?.isConnected) chosenFrom.focus();
  chosenFrom = null;
}

function followUrl() {
  const params = new URL(window.location.href).searchParams;
  graph.setView(params.get("view") === "timeline" ? "timeline" : "graph");
  const nodeId = params.get("node");
  if (nodeId) openPanel(nodeId);
  else closePanel();
}

document.getElementById("panel-close").addEventListener("click", unselectNode);
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && !panel.hidden) unselectNode();
});
window.addEventListener("popstate", followUrl);

// The graph module brings its own toolbar: graph / "as it ran", zoom and fit.
const graph = createRunGraph(container, {
  onSelect: selectNode,
  onView: (view) => history.replaceState(null, "", urlWith({ view: view === "timeline" ? view : null })),
});

fetchGraph().then((data) => graph.load(data)).then(() => {
  followUrl();
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
