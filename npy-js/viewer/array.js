// An array in a panel: its header, then its views, a button each (a tablist): the rows
// grid with its plot and exports first; each view is set up when first shown.

import { showHeader } from "./header.js";
import { imageApplies, setUpImage } from "./image.js";
import { setUpExports } from "./exports.js";
import { showMatrix, sliceMatrix } from "./matrix.js";
import { setUpPlot } from "./plot.js";
import { setUpRows } from "./rows.js";
import { setUpFilter } from "./filter.js";
import { setUpStats, statsLeaves } from "./stats.js";
import { setUpSlicer } from "./slice.js";
import { $, showError, stats } from "./state.js";

/**
 * What a view is given: the tab, the array's section of its panel, the file and its label.
 * @typedef {object} ViewContext
 * @property {import("./state.js").Tab} tab
 * @property {HTMLElement} box the array's section of the panel (its views are in it)
 * @property {HTMLElement} section the view's own section
 * @property {import("../js/open.js").NpyFile} file
 * @property {string} label what the tab calls the array (a file's or a member's name)
 * @property {Blob | undefined} npy the array's .npy file as it is, where it is a Blob or a slice of one
 */

/**
 * A view of an array: whether it applies to one, and how it is set up.
 * @typedef {object} ViewKind
 * @property {string} name its `data-view` in the panel template
 * @property {(file: import("../js/open.js").NpyFile) => boolean} applies
 * @property {(ctx: ViewContext) => Promise<void>} setUp
 */

/** @type {ViewKind[]} */
const VIEWS = [
  { name: "rows", applies: () => true, setUp: setUpRowsView },
  { name: "image", applies: imageApplies, setUp: setUpImage },
  { name: "matrix", applies: (file) => file.shape.length >= 2 && file.dtype.kind === "scalar", setUp: setUpMatrixView },
  { name: "stats", applies: (file) => statsLeaves(file).length > 0 || file.dtype.kind === "record", setUp: setUpStatsView },
];
/** The view an array opens on when it applies (a numeric array of 2 or more dims); else the first. */
const OPENS_ON = "image";

/**
 * Shows `file` in the tab's panel, replacing what was shown, on its first view that
 * applies; resolves once that view is on screen.
 * @param {import("./state.js").Tab} tab
 * @param {import("../js/open.js").NpyFile} file
 * @param {string} label
 * @param {number} began when the open started
 * @param {Blob} [npy] the array's .npy file as it is, where it is a Blob or a slice of one
 */
export async function showArray(tab, file, label, began, npy) {
  const panel = tab.panel;
  // A fresh copy of the template's section: nothing of the array shown before stays wired.
  /** @type {HTMLTemplateElement} */
  const template = $(document, "#panel");
  const box = /** @type {HTMLElement} */ ($(template.content, ".array").cloneNode(true));
  $(panel, ".array").replaceWith(box);
  box.hidden = false;
  $(panel, ".error").hidden = true;
  showHeader(box, file);
  const kinds = VIEWS.filter((v) => v.applies(file));
  /** @type {Map<string, Promise<void>>} */
  const started = new Map();
  const buttons = [...box.querySelectorAll(".views [role=tab]")].map((b) => /** @type {HTMLButtonElement} */ (b));
  const show = (/** @type {ViewKind} */ kind) => {
    for (const b of buttons) {
      const on = b.dataset.view === kind.name;
      b.setAttribute("aria-selected", String(on));
      b.tabIndex = on ? 0 : -1;
    }
    for (const s of box.querySelectorAll(".view")) /** @type {HTMLElement} */ (s).hidden = /** @type {HTMLElement} */ (s).dataset.view !== kind.name;
    let done = started.get(kind.name);
    if (done === undefined) {
      done = kind.setUp({ tab, box, section: $(box, `.view[data-view="${kind.name}"]`), file, label, npy });
      started.set(kind.name, done);
    }
    return done;
  };
  for (const b of buttons) {
    const kind = kinds.find((k) => k.name === b.dataset.view);
    b.hidden = kind === undefined;
    if (kind === undefined) continue;
    b.addEventListener("click", () => show(kind));
    b.addEventListener("keydown", (event) => {
      const i = kinds.indexOf(kind);
      const next = event.key === "ArrowRight" ? kinds[i + 1] : event.key === "ArrowLeft" ? kinds[i - 1] : undefined;
      if (next === undefined) return;
      show(next);
      buttons.find((x) => x.dataset.view === next.name)?.focus();
    });
  }
  await show(kinds.find((k) => k.name === OPENS_ON) ?? kinds[0]);
  // On screen: after the frame that paints it.
  await new Promise((painted) => requestAnimationFrame(() => setTimeout(painted, 0)));
  stats.firstRows[label] = performance.now() - began;
  performance.mark(`npy-rows:${label}`);
}

/**
 * The rows grid, the plot and the exports.
 * @param {ViewContext} ctx
 */
async function setUpRowsView({ tab, section, file, label, npy }) {
  const rows = await setUpRows(section, file);
  tab.scrollToRow = rows.scrollTo;
  setUpPlot(section, file, label, () => rows.selected);
  setUpExports(section, file, label, npy, () => [rows.first, Math.min(file.rowCount, rows.first + rows.visible)]);
}

/**
 * The matrix grid of a 2-d array, or of the 2-d slice of an N-d one its slicer chooses
 * (a slice shown anew on every change of it).
 * @param {ViewContext} ctx
 */
async function setUpMatrixView({ section, file }) {
  const failed = (/** @type {unknown} */ e) => showError(section, e);
  /** @type {ReturnType<typeof showMatrix> | undefined} */
  let shown;
  let axes = "";
  const show = () => {
    const c = slicer.choice();
    // Moving through the other axes keeps the selected cell; other axes shown start at 0, 0.
    const same = axes === `${c.rows},${c.cols}`;
    axes = `${c.rows},${c.cols}`;
    const at = same && shown ? shown.selected() : undefined;
    shown?.stop();
    shown = showMatrix(section, sliceMatrix(file, c, slicer.index), failed, at);
  };
  const slicer = setUpSlicer($(section, ".matrix-slicer"), file.shape, { rgb: false, onChange: show });
  show();
}

/**
 * The statistics of a column and, for records, the filter of rows.
 * @param {ViewContext} ctx
 */
async function setUpStatsView(ctx) {
  await setUpStats(ctx);
  await setUpFilter(ctx);
}
