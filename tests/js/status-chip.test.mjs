// Unit tests of static/js/status-chip.js against the cases the templates' `words` filter is held to.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { statusWords } from "../../static/js/status-chip.js";

const cases = JSON.parse(readFileSync(new URL("../fixtures/status/words.json", import.meta.url)));

for (const { status, words } of cases) {
  test(`${JSON.stringify(status)} reads "${words}"`, () => {
    assert.equal(statusWords(status), words);
  });
}
