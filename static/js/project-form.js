// The project form checks its folder as it is typed: the folder and base ref go to the API's folder check
// (the function the server runs again on submit), and the panel says what it found — a git repository and
// the commit the base ref names, a plain folder whose changes are neither isolated nor recorded, or what is
// wrong. Every line is text (textContent): a path is whatever the user typed.

const form = document.getElementById("project-form");
const PAUSE_MS = 400;

if (form) {
  const folder = form.querySelector("[name=target_folder]");
  const baseRef = form.querySelector("[name=base_ref]");
  const csrf = form.querySelector("[name=csrfmiddlewaretoken]").value;
  const panel = document.getElementById("folder-check");
  const verdict = document.getElementById("folder-check-verdict");
  const lines = document.getElementById("folder-check-lines");
  let timer = null;
  let inFlight = null;

  const line = (text, fact, className = "") => {
    const item = Object.assign(document.createElement("li"), { textContent: text, className });
    item.dataset.fact = fact;
    return item;
  };

  const commitLine = (check) => {
    const item = line(`Base ref ${check.base_ref || "HEAD"} → commit `, "commit");
    item.append(Object.assign(document.createElement("code"), { textContent: check.commit }));
    return item;
  };

  const show = (check) => {
    const facts = [];
    if (check.exists) {
      facts.push(line(`The folder exists${check.readable ? " and the console can read it" : ""}.`, "readable"));
    }
    for (const note of check.notes) facts.push(line(note, check.repository ? "repository" : "not-repository"));
    if (check.commit) facts.push(commitLine(check));
    for (const problem of Object.values(check.problems)) facts.push(line(problem, "problem", "error"));
    verdict.textContent = check.ok ? "the folder can be used" : "the folder cannot be used yet";
    lines.replaceChildren(...facts);
    panel.hidden = false;
  };

  const refresh = async () => {
    if (!folder.value.trim()) return;
    inFlight?.abort();
    inFlight = new AbortController();
    verdict.textContent = "checking…";
    panel.hidden = false;
    try {
      const response = await fetch(form.dataset.checkUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
        credentials: "same-origin",
        body: JSON.stringify({ target_folder: folder.value, base_ref: baseRef.value }),
        signal: inFlight.signal,
      });
      const data = await response.json();
      if (response.ok) {
        show(data);
      } else {
        verdict.textContent = data.message || `the check failed (${response.status})`;
        lines.replaceChildren();
      }
    } catch (error) {
      if (error.name !== "AbortError") verdict.textContent = "the check could not reach the console";
    }
  };

  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, PAUSE_MS);
  };
  folder.addEventListener("input", later);
  baseRef.addEventListener("input", later);
  document.getElementById("folder-check-button").addEventListener("click", refresh);
}
