// The runs list: pick two runs (or two attempts a node id search lists) to compare, and follow the runs
// still under way. Picks are kept in the tab's session storage, so two runs can be picked on two pages
// of the list or under two filters. A run under way is followed over its socket: its status chip
// changes at once, and its row (progress, times, cost) is fetched again as it moves.
import { comparePlan, picksToggled } from "./compare-picks.js";
import { connectRun } from "./live.js";
import { statusChipSet } from "./status-chip.js";

const STORE = "workgraph.compare-picks";
const REFRESH_DELAY_MS = 600;

const bar = document.getElementById("compare-bar");
const said = document.getElementById("compare-said");
const open = document.getElementById("compare-open");
const clear = document.getElementById("compare-clear");
const table = document.querySelector(".run-table tbody");

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
  for (const box of table.querySelectorAll("input[data-pick]")) {
    box.checked = picks.some((pick) => pick.kind === box.dataset.pick && pick.id === box.value);
  }
  const plan = comparePlan(picks, urls);
  said.textContent = plan.said;
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

table.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.dataset.pick) return;
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

// Following the runs under way.
const followed = new Map();
let refreshTimer = null;

function follow(row) {
  const runId = row.dataset.runId;
  if (followed.has(runId)) return;
  followed.set(runId, connectRun(`/ws/runs/${runId}/`, {
    onSnapshot: (snapshot) => {
      const progress = rowOf(runId)?.querySelector("progress");
      const moved = progress && snapshot.progress && Number(progress.value) !== snapshot.progress.done;
      if (statusSeen(runId, snapshot.status) || moved) refreshSoon();
    },
    onEvent: (event) => {
      if (event.event === "run_status") statusSeen(runId, event.status);
      if (["run_status", "progress", "nodes_appended"].includes(event.event)) refreshSoon();
    },
  }));
}

function rowOf(runId) {
  return table.querySelector(`tr[data-run-id="${CSS.escape(runId)}"]`);
}

/** Show the run's status at once; say whether it changed. */
function statusSeen(runId, status) {
  const chip = rowOf(runId)?.querySelector("[data-run-status] .status");
  if (!chip || !status || chip.dataset.status === status) return false;
  statusChipSet(chip, status);
  return true;
}

function refreshSoon() {
  if (refreshTimer !== null) return;
  refreshTimer = setTimeout(refresh, REFRESH_DELAY_MS);
}

/** Fetch this page of the list again and swap in the rows of the runs followed; stop following those
 * that ended. */
async function refresh() {
  refreshTimer = null;
  let fresh;
  try {
    const response = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!response.ok) return;
    fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  } catch {
    return;
  }
  for (const [runId, connection] of followed) {
    const old = rowOf(runId);
    const row = fresh.querySelector(`.run-table tr[data-run-id="${CSS.escape(runId)}"]`);
    if (old && row) old.replaceWith(document.importNode(row, true));
    if (!row || !row.hasAttribute("data-live-run")) {
      connection.close();
      followed.delete(runId);
    }
  }
  picksShow();
}

for (const row of table.querySelectorAll("tr[data-live-run]")) follow(row);
