/**
 * The critical path of a run as it ran: the chain of attempts that decided when it finished. It
 * starts at the attempt that ended last and steps back, each time to whatever this attempt had to
 * wait for that ended last before it began — an attempt of a node it depends on, its own previous
 * attempt (a retry), or the attempt whose failure looped back to it. Shortening anything off the
 * chain would not have made the run end sooner.
 */

/** An attempt "ended before" another began within this slack (clocks and commits are not exact). */
const SLACK_MS = 50;

/**
 * @param {{node_exec_id: string, node_id: string, attempt: number, cause?: string, cause_node_id?: string,
 *          started_at?: string | null, finished_at?: string | null}[]} attempts
 * @param {(nodeId: string) => string[]} dependenciesOf  a node's data dependencies
 * @param {number} [now]  when a running attempt's bar ends
 * @returns {string[]} the node_exec_ids of the path, first to last
 */
export function criticalPath(attempts, dependenciesOf, now = Date.now()) {
  const timed = attempts
    .filter((attempt) => attempt.started_at)
    .map((attempt) => ({
      attempt,
      start: Date.parse(attempt.started_at),
      end: attempt.finished_at ? Date.parse(attempt.finished_at) : now,
    }));
  if (!timed.length) return [];
  const byNode = new Map();
  for (const item of timed) {
    if (!byNode.has(item.attempt.node_id)) byNode.set(item.attempt.node_id, []);
    byNode.get(item.attempt.node_id).push(item);
  }
  let current = timed.reduce((last, item) => (item.end > last.end ? item : last));
  const path = [current];
  const seen = new Set([current.attempt.node_exec_id]);
  for (;;) {
    const { node_id: nodeId, cause, cause_node_id: causeNode, attempt: number } = current.attempt;
    const waitedOn = [...dependenciesOf(nodeId), ...(causeNode && cause?.includes("loop_back") ? [causeNode] : [])];
    const candidates = waitedOn.flatMap((id) => byNode.get(id) || []);
    candidates.push(...(byNode.get(nodeId) || []).filter((item) => item.attempt.attempt === number - 1));
    let before = null;
    for (const item of candidates) {
      if (seen.has(item.attempt.node_exec_id) || item.end > current.start + SLACK_MS) continue;
      if (!before || item.end > before.end) before = item;
    }
    if (!before) break;
    path.push(before);
    seen.add(before.attempt.node_exec_id);
    current = before;
  }
  return path.reverse().map((item) => item.attempt.node_exec_id);
}

/** An attempt's duration as a bar says it: "850 ms", "12.3 s", "4 min 05 s"; "" while not started. */
export function durationLabel(attempt, now = Date.now()) {
  if (!attempt.started_at) return "";
  const ms = (attempt.finished_at ? Date.parse(attempt.finished_at) : now) - Date.parse(attempt.started_at);
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${String(Math.round((ms % 60_000) / 1000)).padStart(2, "0")} s`;
}
