// Dashboard: "Runs in flight" and the recent tasks follow the runs over /ws/runs/<id>/, without a reload.
// A listed run's status chip changes as its run_status events come; a run that ends, or any status
// change, fetches the page again and swaps in both lists (live-regions.js), so an ended run leaves
// "Runs in flight" and its task reads its new status. A run started elsewhere has no socket here yet: the
// navigation's inbox socket tells of it (`workgraph:activity`, nav-inbox.js), the page is fetched again,
// and its new runs are followed from then.
import { listedRunsFollowed } from "./live.js";
import { liveRegions } from "./live-regions.js";
import { statusChipSet } from "./status-chip.js";
import { runFinished } from "./status-vocabulary.js";

const runs = listedRunsFollowed("#in-flight [data-run-id]", (runId) => ({
  onSnapshot: (snapshot) => moved(runId, snapshot.status),
  onEvent(event) {
    if (event.event === "run_status") moved(runId, event.status);
  },
}));
const regions = liveRegions({ onApplied: runs.follow });

function chipOf(runId) {
  return document.querySelector(`#in-flight [data-run-id="${CSS.escape(runId)}"] .status`);
}

function moved(runId, status) {
  const chip = chipOf(runId);
  if (chip && chip.dataset.status !== status) {
    statusChipSet(chip, status);
    regions.refresh();
  } else if (!chip || runFinished(status)) {
    regions.refresh();
  }
  if (runFinished(status)) runs.forget(runId);
}

runs.follow();
document.addEventListener("workgraph:activity", regions.refresh);
