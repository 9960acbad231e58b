// Unit tests of static/js/dag/theme.js's inks and the dag.css values they read: `node --test tests/js/`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { minimapInks, sceneInks } from "../../static/js/dag/theme.js";

const css = readFileSync(new URL("../../static/css/dag.css", import.meta.url), "utf8");
const themeSource = readFileSync(new URL("../../static/js/dag/theme.js", import.meta.url), "utf8");
const dark = css.slice(css.indexOf("@media (prefers-color-scheme: dark)"));

/** The value dag.css gives a custom property in `block` (the first one set there). */
function cssValue(block, name) {
  const found = block.match(new RegExp(`${name}:\\s*([^;]+);`));
  return found && found[1].trim();
}

function luminance(value) {
  const hex = value.match(/^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i);
  const rgb = hex ? hex.slice(1).map((part) => parseInt(part, 16)) : value.match(/[\d.]+/g).slice(0, 3).map(Number);
  const channel = (c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
  const [r, g, b] = rgb.map(channel);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function withStyle(properties, read) {
  const before = globalThis.getComputedStyle;
  globalThis.getComputedStyle = () => ({ getPropertyValue: (name) => properties[name] ?? "" });
  try {
    return read({});
  } finally {
    globalThis.getComputedStyle = before;
  }
}

test("the minimap takes its inks from the page's custom properties, light ones when none is set", () => {
  const set = withStyle({ "--dag-minimap-ground": " #111620 ", "--dag-minimap-frame": "#475569",
                          "--dag-minimap-view": "#93c5fd" }, minimapInks);
  assert.deepEqual(set, { ground: "#111620", frame: "#475569", view: "#93c5fd" });

  const unset = withStyle({}, minimapInks);
  assert.ok(luminance(unset.ground) > 0.8, unset.ground);
  assert.ok(luminance(unset.view) < 0.3, unset.view);
});

test("dark mode sets every ink the renderers and the minimap read", () => {
  const names = [...themeSource.matchAll(/read\("(--dag-[a-z-]+)"/g)].map((match) => match[1]);
  assert.ok(names.length >= 9, names);
  assert.deepEqual(names.filter((name) => !cssValue(dark, name)), []);
  withStyle({}, sceneInks);  // reading them without a stylesheet falls back, never throws
});

test("in dark mode the minimap's ground is dark and its outline light enough to see on it", () => {
  const ground = luminance(cssValue(dark, "--dag-minimap-ground"));
  const view = luminance(cssValue(dark, "--dag-minimap-view"));
  assert.ok(ground < 0.05, `ground luminance ${ground}`);
  assert.ok((view + 0.05) / (ground + 0.05) >= 3, "the outline is under 3:1 on the ground");
  const light = css.slice(0, css.indexOf("@media (prefers-color-scheme: dark)"));
  assert.ok(luminance(cssValue(light, "--dag-minimap-ground")) > 0.8);
});
