// The node page's raw log as a viewer: a filter by event kind (built from the kinds its lines have,
// growing as live lines bring new ones), a search that keeps the matching lines and marks the match,
// a count, and Follow, which keeps the newest line in view until the reader scrolls up or unticks it.
//
// Each line's `{}` button unfolds the line's JSON under it, from the lines the page was given or that
// came live.
//
// Lines are agent and engine text: they only ever reach the page as text nodes. A live line costs the
// same however long the log is — it is drawn, filtered and counted on its own; only a change of filter
// or search goes over every line, once.
import { describeLine } from "./log-line.js";
import { countText, highlightParts, lineFate } from "./log-filter.js";

const SEARCH_PAUSE_MS = 120;
// Within this many pixels of the end the reader is still at the newest line: Follow stays on.
const END_SLACK_PX = 24;

function jsonButton() {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "line-json";
  button.title = "This line's JSON";
  button.setAttribute("aria-expanded", "false");
  button.textContent = "{}";
  return button;
}

function lineItem(line) {
  const item = document.createElement("li");
  item.dataset.seq = String(line.seq);
  item.dataset.event = line.event;
  const seq = document.createElement("span");
  seq.className = "seq";
  seq.textContent = String(line.seq);
  // The line's time of day to the millisecond (its `ts` is ISO 8601 in UTC), as the server draws it.
  const at = document.createElement("time");
  at.className = "ts";
  at.dateTime = line.ts || "";
  at.title = line.ts || "";
  at.textContent = (line.ts || "").slice(11, 23);
  const event = document.createElement("span");
  event.className = "event";
  event.textContent = line.event;
  const text = document.createElement("span");
  text.className = "text";
  text.textContent = describeLine(line);
  item.append(jsonButton(), " ", seq, " ", at, " ", event, " ", text);
  return item;
}

function draw(element, text, ranges) {
  element.replaceChildren(...highlightParts(text, ranges).map((part) => {
    if (!part.match) return document.createTextNode(part.text);
    const mark = document.createElement("mark");
    mark.textContent = part.text;
    return mark;
  }));
}

/** Unfold or fold the JSON of the line `button` belongs to; `lineOf` finds a line by its seq. */
function jsonToggle(button, lineOf) {
  const item = button.closest("li");
  const open = button.getAttribute("aria-expanded") === "true";
  button.setAttribute("aria-expanded", String(!open));
  item.querySelector(":scope > pre.line-json-body")?.remove();
  if (open) return;
  const body = document.createElement("pre");
  body.className = "line-json-body";
  const line = lineOf(Number(item.dataset.seq));
  body.textContent = line ? JSON.stringify(line, null, 2) : "(this line is not on the page: download the log)";
  item.append(body);
}

/**
 * Make `list` (the page's `<ol>` of lines) a viewer driven by its controls: `follow` (checkbox),
 * `search` (input), `kinds` (the element the kind checkboxes go in) and `count` (where the count is
 * written); `lines` are the lines already drawn in it. Returns `add(line)`, for each live line.
 */
export function logViewerMount({ list, follow, search, kinds, count, lines = [] }) {
  const bySeq = new Map(lines.map((line) => [line.seq, line]));
  list.addEventListener("click", (event) => {
    const button = event.target.closest?.("button.line-json");
    if (button) jsonToggle(button, (seq) => bySeq.get(seq));
  });
  const filter = { hiddenKinds: new Set(), query: "" };
  const entries = [];
  const kindTallies = new Map();
  const tally = { total: 0, kindShown: 0, matched: 0 };

  const atEnd = () => list.scrollHeight - list.scrollTop - list.clientHeight <= END_SLACK_PX;
  const toEnd = () => { list.scrollTop = list.scrollHeight; };

  function kindSeen(event) {
    let kind = kindTallies.get(event);
    if (!kind) {
      const label = document.createElement("label");
      label.className = "small";
      label.dataset.kind = event;
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = true;
      box.value = event;
      box.addEventListener("change", () => {
        if (box.checked) filter.hiddenKinds.delete(event);
        else filter.hiddenKinds.add(event);
        refilter();
      });
      const number = document.createElement("span");
      number.className = "muted";
      label.append(box, ` ${event} `, number);
      const after = [...kinds.querySelectorAll("label[data-kind]")].find((other) => other.dataset.kind > event);
      kinds.insertBefore(label, after ?? null);
      kind = { number, lines: 0 };
      kindTallies.set(event, kind);
    }
    kind.lines += 1;
    kind.number.textContent = String(kind.lines);
  }

  // Draw the entry as the filter has it; redraw its words only when a mark comes or goes.
  function place(entry) {
    const fate = lineFate(entry, filter);
    const marked = fate.eventRanges.length > 0 || fate.textRanges.length > 0;
    if (marked || entry.marked) {
      draw(entry.eventElement, entry.event, fate.eventRanges);
      draw(entry.textElement, entry.text, fate.textRanges);
      entry.marked = marked;
    }
    entry.item.hidden = !fate.shown;
    tally.total += 1;
    if (fate.kindShown) tally.kindShown += 1;
    if (fate.shown) tally.matched += 1;
    return fate;
  }

  function showCount() {
    count.textContent = countText({ ...tally, query: filter.query });
  }

  function refilter() {
    Object.assign(tally, { total: 0, kindShown: 0, matched: 0 });
    for (const entry of entries) place(entry);
    showCount();
    if (follow.checked) toEnd();
  }

  function track(item) {
    const eventElement = item.querySelector(".event");
    const textElement = item.querySelector(".text");
    const entry = { item, eventElement, textElement, event: eventElement.textContent,
      text: textElement.textContent, marked: false };
    entries.push(entry);
    kindSeen(entry.event);
    return entry;
  }

  for (const item of list.querySelectorAll("li")) place(track(item));
  showCount();

  let searchTimer;
  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      filter.query = search.value.trim();
      refilter();
    }, SEARCH_PAUSE_MS);
  });
  follow.addEventListener("change", () => { if (follow.checked) toEnd(); });
  // Scrolling up to read is pausing; Follow comes back on with its checkbox.
  list.addEventListener("scroll", () => { if (follow.checked && !atEnd()) follow.checked = false; });
  list.closest("details")?.addEventListener("toggle", () => { if (follow.checked) toEnd(); });
  if (follow.checked) toEnd();
  list.dataset.viewer = "ready";

  return {
    add(line) {
      bySeq.set(line.seq, line);
      const item = lineItem(line);
      list.append(item);
      const fate = place(track(item));
      showCount();
      if (follow.checked && fate.shown) toEnd();
    },
  };
}
