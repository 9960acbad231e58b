/**
 * The run graph's in-memory model: the `graph.json` payload indexed for drawing and kept current
 * by live events. Pure data and functions; nothing here touches the DOM.
 */

import { failureRoles } from "./failure-roles.js";

const ON_FAILURE = "on_failure";

/**
 * @typedef {object} GraphNode  one `nodes[]` entry of graph.json (fields as in the contract)
 * @property {string} node_id
 * @property {string} label
 * @property {string} org_node
 * @property {string} kind  catalog | generic | planning
 * @property {string} status
 * @property {number} attempts
 * @property {string[]} depends_on
 * @property {?number} cost_usd  what its attempts' agent calls cost, summed (null: none reported)
 * @property {import("./failure-roles.js").FailureRole} [failure_role]  set while it failed or is blocked
 *
 * @typedef {{from: string, to: string, edge_type: string, fired: number}} GraphEdge
 * @typedef {{node_exec_id: string, node_id: string, attempt: number, cause: string,
 *            cause_node_id: string, status: string, started_at: ?string, finished_at: ?string,
 *            cost_usd?: ?number}} Attempt
 *
 * @typedef {object} Model
 * @property {object} run
 * @property {Map<string, GraphNode>} nodes
 * @property {string[]} order       work node ids in manifest order (planning excluded)
 * @property {string[]} planning    planning node ids in payload order
 * @property {GraphEdge[]} dataEdges  data dependencies (edges and depends_on, deduplicated)
 * @property {GraphEdge[]} loopEdges  `on_failure` edges, never data dependencies
 * @property {Attempt[]} attempts
 * @property {Map<string, Attempt>} attemptsByExec
 * @property {Set<string>} finished  the attempt statuses that end an attempt (graph.json's `statuses`)
 * @property {boolean} collapsed  whether the payload held each work node's status alone, without edges or
 *   attempts (a run the page opens collapsed into stages; graphs/reads/graph.py's run_graph_statuses)
 */

/**
 * graph.json as the server sends it leaves out every field at its default (graphs/reads/graph_json.py):
 * each record kind's defaults come once, as the payload's `defaults`, and a node without a `label` is
 * labelled by its `node_id`. This puts them back, so every reader sees whole records; a payload without
 * `defaults` (already expanded, or built here) is returned as it is.
 * @param {object} payload graph.json
 * @returns {object} the payload with whole `run`, `nodes`, `edges` and `attempts`, and no `defaults`
 */
export function payloadExpanded(payload) {
  const { defaults, ...expanded } = payload;
  if (!defaults) return payload;
  expanded.run = withDefaults(payload.run || {}, defaults.run);
  expanded.nodes = (payload.nodes || []).map((node) => withDefaults(node, defaults.node, { label: node.node_id }));
  expanded.edges = (payload.edges || []).map((edge) => withDefaults(edge, defaults.edge));
  expanded.attempts = (payload.attempts || []).map((attempt) => withDefaults(attempt, defaults.attempt));
  return expanded;
}

function withDefaults(record, defaults = {}, derived = {}) {
  const whole = { ...derived };
  // A default list is copied for each record: records never share one the model may change.
  for (const [key, value] of Object.entries(defaults)) whole[key] = Array.isArray(value) ? [...value] : value;
  return Object.assign(whole, record);
}

/** @param {object} payload graph.json, as sent or expanded @returns {Model} */
export function modelFromPayload(payload) {
  payload = payloadExpanded(payload);
  const nodes = new Map();
  const order = [];
  const planning = [];
  for (const raw of payload.nodes || []) {
    const node = { ...raw, depends_on: raw.depends_on || [], attempts: raw.attempts || 0 };
    if (nodes.has(node.node_id)) continue;
    nodes.set(node.node_id, node);
    (node.kind === "planning" ? planning : order).push(node.node_id);
  }
  const { dataEdges, loopEdges } = splitEdges(payload.edges || [], nodes);
  const attempts = (payload.attempts || []).filter((attempt) => nodes.has(attempt.node_id));
  return {
    run: payload.run || {},
    nodes,
    order,
    planning,
    dataEdges,
    loopEdges,
    attempts,
    attemptsByExec: new Map(attempts.map((attempt) => [attempt.node_exec_id, attempt])),
    finished: new Set(payload.statuses?.finished ?? []),
    collapsed: Boolean(payload.collapsed),
  };
}

/**
 * Data edges come from `edges` and from `depends_on` (the contract says both describe the same
 * dependency); an edge naming an unknown node is dropped rather than drawn to nowhere.
 */
function splitEdges(edges, nodes) {
  const dataEdges = [];
  const loopEdges = [];
  const seen = new Set();
  for (const edge of edges) {
    if (!nodes.has(edge.from) || !nodes.has(edge.to)) continue;
    if (edge.edge_type === ON_FAILURE) {
      loopEdges.push({ ...edge, fired: edge.fired || 0 });
      continue;
    }
    const key = `${edge.from}\u0000${edge.to}`;
    if (seen.has(key)) continue;
    seen.add(key);
    dataEdges.push({ ...edge, fired: 0 });
  }
  for (const node of nodes.values()) {
    for (const dep of node.depends_on) {
      const key = `${dep}\u0000${node.node_id}`;
      if (seen.has(key) || !nodes.has(dep)) continue;
      seen.add(key);
      dataEdges.push({ from: dep, to: node.node_id, edge_type: "zero_token", fired: 0 });
    }
  }
  return { dataEdges, loopEdges };
}

/**
 * Applies a live `nodes` event. A node's status follows its newest attempt; an attempt seen for the
 * first time with cause `loop_back` and a `cause_node_id` counts one firing of that loop-back edge
 * (the server counts the same way: loop-back attempts of the edge's target caused by its source).
 * @param {Model} model
 * An ended attempt's update carries what it cost (`cost_usd`), which its node's total follows, and
 * may carry its failed tool calls (`tool_failures`), which its box marks.
 * @param {{node_exec_id: string, node_id: string, attempt: number, status: string, cause?: string,
 *          cause_node_id?: string, cost_usd?: ?number}[]} updates
 * @returns {boolean} whether anything drawn changed
 */
export function modelApplyUpdates(model, updates) {
  let changed = false;
  const now = new Date().toISOString();
  for (const update of updates) {
    const node = model.nodes.get(update.node_id);
    if (!node) continue;
    changed = true;
    let attempt = model.attemptsByExec.get(update.node_exec_id);
    if (!attempt) {
      attempt = {
        node_exec_id: update.node_exec_id,
        node_id: update.node_id,
        attempt: update.attempt,
        cause: update.cause || "initial",
        cause_node_id: update.cause_node_id || "",
        status: update.status,
        started_at: null,
        finished_at: null,
      };
      model.attempts.push(attempt);
      model.attemptsByExec.set(attempt.node_exec_id, attempt);
      if (attempt.cause === "loop_back" && attempt.cause_node_id) countFiring(model, attempt);
    }
    attempt.status = update.status;
    if (update.tool_failures !== undefined) attempt.tool_failures = update.tool_failures;
    if (update.cost_usd !== undefined) {
      node.cost_usd = (node.cost_usd ?? 0) - (attempt.cost_usd ?? 0) + (update.cost_usd ?? 0);
      attempt.cost_usd = update.cost_usd;
    }
    if (!attempt.started_at && update.status !== "queued" && update.status !== "pending") attempt.started_at = now;
    if (!attempt.finished_at && model.finished.has(update.status)) attempt.finished_at = now;
    if (update.attempt >= node.attempts) {
      node.attempts = update.attempt;
      node.status = update.status;
      node.latest_exec_id = update.node_exec_id;
    }
  }
  if (changed) failureRolesRefresh(model);
  return changed;
}

/** Whether a failed or blocked node is a root cause follows every status change upstream of it. */
function failureRolesRefresh(model) {
  const work = model.order.map((id) => model.nodes.get(id));
  const roles = failureRoles(
    new Map(work.map((node) => [node.node_id, node.depends_on])),
    new Map(work.map((node) => [node.node_id, node.status])),
  );
  for (const node of work) {
    if (roles.has(node.node_id)) node.failure_role = roles.get(node.node_id);
    else delete node.failure_role;
  }
}

function countFiring(model, attempt) {
  const edge = model.loopEdges.find((loop) => loop.from === attempt.cause_node_id && loop.to === attempt.node_id);
  if (edge) edge.fired += 1;
}
