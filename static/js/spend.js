// What agent calls cost, in words: the same rule as graphs/runs/accounting.py's Spend.summary and
// Spend.cost_text, which render the figures a page starts with (tests/fixtures/spend holds both to
// the same cases).

const INTEGER = new Intl.NumberFormat("en-US");

function calls(count) {
  return count === 1 ? "1 agent call" : `${INTEGER.format(count)} agent calls`;
}

/** `$0.0520`, or "" when no cost was reported. */
function dollars(usd) {
  return typeof usd === "number" ? `$${usd.toFixed(4)}` : "";
}

/**
 * @param {{agent_calls: number, cost_usd: ?number, tokens: number}} spend
 * @returns {string} e.g. "$0.0520 · 1,344 tokens · 1 agent call"
 */
export function spendSummary({ agent_calls, cost_usd, tokens }) {
  if (!agent_calls) return "no agent calls yet";
  return `${dollars(cost_usd) || "cost not reported"} · ${INTEGER.format(tokens)} tokens · ${calls(agent_calls)}`;
}

/** The cost alone: "$0.0520", "—" without calls, "not reported". */
export function costText({ agent_calls, cost_usd }) {
  if (!agent_calls) return "—";
  return dollars(cost_usd) || "not reported";
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
      for (const attempt of attempts.values()) {
        agentCalls += attempt.agent_calls;
        tokens += attempt.tokens ?? 0;
        if (typeof attempt.cost_usd === "number") cost = (cost ?? 0) + attempt.cost_usd;
      }
      return { agent_calls: agentCalls, cost_usd: cost, tokens };
    },
  };
}
