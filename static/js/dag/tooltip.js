/**
 * The hover card of the run graph: a box's full facts (labels.js's boxFacts) beside the pointer,
 * or beside a box focused from the keyboard. Text only (textContent), never markup.
 */
import { boxFacts } from "./labels.js";

const OFFSET = 14;

/** @param {HTMLElement} stage */
export function createTooltip(stage) {
  const card = document.createElement("div");
  card.className = "dag-tooltip";
  card.setAttribute("role", "tooltip");
  card.id = `dag-tooltip-${Math.random().toString(36).slice(2, 8)}`;
  card.hidden = true;
  stage.appendChild(card);
  let shown = null;

  /**
   * Shows `box`'s facts with the card's corner near (x, y), in stage px; kept inside the stage.
   * @param {object | null} box
   */
  function show(box, x, y) {
    if (!box) {
      hide();
      return;
    }
    if (box !== shown) {
      card.replaceChildren(...boxFacts(box).map((line, index) => {
        const row = document.createElement("div");
        row.className = index === 0 ? "dag-tooltip-name" : "dag-tooltip-fact";
        row.textContent = line;
        return row;
      }));
      shown = box;
    }
    card.hidden = false;
    const width = card.offsetWidth;
    const height = card.offsetHeight;
    const left = x + OFFSET + width > stage.clientWidth ? Math.max(0, x - OFFSET - width) : x + OFFSET;
    const top = y + OFFSET + height > stage.clientHeight ? Math.max(0, y - OFFSET - height) : y + OFFSET;
    card.style.transform = `translate(${Math.round(left)}px, ${Math.round(top)}px)`;
  }

  function hide() {
    if (!card.hidden) card.hidden = true;
    shown = null;
  }

  return { element: card, show, hide };
}
