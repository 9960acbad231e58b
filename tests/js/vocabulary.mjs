// The status vocabulary the server generates (tests/fixtures/status/vocabulary.json, held to
// graphs.runs.vocabulary by tests/test_status_vocabulary.py), given to the scripts as a page would:
// a test module that draws statuses imports this first.
import { readFileSync } from "node:fs";

import { statusVocabularyUse } from "../../static/js/status-vocabulary.js";

export const vocabulary = JSON.parse(readFileSync(new URL("../fixtures/status/vocabulary.json", import.meta.url)));
statusVocabularyUse(vocabulary);
