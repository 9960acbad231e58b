/** When the run graph's work runs: between the browser's own tasks, so input and drawing go on meanwhile. */

/** @returns {Promise<void>} resolved in a later task, so the browser can handle input and draw between */
export function nextTask() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Runs `job` when the main thread is idle (Safari has no requestIdleCallback: a short delay). */
export function whenIdle(job) {
  if (window.requestIdleCallback) window.requestIdleCallback(job, { timeout: 5000 });
  else setTimeout(job, 200);
}
