// What agent calls cost, in words: the same rule as graphs/runs/accounting.py's Spend.summary and
// Spend.cost_text, which render the figures a page starts with (tests/fixtures/spend holds both to
// the same cases).

import { usdText } from "./money.js";

const INTEGER = new Intl.NumberFormat("en-US");

function calls(count) {
  return count === 1 ? "1 agent call" : `${INTEGER.format(count)} agent calls`;
}

/** `$0.0520`, or "" when no cost was reported; a lower bound when some calls did not report one. */
function dollars(usd, callsWithoutCost) {
  if (typeof usd !== "number") return "";
  return usdText(usd, { lowerBound: Boolean(callsWithoutCost) });
}

/** "1,344 tokens", "at least 1,344 tokens", or "tokens unknown" when no call reported usage. */
function tokenWords(agentCalls, tokens, callsWithoutUsage) {
  if (typeof tokens !== "number" || (callsWithoutUsage ?? 0) >= agentCalls) return "tokens unknown";
  return `${callsWithoutUsage ? "at least " : ""}${INTEGER.format(tokens)} tokens`;
}

/**
 * @param {{agent_calls: number, cost_usd: ?number, tokens: ?number, calls_without_usage?: number,
 *   calls_without_cost?: number}} spend
 * @returns {string} e.g. "$0.0520 · 1,344 tokens · 1 agent call"
 */
export function spendSummary({ agent_calls, cost_usd, tokens, calls_without_usage, calls_without_cost }) {
  if (!agent_calls) return "no agent calls yet";
  const cost = dollars(cost_usd, calls_without_cost) || "cost not reported";
  return `${cost} · ${tokenWords(agent_calls, tokens, calls_without_usage)} · ${calls(agent_calls)}`;
}

/** The cost alone: "$0.0520", "at least $0.0520", "—" without calls, "not reported". */
export function costText({ agent_calls, cost_usd, calls_without_cost }) {
  if (!agent_calls) return "—";
  return dollars(cost_usd, calls_without_cost) || "not reported";
}

/**
 * A running total of attempts' spend, each attempt counted once at its latest figures: a run
 * page adds the attempts graph.json lists, then each attempt a live event reports as ended.
 */
export function spendTotal() {
  const attempts = new Map();
  return {
    /** @param {{node_exec_id: string, agent_calls?: number, cost_usd?: ?number, tokens?: number}} attempt */
    set(attempt) {
      if (attempt.agent_calls === undefined) return;
      attempts.set(attempt.node_exec_id, attempt);
    },
    get total() {
      let agentCalls = 0;
      let cost = null;
      let tokens = 0;
      let withoutUsage = 0;
      let withoutCost = 0;
      for (const attempt of attempts.values()) {
        agentCalls += attempt.agent_calls;
        tokens += attempt.tokens ?? 0;
        withoutUsage += attempt.calls_without_usage ?? 0;
        withoutCost += attempt.calls_without_cost ?? 0;
        if (typeof attempt.cost_usd === "number") cost = (cost ?? 0) + attempt.cost_usd;
      }
      return { agent_calls: agentCalls, cost_usd: cost, tokens, calls_without_usage: withoutUsage,
               calls_without_cost: withoutCost };
    },
  };
}
