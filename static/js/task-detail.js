// Task detail: keep each in-flight run's to-do tree live over /ws/runs/<id>/.
// Status changes recolour the node in place; appended nodes and run status changes re-render the
// run's section and the task's status from the server (the server-rendered page stays the single
// source of markup, and of the rule that derives a task's status from its runs).
import { connectRun } from "./live.js";
import { statusChipSet } from "./status-chip.js";

const runsEl = document.getElementById("runs");
const liveRunIds = (runsEl?.dataset.liveRuns || "").split(" ").filter(Boolean);

function refreshSection(runId) {
  const section = document.getElementById(`run-${runId}`);
  if (!section) return;
  fetch(window.location.href, { headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" })
    .then((response) => (response.ok ? response.text() : Promise.reject(response.status)))
    .then((html) => {
      const page = new DOMParser().parseFromString(html, "text/html");
      const taskStatus = page.querySelector("h1 .status");
      if (taskStatus) document.querySelector("h1 .status")?.replaceWith(taskStatus);
      const taskSpend = page.getElementById("task-spend");
      if (taskSpend) document.getElementById("task-spend")?.replaceWith(taskSpend);
      const fresh = page.getElementById(`run-${runId}`);
      if (!fresh) return;
      const open = new Set([...section.querySelectorAll("details[open]")].map((d) => d.closest("[data-node-id]")?.dataset.nodeId));
      section.replaceWith(fresh);
      fresh.querySelectorAll("[data-node-id]").forEach((item) => {
        if (open.has(item.dataset.nodeId)) item.querySelector("details")?.setAttribute("open", "");
      });
    })
    .catch(() => {});
}

function debounce(fn, ms) {
  const timers = new Map();
  return (key) => {
    clearTimeout(timers.get(key));
    timers.set(key, setTimeout(() => fn(key), ms));
  };
}

const scheduleRefresh = debounce(refreshSection, 400);

for (const runId of liveRunIds) {
  let snapshots = 0;
  connectRun(`/ws/runs/${runId}/`, {
    // The page was rendered with the run as it was; a later snapshot (a reconnect, or a change no
    // event brought) means the tree may be out of date — and so does a first one whose run status is
    // not the rendered one: the run moved on between the render and the subscription, whose events
    // this page never got (a quick run may well have finished).
    onSnapshot(snapshot) {
      snapshots += 1;
      const rendered = document.getElementById(`run-${runId}`)?.dataset.runStatus;
      if (snapshots > 1 || snapshot.status !== rendered) scheduleRefresh(runId);
    },
    onEvent(event) {
      const section = document.getElementById(`run-${runId}`);
      if (!section) return;
      if (event.event === "nodes") {
        for (const node of event.nodes) {
          const item = section.querySelector(`[data-node-id="${CSS.escape(node.node_id)}"]`);
          const chip = item?.querySelector(".status");
          if (chip) statusChipSet(chip, node.status);
          if (!item || node.attempt > 1 || ["succeeded", "failed"].includes(node.status)) scheduleRefresh(runId);
        }
      } else if (event.event === "log") {
        // Log lines are for the node pages; the tree changes only with statuses and appends.
      } else if (event.event === "progress") {
        const progress = section.querySelector("[data-progress]");
        if (progress) progress.textContent = event.summary;
      } else {
        scheduleRefresh(runId);
      }
    },
  });
}
