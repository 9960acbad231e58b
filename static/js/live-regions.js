// Live pages re-render parts of themselves from the server: the page is fetched again and each element
// marked `data-live-region` (by its id) is replaced by its fresh copy. The server-rendered page stays the
// single source of markup and of the rules behind it.
//
// A region holding a person's pending action is never replaced under them: while the confirm dialog is
// open for a form in it, while a field in it has the focus, while a field in it holds typed input, or
// while a press began in it is under way (press.js), it keeps its element (marked `data-live-stale`) and
// the refresh is tried again once that ends — the dialog closes, the focus leaves, or after a second. So Cancel, Approve, Reject, Fork and Start submit
// the form the person filled in, still connected. Every applied refresh counts up
// `data-live-renders` on <html>, so tests and people can tell the page is following (the navigation's
// inbox count, refreshed on its own, counts up `data-inbox-renders` instead).
//
// Refreshes are throttled, not debounced: the first change after a quiet spell is fetched once the burst
// it starts has gathered (GATHER_MS), and while changes keep coming the page fetches at most once every
// MIN_INTERVAL_MS. A storm of events costs the server one render of each region a second per open page,
// and the page still follows it rather than waiting for the storm to end.

import { pressedWithin } from "./press.js";

const RETRY_MS = 1000;
const GATHER_MS = 150;
const MIN_INTERVAL_MS = 1000;
// A fetch the server has not answered by then is given up and made again: one that hangs (a saturated
// server, a dropped connection) must not keep the page from following for good.
const FETCH_TIMEOUT_MS = 15_000;

/** Whether `region` holds a pending action that a re-render would drop. */
export function regionBusy(region) {
  if (region.querySelector("form[data-confirm-pending]") || pressedWithin(region)) return true;
  const active = document.activeElement;
  if (active && region.contains(active) && active.matches("input, textarea, select")) return true;
  for (const field of region.querySelectorAll("input:not([type=hidden]), textarea")) {
    if (field.type === "checkbox" || field.type === "radio") {
      if (field.checked !== field.defaultChecked) return true;
    } else if (field.value !== field.defaultValue) {
      return true;
    }
  }
  return false;
}

// A <details> is known again in the fresh copy by the ids around it, so what a person opened or
// closed stays so.
function detailsKey(details) {
  const owner = details.closest("[data-node-id], [data-run-id], [id]");
  const ownerKey = owner ? owner.dataset.nodeId ?? owner.dataset.runId ?? owner.id : "";
  const own = details.dataset.artifact ?? details.dataset.category ?? "";
  return `${ownerKey}|${details.className}|${own}`;
}

function detailsCarry(from, to) {
  const states = new Map([...from.querySelectorAll("details")].map((d) => [detailsKey(d), d.open]));
  for (const details of to.querySelectorAll("details")) {
    const open = states.get(detailsKey(details));
    if (open !== undefined) details.open = open;
  }
}

/**
 * Keep the page's live regions current.
 *
 * @param {{url?: string, onApplied?: (page: Document) => boolean | void, counter?: string}} [options]
 *   `onApplied` runs after each refresh with the fetched page (regions already swapped); it returns
 *   true when it too left something for later, to be tried again. `counter` is the data attribute of
 *   <html> each applied refresh counts up, as a dataset key (`liveRenders`: `data-live-renders`).
 * @returns {{refresh: () => void}}  `refresh()` fetches the page again (calls close together are one).
 */
export function liveRegions({ url = window.location.href, onApplied, counter = "liveRenders" } = {}) {
  let timer = null;
  let inFlight = false;
  let again = false;
  let submitting = false;
  let lastFetch = -Infinity;

  // A form on its way to the server: the page is about to be left, nothing more is swapped.
  window.addEventListener("submit", (event) => {
    if (!event.defaultPrevented) submitting = true;
  });
  document.addEventListener("confirm:closed", () => schedule(0));
  // A page brought back into view (its timers may have been held back meanwhile) catches up at once.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") changed();
  });
  document.addEventListener("focusout", () => {
    if (document.querySelector("[data-live-stale]")) schedule(200);
  });

  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(run, Math.max(ms, lastFetch + MIN_INTERVAL_MS - performance.now()));
  }

  // A change: one fetch is already coming unless none is, and that one reads everything up to it.
  function changed() {
    if (timer === null) schedule(GATHER_MS);
  }

  function run() {
    timer = null;
    if (submitting) return;
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    lastFetch = performance.now();
    fetch(url, { headers: { "X-Requested-With": "fetch" }, credentials: "same-origin",
                 signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) })
      .then((response) => (response.ok ? response.text() : Promise.reject(response.status)))
      .then((html) => apply(new DOMParser().parseFromString(html, "text/html")))
      .catch((error) => {
        // A page the server answered with an error stays as it is; one it did not answer is asked again.
        if (typeof error !== "number") again = true;
      })
      .finally(() => {
        inFlight = false;
        if (again) {
          again = false;
          changed();
        }
      });
  }

  function apply(page) {
    if (submitting) return;
    let deferred = false;
    for (const fresh of page.querySelectorAll("[data-live-region][id]")) {
      const current = document.getElementById(fresh.id);
      if (!current) continue;
      if (regionBusy(current)) {
        current.dataset.liveStale = "true";
        deferred = true;
        continue;
      }
      detailsCarry(current, fresh);
      current.replaceWith(document.importNode(fresh, true));
    }
    const root = document.documentElement;
    root.dataset[counter] = String(Number(root.dataset[counter] || 0) + 1);
    if (onApplied?.(page)) deferred = true;
    if (deferred) schedule(RETRY_MS);
  }

  return { refresh: changed };
}
