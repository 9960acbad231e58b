/**
 * The node page's trace on screen: trace.js folds each line, this renders what the line changed, in
 * place (an open result stays open while lines keep arriving).
 *
 * Every string here comes from an agent: it goes into textContent or an attribute, never into HTML.
 */
import { callState, formatDuration, grouped, headerWords, traceAdd, traceCreate, traceFinish } from "./trace.js";

const STATE_WORDS = { running: "running…", "no-result": "no result" };

/**
 * Render a trace into `groupsRoot` and keep it current.
 *
 * @param {{groupsRoot: HTMLElement, header: HTMLElement, empty?: HTMLElement|null}} parts
 *   `header` holds `[data-field]` elements (model, turns, tokens, tokens_detail, cost) and the
 *   `[data-resume]` block; when its `data-source` is "lines" (the attempt is still running) the
 *   lines' totals fill it in as they come.
 * @returns {{add: (line: object) => void, finish: () => void}}
 */
export function traceViewMount({ groupsRoot, header, empty = null }) {
  const trace = traceCreate();
  const views = new WeakMap();
  const headerFromLines = header.dataset.source === "lines";

  function show(change) {
    if (change.type === "group") groupShow(change.group);
    else if (change.type === "entry") entryShow(change.entry, change.parent, change.group);
    else if (change.type === "result") callRefresh(change.group, change.call);
    else if (change.type === "group-info") groupRefresh(change.group);
    else if (change.type === "totals" && headerFromLines) headerFill(header, trace.totals);
  }

  function groupShow(group) {
    if (empty) empty.hidden = true;
    const section = element("section", "trace-group");
    section.dataset.purpose = group.purpose ?? "";
    const heading = element("div", "trace-group-head");
    const label = element("h3", "", group.label);
    const info = element("span", "muted small trace-group-info");
    heading.append(label, info);
    const entries = element("ol", "trace-entries");
    const outcome = element("p", "trace-outcome small");
    outcome.hidden = true;
    section.append(heading, entries, outcome);
    groupsRoot.append(section);
    views.set(group, { info, entries, outcome });
  }

  function groupRefresh(group) {
    const view = views.get(group);
    view.info.replaceChildren(...groupInfo(group));
    if (group.outcome) {
      view.outcome.hidden = false;
      view.outcome.classList.toggle("error", group.outcome.is_error === true || group.outcome.timed_out === true
        || Boolean(group.outcome.start_error));
      view.outcome.textContent = outcomeWords(group.outcome);
    }
    if (group.ended) for (const call of group.calls.values()) if (!call.result) callRefresh(group, call);
  }

  function entryShow(entry, parent, group) {
    const item = entry.kind === "call" ? callElement(entry) : plainEntryElement(entry);
    views.get(parent).entries.append(item);
    if (parent !== group) views.get(parent).entries.hidden = false;
    if (entry.kind === "call") callRefresh(group, entry);
  }

  function callElement(call) {
    const item = element("li", "trace-call");
    item.dataset.toolUseId = call.toolUseId ?? "";
    const head = element("div", "trace-call-head");
    const time = element("span", "trace-time small");
    head.append(element("span", "trace-tool", call.name), element("code", "trace-summary", call.summary), time);
    const input = detailsElement("trace-input", `Input · ${chars(call.inputChars ?? call.input.length)}`, pretty(call.input));
    const entries = element("ol", "trace-entries trace-subagent");
    entries.hidden = true;
    item.append(head, input, entries);
    views.set(call, { item, time, entries, result: null });
    return item;
  }

  function callRefresh(group, call) {
    const view = views.get(call);
    const state = callState(trace, group, call);
    view.item.dataset.state = state;
    view.time.textContent = call.durationMs != null ? formatDuration(call.durationMs) : STATE_WORDS[state] ?? "";
    if (call.result && !view.result) {
      const { content, contentChars, isError } = call.result;
      view.result = detailsElement(`trace-result${isError ? " error" : ""}`,
        `${isError ? "Error" : "Result"} · ${chars(contentChars ?? content.length)}`, content);
      view.item.append(view.result);
    }
  }

  return {
    add(line) {
      for (const change of traceAdd(trace, line)) show(change);
    },
    finish() {
      traceFinish(trace);
      for (const group of trace.groups) groupRefresh(group);
    },
  };
}

/** Fill the header's fields from the lines' totals. */
function headerFill(header, totals) {
  const words = headerWords(totals);
  const fields = { ...words, model: totals.model ?? "—" };
  for (const field of header.querySelectorAll("[data-field]")) {
    field.textContent = fields[field.dataset.field] ?? "";
  }
  const resume = header.querySelector("[data-resume]");
  if (resume && words.resume) {
    resume.querySelector("code").textContent = words.resume;
    resume.hidden = false;
  }
}

/**
 * Copy the text of `code` when `button` is pressed. Without a clipboard (a page served over plain
 * http from another host is not a secure context) the text is selected instead, to copy by hand.
 */
export function copyButtonBind(button, code) {
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(code.textContent);
      button.textContent = "Copied";
    } catch {
      getSelection().selectAllChildren(code);
      button.textContent = "Selected: press Ctrl+C";
    }
  });
}

function groupInfo(group) {
  if (group.command != null) return [element("code", "", group.command)];
  const parts = [];
  if (group.model) parts.push(group.model);
  if (group.sessionId) {
    if (parts.length) parts.push(" · ");
    parts.push(element("code", "", `claude --resume ${group.sessionId}`));
  }
  return parts;
}

function commandExitWords(exit) {
  return [
    exit.start_error ? `did not start: ${exit.start_error}` : `exit ${exit.exit_code ?? "?"}`,
    exit.timed_out && "timed out",
    typeof exit.duration_ms === "number" && formatDuration(exit.duration_ms),
    exit.output_dropped_bytes > 0 && `${grouped(exit.output_dropped_bytes)} bytes of output dropped`,
  ].filter(Boolean).join(" · ");
}

function outcomeWords(outcome) {
  if (outcome.event === "command_exit") return commandExitWords(outcome);
  const words = headerWords({ num_turns: outcome.num_turns ?? null, cost_usd: outcome.total_cost_usd ?? null,
    session_id: null, usage: outcome.usage ?? null });
  return [
    outcome.is_error ? `error: ${outcome.subtype ?? "unknown"}` : outcome.subtype,
    outcome.num_turns != null && `${words.turns} turns`,
    typeof outcome.duration_ms === "number" && formatDuration(outcome.duration_ms),
    outcome.total_cost_usd != null && words.cost,
    outcome.usage && `${words.tokens} tokens`,
    outcome.permission_denials > 0 && `${outcome.permission_denials} permission denials`,
    ...(Array.isArray(outcome.errors) ? outcome.errors : []),
  ].filter(Boolean).join(" · ");
}

function plainEntryElement(entry) {
  if (entry.kind === "text") return element("li", "trace-text", entry.text);
  if (entry.kind === "output") return element("li", `trace-output${entry.stream === "stderr" ? " stderr" : ""}`, entry.text);
  if (entry.kind === "retry") return element("li", "trace-retry", retryWords(entry));
  const item = element("li", "trace-orphan");
  item.append(detailsElement(`trace-result${entry.isError ? " error" : ""}`,
    `${entry.isError ? "Error" : "Result"} of ${entry.toolUseId ?? "an unknown call"}`, entry.content));
  return item;
}

function retryWords(retry) {
  return [
    `API retry ${retry.attempt ?? "?"}${retry.maxRetries != null ? ` of ${retry.maxRetries}` : ""}`,
    typeof retry.retryDelayMs === "number" && `in ${formatDuration(retry.retryDelayMs)}`,
    retry.errorStatus != null && `status ${retry.errorStatus}`,
    retry.error,
  ].filter(Boolean).join(" · ");
}

function detailsElement(className, summary, body) {
  const details = element("details", `trace-detail ${className}`);
  details.append(element("summary", "", summary), element("pre", "output", body));
  return details;
}

function pretty(input) {
  try {
    return JSON.stringify(JSON.parse(input), null, 2);
  } catch {
    return input;
  }
}

function chars(count) {
  return count === 1 ? "1 char" : `${grouped(count)} chars`;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
