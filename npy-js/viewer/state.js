// What the viewer's modules share: the record tests and the bench read
// (`globalThis.npyViewer`), downloads, errors shown in a panel, and typed element lookup.

import { NpyError } from "../js/index.js";

/**
 * One open file: its tab and panel, and what is shown in it.
 * @typedef {object} Tab
 * @property {string} name
 * @property {HTMLButtonElement} button
 * @property {HTMLElement} panel
 * @property {import("../js/open.js").NpzFile} [archive]
 * @property {Blob} [blob] the File the tab opened, if it opened one
 * @property {(row: number) => void} [scrollToRow] moves the rows grid to a row (tests use it)
 * @property {() => (number | null | [number, number, number])[]} [shownSlice] the index (as NpyFile.select takes it) of the slice the image view shows
 */

/** What tests and the bench read. */
export const stats = {
  /** Bytes read from Files and Blobs, by tab name. */
  bytesRead: /** @type {Record<string, number>} */ ({}),
  /** When each tab's first rows showed, in ms since its open started. */
  firstRows: /** @type {Record<string, number>} */ ({}),
  /** The last file the page offered for download: `{name, blob}`. */
  lastExport: /** @type {{name: string, blob: Blob} | null} */ (null),
  /** Tabs opened so far. */
  tabs: /** @type {Tab[]} */ ([]),
  /** When the page was ready (its module instantiated), in ms since it began to load. */
  readyMs: 0,
  /**
   * The last statistics the Statistics view computed (stats.js): `ms` in all, `statsMs`
   * the statistics' pass alone (the histogram's is a second), `bytes` the column's.
   */
  lastStats: /** @type {{label: string, path: string, ms: number, statsMs: number, bytes: number, summary: import("./moments.js").Summary, edges: number[] | null, counts: number[] | null} | null} */ (null),
  /** The last filter the Statistics view ran (filter.js): its matching rows' count and the first rows. */
  lastFilter: /** @type {{label: string, expression: string, count: number, rows: number[], ms: number} | null} */ (null),
  /** Whether the page is ready for files. */
  ready: false,
  /** Opens a source in a new tab (set by viewer.js). */
  open: /** @type {((source: unknown, name: string, blob?: Blob) => Promise<Tab>) | null} */ (null),
};
/** @type {{npyViewer?: typeof stats}} */ (globalThis).npyViewer = stats;

/**
 * The element of `root` that `selector` finds, as type `T` (the panel template has it).
 * @template {Element} [T=HTMLElement]
 * @param {ParentNode} root
 * @param {string} selector
 * @returns {T}
 */
export function $(root, selector) {
  const found = root.querySelector(selector);
  if (found === null) throw new Error(`the viewer's page has no ${selector}`);
  return /** @type {T} */ (/** @type {unknown} */ (found));
}

/**
 * Shows `e` in the error box of the tab's panel that holds `within`: the package's
 * message, or an unexpected error's.
 * @param {HTMLElement} within
 * @param {unknown} e
 */
export function showError(within, e) {
  const box = $(within.closest(".panel") ?? within, ".error");
  box.textContent = e instanceof NpyError ? e.message : `Unexpected error: ${e instanceof Error ? e.message : String(e)}`;
  box.hidden = false;
}

/**
 * Offers `blob` as a download named `name`.
 * @param {Blob} blob
 * @param {string} name
 */
export function offer(blob, name) {
  stats.lastExport = { name, blob };
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * A file name made of `label` (a tab's or member's), without characters file systems refuse.
 * @param {string} label
 */
export function fileStem(label) {
  return label.replace(/[^\w.-]+/g, "_").replace(/\.np[yz]$/, "");
}
