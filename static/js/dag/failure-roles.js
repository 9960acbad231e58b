/**
 * Which failed or blocked nodes are a run's root causes and which failed or were blocked because of
 * one, from each node's latest status: the rule of graphs.domain.failure_roles, applied again as
 * live updates change statuses (tests/fixtures/failure_roles.json holds the cases both must agree on).
 *
 * @typedef {{role: "root_cause"|"failed_downstream"|"blocked", because_of: string[]}} FailureRole
 */

/**
 * @param {Map<string, string[]>} dependencies  node id → the node ids it depends on (data edges only)
 * @param {Map<string, string>} statuses  node id → its latest status
 * @returns {Map<string, FailureRole>}
 */
export function failureRoles(dependencies, statuses) {
  const ancestors = new Map([...dependencies.keys()].map((id) => [id, upstreamOf(id, dependencies)]));
  const failed = new Set([...statuses].filter(([, status]) => status === "failed").map(([id]) => id));
  const isRoot = (id) => ![...(ancestors.get(id) || [])].some((up) => failed.has(up));
  const roots = new Set([...failed].filter(isRoot));
  const roles = new Map();
  for (const [id, status] of statuses) {
    if (status !== "failed" && status !== "blocked") continue;
    const becauseOf = [...(ancestors.get(id) || [])].filter((up) => roots.has(up)).sort();
    if (roots.has(id)) roles.set(id, { role: "root_cause", because_of: [] });
    else roles.set(id, { role: status === "failed" ? "failed_downstream" : "blocked", because_of: becauseOf });
  }
  return roles;
}

function upstreamOf(start, dependencies) {
  const seen = new Set();
  const stack = [...(dependencies.get(start) || [])];
  while (stack.length) {
    const id = stack.pop();
    if (seen.has(id) || id === start) continue;
    seen.add(id);
    stack.push(...(dependencies.get(id) || []));
  }
  return seen;
}

/** What a box says of its node's role: "root cause", "blocked by a", "failed after a, b +1", or "". */
export function failureRoleLabel(role) {
  if (!role) return "";
  if (role.role === "root_cause") return "root cause";
  const names = role.because_of.length > 2
    ? `${role.because_of.slice(0, 2).join(", ")} +${role.because_of.length - 2}`
    : role.because_of.join(", ");
  if (role.role === "blocked") return names ? `blocked by ${names}` : "blocked";
  return names ? `failed after ${names}` : "failed downstream";
}
