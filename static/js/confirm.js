// Destructive forms ask first: a form with data-confirm="question" opens one shared <dialog>, and is
// submitted (with the button that was pressed) only when the question is answered yes. With
// data-confirm-for="reject", only the button with data-action="reject" asks.
//
// While the dialog is open its form carries data-confirm-pending, which live pages read to leave that
// form in place (live-regions.js); closing it fires `confirm:closed` on the document. Should the form
// have been replaced all the same, the yes goes to its successor on the page — the form with the same
// action, given the values typed into the one asked about — never silently nowhere.
const dialog = document.createElement("dialog");
dialog.className = "confirm-dialog";
dialog.setAttribute("aria-labelledby", "confirm-question");
const question = document.createElement("p");
question.id = "confirm-question";
const buttons = document.createElement("form");
buttons.method = "dialog";
buttons.className = "row";
const keep = document.createElement("button");
keep.value = "keep";
keep.className = "secondary";
keep.textContent = "Go back";
const go = document.createElement("button");
go.value = "go";
go.className = "danger";
go.textContent = "Yes, do it";
buttons.append(keep, go);
dialog.append(question, buttons);
document.body.append(dialog);

let pending = null;

/**
 * A button with data-needs="field" submits only with that field filled (Reject needs its reason): an
 * empty one is said beside the field, before any question is asked, and the field takes the focus.
 */
function needsRefused(form, submitter) {
  const field = submitter?.dataset.needs ? form.elements.namedItem(submitter.dataset.needs) : null;
  if (!field || field.value.trim()) return false;
  let said = form.querySelector("[data-needs-error]");
  if (!said) {
    said = document.createElement("span");
    said.className = "error small";
    said.dataset.needsError = "";
    said.setAttribute("role", "alert");
    field.after(said);
    field.addEventListener("input", () => { said.remove(); field.removeAttribute("aria-invalid"); }, { once: true });
  }
  said.textContent = submitter.dataset.needsMessage || "This is needed.";
  field.setAttribute("aria-invalid", "true");
  field.focus();
  return true;
}

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
  const submitter = event.submitter;
  if (needsRefused(form, submitter)) {
    event.preventDefault();
    return;
  }
  const only = form.dataset.confirmFor;
  if (only && submitter?.dataset.action !== only) return;
  if (form.dataset.confirmed === "yes") {
    delete form.dataset.confirmed;
    return;
  }
  event.preventDefault();
  pending = { form, submitter };
  form.dataset.confirmPending = "";
  question.textContent = form.dataset.confirm;
  dialog.returnValue = "";
  dialog.showModal();
  keep.focus();
});

function successor({ form, submitter }) {
  if (form.isConnected) return { form, submitter };
  const action = form.getAttribute("action") ?? "";
  const fresh = [...document.querySelectorAll("form[data-confirm]")].find((f) => (f.getAttribute("action") ?? "") === action);
  if (!fresh) return null;
  for (const field of form.elements) {
    if (!field.name || field.type === "hidden" || field.type === "submit") continue;
    const twin = fresh.elements.namedItem(field.name);
    if (twin && "value" in twin) twin.value = field.value;
  }
  const pressed = submitter?.dataset.action;
  return { form: fresh, submitter: pressed ? fresh.querySelector(`[data-action="${CSS.escape(pressed)}"]`) : null };
}

dialog.addEventListener("close", () => {
  const chosen = pending;
  pending = null;
  if (chosen) delete chosen.form.dataset.confirmPending;
  const target = chosen && dialog.returnValue === "go" ? successor(chosen) : null;
  if (target) {
    target.form.dataset.confirmed = "yes";
    target.form.requestSubmit(target.submitter ?? undefined);
  }
  document.dispatchEvent(new CustomEvent("confirm:closed"));
});
