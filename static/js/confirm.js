// Destructive forms ask first: a form with data-confirm="question" opens one shared <dialog>, and is
// submitted (with the button that was pressed) only when the question is answered yes. With
// data-confirm-for="reject", only the button with data-action="reject" asks.
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

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
  const submitter = event.submitter;
  const only = form.dataset.confirmFor;
  if (only && submitter?.dataset.action !== only) return;
  if (form.dataset.confirmed === "yes") {
    delete form.dataset.confirmed;
    return;
  }
  event.preventDefault();
  pending = { form, submitter };
  question.textContent = form.dataset.confirm;
  dialog.returnValue = "";
  dialog.showModal();
  keep.focus();
});

dialog.addEventListener("close", () => {
  const chosen = pending;
  pending = null;
  if (!chosen || dialog.returnValue !== "go") return;
  chosen.form.dataset.confirmed = "yes";
  chosen.form.requestSubmit(chosen.submitter ?? undefined);
});
