// Node execution page: the trace and the raw log, built from the lines the server sent with the page,
// then kept current from the live log, resumed after the last of those lines.
import { connectLog } from "./live.js";
import { logViewerMount } from "./log-viewer.js";
import { copyButtonBind, traceViewMount } from "./trace-view.js";
import { diffViewsShow } from "./diff-view.js";
import { statusChip } from "./status-chip.js";

diffViewsShow();

const list = document.getElementById("log-lines");
const state = document.getElementById("log-state");
const statusSlot = document.getElementById("exec-status");

// The attempt's page follows its log: when the engine writes `node_finished` (committed), the status
// chip changes at once and the parts the server renders from the finished attempt (`data-live-part`:
// facts, timings, judgment, output, change) are fetched again and swapped in; the trace and the raw
// log stay, being live already.
function showStatus(line) {
  if (line.event !== "node_finished" || !line.committed || !statusSlot) return;
  statusSlot.replaceChildren(statusChip(line.status));
  refreshParts();
}

async function refreshParts() {
  const response = await fetch(window.location.href, { headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const part of fresh.querySelectorAll("[data-live-part]")) {
    document.querySelector(`[data-live-part="${part.dataset.livePart}"]`)?.replaceWith(document.adoptNode(part));
  }
  diffViewsShow(document.getElementById("changes") ?? document);
  document.body.dataset.attemptFinished = "true";
}

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
  });
  const complete = () => {
    state.textContent = "log complete";
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
      onStatus(status) { state.textContent = status; },
    });
  } else {
    complete();
  }
}
