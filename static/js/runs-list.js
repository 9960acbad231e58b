// The runs list: pick two runs (or two attempts a node id search lists) to compare, and follow the runs of
// your projects. Picks are kept in the tab's session storage, so two runs can be picked on two pages of the
// list or under two filters. A run under way is followed over its socket: its status chip changes at once.
// Whenever a run of your projects starts, moves or ends — a listed one, or one started elsewhere — the page
// fetches its own URL again, filters and page included, and swaps in the count, the rows and the pager
// (live-regions.js); the navigation's inbox socket tells of the others (`workgraph:activity`, nav-inbox.js).
import { comparePlan, picksToggled } from "./compare-picks.js";
import { listedRunsFollowed } from "./live.js";
import { liveRegions } from "./live-regions.js";
import { statusChipSet } from "./status-chip.js";

const STORE = "workgraph.compare-picks";

const bar = document.getElementById("compare-bar");
const said = document.getElementById("compare-said");
const words = document.getElementById("compare-words");
const open = document.getElementById("compare-open");
const clear = document.getElementById("compare-clear");
// The rows are swapped in anew as the list follows the runs: they are always looked up, never kept.
const ROWS = ".run-table tbody";

const urls = {
  runs: urlTemplate(bar.dataset.runsUrl),
  attempts: urlTemplate(bar.dataset.attemptsUrl),
};

/** The page's URL with the placeholder ids (…0a, …0b) as `{a}` and `{b}`. */
function urlTemplate(url) {
  return url.replace("00000000-0000-0000-0000-00000000000a", "{a}").replace("00000000-0000-0000-0000-00000000000b", "{b}");
}

function picksRead() {
  try {
    const picks = JSON.parse(sessionStorage.getItem(STORE) || "[]");
    return Array.isArray(picks) ? picks.filter((pick) => pick && typeof pick.id === "string") : [];
  } catch {
    return [];
  }
}

let picks = picksRead();

function picksShow() {
  sessionStorage.setItem(STORE, JSON.stringify(picks));
  for (const box of document.querySelectorAll(`${ROWS} input[data-pick]`)) {
    box.checked = picks.some((pick) => pick.kind === box.dataset.pick && pick.id === box.value);
    // The picks are the session's, not typed input: a row holding one is swapped in anew like any other.
    box.defaultChecked = box.checked;
  }
  const plan = comparePlan(picks, urls);
  said.replaceChildren(sentence(plan));
  open.hidden = picks.length < 2;
  clear.hidden = picks.length === 0;
  if (plan.href) {
    open.href = plan.href;
    open.setAttribute("aria-disabled", "false");
  } else {
    open.removeAttribute("href");
    open.setAttribute("aria-disabled", "true");
  }
}

/** The template's sentence for the plan, its blanks filled as text. */
function sentence(plan) {
  const chosen = words.content.querySelector(`[data-said="${plan.said}"]`).cloneNode(true);
  for (const slot of chosen.querySelectorAll("[data-slot]")) slot.textContent = plan.slots[slot.dataset.slot] ?? "";
  return chosen;
}

document.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.dataset.pick || !box.closest(ROWS)) return;
  const pick = { kind: box.dataset.pick, id: box.value, taskId: box.dataset.taskId, label: box.dataset.label };
  if (box.dataset.nodeId) pick.nodeId = box.dataset.nodeId;
  picks = picksToggled(picks, pick, box.checked);
  picksShow();
});

clear.addEventListener("click", () => {
  picks = [];
  picksShow();
});

picksShow();
// The browser tests wait for this before they tick: the listener above is in place.
bar.dataset.ready = "true";

// Following the runs under way: each one's chip at once, the whole list fetched again as it moves.
const runs = listedRunsFollowed(`${ROWS} tr[data-live-run]`, (runId) => ({
  onSnapshot(snapshot) {
    const progress = rowOf(runId)?.querySelector("progress");
    const moved = progress && snapshot.progress && Number(progress.value) !== snapshot.progress.done;
    if (statusSeen(runId, snapshot.status) || moved) regions.refresh();
  },
  onEvent(event) {
    if (event.event === "run_status") statusSeen(runId, event.status);
    if (["run_status", "progress", "nodes_appended"].includes(event.event)) regions.refresh();
  },
}));
const regions = liveRegions({
  onApplied() {
    picksShow();
    runs.follow();
  },
});

function rowOf(runId) {
  return document.querySelector(`${ROWS} tr[data-run-id="${CSS.escape(runId)}"]`);
}

/** Show the run's status at once; say whether it changed. */
function statusSeen(runId, status) {
  const chip = rowOf(runId)?.querySelector("[data-run-status] .status");
  if (!chip || !status || chip.dataset.status === status) return false;
  statusChipSet(chip, status);
  return true;
}

runs.follow();
document.addEventListener("workgraph:activity", regions.refresh);
