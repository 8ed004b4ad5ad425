// The image view: a 2-d numeric array, or a 2-d slice of an N-d one (the slicer chooses
// it), drawn on a canvas. One channel goes through a colormap (viridis, gray, RdBu_r from
// colormaps.json) with contrast by min/max or percentiles; NaN, +inf and -inf have colours
// of their own; (h, w, 3|4) arrays of u1 (or floats in 0..1) are RGB(A) pictures,
// booleans masks, complex numbers their magnitude, phase, real or imaginary part.
// Hovering shows a pixel's index and value as NumPy prints it; zoom and pan keep pixels
// square and sharp. A slice larger than the screen is first drawn from a subset of its
// rows and columns (under 16 MB read), then the region zoomed into is read at the
// density the screen needs.

import { NpyError } from "../js/index.js";
import { niceTicks, tick } from "./plot.js";
import { setUpSlicer } from "./slice.js";
import { $, fileStem, offer, showError } from "./state.js";

/** Bytes the first drawing of a slice may read: all of it when it fits, else an overview. */
const FIRST_BUDGET = 12 << 20;
/** Bytes a refinement of the region on screen may read. */
const REFINE_BUDGET = 32 << 20;
/** Pixels of the largest PNG saved (a slice larger is refused, not half drawn). */
const MAX_PNG_PIXELS = 64 << 20;
/** Screen pixels per array pixel the view can be at: fractions when zoomed out, whole numbers when in. */
const ZOOMS = [
  ...[512, 384, 256, 192, 128, 96, 64, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2].map((k) => 1 / k),
  ...[1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64],
];
/** Reads closer than this are one read (open.js's GAP): a row sampled that densely costs all of it. */
const GAP = 64 << 10;

/**
 * @typedef {object} Colormaps the content of colormaps.json
 * @property {string} about
 * @property {{nan: number[], posinf: number[], neginf: number[]}} special
 * @property {Record<string, number[][]>} maps
 */

/** @type {Promise<Colormaps> | undefined} */
let colormaps;
/** The colormaps, fetched once. */
function loadColormaps() {
  colormaps ??= fetch(new URL("colormaps.json", import.meta.url)).then((r) => {
    if (!r.ok) throw new Error(`colormaps.json: HTTP ${r.status}`);
    return /** @type {Promise<Colormaps>} */ (r.json());
  });
  return colormaps;
}

/**
 * How an array's values become pixels: one value per pixel (`scalar`, `complex` through
 * its chosen part, `mask`), or none (the view does not apply).
 * @param {import("../js/open.js").NpyFile} file
 * @returns {"scalar" | "complex" | "mask" | null}
 */
function kindOf(file) {
  const dtype = file.dtype;
  if (dtype.kind !== "scalar") return null;
  const type = /** @type {string} */ (dtype.type);
  if (type === "b1") return "mask";
  if (/^c(8|16)$/.test(type)) return "complex";
  if (/^[iu]\d$/.test(type) || /^f(2|4|8)$/.test(type)) return "scalar";
  return null;
}

/**
 * Whether the image view applies: a numeric, boolean or complex array of 2 or more dims.
 * @param {import("../js/open.js").NpyFile} file
 */
export function imageApplies(file) {
  return kindOf(file) !== null && file.shape.length >= 2;
}

/**
 * Whether the last axis can be colour channels: 3 or 4 of `u1` or floats, with 2 axes before it.
 * @param {import("../js/open.js").NpyFile} file
 */
function rgbPossible(file) {
  const n = file.shape.length;
  return n >= 3 && (file.shape[n - 1] === 3 || file.shape[n - 1] === 4) && /^(u1|f2|f4|f8)$/.test(/** @type {{type?: string}} */ (file.dtype).type ?? "");
}

/**
 * Part of a slice read at a density: rows r0, r0 + sr, ... (nr of them), columns c0, c0 +
 * sc, ... (nc), its pixels in `bitmap` (nc x nr) and its one-channel values (for contrast).
 * @typedef {object} Level
 * @property {number} r0
 * @property {number} c0
 * @property {number} sr
 * @property {number} sc
 * @property {number} nr
 * @property {number} nc
 * @property {Float64Array | null} values null for RGB(A)
 * @property {HTMLCanvasElement} bitmap
 * @property {import("../js/array.js").NpyArray} array what select gave
 * @property {boolean} transposed whether the array's axes are (columns, rows)
 */

/**
 * The contrast range of `values`: their finite min and max, or with percentile `p` the
 * sorted finite values at floor(p (n - 1) / 100) and floor((100 - p) (n - 1) / 100)
 * (np.percentile's method="lower"). [0, 1] when none is finite.
 * @param {Float64Array} values
 * @param {number} p 0 for min/max
 * @returns {[number, number]}
 */
export function contrast(values, p) {
  if (p === 0) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      // NaN fails both comparisons; the infinities are not finite values.
      if (v < lo && v !== -Infinity) lo = v;
      if (v > hi && v !== Infinity) hi = v;
    }
    return lo <= hi ? [lo, hi] : [0, 1];
  }
  const finite = values.filter(Number.isFinite);
  const n = finite.length;
  if (n === 0) return [0, 1];
  finite.sort();
  return [finite[Math.floor((p * (n - 1)) / 100)], finite[Math.floor(((100 - p) * (n - 1)) / 100)]];
}

/**
 * The image view in `ctx.section`: the slicer, the controls, the canvas and its colour
 * bar; resolves once the first picture is drawn.
 * @param {import("./array.js").ViewContext} ctx
 */
export async function setUpImage(ctx) {
  const { section, file, label } = ctx;
  const kind = /** @type {"scalar" | "complex" | "mask"} */ (kindOf(file));
  const maps = await loadColormaps();
  const canvas = /** @type {HTMLCanvasElement} */ ($(section, ".image-canvas"));
  const port = $(section, ".image-port");
  const bar = /** @type {HTMLCanvasElement} */ ($(section, ".image-bar"));
  const legend = $(section, ".image-legend");
  const hoverIndex = $(section, ".image-hover-index");
  const hoverValue = $(section, ".image-hover-value");
  const status = $(section, ".image-status");
  /** @type {HTMLSelectElement} */ const mapSelect = $(section, ".image-map");
  /** @type {HTMLSelectElement} */ const contrastSelect = $(section, ".image-contrast");
  /** @type {HTMLSelectElement} */ const partSelect = $(section, ".image-part");
  $(section, ".image-part-label").hidden = kind !== "complex";
  $(section, ".image-map-label").hidden = kind === "mask";
  $(section, ".image-contrast-label").hidden = kind === "mask";
  mapSelect.replaceChildren(...Object.keys(maps.maps).map((m) => new Option(m, m)));
  mapSelect.value = "viridis";
  const g = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
  const itemsize = /** @type {number} */ (file.dtype.itemsize);
  const shape = file.shape;
  const fortran = file.fortranOrder;

  const slicer = setUpSlicer($(section, ".image-slicer"), shape, { rgb: rgbPossible(file), onChange: () => load() });
  // The slice shown, whole, for the Statistics view.
  ctx.tab.shownSlice = () => {
    const c = slicer.choice();
    return slicer.index([0, shape[c.rows], 1], [0, shape[c.cols], 1]);
  };
  /** Where the view is: screen pixels per array pixel, and where pixel (0, 0)'s corner is. */
  const view = { zoom: 1, x: 0, y: 0 };
  /** @type {Level | null} */ let base = null;
  /** @type {Level | null} */ let fine = null;
  /** @type {[number, number]} */ let range = [0, 1];
  let drawn = 0;
  let fitted = "";
  /** @type {AbortController | null} */ let loading = null;
  /** @type {AbortController | null} */ let refining = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */ let refineTimer;

  /** The slice's size: rows and columns of the axes shown. */
  const size = () => {
    const c = slicer.choice();
    return { H: shape[c.rows], W: shape[c.cols], rgb: c.rgb, channels: c.rgb ? shape[shape.length - 1] : 1 };
  };

  /** Each axis's stride in the file, in bytes (C or Fortran order). */
  const strides = shape.map(() => 0);
  for (let k = 0, s = itemsize; k < shape.length; k++) {
    const a = fortran ? k : shape.length - 1 - k;
    strides[a] = s;
    s *= shape[a];
  }

  /**
   * Bytes a read of nr x nc samples at steps sr, sc costs, as select reads them: samples
   * along the axis with the smaller stride are one read when less than GAP apart, and so
   * are those runs along the other axis. A C-order pixel's channels are one sample.
   * @param {number} nr
   * @param {number} nc
   * @param {number} sr
   * @param {number} sc
   */
  const cost = (nr, nc, sr, sc) => {
    const c = slicer.choice();
    const channels = size().channels;
    const together = !c.rgb || !fortran;
    const px = together ? itemsize * channels : itemsize;
    const rowsInner = strides[c.rows] < strides[c.cols];
    const [ni, si, di, no, so, dout] = rowsInner ? [nr, sr, strides[c.rows], nc, sc, strides[c.cols]] : [nc, sc, strides[c.cols], nr, sr, strides[c.rows]];
    if (ni === 0 || no === 0) return 0;
    const extent = (ni - 1) * si * di + px;
    const joined = si * di - px <= GAP;
    const run = joined ? extent : ni * px;
    const whole = joined && so * dout - extent <= GAP ? (no - 1) * so * dout + extent : no * run;
    return together ? whole : whole * channels;
  };

  /** The one-channel value of element i of a level's array (by kind and complex part). */
  const scalarOf = (/** @type {ArrayLike<number | bigint>} */ d, /** @type {number} */ i) => {
    if (kind !== "complex") return Number(d[i]);
    const re = Number(d[2 * i]);
    const im = Number(d[2 * i + 1]);
    const part = partSelect.value;
    return part === "magnitude" ? Math.sqrt(re * re + im * im) : part === "phase" ? Math.atan2(im, re) : part === "real" ? re : im;
  };

  /**
   * Reads rows r0.. and columns c0.. of the slice at steps sr, sc as a Level.
   * @param {number} r0 @param {number} r1 @param {number} sr
   * @param {number} c0 @param {number} c1 @param {number} sc
   * @param {AbortSignal} signal
   * @returns {Promise<Level>}
   */
  const read = async (r0, r1, sr, c0, c1, sc, signal) => {
    const choice = slicer.choice();
    const array = await file.select(slicer.index([r0, r1, sr], [c0, c1, sc]), { signal });
    const nr = Math.ceil((r1 - r0) / sr);
    const nc = Math.ceil((c1 - c0) / sc);
    const transposed = choice.rows > choice.cols;
    const bitmap = document.createElement("canvas");
    bitmap.width = Math.max(1, nc);
    bitmap.height = Math.max(1, nr);
    const d = /** @type {ArrayLike<number | bigint>} */ (array.data);
    /** Element of sample (r, c) in the array (C order; channels last). */
    const at = (/** @type {number} */ r, /** @type {number} */ c) => (transposed ? c * nr + r : r * nc + c);
    if (choice.rgb) {
      return { r0, c0, sr, sc, nr, nc, values: null, bitmap, array, transposed };
    }
    const values = new Float64Array(nr * nc);
    if (kind !== "complex" && !transposed && !(d instanceof BigInt64Array || d instanceof BigUint64Array)) {
      // The common case, in one pass: plain numbers in the slice's own order.
      values.set(/** @type {ArrayLike<number>} */ (d));
    } else {
      for (let r = 0; r < nr; r++) for (let c = 0; c < nc; c++) values[r * nc + c] = scalarOf(d, at(r, c));
    }
    return { r0, c0, sr, sc, nr, nc, values, bitmap, array, transposed };
  };

  /** Paints a level's bitmap with the colormap and contrast chosen (or its RGB(A)). */
  const paint = (/** @type {Level} */ level) => {
    const { nr, nc } = level;
    if (nr === 0 || nc === 0) return;
    const out = new ImageData(nc, nr);
    const px = out.data;
    if (level.values === null) {
      const ch = size().channels;
      const d = /** @type {ArrayLike<number>} */ (level.array.data);
      const bytes = /** @type {{type?: string}} */ (file.dtype).type === "u1";
      for (let r = 0; r < nr; r++) {
        for (let c = 0; c < nc; c++) {
          const e = (level.transposed ? c * nr + r : r * nc + c) * ch;
          const o = (r * nc + c) * 4;
          for (let k = 0; k < 4; k++) {
            if (k >= ch) {
              px[o + k] = 255;
              continue;
            }
            const v = Number(d[e + k]);
            // Floats in 0..1: floor(255 v + 0.5), clipped; NaN as 0.
            px[o + k] = bytes ? v : Number.isNaN(v) ? 0 : Math.floor(255 * Math.min(1, Math.max(0, v)) + 0.5);
          }
        }
      }
    } else {
      const map = kind === "mask" ? maps.maps.gray : maps.maps[mapSelect.value];
      const [lo, hi] = kind === "mask" ? [0, 1] : range;
      const values = level.values;
      // The mapping colormaps.json states: t = (v - lo) / (hi - lo) clipped to [0, 1] (0
      // when hi <= lo), entry min(255, floor(256 t)); NaN, +inf and -inf their own colours
      // (entries 256 to 258 here), each packed as the ImageData's 32-bit pixel.
      const packed = new Uint32Array(new Uint8Array([...map, maps.special.nan, maps.special.posinf, maps.special.neginf].flatMap((rgb) => [rgb[0], rgb[1], rgb[2], 255])).buffer);
      const pixels = new Uint32Array(px.buffer);
      const span = hi - lo;
      for (let i = 0; i < values.length; i++) {
        const v = values[i];
        let entry;
        if (v !== v) entry = 256;
        else if (v === Infinity) entry = 257;
        else if (v === -Infinity) entry = 258;
        else {
          let t = hi > lo ? (v - lo) / span : 0;
          t = t < 0 ? 0 : t > 1 ? 1 : t;
          entry = Math.min(255, Math.floor(256 * t));
        }
        pixels[i] = packed[entry];
      }
    }
    /** @type {CanvasRenderingContext2D} */ (level.bitmap.getContext("2d")).putImageData(out, 0, 0);
  };

  /** Draws the levels read at the view's place and zoom, pixels sharp. */
  const draw = () => {
    const { H, W } = size();
    const style = getComputedStyle(document.documentElement);
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.fillStyle = style.getPropertyValue("--panel").trim() || "#eee";
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.imageSmoothingEnabled = false;
    for (const level of [base, fine]) {
      if (level === null || level.nr === 0 || level.nc === 0) continue;
      // A sample covers sr x sc array pixels (less at the slice's edge).
      const w = Math.min(W - level.c0, level.nc * level.sc);
      const h = Math.min(H - level.r0, level.nr * level.sr);
      g.drawImage(level.bitmap, 0, 0, w / level.sc, h / level.sr, view.x + level.c0 * view.zoom, view.y + level.r0 * view.zoom, w * view.zoom, h * view.zoom);
    }
    canvas.dataset.zoom = String(view.zoom);
    canvas.dataset.x = String(view.x);
    canvas.dataset.y = String(view.y);
    canvas.dataset.rows = String(H);
    canvas.dataset.cols = String(W);
    canvas.dataset.drawn = String(++drawn);
  };

  /** The colour bar: the colormap from lo (bottom) to hi (top) with ticks, or a mask's two colours. */
  const drawBar = () => {
    const b = /** @type {CanvasRenderingContext2D} */ (bar.getContext("2d"));
    const style = getComputedStyle(document.documentElement);
    b.clearRect(0, 0, bar.width, bar.height);
    legend.replaceChildren();
    if (size().rgb) {
      bar.hidden = true;
      return;
    }
    bar.hidden = false;
    const top = 10;
    const height = bar.height - 20;
    const map = kind === "mask" ? maps.maps.gray : maps.maps[mapSelect.value];
    const [lo, hi] = kind === "mask" ? [0, 1] : range;
    for (let y = 0; y < height; y++) {
      const rgb = map[Math.min(255, Math.floor((256 * (height - 1 - y)) / height))];
      b.fillStyle = `rgb(${rgb[0]}, ${rgb[1]}, ${rgb[2]})`;
      b.fillRect(0, top + y, 20, 1);
    }
    b.strokeStyle = style.getPropertyValue("--line").trim() || "#ccc";
    b.strokeRect(0.5, top + 0.5, 19, height - 1);
    b.fillStyle = style.getPropertyValue("--fg").trim() || "#000";
    b.font = "11px system-ui, sans-serif";
    b.textAlign = "left";
    const ticks = kind === "mask" ? [] : hi > lo ? niceTicks([lo, hi]) : [lo];
    const yOf = (/** @type {number} */ v) => top + height - 1 - (hi > lo ? ((v - lo) / (hi - lo)) * (height - 1) : 0);
    for (const v of ticks) b.fillText(tick(v), 26, yOf(v) + 4);
    if (kind === "mask") {
      b.fillText("True", 26, top + 8);
      b.fillText("False", 26, top + height - 2);
      return;
    }
    for (const [name, key] of /** @type {const} */ ([["NaN", "nan"], ["+inf", "posinf"], ["−inf", "neginf"]])) {
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = `rgb(${maps.special[key].join(", ")})`;
      const item = document.createElement("span");
      item.append(swatch, name);
      legend.append(item);
    }
  };

  /** The view fitted to the port: the largest zoom level the whole slice fits at, centred. */
  const fit = () => {
    const { H, W } = size();
    const ratio = Math.min(canvas.width / W, canvas.height / H);
    view.zoom = [...ZOOMS].reverse().find((z) => z <= ratio) ?? ZOOMS[0];
    view.x = Math.round((canvas.width - W * view.zoom) / 2);
    view.y = Math.round((canvas.height - H * view.zoom) / 2);
  };

  /** Recolours the levels read (after the colormap, contrast or complex part changed) and redraws. */
  const recolour = () => {
    if (base?.values) range = contrast(base.values, Number(contrastSelect.value));
    for (const level of [base, fine]) if (level) paint(level);
    drawBar();
    draw();
  };

  /**
   * Reads the slice chosen: whole when it costs at most FIRST_BUDGET, else an overview of
   * it (a row step from the budget, a column step from the screen's width), then draws it.
   */
  const load = async () => {
    loading?.abort();
    refining?.abort();
    const control = new AbortController();
    loading = control;
    const began = performance.now();
    const { H, W } = size();
    let sr = 1;
    let sc = 1;
    if (cost(H, W, 1, 1) > FIRST_BUDGET) {
      sc = Math.max(1, Math.ceil(W / canvas.width));
      sr = Math.max(1, Math.ceil(H / canvas.height));
      while (cost(Math.ceil(H / sr), Math.ceil(W / sc), sr, sc) > FIRST_BUDGET) sr = Math.ceil(sr * 1.25);
    }
    status.textContent = sr * sc > 1 ? `reading an overview: every ${sr} rows, ${sc} columns…` : "reading…";
    try {
      const level = await read(0, H, sr, 0, W, sc, control.signal);
      if (loading !== control) return;
      base = level;
      fine = null;
      // A slice of another size (other axes shown) is fitted anew; moving a slider keeps the view.
      if (fitted !== `${H}x${W}`) fit();
      fitted = `${H}x${W}`;
      recolour();
      canvas.dataset.level = sr * sc > 1 ? "overview" : "full";
      canvas.dataset.slice = JSON.stringify(slicer.index([0, H, sr], [0, W, sc]));
      canvas.dataset.ms = String(performance.now() - began);
      status.textContent = sr * sc > 1 ? `overview: every ${sr} rows, ${sc} columns; zoom in to read more` : "";
      if (sr * sc > 1) scheduleRefine();
    } catch (e) {
      if (!control.signal.aborted) showError(section, e);
    }
  };

  /**
   * Reads the region on screen at the density the screen needs (within REFINE_BUDGET), when
   * the overview is coarser than that, and draws it over the overview.
   */
  const refine = async () => {
    if (base === null || (base.sr === 1 && base.sc === 1)) return;
    const { H, W } = size();
    const z = view.zoom;
    const r0 = Math.max(0, Math.floor(-view.y / z));
    const r1 = Math.min(H, Math.ceil((canvas.height - view.y) / z));
    const c0 = Math.max(0, Math.floor(-view.x / z));
    const c1 = Math.min(W, Math.ceil((canvas.width - view.x) / z));
    if (r0 >= r1 || c0 >= c1) return;
    let step = Math.max(1, Math.floor(1 / z));
    while (cost(Math.ceil((r1 - r0) / step), Math.ceil((c1 - c0) / step), step, step) > REFINE_BUDGET) step = Math.ceil(step * 1.25);
    if (step >= base.sr && step >= base.sc) return;
    refining?.abort();
    const control = new AbortController();
    refining = control;
    status.textContent = `reading rows ${r0}–${r1 - 1}, columns ${c0}–${c1 - 1}${step > 1 ? `, every ${step}` : ""}…`;
    try {
      const level = await read(r0, r1, step, c0, c1, step, control.signal);
      if (refining !== control) return;
      fine = level;
      paint(level);
      draw();
      canvas.dataset.level = "refined";
      canvas.dataset.fine = JSON.stringify(slicer.index([r0, r1, step], [c0, c1, step]));
      status.textContent = `rows ${r0}–${r1 - 1}, columns ${c0}–${c1 - 1}${step > 1 ? ` every ${step}` : ""}`;
    } catch (e) {
      if (!control.signal.aborted) showError(section, e);
    }
  };
  const scheduleRefine = () => {
    // A refinement under way reads a region no longer on screen: stopped at once.
    refining?.abort();
    refining = null;
    clearTimeout(refineTimer);
    refineTimer = setTimeout(() => refine(), 150);
  };

  /**
   * Zooms a level in (+1) or out (-1), keeping the array point at (px, py) on the canvas in place.
   * @param {number} by
   * @param {number} px
   * @param {number} py
   */
  const zoomBy = (by, px, py) => {
    const i = ZOOMS.indexOf(view.zoom);
    const next = ZOOMS[Math.max(0, Math.min(ZOOMS.length - 1, (i < 0 ? ZOOMS.findIndex((z) => z >= view.zoom) : i) + by))];
    view.x = Math.round(px - ((px - view.x) * next) / view.zoom);
    view.y = Math.round(py - ((py - view.y) * next) / view.zoom);
    view.zoom = next;
    draw();
    scheduleRefine();
  };
  const panBy = (/** @type {number} */ dx, /** @type {number} */ dy) => {
    view.x += Math.round(dx);
    view.y += Math.round(dy);
    draw();
    scheduleRefine();
  };

  // The canvas fills the port; its pixels are the screen's (one per CSS pixel).
  const resize = () => {
    const w = Math.max(64, Math.floor(port.clientWidth));
    const h = Math.max(64, Math.floor(port.clientHeight));
    if (w === canvas.width && h === canvas.height) return false;
    canvas.width = w;
    canvas.height = h;
    return true;
  };
  resize();
  new ResizeObserver(() => {
    if (resize() && base) draw();
  }).observe(port);

  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    zoomBy(event.deltaY < 0 ? 1 : -1, event.offsetX, event.offsetY);
  });
  /** @type {{x: number, y: number} | null} */ let drag = null;
  canvas.addEventListener("pointerdown", (event) => {
    drag = { x: event.clientX, y: event.clientY };
    canvas.setPointerCapture(event.pointerId);
  });
  canvas.addEventListener("pointerup", () => (drag = null));
  let hovered = 0;
  canvas.addEventListener("pointermove", (event) => {
    if (drag) {
      panBy(event.clientX - drag.x, event.clientY - drag.y);
      drag = { x: event.clientX, y: event.clientY };
      return;
    }
    showPixel(event.offsetX, event.offsetY);
  });
  /**
   * Says the index and value of the pixel at canvas point (x, y): under the pointer, or at
   * the canvas's centre after a key moved the view.
   * @param {number} x
   * @param {number} y
   */
  const showPixel = (x, y) => {
    const { H, W, rgb } = size();
    const r = Math.floor((y - view.y) / view.zoom);
    const c = Math.floor((x - view.x) / view.zoom);
    if (r < 0 || c < 0 || r >= H || c >= W) {
      hoverIndex.textContent = "";
      hoverValue.textContent = "";
      hover.shown = "";
      hover.wanted = null;
      ++hovered;
      return;
    }
    const position = slicer.position(r, c);
    // The element (a pixel's channels: the row of them) as the package prints it. One read
    // at a time, of the pixel last pointed at: a pointer crossing a URL's image makes a
    // request per pixel it rests on, not per move.
    const index = rgb ? [...position.slice(0, -1), [position[position.length - 1], position[position.length - 1] + 1]] : position;
    const key = JSON.stringify(index);
    if (key === hover.shown || key === hover.reading) return (hover.wanted = null);
    hover.wanted = { key, index, position };
    if (hover.reading === null) readHovered();
  };
  /** The pixel said, the one being read, and the one to read next. */
  const hover = {
    shown: "",
    /** @type {string | null} */ reading: null,
    /** @type {{key: string, index: (number | number[])[], position: number[]} | null} */ wanted: null,
  };
  const readHovered = () => {
    const next = hover.wanted;
    hover.wanted = null;
    if (next === null) return;
    hover.reading = next.key;
    const token = ++hovered;
    file
      .select(/** @type {(number | [number, number])[]} */ (next.index))
      .then((a) => {
        if (token !== hovered) return;
        hoverIndex.textContent = `a[${next.position.join(", ")}]`;
        hoverValue.textContent = a.table(0, 1).rows[0][0];
        hover.shown = next.key;
      })
      .catch((e) => showError(section, e))
      .finally(() => {
        hover.reading = null;
        readHovered();
      });
  };
  canvas.addEventListener("keydown", (event) => {
    const step = event.shiftKey ? 256 : 32;
    /** @type {Record<string, () => void>} */
    const keys = {
      "+": () => zoomBy(1, canvas.width / 2, canvas.height / 2),
      "=": () => zoomBy(1, canvas.width / 2, canvas.height / 2),
      "-": () => zoomBy(-1, canvas.width / 2, canvas.height / 2),
      "0": () => {
        fit();
        draw();
        scheduleRefine();
      },
      ArrowLeft: () => panBy(step, 0),
      ArrowRight: () => panBy(-step, 0),
      ArrowUp: () => panBy(0, step),
      ArrowDown: () => panBy(0, -step),
    };
    const act = keys[event.key];
    if (act === undefined) return;
    event.preventDefault();
    act();
    showPixel(canvas.width / 2, canvas.height / 2);
  });
  $(section, ".image-zoom-in").addEventListener("click", () => zoomBy(1, canvas.width / 2, canvas.height / 2));
  $(section, ".image-zoom-out").addEventListener("click", () => zoomBy(-1, canvas.width / 2, canvas.height / 2));
  $(section, ".image-fit").addEventListener("click", () => {
    fit();
    draw();
    scheduleRefine();
  });
  for (const select of [mapSelect, contrastSelect]) select.addEventListener("change", recolour);
  partSelect.addEventListener("change", () => load());
  $(section, ".image-png").addEventListener("click", () => savePng().catch((e) => showError(section, e)));

  /** The slice as PNG at its own size: the level read when it is the whole slice, else the slice read whole. */
  const savePng = async () => {
    const { H, W } = size();
    if (H * W > MAX_PNG_PIXELS) {
      throw new NpyError(
        `reading '${label}': the slice is ${W.toLocaleString("en")} x ${H.toLocaleString("en")} pixels; this page saves PNGs of ${MAX_PNG_PIXELS.toLocaleString("en")} pixels at most`,
        { kind: "usage", file: label },
      );
    }
    let level = base;
    if (level === null || level.sr !== 1 || level.sc !== 1) {
      level = await read(0, H, 1, 0, W, 1, new AbortController().signal);
      paint(level);
    }
    const bitmap = level.bitmap;
    const blob = await new Promise((done) => bitmap.toBlob(done, "image/png"));
    if (!blob) throw new NpyError(`reading '${label}': the browser could not make the PNG`, { kind: "io", file: label });
    const c = slicer.choice();
    const where = shape.length > 2 ? `-${slicer.position(0, 0).map((v, a) => (a === c.rows || a === c.cols ? ":" : v)).join("_")}` : "";
    offer(blob, `${fileStem(label)}${where.replaceAll(":", "all")}.png`);
  };

  await load();
}
