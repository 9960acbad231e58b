// Task detail: every fact on the page follows the task's runs over /ws/runs/<id>/, without a reload.
// A node's status chip is recoloured in place and the progress line takes the server's summary at once;
// every run event also fetches the page again and swaps in its live regions (live-regions.js, at most
// once a second): the task's status, spend, buttons and Outcome, and each run with its artifacts.
// A region holding a pending action (an open confirm dialog, a half-typed budget or comment) waits.
// Once a run's status moves, the messages of the request that made the page (say, "the pipeline has
// started") are stale and go; a run that appears (Run again, a fork) is followed too. A run made elsewhere
// (another tab, the API) has no socket here yet: the navigation's inbox socket tells of it, as of any run
// of your projects that starts, moves or ends (`workgraph:activity`, nav-inbox.js, from the fingerprint
// in #runs' data-activity), and the page is fetched again then.
import { connectRun } from "./live.js";
import { liveRegions, regionBusy } from "./live-regions.js";
import { statusChipSet } from "./status-chip.js";

const runsEl = document.getElementById("runs");
const followed = new Set();
let statusMoved = false;

const regions = liveRegions({
  onApplied(page) {
    if (statusMoved) {
      statusMoved = false;
      document.querySelectorAll("main > .messages").forEach((messages) => messages.remove());
    }
    return runsSwap(page.getElementById("runs"));
  },
});

// Runs are swapped one by one as regions; only when the set of runs changed is the whole list redrawn.
function runsSwap(fresh) {
  if (!fresh || !runsEl) return false;
  const ids = (list) => [...list.querySelectorAll(":scope > [data-run-id]")].map((run) => run.dataset.runId).join(" ");
  if (ids(fresh) !== ids(runsEl)) {
    if (regionBusy(runsEl)) {
      runsEl.dataset.liveStale = "true";
      return true;
    }
    runsEl.replaceChildren(...[...fresh.childNodes].map((child) => document.importNode(child, true)));
    delete runsEl.dataset.liveStale;
  }
  runsEl.dataset.liveRuns = fresh.dataset.liveRuns || "";
  runsEl.dataset.activity = fresh.dataset.activity || "";
  followAll();
  return false;
}

function followAll() {
  for (const runId of (runsEl?.dataset.liveRuns || "").split(" ").filter(Boolean)) follow(runId);
}

function follow(runId) {
  if (followed.has(runId)) return;
  followed.add(runId);
  let snapshots = 0;
  connectRun(`/ws/runs/${runId}/`, {
    // The page was rendered with the run as it was; a later snapshot (a reconnect, or a change no
    // event brought) means it may be out of date — and so does a first one whose run status is not
    // the rendered one: the run moved on between the render and the subscription.
    onSnapshot(snapshot) {
      snapshots += 1;
      const rendered = document.getElementById(`run-${runId}`)?.dataset.runStatus;
      if (snapshot.status !== rendered) statusMoved = true;
      if (snapshots > 1 || snapshot.status !== rendered) regions.refresh();
    },
    onEvent(event) {
      // Log lines are for the node pages; the page changes only with statuses, progress and appends.
      if (event.event === "log") return;
      const section = document.getElementById(`run-${runId}`);
      if (event.event === "nodes") {
        for (const node of event.nodes) {
          const chip = section?.querySelector(`[data-node-id="${CSS.escape(node.node_id)}"] .status`);
          if (chip) statusChipSet(chip, node.status);
        }
      } else if (event.event === "progress") {
        const progress = section?.querySelector("[data-progress]");
        if (progress) progress.textContent = event.summary;
      } else if (event.event === "run_status") {
        statusMoved = true;
      }
      regions.refresh();
    },
  });
}

followAll();
document.addEventListener("workgraph:activity", regions.refresh);
