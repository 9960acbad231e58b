// Unified diffs drawn by diff2html (node_modules/diff2html, served as static/vendor/diff2html), with a
// switch between one column and side by side. A diff is agent-written text: it reaches the page as
// JSON (json_script), and diff2html escapes every line and file name before it builds its markup.

const FORMATS = { unified: "line-by-line", split: "side-by-side" };

function draw(target, diff, format) {
  const ui = new window.Diff2HtmlUI(target, diff, {
    outputFormat: FORMATS[format],
    drawFileList: true,
    fileListToggle: true,
    fileListStartVisible: false,
    fileContentToggle: false,
    matching: "lines",
    highlight: true,
    synchronisedScroll: true,
    // Light or dark as the page is (prefers-color-scheme).
    colorScheme: "auto",
  });
  ui.draw();
  ui.highlightCode();
  // What is placed on a drawing (review-diff.js) is placed again on each new one.
  target.dispatchEvent(new CustomEvent("diff-drawn", { bubbles: true }));
}

/** Draw every `[data-diff-source]` element of `root` from the JSON script element it names. */
export function diffViewsShow(root = document) {
  for (const target of root.querySelectorAll("[data-diff-source]")) {
    const source = document.getElementById(target.dataset.diffSource);
    if (!source || !window.Diff2HtmlUI) continue;
    const diff = JSON.parse(source.textContent);
    const switcher = document.createElement("div");
    switcher.className = "diff-switch";
    const canvas = document.createElement("div");
    for (const format of Object.keys(FORMATS)) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "secondary small";
      button.dataset.format = format;
      button.textContent = format === "unified" ? "Unified" : "Side by side";
      button.addEventListener("click", () => {
        switcher.querySelectorAll("button").forEach((other) => other.setAttribute("aria-pressed", String(other === button)));
        draw(canvas, diff, format);
      });
      switcher.append(button);
    }
    target.replaceChildren(switcher, canvas);
    switcher.querySelector("button").click();
  }
}
