// Statistics of a column: an array (all of it), a record's numeric field (a subarray field
// over all its values) or the slice an image shows. Count, min, max, mean, std, NaNs,
// zeros, ±inf as NumPy's nan-functions give them, and a histogram with np.histogram's bins,
// computed while the file is read a piece at a time (progress, cancel).

import { NpyError } from "../js/index.js";
import { Accumulator, binEdges, binRounding, histogramPiece, kindOf } from "./moments.js";
import { plotBins } from "./plot.js";
import { indexText, parseIndex } from "./slice.js";
import { $, showError, stats as record } from "./state.js";
import { Cancelled, streamRows, unlessAborted } from "./stream.js";

/** The bins a histogram has unless asked for others. */
export const DEFAULT_BINS = 50;

/**
 * @typedef {import("../js/open.js").NpyFile} NpyFile
 * @typedef {import("../js/array.js").NpyArray} NpyArray
 * @typedef {import("./moments.js").Numbers} Numbers
 * @typedef {import("./moments.js").Summary} Summary
 * @typedef {import("./stream.js").StreamOptions} StreamOptions
 * @typedef {import("./slice.js").Index} Index
 */

/**
 * The numeric leaves of an array: the columns statistics are offered for.
 * @param {NpyFile} file
 */
export function statsLeaves(file) {
  return file.leaves.filter((l) => /^(f[248]|[iu][1248]|b1|[Mm]8)/.test(l.dtype.type));
}

/**
 * A piece's values of `path` as numbers in a typed array (a view where the package gives
 * one), every value of a subarray field.
 * @param {NpyArray} piece
 * @param {string} path
 * @returns {Numbers}
 */
export function valuesOf(piece, path) {
  const column = path === "" && piece.dtype.kind !== "record" ? piece : piece.column(path);
  return /** @type {Numbers} */ (column.data);
}

/**
 * @typedef {object} StatsOptions
 * @property {number} [bins] the histogram's bins (default DEFAULT_BINS); 0: no histogram
 */

/**
 * The statistics of a column of `file` (`path`: a numeric leaf, `""` for a plain array),
 * read by ranges, and its histogram (a second pass, once the range is known):
 * `{summary, edges, counts, statsMs}`, `statsMs` the first pass's time.
 * @param {NpyFile} file
 * @param {string} path
 * @param {StreamOptions & StatsOptions} [options]
 */
export async function columnStats(file, path, options = {}) {
  const leaf = file.leaves.find((l) => l.path === path);
  if (leaf === undefined) {
    throw new NpyError(`reading '${file.name}': no numeric column '${path}': its columns are ${statsLeaves(file).map((l) => `'${l.path}'`).join(", ")}`, {
      kind: "usage",
      file: file.name,
    });
  }
  const kind = kindOf(leaf, file.name);
  const nat = /^[Mm]8/.test(leaf.dtype.type);
  const acc = new Accumulator(kind);
  const bins = options.bins ?? DEFAULT_BINS;
  const twice = bins > 0 ? 2 : 1;
  const progress = options.onProgress;
  const began = performance.now();
  await streamRows(file, (piece) => acc.add(valuesOf(piece, path), nat), {
    ...options,
    onProgress: progress && ((done, total) => progress(done, total * twice)),
  });
  const summary = acc.summary();
  const statsMs = performance.now() - began;
  if (bins === 0 || !(summary.finiteMin <= summary.finiteMax)) return { summary, edges: null, counts: null, statsMs };
  const round = binRounding(leaf.dtype.type);
  const edges = binEdges(summary.finiteMin, summary.finiteMax, bins, round);
  const counts = new Float64Array(bins);
  await streamRows(file, (piece) => histogramPiece(valuesOf(piece, path), kind, nat, edges, counts), {
    ...options,
    onProgress: progress && ((done, total) => progress(total + done, total * 2)),
  });
  return { summary, edges, counts, statsMs };
}

/**
 * The statistics of an array in memory (`path`: a numeric leaf, `""` for a plain array):
 * `{summary, edges, counts}`.
 * @param {NpyArray} array
 * @param {string} path
 * @param {StatsOptions & {name?: string}} [options] `name`: the file's, for errors
 */
export function arrayStats(array, path, options = {}) {
  const leaf = array.leaves.find((l) => l.path === path);
  if (leaf === undefined) {
    const columns = array.leaves.map((l) => `'${l.path}'`).join(", ");
    throw new NpyError(`reading '${options.name}': no column '${path}': the columns are ${columns}`, { kind: "usage", file: options.name });
  }
  const kind = kindOf(leaf, options.name);
  const nat = /^[Mm]8/.test(leaf.dtype.type);
  const values = valuesOf(array, path);
  const acc = new Accumulator(kind);
  acc.add(values, nat);
  const summary = acc.summary();
  const bins = options.bins ?? DEFAULT_BINS;
  if (bins === 0 || !(summary.finiteMin <= summary.finiteMax)) return { summary, edges: null, counts: null };
  const edges = binEdges(summary.finiteMin, summary.finiteMax, bins, binRounding(leaf.dtype.type));
  const counts = new Float64Array(bins);
  histogramPiece(values, kind, nat, edges, counts);
  return { summary, edges, counts };
}

/**
 * The statistics of a slice of `file` (the one an image shows: NumPy's basic index, as
 * `NpyFile.select` takes it), read alone by ranges: `{summary, edges, counts}`.
 * @param {NpyFile} file
 * @param {Index} index
 * @param {string} path
 * @param {StatsOptions & {signal?: AbortSignal}} [options]
 */
export async function selectionStats(file, index, path, options = {}) {
  const slice = await unlessAborted(file.select(index, { signal: options.signal }), options.signal, 0);
  return arrayStats(slice, path, { ...options, name: file.name });
}

// ---------------------------------------------------------------------------------------
// The view

/**
 * A value as the table shows it: a bigint as its digits, a double as JavaScript's
 * shortest round-trip text (what Python's repr of a float64 gives).
 * @param {number | bigint} v
 */
function text(v) {
  if (typeof v === "bigint") return v.toString();
  if (Number.isNaN(v)) return "nan";
  if (v === Infinity) return "inf";
  if (v === -Infinity) return "-inf";
  return String(v);
}

/**
 * The Statistics view: a column (every numeric leaf; a subarray field's values all
 * together), its statistics and histogram computed by streaming over the file, with
 * progress and a Cancel button.
 * @param {import("./array.js").ViewContext} ctx
 */
export async function setUpStats({ tab, section, file, label }) {
  /** @type {HTMLSelectElement} */
  const column = $(section, ".stats-column");
  /** @type {HTMLInputElement} */
  const binsInput = $(section, ".stats-bins");
  /** @type {HTMLButtonElement} */
  const run = $(section, ".stats-run");
  /** @type {HTMLButtonElement} */
  const cancel = $(section, ".stats-cancel");
  /** @type {HTMLProgressElement} */
  const bar = $(section, ".stats-progress");
  const status = $(section, ".stats-status");
  const table = $(section, ".stats-table tbody");
  /** @type {HTMLCanvasElement} */
  const canvas = $(section, ".stats-histogram");
  const binsTable = $(section, ".stats-bins-table tbody");
  /** @type {HTMLInputElement} */
  const sliceInput = $(section, ".stats-slice");
  // An array of two dims or more: statistics of a slice too (the one the image shows).
  $(section, ".stats-slice-label").hidden = file.shape.length < 2;
  /** @type {HTMLButtonElement} */
  const shown = $(section, ".stats-shown");
  // The image view, once set up, says which slice it shows: a button fills it in and runs.
  const offerShown = () => (shown.hidden = file.shape.length < 2 || tab.shownSlice === undefined);
  offerShown();
  new MutationObserver(offerShown).observe(section, { attributes: true, attributeFilter: ["hidden"] });
  shown.addEventListener("click", () => {
    if (tab.shownSlice === undefined) return;
    sliceInput.value = indexText(tab.shownSlice());
    run.click();
  });
  const leaves = statsLeaves(file);
  column.replaceChildren(
    ...leaves.map((l) => {
      const per = l.dims.reduce((n, d) => n * d, 1);
      const name = l.path || "the whole array";
      return new Option(per > 1 ? `${name} (${per} values a row)` : name, l.path);
    }),
  );
  column.disabled = run.disabled = leaves.length === 0;
  if (leaves.length === 0) status.textContent = "no numeric column";
  binsInput.value = String(DEFAULT_BINS);
  /** @type {AbortController | null} */
  let controller = null;
  cancel.addEventListener("click", () => controller?.abort());
  run.addEventListener("click", async () => {
    controller?.abort();
    const mine = new AbortController();
    controller = mine;
    const path = column.value;
    const sliceText = file.shape.length < 2 ? "" : sliceInput.value.trim();
    const name = `${path || "value"}${sliceText === "" ? "" : ` of [${sliceText}]`}`;
    const bins = Math.max(1, Math.min(10_000, Math.floor(Number(binsInput.value) || DEFAULT_BINS)));
    const began = performance.now();
    cancel.disabled = false;
    bar.hidden = false;
    bar.value = 0;
    status.textContent = `reading ${name}…`;
    section.dataset.state = "running";
    // What an earlier run showed goes: a cancelled or failed run shows nothing stale.
    table.replaceChildren();
    binsTable.replaceChildren();
    canvas.getContext("2d")?.clearRect(0, 0, canvas.width, canvas.height);
    delete canvas.dataset.drawn;
    delete canvas.dataset.counts;
    const errorBox = section.closest(".panel")?.querySelector(".error");
    if (errorBox instanceof HTMLElement) errorBox.hidden = true;
    try {
      const got =
        sliceText === ""
          ? await columnStats(file, path, {
              bins,
              signal: mine.signal,
              onProgress: (done, total) => {
                bar.value = total === 0 ? 1 : done / total;
                status.textContent = `reading ${name}: ${Math.floor((100 * done) / Math.max(1, total))}%`;
              },
            })
          : { statsMs: NaN, ...(await selectionStats(file, parseIndex(sliceText, file.shape), path, { bins, signal: mine.signal })) };
      const ms = performance.now() - began;
      showSummary(table, got.summary);
      showBins(binsTable, got.edges, got.counts);
      if (got.edges && got.counts) {
        plotBins(canvas, got.edges, Array.from(got.counts), { title: `${name}: ${bins} bins of its finite values`, x: name, y: "values" });
      }
      status.textContent = `${name}: ${got.summary.count.toLocaleString("en")} values in ${(ms / 1000).toFixed(2)} s`;
      record.lastStats = { label, path, ms, statsMs: got.statsMs, bytes: columnBytes(file, path), summary: got.summary, edges: got.edges && Array.from(got.edges), counts: got.counts && Array.from(got.counts) };
      section.dataset.state = "done";
    } catch (e) {
      if (e instanceof Cancelled) {
        status.textContent = `${name}: ${e.message}; nothing computed`;
        section.dataset.state = "cancelled";
      } else {
        status.textContent = "";
        section.dataset.state = "failed";
        showError(section, e);
      }
    } finally {
      if (controller === mine) {
        controller = null;
        cancel.disabled = true;
        bar.hidden = true;
      }
    }
  });
}

/**
 * The bytes of a column's values in the file (what a statistics' rate is counted in).
 * @param {NpyFile} file
 * @param {string} path
 */
function columnBytes(file, path) {
  const leaf = file.leaves.find((l) => l.path === path);
  const per = leaf === undefined ? 0 : leaf.dims.reduce((n, d) => n * d, 1) * leaf.dtype.itemsize;
  return file.shape.reduce((n, d) => n * d, 1) * per;
}

/**
 * @param {HTMLElement} body
 * @param {Summary} s
 */
function showSummary(body, s) {
  /** @type {[string, string, number | bigint][]} */
  const rows = [
    ["count", "values", s.count],
    ["nans", s.kind === "int64" ? "NaN or NaT" : "NaN", s.nans],
    ["zeros", "zeros", s.zeros],
    ["posInf", "+inf", s.posInf],
    ["negInf", "-inf", s.negInf],
    ["min", "min (np.nanmin)", s.min],
    ["max", "max (np.nanmax)", s.max],
    ["mean", "mean (np.nanmean)", s.mean],
    ["std", "std (np.nanstd)", s.std],
    ["finiteMean", "mean of the finite values", s.finiteMean],
    ["finiteStd", "std of the finite values", s.finiteStd],
  ];
  if (s.sum !== null) rows.push(["sum", "sum (exact)", s.sum]);
  body.replaceChildren(
    ...rows.map(([key, name, v]) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = name;
      const td = document.createElement("td");
      td.dataset.stat = key;
      td.textContent = text(v);
      tr.append(th, td);
      return tr;
    }),
  );
}

/**
 * The histogram's bins as a table: each bin's edges and count.
 * @param {HTMLElement} body
 * @param {Float64Array | null} edges
 * @param {Float64Array | null} counts
 */
function showBins(body, edges, counts) {
  if (edges === null || counts === null) {
    body.replaceChildren();
    return;
  }
  body.replaceChildren(
    ...Array.from(counts, (n, i) => {
      const tr = document.createElement("tr");
      for (const v of [edges[i], edges[i + 1], n]) {
        const td = document.createElement("td");
        td.textContent = text(v);
        tr.append(td);
      }
      tr.lastElementChild?.setAttribute("data-count", String(n));
      return tr;
    }),
  );
}
