/**
 * Node titles cut to a box's width without two boxes reading the same: a name too long is cut with
 * an ellipsis, and when two different names would be cut to the same text, each keeps the tail that
 * tells it apart ("review-backend-cas…-a", "review-backend-cas…-b"). Pure: the width of a text comes
 * from the `measure` function handed in (labels.js measures with a canvas).
 */

/** Where a tail may start: after one of these, so "…-a" or "…_dataset" rather than "…aset". */
const SEPARATORS = new Set(["-", "_", ".", "/", ":", " "]);
/** A distinguishing tail is widened to the whole last word when that word is at most this long. */
const WORD_MAX = 12;

/**
 * `text` cut to `room` px: the longest head + "…" + `tail` that fits (the whole text when it fits).
 * @param {string} text
 * @param {number} room
 * @param {(text: string) => number} measure
 * @param {string} [tail]
 */
export function cutToFit(text, room, measure, tail = "") {
  if (!tail && measure(text) <= room) return text;
  const head = tail ? text.slice(0, text.length - tail.length) : text;
  let low = 0;
  let high = head.length;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (measure(`${head.slice(0, mid)}…${tail}`) <= room) low = mid;
    else high = mid - 1;
  }
  return `${head.slice(0, low)}…${tail}`;
}

/**
 * The shortest end of `name` that no other name of `others` ends with, widened to a separator (the
 * whole last word when short), or "" when `name` is a suffix of another.
 * @param {string} name
 * @param {string[]} others
 */
export function distinguishingTail(name, others) {
  for (let length = 1; length < name.length; length++) {
    const tail = name.slice(-length);
    if (others.some((other) => other !== name && other.endsWith(tail))) continue;
    return widen(name, name.length - length);
  }
  return "";
}

function widen(name, start) {
  if (start > 0 && SEPARATORS.has(name[start - 1])) return name.slice(start - 1);
  let word = start;
  while (word > 0 && !SEPARATORS.has(name[word - 1])) word -= 1;
  if (name.length - word <= WORD_MAX && word > 0) return name.slice(word - 1);
  return name.slice(start);
}

/**
 * Every name's text in a box `room` px wide: cut with an ellipsis when too long, and where two
 * different names would read the same, each with its distinguishing tail after the ellipsis.
 * @param {string[]} names
 * @param {number} room
 * @param {(text: string) => number} measure
 * @returns {Map<string, string>} name → the text drawn
 */
export function distinctCuts(names, room, measure) {
  const unique = [...new Set(names)];
  const shown = new Map(unique.map((name) => [name, cutToFit(name, room, measure)]));
  const byText = new Map();
  for (const [name, text] of shown) {
    if (!byText.has(text)) byText.set(text, []);
    byText.get(text).push(name);
  }
  for (const clash of byText.values()) {
    if (clash.length < 2) continue;
    for (const name of clash) {
      const tail = distinguishingTail(name, clash);
      if (tail) shown.set(name, cutToFit(name, room, measure, tail));
    }
  }
  return shown;
}
