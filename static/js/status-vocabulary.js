// The status vocabulary the server generates from its models (graphs.runs.vocabulary) and puts on every
// page as <script id="status-vocabulary" type="application/json">: which run and attempt statuses are
// finished or under way, and the words each reads as. Scripts ask here rather than keep a copy.

let pageVocabulary = null;

/** The page's vocabulary, read once. */
export function statusVocabulary() {
  if (!pageVocabulary) {
    pageVocabulary = JSON.parse(document.getElementById("status-vocabulary").textContent);
  }
  return pageVocabulary;
}

/** Use `vocabulary` where there is no page to read it from (the front-end unit tests). */
export function statusVocabularyUse(vocabulary) {
  pageVocabulary = vocabulary;
}

/** Whether a run with `status` has ended: nothing more happens to it. */
export function runFinished(status, vocabulary = statusVocabulary()) {
  return vocabulary.run.finished.includes(status);
}

/** Whether an attempt with `status` has ended. */
export function attemptFinished(status, vocabulary = statusVocabulary()) {
  return vocabulary.attempt.finished.includes(status);
}

/** The attempt statuses a graph too large to fit legibly opens on, in order of preference. */
export function focusStatuses(vocabulary = statusVocabulary()) {
  return vocabulary.attempt.focus;
}

/** The words a status reads as ("awaiting approval"), whichever kind of status it is; "—" for none. */
export function statusWords(status, vocabulary = statusVocabulary()) {
  if (!status) return "—";
  for (const kind of ["run", "attempt", "task"]) {
    const words = vocabulary[kind].words[status];
    if (words) return words;
  }
  return String(status);
}
