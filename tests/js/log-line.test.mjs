// Unit tests of static/js/log-line.js against the cases graphs/logs/lines.py is held to: `node --test tests/js/`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { describeLine } from "../../static/js/log-line.js";

const cases = JSON.parse(readFileSync(new URL("../fixtures/log_lines/summaries.json", import.meta.url)));

for (const { line, summary } of cases) {
  test(`a ${line.event} line reads "${summary}"`, () => {
    assert.equal(describeLine(line), summary);
  });
}
