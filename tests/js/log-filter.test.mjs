// Unit tests of static/js/log-filter.js, the node page's log viewer rules: `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { countText, highlightParts, lineFate, matchRanges } from "../../static/js/log-filter.js";

test("a search matches case-insensitively, every occurrence, never overlapping", () => {
  assert.deepEqual(matchRanges("Bash ls · bash pwd", "BASH"), [[0, 4], [10, 14]]);
  assert.deepEqual(matchRanges("aaaa", "aa"), [[0, 2], [2, 4]]);
  assert.deepEqual(matchRanges("anything", ""), []);
  assert.deepEqual(matchRanges("nothing here", "absent"), []);
});

test("a line's text is cut into plain and matched pieces that add up to it", () => {
  assert.deepEqual(highlightParts("run ls then ls", [[4, 6], [12, 14]]), [
    { text: "run ", match: false }, { text: "ls", match: true }, { text: " then ", match: false }, { text: "ls", match: true },
  ]);
  assert.deepEqual(highlightParts("ls", [[0, 2]]), [{ text: "ls", match: true }]);
  assert.deepEqual(highlightParts("", []), [{ text: "", match: false }]);
});

test("a line of a hidden kind is not shown, whatever the search", () => {
  const fate = lineFate({ event: "tool_call", text: "Bash ls" }, { hiddenKinds: new Set(["tool_call"]), query: "ls" });
  assert.equal(fate.kindShown, false);
  assert.equal(fate.matched, true);
  assert.equal(fate.shown, false);
});

test("with a search, a line is shown when its text or its kind holds it", () => {
  const filter = { hiddenKinds: new Set(), query: "result" };
  assert.equal(lineFate({ event: "tool_result", text: "a.py" }, filter).shown, true);
  assert.deepEqual(lineFate({ event: "tool_result", text: "a.py" }, filter).eventRanges, [[5, 11]]);
  assert.equal(lineFate({ event: "node_text", text: "The result is in" }, filter).shown, true);
  assert.equal(lineFate({ event: "node_text", text: "nothing" }, filter).shown, false);
});

test("without a search, every line of a shown kind is shown", () => {
  const fate = lineFate({ event: "node_text", text: "x" }, { hiddenKinds: new Set(["tool_call"]), query: "" });
  assert.deepEqual(fate, { kindShown: true, matched: true, shown: true, eventRanges: [], textRanges: [] });
});

test("the count says how many lines are shown or match", () => {
  assert.equal(countText({ total: 1200, kindShown: 1200, matched: 1200, query: "" }), "1,200 lines");
  assert.equal(countText({ total: 1, kindShown: 1, matched: 1, query: "" }), "1 line");
  assert.equal(countText({ total: 30, kindShown: 12, matched: 12, query: "" }), "12 of 30 lines shown");
  assert.equal(countText({ total: 30, kindShown: 12, matched: 3, query: "ls" }), "3 matching lines");
  assert.equal(countText({ total: 30, kindShown: 12, matched: 1, query: "ls" }), "1 matching line");
});
