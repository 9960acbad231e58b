// What an amount of dollars reads as: the same rule as graphs/domain/money_words.py, which renders the
// figures a page starts with (tests/fixtures/money/amounts.json holds both to the same cases).
// Four decimals; a positive amount too small to show in four reads "< $0.0001", never "$0.0000",
// which is kept for an exact zero; an unknown amount reads "—". A lower bound (a total over calls some
// of which reported no cost) reads "at least $0.0520", or "more than $0" when what was reported is too
// small to show.

const SMALLEST = 0.0001;

/**
 * @param {?number} usd
 * @param {{lowerBound?: boolean}} [options]
 * @returns {string} "$0.0520", "< $0.0001", "$0.0000" or "—" (null); "at least …" for a lower bound
 */
export function usdText(usd, { lowerBound = false } = {}) {
  if (typeof usd !== "number") return "—";
  const tiny = usd > 0 && usd < SMALLEST;
  if (lowerBound) return tiny ? "more than $0" : `at least $${usd.toFixed(4)}`;
  return tiny ? "< $0.0001" : `$${usd.toFixed(4)}`;
}
