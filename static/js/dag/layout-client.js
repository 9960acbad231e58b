/**
 * The page's one layout worker, shared by every graph on the page.
 *
 * One worker, not a pool: starting ELK in a fresh worker (fetch, compile, class initialisation,
 * cold JIT) costs ~0.7 s on a 2-core machine, and a second worker pays it again while competing
 * for the same cores. Measured on the 1,000-node benchmark: 1.5 s to ELK's drawing with one
 * worker, 2.0 s with two. Bands queue in the worker and are placed as they return.
 */

const WORKER_URL = new URL("./layout-worker.js", import.meta.url);
/** Where the static storage serves elkjs's `lib/` (see the STATICFILES_DIRS entry "vendor/elkjs"). */
const DEFAULT_ELK_URL = new URL("../../vendor/elkjs/elk.bundled.js", import.meta.url);

/**
 * @typedef {{width: number, height: number, xy: Float64Array, routes: number[][]}} ElkResult
 */

class LayoutClient {
  /** @param {string} elkUrl */
  constructor(elkUrl) {
    this.elkUrl = elkUrl;
    /** @type {Worker | null} */
    this.worker = null;
    /** @type {Map<number, {resolve: Function, reject: Function}>} */
    this.pending = new Map();
    this.nextId = 1;
  }

  /**
   * Starts the worker, at the first layout: a page painting the server's layout or a cached one never
   * pays for loading ELK (its script is compiled on the worker's thread, but the cores are shared).
   */
  warm() {
    if (this.worker) return;
    const url = new URL(WORKER_URL);
    url.searchParams.set("elk", this.elkUrl);
    this.worker = new Worker(url);
    this.worker.onmessage = (event) => this.settle(event.data);
    this.worker.onerror = (event) => this.failAll(new Error(event.message || "layout worker failed to load"));
  }

  /**
   * Lays out one ELK graph.
   * @param {object} graph ELK JSON graph (children in a deterministic order)
   * @param {Record<string, string>} options ELK layout options
   * @returns {Promise<ElkResult>}
   */
  layout(graph, options) {
    this.warm();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, graph, options });
    });
  }

  settle(message) {
    const job = this.pending.get(message.id);
    if (!job) return;
    this.pending.delete(message.id);
    if (message.error) job.reject(new Error(`layout failed: ${message.error}`));
    else job.resolve(message);
  }

  /** A worker that cannot load fails every waiting job; the next layout starts a new one. */
  failAll(error) {
    for (const job of this.pending.values()) job.reject(error);
    this.pending.clear();
    this.worker.terminate();
    this.worker = null;
  }
}

/** @type {Map<string, LayoutClient>} */
const clients = new Map();

/**
 * The page-wide layout client for one ELK script URL.
 * @param {string} [elkUrl]
 * @returns {LayoutClient}
 */
export function layoutClient(elkUrl = DEFAULT_ELK_URL.href) {
  if (!clients.has(elkUrl)) clients.set(elkUrl, new LayoutClient(elkUrl));
  return clients.get(elkUrl);
}
