// Reviewing a change on the node page's diffs, over the server's plain review form: a reviewer clicks a
// line (or moves to it with the arrow keys and presses Enter) to open a comment box under it; a comment
// added there becomes a row of the review form (what the form posts, with or without this script) and
// waits, removable, under its line until the review is submitted. The comments of earlier reviews the
// server rendered in #review-inline are moved under the lines they name.
//
// Every word is the server's: the box, the pending comment and the form's row are clones of its
// <template>s, filled with a path, a line number and the reviewer's own text. diff2html draws the diffs
// again when their layout switches or the page's live parts are swapped; each draw fires `diff-drawn`,
// and whatever this script placed is placed again on the new drawing.

const PLACED = ".review-inline-row, .review-inline-spacer";
const LINE = "tr[data-review-line]";

// What is placed under lines: {kind: "comment" | "box" | "pending", element, path, anchors, row?, holders}.
let entries = [];
let inlineSource = null;
let lastFocus = null;
let lastLine = null;
let counter = 0;
let placing = false;

const number = (element) => {
  const value = Number.parseInt(element?.textContent.trim() ?? "", 10);
  return Number.isInteger(value) ? value : null;
};

// The path of a drawn file as its change names it: diff2html writes a renamed file `dir/{old → new}/rest`.
function wrapperPath(wrapper) {
  const name = wrapper.querySelector(".d2h-file-name")?.textContent.trim() ?? "";
  const renamed = name.match(/^(.*?)\{(.*) → (.*)\}(.*)$/);
  if (renamed) return renamed[1] + renamed[3] + renamed[4];
  return name.split(" → ").pop();
}

// The lines of a drawn file: the row each side draws a line in (one row unified, one per table side by
// side), with the line's number on each side.
function fileLines(wrapper) {
  const tables = [...wrapper.querySelectorAll(".d2h-diff-table")];
  const rows = (table) => [...table.querySelectorAll("tbody > tr")].filter((row) => !row.matches(PLACED));
  if (tables.length === 2) {
    const [left, right] = tables.map(rows);
    return right.map((row, index) => ({
      old: number(left[index]?.querySelector(".d2h-code-side-linenumber")), oldRow: left[index],
      new: number(row.querySelector(".d2h-code-side-linenumber")), newRow: row,
    }));
  }
  return tables.flatMap(rows).map((row) => ({
    old: number(row.querySelector(".line-num1")), oldRow: row, new: number(row.querySelector(".line-num2")), newRow: row,
  }));
}

function diffNamed(name) {
  return document.querySelector(`[data-review-diff="${name}"]`);
}

// Where line `line` of `path` is drawn on `side` of the diff named `diff`: its row and, side by side, the
// row beside it in the other table; null when that diff does not draw it.
function lineAt({ diff, side, path, line }) {
  const target = diffNamed(diff);
  for (const wrapper of target?.querySelectorAll(".d2h-file-wrapper") ?? []) {
    if (wrapperPath(wrapper) !== path) continue;
    const found = fileLines(wrapper).find((entry) => entry[side] === line);
    if (!found) continue;
    const row = side === "new" ? found.newRow : found.oldRow;
    const twin = side === "new" ? found.oldRow : found.newRow;
    return { row, twin: twin === row ? null : twin };
  }
  return null;
}

function lastPlacedAfter(row) {
  let after = row;
  while (after.nextElementSibling?.matches(PLACED)) after = after.nextElementSibling;
  return after;
}

function holderRow(className, content) {
  const holder = document.createElement("tr");
  holder.className = className;
  const cell = document.createElement("td");
  cell.colSpan = 2;
  cell.append(content);
  holder.append(cell);
  return holder;
}

// Put the entry's element under the first of its anchors drawn; side by side, an empty row as tall as it
// keeps the other table's lines level with this one's.
function place(entry) {
  for (const holder of entry.holders) holder.remove();
  entry.holders = [];
  entry.observer?.disconnect();
  for (const anchor of entry.anchors) {
    const at = lineAt({ ...anchor, path: entry.path });
    if (!at) continue;
    const holder = holderRow("review-inline-row", entry.element);
    const twinAfter = at.twin ? lastPlacedAfter(at.twin) : null;
    lastPlacedAfter(at.row).after(holder);
    entry.holders.push(holder);
    entry.anchor = anchor;
    if (twinAfter) {
      const space = document.createElement("div");
      const spacer = holderRow("review-inline-spacer", space);
      twinAfter.after(spacer);
      entry.holders.push(spacer);
      entry.observer = new ResizeObserver(() => { space.style.height = `${holder.offsetHeight}px`; });
      entry.observer.observe(holder);
    }
    return true;
  }
  return false;
}

function placedAt(entry) {
  return entry.holders.some((holder) => holder.isConnected);
}

function fill(element, values) {
  for (const [name, value] of Object.entries(values)) {
    for (const slot of element.querySelectorAll(`[data-fill="${name}"]`)) slot.textContent = value;
  }
  const title = element.querySelector("[data-review-title]");
  if (title && !title.id) {
    title.id = `review-title-${++counter}`;
    element.setAttribute("aria-labelledby", title.id);
  }
  return element;
}

function cloned(templateId) {
  return document.getElementById(templateId)?.content.firstElementChild.cloneNode(true) ?? null;
}

function lineRowFor({ diff, path, line }) {
  const at = lineAt({ diff, side: "new", path, line });
  return at?.row.matches(LINE) ? at.row : null;
}

function lineFocus(row) {
  if (!row) return;
  for (const other of row.closest("[data-review-diff]").querySelectorAll(LINE)) other.tabIndex = -1;
  row.tabIndex = 0;
  row.focus();
}

// --- the comment box and the comments waiting for the review ---------------------------------------

function boxOpen(row) {
  const where = { diff: row.closest("[data-review-diff]").dataset.reviewDiff, path: row.dataset.reviewPath,
    line: Number(row.dataset.reviewLine) };
  const open = entries.find((entry) => entry.kind === "box" && entry.path === where.path
    && entry.anchor?.diff === where.diff && entry.anchor.line === where.line);
  if (open) {
    open.element.querySelector("[data-review-text]").focus();
    return;
  }
  const element = cloned("review-box-template");
  if (!element) return;
  fill(element, { path: where.path, line: String(where.line) });
  const text = element.querySelector("[data-review-text]");
  text.setAttribute("aria-labelledby", element.getAttribute("aria-labelledby"));
  const entry = { kind: "box", element, path: where.path, anchors: [{ diff: where.diff, side: "new", line: where.line }], holders: [] };
  entries.push(entry);
  place(entry);
  element.querySelector("[data-review-act='add']").addEventListener("click", () => boxAdd(entry));
  element.querySelector("[data-review-act='cancel']").addEventListener("click", () => boxClose(entry));
  element.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      boxClose(entry);
    }
  });
  text.focus();
}

function entryDrop(entry) {
  for (const holder of entry.holders) holder.remove();
  entry.observer?.disconnect();
  entries = entries.filter((other) => other !== entry);
}

function boxClose(entry) {
  entryDrop(entry);
  lineFocus(lineRowFor({ ...entry.anchor, path: entry.path }));
}

function boxAdd(entry) {
  const text = entry.element.querySelector("[data-review-text]");
  if (!text.reportValidity()) return;
  const row = cloned("review-row-template");
  const rows = document.getElementById("review-comment-rows");
  if (!row || !rows) return;
  row.querySelector("[name='comment_path']").value = entry.path;
  row.querySelector("[name='comment_line']").value = String(entry.anchor.line);
  row.querySelector("[name='comment_body']").value = text.value;
  rows.querySelector(":scope > p").before(row);
  rowEnhance(row, entry.anchor.diff);
  boxClose(entry);
}

// A row of the review form, removable, with the comment it carries shown under its line.
function rowEnhance(row, diff) {
  row.dataset.enhanced = "true";
  const remove = row.querySelector("[data-review-act='remove-row']");
  remove.hidden = false;
  remove.addEventListener("click", () => {
    const entry = entries.find((other) => other.row === row);
    if (entry) entryDrop(entry);
    const next = row.nextElementSibling?.querySelector("select") ?? document.getElementById("review-body");
    row.remove();
    next?.focus();
  });
  const fields = ["comment_path", "comment_line", "comment_body"].map((name) => row.querySelector(`[name='${name}']`));
  for (const field of fields) field.addEventListener("change", () => pendingShow(row, diff));
  fields[2].addEventListener("input", () => {
    const entry = entries.find((other) => other.row === row);
    if (entry) fill(entry.element, { body: fields[2].value });
  });
  pendingShow(row, diff);
}

function pendingShow(row, diff) {
  const old = entries.find((other) => other.row === row);
  if (old) entryDrop(old);
  const path = row.querySelector("[name='comment_path']").value;
  const line = Number.parseInt(row.querySelector("[name='comment_line']").value, 10);
  if (!path || !Number.isInteger(line)) return;
  const element = fill(cloned("review-pending-template"), { path, line: String(line),
    body: row.querySelector("[name='comment_body']").value });
  const problems = row.querySelector(".review-row-problems");
  if (problems) element.querySelector("[data-fill='problems']").replaceChildren(problems.cloneNode(true));
  const names = diff ? [diff, "change", "since"] : ["change", "since"];
  const entry = { kind: "pending", element, path, row, holders: [],
    anchors: [...new Set(names)].map((name) => ({ diff: name, side: "new", line })) };
  element.querySelector("[data-review-act='remove']").addEventListener("click", () => {
    entryDrop(entry);
    row.remove();
    lineFocus(lineRowFor({ ...entry.anchor, path }));
  });
  entries.push(entry);
  place(entry);
}

// --- the lines of a diff, as the reviewer moves over them -------------------------------------------

function commentablePaths() {
  const template = document.getElementById("review-row-template");
  const options = template?.content.querySelectorAll("select[name='comment_path'] option") ?? [];
  return new Set([...options].map((option) => option.value).filter(Boolean));
}

// Make the lines a comment can name (those of the file as the attempt left it) reachable: one tab stop per
// diff, the arrow keys moving between its lines.
function linesMark(target, paths) {
  let first = null;
  for (const wrapper of target.querySelectorAll(".d2h-file-wrapper")) {
    const path = wrapperPath(wrapper);
    if (!paths.has(path)) continue;
    for (const line of fileLines(wrapper)) {
      if (line.new === null) continue;
      const row = line.newRow;
      row.dataset.reviewLine = String(line.new);
      row.dataset.reviewPath = path;
      row.tabIndex = -1;
      row.setAttribute("aria-describedby", "review-lines-hint");
      first ??= row;
    }
  }
  const again = lastLine && lastLine.diff === target.dataset.reviewDiff ? lineRowFor(lastLine) : null;
  if (again ?? first) (again ?? first).tabIndex = 0;
}

function lineKey(event) {
  const row = event.target.closest?.(LINE);
  if (!row || event.target !== row) return;
  const lines = [...row.closest("[data-review-diff]").querySelectorAll(LINE)];
  const at = lines.indexOf(row);
  const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: lines.length - 1 }[event.key];
  if (event.key === "Enter") {
    event.preventDefault();
    boxOpen(row);
  } else if (to !== undefined && lines[to]) {
    event.preventDefault();
    lineFocus(lines[to]);
  }
}

function lineClick(event) {
  const row = event.target.closest?.(LINE);
  if (!row || String(window.getSelection() ?? "")) return;
  lineFocus(row);
  boxOpen(row);
}

// --- placing it all again on each drawing -------------------------------------------------------------

function commentsRead() {
  const source = document.getElementById("review-inline");
  if (source === inlineSource) return;
  inlineSource = source;
  entries = entries.filter((entry) => entry.kind !== "comment");
  for (const element of source?.querySelectorAll(".review-inline") ?? []) {
    const anchors = element.dataset.anchors.split(" ").filter(Boolean).map((anchor) => {
      const [diff, side, line] = anchor.split(":");
      return { diff, side, line: Number(line) };
    });
    entries.push({ kind: "comment", element, path: element.dataset.path, anchors, holders: [] });
  }
}

function placeAll() {
  placing = false;
  // What had the reviewer's focus and went with the drawing it was in.
  const lost = lastFocus && !lastFocus.isConnected;
  commentsRead();
  const commentable = !!document.getElementById("review-box-template");
  const paths = commentable ? commentablePaths() : new Set();
  if (commentable) {
    for (const id of ["review-lines-hint", "review-rows-hint"]) {
      const hint = document.getElementById(id);
      if (hint) hint.hidden = false;
    }
  }
  for (const target of document.querySelectorAll("[data-review-diff]")) {
    if (commentable && !target.querySelector(LINE)) linesMark(target, paths);
  }
  // A comment waiting in a form the page swapped for a new one (the decisions it offers changed) went with it.
  for (const entry of entries.filter((other) => other.row && !other.row.isConnected)) entryDrop(entry);
  for (const entry of entries) if (!placedAt(entry)) place(entry);
  // The review form's rows: the server's (typed before a refusal), or a form that came with a live update.
  for (const row of document.querySelectorAll("#review-comment-rows [data-review-row]:not([data-enhanced])")) {
    rowEnhance(row, null);
  }
  // A drawing swapped under the reviewer's focus gives it back to what they were on.
  if (lost && document.activeElement === document.body) {
    const back = lastFocus.isConnected ? lastFocus : lastLine && lineRowFor(lastLine);
    back?.focus({ preventScroll: true });
  }
}

function placeSoon() {
  if (placing) return;
  placing = true;
  queueMicrotask(placeAll);
}

/** Start reviewing on the page's diffs (drawn already, or drawn later: each `diff-drawn` places again). */
export function reviewDiffsMount() {
  document.addEventListener("diff-drawn", placeSoon);
  document.addEventListener("keydown", lineKey);
  document.addEventListener("click", lineClick);
  document.addEventListener("focusin", (event) => {
    lastFocus = event.target;
    const row = event.target.closest?.(LINE);
    if (row) {
      lastLine = { diff: row.closest("[data-review-diff]").dataset.reviewDiff, path: row.dataset.reviewPath,
        line: Number(row.dataset.reviewLine) };
    }
  });
  placeAll();
}
