// A status chip, as templates/console/_status.html draws it: the stored word (`awaiting_approval`)
// stays in the class and data-status; the chip reads as the server's words for it ("awaiting approval").
import { statusWords } from "./status-vocabulary.js";

export { statusWords };

/** @param {string} status @returns {HTMLSpanElement} */
export function statusChip(status) {
  const chip = document.createElement("span");
  statusChipSet(chip, status);
  return chip;
}

/** Makes `chip` show `status`. */
export function statusChipSet(chip, status) {
  chip.className = `status status-${status}`;
  chip.dataset.status = status;
  chip.textContent = statusWords(status);
}
