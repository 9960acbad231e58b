/**
 * The graph's minimap: the whole drawing in a corner of the stage, one status-coloured block per
 * box, with the part on screen outlined. Clicking or dragging in it moves the view there. The boxes
 * are painted once per scene (and after live updates) into an offscreen canvas, so a pan frame
 * only copies that picture and strokes one rectangle: cheap at thousands of nodes. Its ground and
 * outline take the colour scheme's inks (theme.js minimapInks), read again when the scheme changes.
 */
import { boxTone } from "./box-parts.js";
import { minimapInks } from "./theme.js";

const WIDTH = 180;
const HEIGHT = 120;
const INSET = 6;

/**
 * @param {HTMLElement} stage
 * @param {object} handlers
 * @param {(x: number, y: number) => void} handlers.onMove  centre the view on this world point
 */
export function createMinimap(stage, { onMove }) {
  const canvas = document.createElement("canvas");
  canvas.className = "dag-minimap";
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", "Minimap of the whole graph: click or drag to move the view");
  canvas.hidden = true;
  stage.appendChild(canvas);
  const picture = document.createElement("canvas");
  const ctx = canvas.getContext("2d");
  let scene = null;
  let fit = { scale: 1, x: 0, y: 0 };
  let view = null;
  let dragging = null;
  let inks = minimapInks(canvas);

  function paintBoxes() {
    inks = minimapInks(canvas);
    const dpr = window.devicePixelRatio || 1;
    for (const target of [canvas, picture]) {
      target.width = Math.round(WIDTH * dpr);
      target.height = Math.round(HEIGHT * dpr);
    }
    const paint = picture.getContext("2d");
    paint.setTransform(dpr, 0, 0, dpr, 0, 0);
    paint.clearRect(0, 0, WIDTH, HEIGHT);
    paint.fillStyle = inks.ground;
    paint.fillRect(0, 0, WIDTH, HEIGHT);
    if (!scene) return;
    const { bounds } = scene;
    const scale = Math.min((WIDTH - 2 * INSET) / bounds.w, (HEIGHT - 2 * INSET) / bounds.h);
    fit = {
      scale,
      x: INSET + (WIDTH - 2 * INSET - bounds.w * scale) / 2 - bounds.x * scale,
      y: INSET + (HEIGHT - 2 * INSET - bounds.h * scale) / 2 - bounds.y * scale,
    };
    const byTone = new Map();
    for (const box of scene.boxes) {
      const tone = boxTone(box);
      if (!byTone.has(tone)) byTone.set(tone, new Path2D());
      // At least a pixel, or a large graph's boxes would vanish.
      byTone.get(tone).rect(fit.x + box.x * scale, fit.y + box.y * scale, Math.max(1, box.w * scale), Math.max(1, box.h * scale));
    }
    for (const [tone, path] of byTone) {
      paint.fillStyle = tone;
      paint.fill(path);
    }
  }

  function draw() {
    if (canvas.hidden) return;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(picture, 0, 0);
    if (!view) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const { t, width, height } = view;
    const x = fit.x + (-t.tx / t.scale) * fit.scale;
    const y = fit.y + (-t.ty / t.scale) * fit.scale;
    ctx.strokeStyle = inks.view;
    ctx.lineWidth = 2;
    ctx.strokeRect(x, y, (width / t.scale) * fit.scale, (height / t.scale) * fit.scale);
  }

  function moveTo(event) {
    // The picture is drawn WIDTH × HEIGHT and shown at the size the stylesheet gives it.
    const rect = canvas.getBoundingClientRect();
    const x = ((event.clientX - rect.left) * WIDTH) / rect.width;
    const y = ((event.clientY - rect.top) * HEIGHT) / rect.height;
    onMove((x - fit.x) / fit.scale, (y - fit.y) / fit.scale);
  }

  // The minimap sits on the stage: its pointer events must not pan or tap the drawing below.
  canvas.addEventListener("pointerdown", (event) => {
    event.stopPropagation();
    if (event.button !== 0) return;
    dragging = event.pointerId;
    canvas.setPointerCapture(event.pointerId);
    moveTo(event);
  });
  canvas.addEventListener("pointermove", (event) => {
    event.stopPropagation();
    if (dragging === event.pointerId) moveTo(event);
  });
  const release = (event) => {
    event.stopPropagation();
    dragging = null;
  };
  canvas.addEventListener("pointerup", release);
  canvas.addEventListener("pointercancel", release);
  window.matchMedia?.("(prefers-color-scheme: dark)").addEventListener("change", () => {
    paintBoxes();
    draw();
  });

  return {
    element: canvas,
    /** @param {import("./scene.js").Scene | null} next */
    setScene(next) {
      scene = next;
      paintBoxes();
      draw();
    },
    /** Repaints the boxes after live updates changed their status. */
    refresh() {
      paintBoxes();
      draw();
    },
    /**
     * Outlines what is on screen, and shows the minimap only while part of the drawing is not.
     * @param {{scale: number, tx: number, ty: number} | null} t
     */
    setView(t, width, height) {
      view = t ? { t, width, height } : null;
      const b = scene && scene.bounds;
      const outside = Boolean(t && b) && (
        b.x * t.scale + t.tx < -1 || b.y * t.scale + t.ty < -1
        || (b.x + b.w) * t.scale + t.tx > width + 1 || (b.y + b.h) * t.scale + t.ty > height + 1);
      if (canvas.hidden === outside) canvas.hidden = !outside;
      draw();
    },
    hide() {
      if (!canvas.hidden) canvas.hidden = true;
    },
  };
}
