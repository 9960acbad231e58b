// Unit tests of static/js/status-chip.js and status-vocabulary.js against the cases the templates'
// `words` filter is held to, with the vocabulary the server generates (tests/test_status_vocabulary.py
// holds tests/fixtures/status/vocabulary.json to graphs.runs.vocabulary).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { vocabulary } from "./vocabulary.mjs";
import { statusWords } from "../../static/js/status-chip.js";
import { attemptFinished, runFinished } from "../../static/js/status-vocabulary.js";

const cases = JSON.parse(readFileSync(new URL("../fixtures/status/words.json", import.meta.url)));

for (const { status, words } of cases) {
  test(`${JSON.stringify(status)} reads "${words}"`, () => {
    assert.equal(statusWords(status, vocabulary), words);
  });
}

test("a run that planned nothing, was rejected or cancelled has finished; one awaiting approval has not", () => {
  for (const status of ["planning_failed", "rejected", "cancelled"]) assert.ok(runFinished(status, vocabulary), status);
  assert.equal(runFinished("awaiting_approval", vocabulary), false);
});

test("a partial attempt has finished; a queued one has not", () => {
  assert.ok(attemptFinished("partial", vocabulary));
  assert.equal(attemptFinished("queued", vocabulary), false);
});
