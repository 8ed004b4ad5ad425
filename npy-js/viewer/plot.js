// Plots on a canvas with labelled axes: a numeric column against row number, a row's
// subarray (a trace) as a line, a column's histogram; saved as PNG. `axes`, `plotLine` and
// `plotHistogram` serve the other views' plots too.

import { NpyError } from "../js/index.js";
import { $, fileStem, offer, showError } from "./state.js";

/** Rows a plot of a column reads at most. */
const PLOT_ROWS = 200_000;

/**
 * The plot: a numeric column against row number, the selected row's subarray as a line,
 * or a column's histogram, on a canvas with labelled axes; saved as PNG.
 * @param {HTMLElement} panel
 * @param {import("../js/open.js").NpyFile} file
 * @param {string} label
 * @param {() => number} selected the selected row
 * @returns {() => Promise<void>} draws the plot as its controls say
 */
export function setUpPlot(panel, file, label, selected) {
  /** @type {HTMLSelectElement} */
  const kind = $(panel, ".plot-kind");
  /** @type {HTMLSelectElement} */
  const field = $(panel, ".plot-field");
  /** @type {HTMLInputElement} */
  const from = $(panel, ".plot-from");
  /** @type {HTMLInputElement} */
  const to = $(panel, ".plot-to");
  /** @type {HTMLCanvasElement} */
  const canvas = $(panel, ".plot canvas");
  const leaves = numericLeaves(file);
  const fill = () => {
    const wanted = kind.value === "row" ? leaves.filter((l) => l.dims > 1) : leaves.filter((l) => l.dims === 1);
    field.replaceChildren(...wanted.map((l) => new Option(l.path || "value", l.path)));
    field.disabled = wanted.length === 0;
  };
  kind.addEventListener("change", fill);
  if (leaves.some((l) => l.dims > 1)) kind.value = "row";
  fill();
  from.value = "0";
  to.value = String(Math.min(file.rowCount, 10_000));
  $(panel, ".plot-draw").addEventListener("click", () => draw().catch((e) => showError(panel, e)));
  $(panel, ".plot-png").addEventListener("click", () => {
    canvas.toBlob((blob) => blob && offer(blob, `${fileStem(label)}-plot.png`), "image/png");
  });
  async function draw() {
    if (field.disabled) throw new NpyError("no numeric field to plot", { kind: "usage" });
    const path = field.value;
    const name = path || "value";
    if (kind.value === "row") {
      const r = selected();
      const values = numbers((await file.rows(r, r + 1)).column(path));
      plotLine(canvas, values, { title: `${name} of row ${r}`, x: "index", y: name });
      return;
    }
    const a = Math.max(0, Math.min(file.rowCount, Math.floor(Number(from.value) || 0)));
    const b = Math.max(a, Math.min(file.rowCount, a + PLOT_ROWS, Math.floor(Number(to.value) || 0)));
    const values = numbers((await file.rows(a, b)).column(path));
    if (kind.value === "histogram") plotHistogram(canvas, values, { title: `${name}, rows ${a} to ${b}`, x: name, y: "rows" });
    else plotLine(canvas, values, { title: `${name}, rows ${a} to ${b}`, x: "row", y: name, offset: a });
  }
  return draw;
}

/**
 * The numeric leaves of an array's dtype (integers, floats, booleans, datetimes as their
 * counts): `{path, dims}`, dims the values one element holds.
 * @param {import("../js/open.js").NpyFile} file
 */
function numericLeaves(file) {
  return file.leaves
    .filter((l) => /^[biufMm]/.test(l.dtype.type) && l.dtype.type !== "f16")
    .map((l) => ({ path: l.path, dims: l.dims.reduce((n, k) => n * k, 1) }));
}

/**
 * A column's values as numbers.
 * @param {import("../js/array.js").NpyArray} array
 * @returns {number[]}
 */
export function numbers(array) {
  return Array.from(/** @type {ArrayLike<number | bigint>} */ (array.data), Number);
}

/**
 * @param {HTMLCanvasElement} canvas
 * @param {{title: string, x: string, y: string}} labels
 * @param {[number, number]} xs
 * @param {[number, number]} ys
 */
export function axes(canvas, labels, xs, ys) {
  const g = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
  const style = getComputedStyle(document.documentElement);
  const fg = style.getPropertyValue("--fg").trim() || "#000";
  const line = style.getPropertyValue("--line").trim() || "#ccc";
  const bg = style.getPropertyValue("--bg").trim() || "#fff";
  const box = { left: 80, right: canvas.width - 20, top: 36, bottom: canvas.height - 48 };
  g.fillStyle = bg;
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.font = "13px system-ui, sans-serif";
  g.fillStyle = fg;
  g.textAlign = "center";
  g.fillText(labels.title, canvas.width / 2, 20);
  g.fillText(labels.x, (box.left + box.right) / 2, canvas.height - 10);
  g.save();
  g.translate(16, (box.top + box.bottom) / 2);
  g.rotate(-Math.PI / 2);
  g.fillText(labels.y, 0, 0);
  g.restore();
  g.strokeStyle = line;
  g.strokeRect(box.left, box.top, box.right - box.left, box.bottom - box.top);
  g.font = "11px system-ui, sans-serif";
  const x = (/** @type {number} */ v) => box.left + ((v - xs[0]) / (xs[1] - xs[0] || 1)) * (box.right - box.left);
  const y = (/** @type {number} */ v) => box.bottom - ((v - ys[0]) / (ys[1] - ys[0] || 1)) * (box.bottom - box.top);
  g.textAlign = "center";
  for (const v of niceTicks(xs)) g.fillText(tick(v), x(v), box.bottom + 16);
  g.textAlign = "right";
  for (const v of niceTicks(ys)) {
    g.fillText(tick(v), box.left - 6, y(v) + 4);
    g.beginPath();
    g.moveTo(box.left, y(v));
    g.lineTo(box.right, y(v));
    g.stroke();
  }
  return {
    g,
    x,
    y,
    accent: style.getPropertyValue("--accent").trim() || "#06c",
  };
}

/**
 * Round values between `lo` and `hi` at a step of 1, 2 or 5 times a power of ten, about
 * five of them, as a person would mark an axis.
 * @param {[number, number]} span
 */
export function niceTicks([lo, hi]) {
  const raw = (hi - lo) / 5;
  if (!(raw > 0) || !Number.isFinite(raw)) return [lo];
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const out = [];
  for (let k = Math.ceil(lo / step); k * step <= hi + step * 1e-9; k++) out.push(k * step);
  return out;
}

/** @param {number} v */
export function tick(v) {
  const r = Number(v.toPrecision(6));
  if (Number.isInteger(r) && Math.abs(r) < 1e15) return String(r);
  return Math.abs(r) >= 1e6 || Math.abs(r) < 1e-3 ? r.toExponential().replace(/e\+?/, "e") : String(r);
}

/** @param {number[]} values */
export function range(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (Number.isFinite(v)) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  return lo <= hi ? /** @type {[number, number]} */ ([lo, hi === lo ? lo + 1 : hi]) : /** @type {[number, number]} */ ([0, 1]);
}

/**
 * @param {HTMLCanvasElement} canvas
 * @param {number[]} values
 * @param {{title: string, x: string, y: string, offset?: number}} labels
 */
export function plotLine(canvas, values, labels) {
  const offset = labels.offset ?? 0;
  const { g, x, y, accent } = axes(canvas, labels, [offset, offset + Math.max(1, values.length - 1)], range(values));
  g.strokeStyle = accent;
  g.lineWidth = 1.2;
  g.beginPath();
  let drawing = false;
  values.forEach((v, i) => {
    if (!Number.isFinite(v)) {
      drawing = false;
      return;
    }
    if (drawing) g.lineTo(x(offset + i), y(v));
    else g.moveTo(x(offset + i), y(v));
    drawing = true;
  });
  g.stroke();
  canvas.dataset.drawn = labels.title;
}

/**
 * A histogram of `values`' finite values in 50 equal bins over their range.
 * @param {HTMLCanvasElement} canvas
 * @param {number[]} values
 * @param {{title: string, x: string, y: string}} labels
 */
export function plotHistogram(canvas, values, labels) {
  const [lo, hi] = range(values);
  const bins = new Array(50).fill(0);
  for (const v of values) {
    if (Number.isFinite(v)) bins[Math.min(bins.length - 1, Math.floor(((v - lo) / (hi - lo)) * bins.length))]++;
  }
  plotBins(canvas, Array.from({ length: bins.length + 1 }, (_, i) => lo + ((hi - lo) * i) / bins.length), bins, labels);
}

/**
 * Bins already counted (the statistics view's, over a whole column) as bars: bin `i` from
 * `edges[i]` to `edges[i + 1]`, `counts[i]` high. Each bar's count is in the canvas's
 * `data-counts` (JSON), for tests and assistive text.
 * @param {HTMLCanvasElement} canvas
 * @param {ArrayLike<number>} edges
 * @param {number[]} counts
 * @param {{title: string, x: string, y: string}} labels
 */
export function plotBins(canvas, edges, counts, labels) {
  const lo = edges[0];
  const hi = edges[counts.length];
  let top = 1;
  for (const n of counts) if (n > top) top = n;
  const { g, x, y, accent } = axes(canvas, labels, [lo, hi], [0, top]);
  g.fillStyle = accent;
  counts.forEach((n, i) => {
    const a = x(edges[i]);
    const b = x(edges[i + 1]);
    g.fillRect(a + 0.5, y(n), Math.max(1, b - a - 1), y(0) - y(n));
  });
  canvas.dataset.counts = JSON.stringify(counts);
  canvas.dataset.drawn = labels.title;
}
