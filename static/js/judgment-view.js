// A judgment and a failure classification as they read, drawn from the readings the server computes
// (graphs/domain/judgment_words.py, in each attempt of /executions/<id>/detail.json): the same markup
// as templates/console/_judgment_reading.html and _failure_reading.html. Every word is agent or engine
// text: it only ever goes into textContent.

export function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text) node.textContent = text;
  return node;
}

function capitalised(text) {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}

/** Name/value facts as a small definition list, inside a closed "Technical details". */
export function technicalDetails(facts) {
  const list = el("dl", { class: "small" });
  for (const [name, text] of facts) {
    const value = el("dd");
    value.append(el("code", {}, String(text)));
    list.append(el("dt", {}, name), value);
  }
  const details = el("details", { class: "technical" });
  details.append(el("summary", {}, "Technical details"), list);
  return details;
}

/** A judgment: a pass/fail chip, who judged, its issues as a list, its other facts and raw JSON folded. */
export function judgmentBlock(reading, raw) {
  const block = el("div", { class: "judgment-reading", "data-verdict": reading.verdict });
  const head = el("p");
  head.append(el("span", { class: `status status-${reading.verdict === "pass" ? "succeeded" : "failed"} verdict` }, reading.verdict),
    " ", el("span", { class: "muted small" }, `judged by ${reading.judged_by}`));
  block.append(head);
  if (reading.issues.length) {
    const issues = el("ul", { class: "issues" });
    for (const issue of reading.issues) issues.append(el("li", {}, issue));
    block.append(issues);
  } else if (reading.verdict === "fail") {
    block.append(el("p", { class: "muted small" }, "The judge named no issue."));
  }
  if (reading.facts.length) block.append(technicalDetails(reading.facts));
  const rawDetails = el("details", { class: "raw" });
  rawDetails.append(el("summary", {}, "Raw JSON"), el("pre", { class: "output json" }, JSON.stringify(raw, null, 2)));
  block.append(rawDetails);
  return block;
}

/** A failure classification: its category in words, how sure, and the evidence. */
export function failureBlock(reading) {
  const block = el("div", { class: "failure", "data-category": reading.category });
  const head = el("p");
  head.append(el("strong", {}, capitalised(reading.words)), " ",
    el("span", { class: "muted small" }, `${reading.category} · ${reading.confidence_text}`));
  block.append(head);
  if (reading.evidence.length) {
    block.append(el("p", { class: "small" }, "Evidence:"));
    const evidence = el("ul", { class: "evidence" });
    for (const line of reading.evidence) {
      const item = el("li");
      item.append(el("code", {}, line));
      evidence.append(item);
    }
    block.append(evidence);
  }
  if (reading.note) block.append(el("p", { class: "muted small" }, reading.note));
  return block;
}
