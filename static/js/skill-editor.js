// Skill editor: a plain textarea whose preview and team-template panel follow the text as it is typed.
// The server renders and sanitizes (nh3) the Markdown and parses the template, so the page shows
// exactly what the skill page will show; nothing is rendered in the browser.

const form = document.querySelector("[data-skill-editor]");

// The same words as templates/skills/_template_panel.html: notes leave the template usable, problems do not.
const templateSummary = (count, usable) => {
  const one = count === 1;
  return usable
    ? `${count} note${one ? "" : "s"}: planning uses the template and leaves out what ${one ? "it names" : "they name"}.`
    : `${count} problem${one ? "" : "s"}: the team template is not used until ${one ? "it is" : "they are"} fixed.`;
};
const PAUSE_MS = 300;

if (form) {
  const textarea = form.querySelector("textarea[name=body]");
  const csrf = form.querySelector("[name=csrfmiddlewaretoken]").value;
  const preview = document.getElementById("skill-preview");
  const state = document.getElementById("preview-state");
  const warnings = document.getElementById("template-warnings");
  const none = document.getElementById("template-none");
  const json = document.getElementById("template-json");
  const summary = document.getElementById("template-summary");
  let timer = null;
  let inFlight = null;

  const showTemplate = (data) => {
    warnings.replaceChildren(
      ...data.warnings.map((text) => Object.assign(document.createElement("li"), { textContent: text })),
    );
    warnings.hidden = data.warnings.length === 0;
    summary.textContent = templateSummary(data.warnings.length, Boolean(data.template_json));
    summary.hidden = data.warnings.length === 0;
    json.textContent = data.template_json;
    json.hidden = !data.template_json;
    none.hidden = Boolean(data.template_json) || data.warnings.length > 0;
  };

  const refresh = async () => {
    inFlight?.abort();
    inFlight = new AbortController();
    const body = new FormData();
    body.append("body", textarea.value);
    state.textContent = "updating…";
    try {
      const response = await fetch(form.dataset.previewUrl, {
        method: "POST",
        body,
        headers: { "X-CSRFToken": csrf },
        credentials: "same-origin",
        signal: inFlight.signal,
      });
      const data = await response.json();
      if (!response.ok) {
        state.textContent = data.error || `preview failed (${response.status})`;
        return;
      }
      preview.innerHTML = data.html; // sanitized on the server
      showTemplate(data);
      state.textContent = "";
    } catch (error) {
      if (error.name !== "AbortError") state.textContent = "preview unavailable";
    }
  };

  textarea.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, PAUSE_MS);
  });
}
