// The slicer: which two axes of an N-d array are shown (down the rows, across the
// columns), and a slider for every other axis with the index it is at. A last axis of 3
// or 4 can be colour channels (RGB or RGBA) instead of an axis. It turns the choice into
// an index for `NpyFile.select`, so each slice is read alone; and NumPy's index as text.

import { NpyError } from "../js/index.js";

/**
 * What is shown: the axes down and across, and where every other axis is.
 * @typedef {object} SliceChoice
 * @property {number} rows the axis shown down
 * @property {number} cols the axis shown across
 * @property {number[]} at an index per axis (those of `rows`, `cols` and the channels unused)
 * @property {boolean} rgb whether the last axis is colour channels
 */

/**
 * @typedef {object} Slicer
 * @property {() => SliceChoice} choice
 * @property {(rows: [number, number, number], cols: [number, number, number]) => (number | null | [number, number, number])[]} index
 *   the select index of a region of the slice (rows and columns as [start, stop, step])
 * @property {(r: number, c: number) => number[]} position the array's index of pixel (r, c) of the slice (channels left out)
 */

/**
 * Builds the slicer's controls in `host` for an array of `shape`; `onChange` is called on
 * every change (a slider's input, another axis, the RGB toggle).
 * @param {HTMLElement} host
 * @param {readonly number[]} shape
 * @param {{rgb: boolean, onChange: () => void}} options rgb: whether the last axis can be colour channels (shown so at first)
 * @returns {Slicer}
 */
export function setUpSlicer(host, shape, { rgb: canRgb, onChange }) {
  const n = shape.length;
  /** @type {SliceChoice} */
  const state = { rows: n - 2, cols: n - 1, at: shape.map((d) => Math.floor(d / 2)), rgb: canRgb };
  const axesShown = () => (state.rgb ? n - 1 : n);
  // The last two axes shown; with colour channels treated as an axis, the two before them
  // (an (h, w, 3) picture stays h x w, one channel at a time).
  const place = () => {
    const last = canRgb && !state.rgb ? n - 2 : axesShown() - 1;
    state.rows = last - 1;
    state.cols = last;
  };
  place();

  const render = () => {
    host.replaceChildren();
    host.hidden = axesShown() < 3 && !canRgb;
    if (canRgb) {
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = state.rgb;
      box.dataset.testid = "slice-rgb";
      box.addEventListener("change", () => {
        state.rgb = box.checked;
        place();
        render();
        onChange();
      });
      label.append(box, ` last axis (${shape[n - 1]}) as colour channels`);
      host.append(label);
    }
    if (axesShown() < 3) return;
    /** @param {"rows" | "cols"} which */
    const chooser = (which) => {
      const label = document.createElement("label");
      const select = document.createElement("select");
      select.dataset.testid = `slice-${which}`;
      for (let a = 0; a < axesShown(); a++) select.append(new Option(`axis ${a} (${shape[a]})`, String(a)));
      select.value = String(state[which]);
      select.addEventListener("change", () => {
        const a = Number(select.value);
        const other = which === "rows" ? "cols" : "rows";
        // The other chooser takes the axis this one left, when they would be the same.
        if (state[other] === a) state[other] = state[which];
        state[which] = a;
        render();
        onChange();
      });
      label.append(which === "rows" ? "Rows: " : "Columns: ", select);
      return label;
    };
    host.append(chooser("rows"), chooser("cols"));
    for (let a = 0; a < axesShown(); a++) {
      if (a === state.rows || a === state.cols) continue;
      const label = document.createElement("label");
      label.className = "slider";
      const slider = document.createElement("input");
      slider.type = "range";
      slider.min = "0";
      slider.max = String(shape[a] - 1);
      slider.step = "1";
      slider.value = String(state.at[a]);
      slider.dataset.testid = `slice-axis-${a}`;
      slider.setAttribute("aria-label", `index along axis ${a}`);
      const shown = document.createElement("output");
      shown.textContent = `${state.at[a]} / ${shape[a] - 1}`;
      slider.addEventListener("input", () => {
        state.at[a] = Number(slider.value);
        shown.textContent = `${state.at[a]} / ${shape[a] - 1}`;
        onChange();
      });
      label.append(`axis ${a} `, slider, " ", shown);
      host.append(label);
    }
  };
  render();

  return {
    choice: () => ({ ...state, at: [...state.at] }),
    index: (rows, cols) =>
      shape.map((_, a) => {
        if (a === state.rows) return rows;
        if (a === state.cols) return cols;
        if (state.rgb && a === n - 1) return null;
        return state.at[a];
      }),
    position: (r, c) =>
      shape.slice(0, axesShown()).map((_, a) => (a === state.rows ? r : a === state.cols ? c : state.at[a])),
  };
}

/** @typedef {(number | null | [number, number, number])[]} Index */

/**
 * A NumPy index as text (`2, :, 10:20`, `-1`, `::4`: an entry per axis, missing ones the
 * whole axis) as `NpyFile.select` takes it: a number, null (`:`) or `[start, stop, step]`
 * (negative bounds count from the end and are clipped to the axis, as NumPy's are; steps
 * are positive). An error names the entry that is wrong.
 * @param {string} text
 * @param {readonly number[]} shape
 * @returns {Index}
 */
export function parseIndex(text, shape) {
  const parts = text.split(",");
  const fail = (/** @type {number} */ k, /** @type {string} */ why) =>
    new NpyError(`slice '${text}': entry ${k + 1} ('${parts[k].trim()}') ${why}`, { kind: "usage" });
  if (parts.length > shape.length) {
    throw new NpyError(`slice '${text}': ${parts.length} entries for an array of ${shape.length} ${shape.length === 1 ? "axis" : "axes"}`, { kind: "usage" });
  }
  return parts.map((raw, k) => {
    const part = raw.trim();
    const dim = shape[k];
    const integer = (/** @type {string} */ t) => (/^[+-]?\d+$/.test(t.trim()) ? Number(t) : NaN);
    if (part === "" || part === ":" || part === "::") return null;
    if (!part.includes(":")) {
      const i = integer(part);
      if (Number.isNaN(i)) throw fail(k, "is not an index: a whole number, or start:stop:step");
      if (i < -dim || i >= dim) throw fail(k, `is out of range for an axis of length ${dim}`);
      return i;
    }
    const bits = part.split(":");
    if (bits.length > 3) throw fail(k, "has more than start:stop:step");
    const [a, b, c] = bits.map((t) => (t.trim() === "" ? undefined : integer(t)));
    if ([a, b, c].some((v) => Number.isNaN(v))) throw fail(k, "is not start:stop:step of whole numbers");
    const step = c ?? 1;
    if (step < 1) throw fail(k, "has a step below 1 (this page reads slices forward)");
    const bound = (/** @type {number | undefined} */ v, /** @type {number} */ otherwise) =>
      v === undefined ? otherwise : Math.max(0, Math.min(dim, v < 0 ? v + dim : v));
    const start = bound(a, 0);
    const stop = Math.max(start, bound(b, dim));
    return [start, stop, step];
  });
}

/**
 * An index as NumPy's text: `7, :, 0:64`, `0:64:2`.
 * @param {Index} index
 */
export function indexText(index) {
  return index.map((e) => (e === null ? ":" : typeof e === "number" ? String(e) : e[2] === 1 ? `${e[0]}:${e[1]}` : `${e[0]}:${e[1]}:${e[2]}`)).join(", ");
}
