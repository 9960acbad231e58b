// Node execution page: the trace and the raw log, built from the lines the server sent with the page,
// then kept current from the live log, resumed after the last of those lines.
import { connectLog, connectRun } from "./live.js";
import { logViewerMount } from "./log-viewer.js";
import { copyButtonBind, traceViewMount } from "./trace-view.js";
import { diffViewsShow } from "./diff-view.js";
import { reviewDiffsMount } from "./review-diff.js";
import { statusChip } from "./status-chip.js";
import { attemptFinished } from "./status-vocabulary.js";
import { afterPress, pressedWithin } from "./press.js";

diffViewsShow();
reviewDiffsMount();

const list = document.getElementById("log-lines");
const state = document.getElementById("log-state");
const statusSlot = document.getElementById("exec-status");
const heading = document.getElementById("exec-heading");
const stateWords = document.getElementById("log-state-words");

// The log's state in the server's words for it (#log-state-words); a state it has no words for (the
// moment between the log's end and its completion) leaves the last ones.
function stateShow(status) {
  const words = stateWords?.content.querySelector(`[data-state="${status}"]`);
  if (!words || !state) return;
  state.replaceChildren(...words.cloneNode(true).childNodes);
  state.dataset.state = status;
}

// The attempt's page follows its log and its run: when the engine writes `node_finished` (committed),
// the status chip changes at once; then, and whenever the run reports a change to this node (a new
// attempt, a status) or to the run's status, the parts the server renders (`data-live-part`: status,
// facts, attempts, judgment, output, change, review, and the review form, which stays while it offers the
// same, so nothing typed is lost) and the page's live regions (the navigation's inbox count,
// which a run coming to wait for approval moves) are fetched again and swapped in. The trace and the raw
// log stay, being live already. A refresh asked for while one is under way runs once after it, so the
// page ends on the latest facts.
function showStatus(line) {
  if (line.event !== "node_finished" || !line.committed) return;
  statusSlot?.querySelector(".status")?.replaceWith(statusChip(line.status));
  refreshParts();
}

let refreshing = null;
let refreshAgain = false;

function refreshParts() {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = partsFetch().finally(() => {
    refreshing = null;
    if (refreshAgain) {
      refreshAgain = false;
      refreshParts();
    }
  });
  return refreshing;
}

// The page's own address, as the server names it: after a refused review the browser is at the form's
// POST address, which answers no GET.
async function partsFetch() {
  const response = await fetch(heading?.dataset.liveUrl ?? window.location.href, { headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const part of fresh.querySelectorAll("[data-live-part]")) {
    const current = document.querySelector(`[data-live-part="${part.dataset.livePart}"]`);
    if (!current) continue;
    // A part pressed in keeps its element until the release's click has gone to it; then it is asked again.
    if (pressedWithin(current)) {
      afterPress(refreshParts);
      continue;
    }
    // A form a person may be typing in stays while it offers the same (its data-live-typed).
    if (current.dataset.liveTyped !== undefined && current.dataset.liveTyped === part.dataset.liveTyped) continue;
    // A part the reader unfolded stays unfolded.
    const open = new Set([...current.querySelectorAll("details[id], details[class]")].filter((d) => d.open).map(detailsKey));
    for (const details of part.querySelectorAll("details")) if (open.has(detailsKey(details))) details.open = true;
    current.replaceWith(document.adoptNode(part));
  }
  for (const region of fresh.querySelectorAll("[data-live-region][id]")) {
    const current = document.getElementById(region.id);
    if (current && pressedWithin(current)) afterPress(refreshParts);
    else current?.replaceWith(document.adoptNode(region));
  }
  diffViewsShow(document.getElementById("changes") ?? document);
  const status = document.querySelector("#exec-status .status")?.dataset.status;
  if (attemptFinished(status)) document.body.dataset.attemptFinished = "true";
}

function detailsKey(details) {
  return details.id || details.className;
}

// A finished run changes no more: its pages have no run socket to follow (the template leaves the URL out).
function followRun() {
  if (!heading?.dataset.runWsUrl) return;
  const nodeId = heading.dataset.nodeId;
  // The run's status as the page was rendered, then as the last snapshot said it: a snapshot saying
  // another one (a change no event brought here, made before the socket was open) may have moved what the
  // page shows of the run.
  let runStatus = heading.dataset.runStatusShown ?? null;
  connectRun(heading.dataset.runWsUrl, {
    onSnapshot(snapshot) {
      const node = (snapshot.nodes ?? []).find((n) => n.node_id === nodeId);
      const shown = document.querySelector("#exec-status .status")?.dataset.status;
      const latestShown = document.querySelector("[data-live-part='facts']")?.dataset.latestAttempt;
      const runMoved = runStatus !== null && snapshot.status !== runStatus;
      runStatus = snapshot.status;
      if (runMoved || (node && (String(node.attempt) !== latestShown || (node.node_exec_id === heading.dataset.execId && node.status !== shown)))) {
        refreshParts();
      }
    },
    onEvent(event) {
      if (event.event === "nodes" && event.nodes.some((n) => n.node_id === nodeId)) refreshParts();
      else if (event.event === "run_status") refreshParts();
    },
  });
}
followRun();

const resumeCopy = document.getElementById("resume-copy");
if (resumeCopy) copyButtonBind(resumeCopy, document.getElementById("resume-command"));

if (list) {
  const trace = traceViewMount({
    groupsRoot: document.getElementById("trace-groups"),
    header: document.getElementById("trace-header"),
    empty: document.getElementById("trace-empty"),
  });
  for (const line of JSON.parse(document.getElementById("trace-lines").textContent)) trace.add(line);
  const viewer = logViewerMount({
    list,
    follow: document.getElementById("log-follow"),
    search: document.getElementById("log-search"),
    kinds: document.getElementById("log-kinds"),
    count: document.getElementById("log-count"),
    lines: JSON.parse(document.getElementById("trace-lines").textContent),
  });
  const complete = () => {
    stateShow("complete");
    trace.finish();
  };
  const after = Number(list.dataset.lastSeq || 0);
  if (list.dataset.follow === "true") {
    connectLog(`${list.dataset.wsUrl}?after=${after}`, {
      after,
      onLine(line) {
        viewer.add(line);
        trace.add(line);
        showStatus(line);
      },
      onEnd: complete,
      onStatus: stateShow,
    });
  } else {
    complete();
  }
}
