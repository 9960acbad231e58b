// What the runs list's picks compare: two runs of one task, or two attempts of one node of a task — the
// pairs the compare pages (console/views/compare.py) accept. Pure: runs-list.js keeps the picks and
// draws the answer.

/**
 * @typedef {object} Pick
 * @property {"run"|"attempt"} kind
 * @property {string} id        The run's or the attempt's id.
 * @property {string} taskId
 * @property {string} [nodeId]  An attempt's node.
 * @property {string} label     How the bar names it.
 */

/**
 * Where the two picks lead, or why they lead nowhere yet.
 *
 * @param {Pick[]} picks
 * @param {{runs: string, attempts: string}} urls  The compare pages' URLs with `{a}` and `{b}` for the ids.
 * @returns {{href: string|null, said: string}}
 */
export function comparePlan(picks, urls) {
  if (picks.length === 0) return { href: null, said: "Tick two runs of a task, or two attempts of a node, to compare them." };
  if (picks.length === 1) {
    const [only] = picks;
    return { href: null, said: `Picked ${only.label}: tick one more ${only.kind === "run" ? "run of its task" : "attempt of its node"}.` };
  }
  if (picks.length > 2) return { href: null, said: `${picks.length} picked: untick all but two.` };
  const [first, second] = picks;
  if (first.kind !== second.kind) return { href: null, said: "Tick two runs or two attempts, not one of each." };
  if (first.taskId !== second.taskId) {
    return { href: null, said: `These ${first.kind}s belong to two different tasks: only ${first.kind}s of one task can be compared.` };
  }
  if (first.kind === "attempt" && first.nodeId !== second.nodeId) {
    return { href: null, said: `These are attempts of two different nodes (${first.nodeId} and ${second.nodeId}): only attempts of one node can be compared.` };
  }
  const template = first.kind === "run" ? urls.runs : urls.attempts;
  return { href: template.replace("{a}", first.id).replace("{b}", second.id), said: `Compare ${first.label} with ${second.label}.` };
}

/**
 * Tick or untick one pick; the picks keep the order they were ticked in.
 *
 * @param {Pick[]} picks
 * @param {Pick} pick
 * @param {boolean} ticked
 * @returns {Pick[]}
 */
export function picksToggled(picks, pick, ticked) {
  const others = picks.filter((each) => !(each.kind === pick.kind && each.id === pick.id));
  return ticked ? [...others, pick] : others;
}
