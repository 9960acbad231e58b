// What the node page's log viewer shows of a line: whether its kind is shown, where a search matches it,
// and the words for how many lines are shown. Pure functions (no DOM), unit-tested in
// tests/js/log-filter.test.mjs; static/js/log-viewer.js applies them to the page.

/** Where `query` occurs in `text`, case-insensitively, as non-overlapping [start, end) pairs. */
export function matchRanges(text, query) {
  if (!query) return [];
  const haystack = text.toLowerCase();
  const needle = query.toLowerCase();
  const ranges = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
    ranges.push([at, at + needle.length]);
  }
  return ranges;
}

/** `text` cut at `ranges` into the pieces to draw: `{ text, match }`, matches to be marked. */
export function highlightParts(text, ranges) {
  const parts = [];
  let from = 0;
  for (const [start, end] of ranges) {
    if (start > from) parts.push({ text: text.slice(from, start), match: false });
    parts.push({ text: text.slice(start, end), match: true });
    from = end;
  }
  if (from < text.length || !parts.length) parts.push({ text: text.slice(from), match: false });
  return parts;
}

/**
 * How one line fares under `filter` ({ hiddenKinds: Set of event kinds, query }): `kindShown` unless
 * its kind is hidden; with a query, `matched` when its kind or its text holds it (with the ranges of
 * each); `shown` when both hold.
 */
export function lineFate({ event, text }, { hiddenKinds, query }) {
  const kindShown = !hiddenKinds.has(event);
  const eventRanges = matchRanges(event, query);
  const textRanges = matchRanges(text, query);
  const matched = !query || eventRanges.length > 0 || textRanges.length > 0;
  return { kindShown, matched, shown: kindShown && matched, eventRanges, textRanges };
}

function lines(count) {
  return count === 1 ? "1 line" : `${count.toLocaleString("en")} lines`;
}

/**
 * The viewer's count: `total` lines, `kindShown` of them of a shown kind, `matched` of those holding
 * the `query`.
 */
export function countText({ total, kindShown, matched, query }) {
  if (query) return matched === 1 ? "1 matching line" : `${matched.toLocaleString("en")} matching lines`;
  if (kindShown < total) return `${kindShown.toLocaleString("en")} of ${lines(total)} shown`;
  return lines(total);
}
