// A press under way — a pointer down and not yet up — and the live swaps that must wait for its end.
//
// A browser sends a click to the element where both the press and the release landed; when a live page
// swaps the element under the pointer between the two (a region refreshed, the side panel redrawn), the
// click goes to the common ancestor instead, and a link pressed is never followed. So a swap of anything
// holding the pressed element waits until the release: the click, dispatched with the release, goes to
// the element the person pressed, and the swap follows it.

let pressed = null;
const waiting = [];

function released() {
  pressed = null;
  // After the click that the release dispatches in the same task, never before it.
  for (const callback of waiting.splice(0)) setTimeout(callback, 0);
}

document.addEventListener("pointerdown", (event) => {
  pressed = event.target;
}, true);
for (const type of ["pointerup", "pointercancel"]) document.addEventListener(type, released, true);
// A release outside the window may never reach the page.
window.addEventListener("blur", released);

/** Whether a press under way began inside `region`. */
export function pressedWithin(region) {
  return pressed instanceof Node && region.contains(pressed);
}

/** Call `callback` once no press is under way: at once when none is, else just after the release's click. */
export function afterPress(callback) {
  if (pressed === null) callback();
  else waiting.push(callback);
}
