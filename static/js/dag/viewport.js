/**
 * Pan and zoom for one surface: wheel zooms around the pointer, dragging pans, a click that did
 * not move is a tap, and the keyboard can do all of it (+/- zoom, arrows pan, 0 fits). The state
 * is a plain transform, screen = world × scale + (tx, ty), handed to the renderer on change.
 */

const MAX_SCALE = 3;
/** The smallest zoom at which a timeline's 12 px lane names stay legible. */
const READABLE = 0.75;
const DRAG_SLOP = 4;
const KEY_PAN = 80;

/**
 * @param {HTMLElement} surface  the element that receives input (it is made focusable)
 * @param {object} handlers
 * @param {(t: {scale: number, tx: number, ty: number}) => void} handlers.onChange
 * @param {(event: PointerEvent, world: {x: number, y: number}) => void} handlers.onTap
 * @param {() => void} handlers.onFitKey
 */
export function createViewport(surface, { onChange, onTap, onFitKey }) {
  let t = { scale: 1, tx: 0, ty: 0 };
  let minScale = 0.02;
  let drag = null;

  function set(next) {
    t = next;
    onChange(t);
  }

  function zoomAt(px, py, factor) {
    const scale = Math.min(MAX_SCALE, Math.max(minScale, t.scale * factor));
    const ratio = scale / t.scale;
    set({ scale, tx: px - (px - t.tx) * ratio, ty: py - (py - t.ty) * ratio });
  }

  function local(event) {
    const rect = surface.getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  }

  function onWheel(event) {
    event.preventDefault();
    const { x, y } = local(event);
    const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1;
    zoomAt(x, y, Math.exp(-event.deltaY * unit * 0.0015));
  }

  function onPointerDown(event) {
    if (event.button !== 0) return;
    drag = { id: event.pointerId, start: local(event), origin: { ...t }, moved: false };
  }

  function onPointerMove(event) {
    if (!drag || drag.id !== event.pointerId) return;
    const point = local(event);
    const dx = point.x - drag.start.x;
    const dy = point.y - drag.start.y;
    if (!drag.moved && Math.hypot(dx, dy) < DRAG_SLOP) return;
    if (!drag.moved) {
      drag.moved = true;
      surface.setPointerCapture(event.pointerId);
      surface.classList.add("is-panning");
    }
    set({ scale: t.scale, tx: drag.origin.tx + dx, ty: drag.origin.ty + dy });
  }

  function onPointerUp(event) {
    if (!drag || drag.id !== event.pointerId) return;
    const wasTap = !drag.moved;
    drag = null;
    surface.classList.remove("is-panning");
    if (wasTap) {
      const point = local(event);
      onTap(event, { x: (point.x - t.tx) / t.scale, y: (point.y - t.ty) / t.scale });
    }
  }

  function onKeyDown(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const center = { x: surface.clientWidth / 2, y: surface.clientHeight / 2 };
    const pans = { ArrowLeft: [KEY_PAN, 0], ArrowRight: [-KEY_PAN, 0], ArrowUp: [0, KEY_PAN], ArrowDown: [0, -KEY_PAN] };
    if (event.key === "+" || event.key === "=") zoomAt(center.x, center.y, 1.25);
    else if (event.key === "-" || event.key === "_") zoomAt(center.x, center.y, 0.8);
    else if (event.key === "0") onFitKey();
    else if (pans[event.key] && event.target === surface) {
      set({ scale: t.scale, tx: t.tx + pans[event.key][0], ty: t.ty + pans[event.key][1] });
    } else return;
    event.preventDefault();
  }

  surface.addEventListener("wheel", onWheel, { passive: false });
  surface.addEventListener("pointerdown", onPointerDown);
  surface.addEventListener("pointermove", onPointerMove);
  surface.addEventListener("pointerup", onPointerUp);
  surface.addEventListener("pointercancel", onPointerUp);
  surface.addEventListener("keydown", onKeyDown);

  return {
    get transform() {
      return t;
    },
    set,
    /** Zooms by `factor` around the surface's centre. */
    zoom(factor) {
      zoomAt(surface.clientWidth / 2, surface.clientHeight / 2, factor);
    },
    /**
     * Frames the drawing with a fit's transform (legibility.js); zooming out may go to half of
     * `whole`, the zoom that shows all of it.
     */
    fitTo(next, whole) {
      minScale = Math.min(0.02, whole / 2);
      set({ scale: next.scale, tx: next.tx, ty: next.ty });
    },
    /**
     * Shows all of `bounds`, never enlarged past 1:1 (small graphs stay at their natural size).
     * With `readable`, never shrinks below READABLE either and shows the top-left corner: a long
     * timeline opens at its start with legible lanes rather than as a sliver.
     * @param {{x: number, y: number, w: number, h: number}} bounds
     * @param {{readable?: boolean}} [options]
     */
    fit(bounds, { readable = false } = {}) {
      const width = surface.clientWidth || 1;
      const height = surface.clientHeight || 1;
      const whole = Math.min(1, width / bounds.w, height / bounds.h);
      const scale = readable ? Math.min(1, Math.max(READABLE, whole)) : whole;
      minScale = Math.min(0.02, whole / 2);
      const spareX = width - bounds.w * scale;
      set({
        scale,
        tx: (readable && spareX < 0 ? 0 : spareX / 2) - bounds.x * scale,
        ty: Math.max(0, (height - bounds.h * scale) / 2) - bounds.y * scale,
      });
    },
    destroy() {
      surface.removeEventListener("wheel", onWheel);
      surface.removeEventListener("pointerdown", onPointerDown);
      surface.removeEventListener("pointermove", onPointerMove);
      surface.removeEventListener("pointerup", onPointerUp);
      surface.removeEventListener("pointercancel", onPointerUp);
      surface.removeEventListener("keydown", onKeyDown);
    },
  };
}
