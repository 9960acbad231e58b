/**
 * Canvas 2D renderer, for scenes with hundreds to thousands of boxes, where an SVG element per box
 * makes layout, painting and every pan/zoom frame slow. Link geometry becomes one Path2D per link
 * style, built once per scene, so a frame strokes a handful of paths; boxes and text outside the
 * view are skipped, and below readable zoom boxes are drawn as solid status-coloured blocks without
 * text. Clicks are hit-tested against a uniform grid of box rectangles, built at the first click
 * rather than with the scene, which is on the way to the first paint.
 *
 * @typedef {object} Renderer
 * @property {Element} element
 * @property {(scene: import("./scene.js").Scene) => void} setScene
 * @property {() => void} refresh   redraw after live updates
 * @property {(t: {scale: number, tx: number, ty: number}) => void} setTransform
 * @property {(event: PointerEvent, world: {x: number, y: number}) => object | null} pick
 * @property {() => object | null} focused
 * @property {(scale: number) => number} labelScale  the zoom titles are drawn at (0: not drawn)
 * @property {() => void} destroy
 */
import { boxParts, boxTone } from "./box-parts.js";
import { FONTS, firedLabel, textWidth } from "./labels.js";
import { LINK, sceneInks } from "./theme.js";

const CELL = 256;
/** Below this zoom text is under ~6 px: draw blocks only. */
const TEXT_ZOOM = 0.45;
const ARROW = 9;

/** @param {HTMLElement} host @returns {Renderer} */
export function createCanvasRenderer(host) {
  const canvas = document.createElement("canvas");
  canvas.className = "dag-surface dag-canvas";
  host.appendChild(canvas);
  const ctx = canvas.getContext("2d");
  let scene = null;
  let strokes = [];
  /** @type {Map<string, object[]> | null} */
  let grid = null;
  let transform = { scale: 1, tx: 0, ty: 0 };
  let frame = 0;
  let inks = sceneInks(host);

  const resize = new ResizeObserver(() => schedule());
  resize.observe(host);

  function setScene(next) {
    scene = next;
    inks = sceneInks(host);
    strokes = buildStrokes(scene.links);
    grid = null;
    schedule();
  }

  function schedule() {
    if (!frame) frame = requestAnimationFrame(draw);
  }

  function draw() {
    frame = 0;
    const dpr = window.devicePixelRatio || 1;
    const width = host.clientWidth;
    const height = host.clientHeight;
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    if (!scene) return;
    const { scale, tx, ty } = transform;
    ctx.setTransform(dpr * scale, 0, 0, dpr * scale, dpr * tx, dpr * ty);
    const view = { x: -tx / scale, y: -ty / scale, w: width / scale, h: height / scale };
    drawBands(view);
    // Loop-backs go over the boxes: an arc hidden under a node would seem to start from it.
    drawLinks(scale, (style) => style !== "on_failure");
    drawBoxes(view, scale);
    drawTexts(view, scale, (text) => !text.pinned);
    drawLinks(scale, (style) => style === "on_failure");
    drawArcLabels(view, scale);
    drawPinned(dpr, scale, tx, ty, view);
  }

  /** The timeline's lane names, on a backdrop, kept in view sideways (as the SVG renderer does). */
  function drawPinned(dpr, scale, tx, ty, view) {
    const pinned = scene.texts.filter((text) => text.pinned);
    if (!pinned.length) return;
    const left = Math.max(tx, scene.gutter * scale);
    ctx.setTransform(dpr * scale, 0, 0, dpr * scale, dpr * left, dpr * ty);
    ctx.fillStyle = inks.halo;
    ctx.fillRect(-scene.gutter, view.y, scene.gutter - 2, view.h);
    drawTexts({ ...view, x: -scene.gutter }, scale, (text) => text.pinned);
  }

  function drawBands(view) {
    ctx.fillStyle = inks.bandFill;
    ctx.strokeStyle = inks.bandStroke;
    ctx.lineWidth = 1;
    for (const band of scene.bands) {
      if (!intersects(band, view)) continue;
      ctx.beginPath();
      ctx.roundRect(band.x, band.y, band.w, band.h, 12);
      ctx.fill();
      if (band.label) ctx.stroke();
    }
  }

  function drawLinks(scale, wanted) {
    // Keep lines at least ~1 px and dashes their screen size when zoomed out, or they vanish.
    const stretch = Math.max(1, 1 / scale);
    for (const { style, path, heads } of strokes) {
      if (!wanted(style)) continue;
      const spec = LINK[style];
      // Zoomed out, thousands of data edges would bury the nodes and the loop-backs: fade them.
      ctx.globalAlpha = scale < TEXT_ZOOM && style !== "on_failure" ? 0.35 : 1;
      ctx.strokeStyle = style === "grid" ? inks.grid : spec.color;
      ctx.lineWidth = Math.max(spec.width, 1 / scale);
      ctx.setLineDash(spec.dash.map((value) => value * stretch));
      ctx.stroke(path);
      if (scale > 0.25) {
        ctx.fillStyle = spec.color;
        ctx.fill(heads);
      }
    }
    ctx.globalAlpha = 1;
    ctx.setLineDash([]);
  }

  function drawBoxes(view, scale) {
    if (scale < TEXT_ZOOM) {
      // One fill per colour: thousands of boxes cost a few draw calls.
      const byTone = new Map();
      for (const box of scene.boxes) {
        if (!intersects(box, view)) continue;
        const tone = boxTone(box);
        if (!byTone.has(tone)) byTone.set(tone, new Path2D());
        byTone.get(tone).rect(box.x, box.y, box.w, box.h);
      }
      for (const [tone, path] of byTone) {
        ctx.fillStyle = tone;
        ctx.fill(path);
      }
      return;
    }
    for (const box of scene.boxes) {
      if (!intersects(box, view)) continue;
      ctx.save();
      ctx.translate(box.x, box.y);
      drawParts(boxParts(box));
      ctx.restore();
    }
  }

  function drawParts(parts) {
    for (const part of parts) {
      if (part.t === "rect") {
        ctx.beginPath();
        ctx.roundRect(part.x, part.y, part.w, part.h, part.r);
        if (part.fill) {
          ctx.fillStyle = part.fill;
          ctx.fill();
        }
        if (part.stroke) {
          ctx.strokeStyle = part.stroke;
          ctx.lineWidth = part.lw || 1;
          ctx.setLineDash(part.dash || []);
          ctx.stroke();
          ctx.setLineDash([]);
        }
      } else {
        ctx.font = part.font;
        ctx.fillStyle = part.color;
        ctx.textAlign = part.align || "left";
        ctx.fillText(part.text, part.x, part.y);
      }
    }
  }

  /**
   * Stage labels keep their screen size at any zoom, on a white halo: they are how a large run is
   * read from afar. Lane names and time ticks never shrink below 9 px, and disappear only when the
   * lanes themselves get too thin to read (zoom < 0.3).
   */
  function drawTexts(view, scale, wanted) {
    for (const text of scene.texts) {
      if (!wanted(text)) continue;
      const font = FONTS[text.role];
      const screenPx = scale * Number(font.match(/(\d+)px/)[1]);
      let grow = 1;
      if (text.role === "band") grow = Math.max(1, 1 / scale);
      else if (screenPx < 9) {
        if (scale < 0.3) continue;
        grow = 9 / screenPx;
      }
      if (text.y < view.y - 20 * grow || text.y > view.y + view.h + 20 * grow) continue;
      ctx.save();
      ctx.translate(text.x, text.y);
      ctx.scale(grow, grow);
      ctx.font = font;
      ctx.textAlign = text.align || "left";
      if (text.role === "band") {
        ctx.strokeStyle = inks.halo;
        ctx.lineWidth = 4;
        ctx.lineJoin = "round";
        ctx.strokeText(text.text, 0, 0);
      }
      ctx.fillStyle = text.role === "band" ? inks.bandText : inks.text;
      ctx.fillText(text.text, 0, 0);
      ctx.restore();
    }
  }

  /**
   * Fired counts keep their screen size when zoomed out: how often a loop-back fired is news.
   * Zoomed out, only loop-backs that fired are labelled, or the labels would bury the graph.
   */
  function drawArcLabels(view, scale) {
    const grow = Math.max(1, 1 / scale);
    ctx.font = FONTS.arc;
    ctx.textAlign = "center";
    for (const link of scene.links) {
      if (!link.labelAt || (scale < TEXT_ZOOM && !link.edge.fired)) continue;
      const [x, y] = link.labelAt;
      if (x < view.x - 40 * grow || x > view.x + view.w + 40 * grow || y < view.y - 20 * grow || y > view.y + view.h + 20 * grow) continue;
      const label = firedLabel(link.edge);
      const width = textWidth(label, FONTS.arc) + 14;
      ctx.save();
      ctx.translate(x, y);
      ctx.scale(grow, grow);
      ctx.globalAlpha = link.edge.fired ? 1 : 0.75;
      ctx.beginPath();
      ctx.roundRect(-width / 2, -10, width, 20, 10);
      ctx.fillStyle = "#ffffff";
      ctx.fill();
      ctx.strokeStyle = LINK.on_failure.color;
      ctx.lineWidth = 1.5;
      ctx.stroke();
      ctx.fillStyle = "#991b1b";
      ctx.fillText(label, 0, 4);
      ctx.restore();
    }
  }

  return {
    element: canvas,
    setScene,
    refresh: schedule,
    setTransform(t) {
      transform = t;
      schedule();
    },
    /** @returns {number} the zoom box titles are drawn at: 0 below TEXT_ZOOM, where boxes are blocks */
    labelScale: (scale) => (scale < TEXT_ZOOM ? 0 : scale),
    pick(_event, world) {
      if (!scene) return null;
      grid ||= buildGrid(scene.boxes);
      const cell = grid.get(cellKey(Math.floor(world.x / CELL), Math.floor(world.y / CELL))) || [];
      for (let i = cell.length - 1; i >= 0; i--) {
        const box = cell[i];
        if (world.x >= box.x && world.x <= box.x + box.w && world.y >= box.y && world.y <= box.y + box.h) return box;
      }
      return null;
    },
    focused: () => null,
    destroy() {
      cancelAnimationFrame(frame);
      resize.disconnect();
      canvas.remove();
    },
  };
}

function intersects(rect, view) {
  return rect.x < view.x + view.w && rect.x + rect.w > view.x && rect.y < view.y + view.h && rect.y + rect.h > view.y;
}

function cellKey(cx, cy) {
  return `${cx},${cy}`;
}

/**
 * One Path2D of lines and one of arrowheads per link style. Each is parsed from one joined path
 * string (every link's path starts with its own M): for thousands of links that is several times
 * faster than a Path2D per link, and than drawing the heads with a call per point.
 */
function buildStrokes(links) {
  const byStyle = new Map();
  for (const link of links) {
    if (!byStyle.has(link.style)) byStyle.set(link.style, { style: link.style, paths: [], heads: [] });
    const entry = byStyle.get(link.style);
    entry.paths.push(link.d);
    if (link.arrow) entry.heads.push(headPath(link.arrow));
  }
  return [...byStyle.values()].map(({ style, paths, heads }) => ({
    style,
    path: new Path2D(paths.join("")),
    heads: new Path2D(heads.join("")),
  }));
}

/** @returns {string} the arrowhead at (x, y) pointing along `angle`, as a closed path */
function headPath([x, y, angle]) {
  const back = ARROW;
  const half = ARROW * 0.45;
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  return `M${x},${y}L${x - back * cos + half * sin},${y - back * sin - half * cos}` +
    `L${x - back * cos - half * sin},${y - back * sin + half * cos}Z`;
}

function buildGrid(boxes) {
  const grid = new Map();
  for (const box of boxes) {
    for (let cx = Math.floor(box.x / CELL); cx <= Math.floor((box.x + box.w) / CELL); cx++) {
      for (let cy = Math.floor(box.y / CELL); cy <= Math.floor((box.y + box.h) / CELL); cy++) {
        const key = cellKey(cx, cy);
        if (!grid.has(key)) grid.set(key, []);
        grid.get(key).push(box);
      }
    }
  }
  return grid;
}
