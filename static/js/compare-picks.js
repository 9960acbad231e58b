// What the runs list's picks compare: two runs of one task, or two attempts of one node of a task — the
// pairs the compare pages (console/views/compare.py) accept. Pure: runs-list.js keeps the picks and
// draws the answer in the words the page's template wrote.

/**
 * @typedef {object} Pick
 * @property {"run"|"attempt"} kind
 * @property {string} id        The run's or the attempt's id.
 * @property {string} taskId
 * @property {string} [nodeId]  An attempt's node.
 * @property {string} label     How the bar names it.
 */

/**
 * Where the two picks lead, or why they lead nowhere yet: `said` names the sentence the runs list's
 * template writes for the case (its `data-said`), and `slots` what fills its blanks (`data-slot`).
 *
 * @param {Pick[]} picks
 * @param {{runs: string, attempts: string}} urls  The compare pages' URLs with `{a}` and `{b}` for the ids.
 * @returns {{href: string|null, said: string, slots: Object<string, string>}}
 */
export function comparePlan(picks, urls) {
  if (picks.length === 0) return { href: null, said: "none", slots: {} };
  if (picks.length === 1) {
    const [only] = picks;
    return { href: null, said: `one-${only.kind}`, slots: { first: only.label } };
  }
  if (picks.length > 2) return { href: null, said: "too-many", slots: { count: String(picks.length) } };
  const [first, second] = picks;
  if (first.kind !== second.kind) return { href: null, said: "mixed", slots: {} };
  if (first.taskId !== second.taskId) return { href: null, said: `tasks-${first.kind}`, slots: {} };
  if (first.kind === "attempt" && first.nodeId !== second.nodeId) {
    return { href: null, said: "nodes", slots: { first: first.nodeId, second: second.nodeId } };
  }
  const template = first.kind === "run" ? urls.runs : urls.attempts;
  return {
    href: template.replace("{a}", first.id).replace("{b}", second.id),
    said: "compare",
    slots: { first: first.label, second: second.label },
  };
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
