// Taking data away: the rows shown or all rows as CSV (a column per scalar: what
// `np.loadtxt(f, delimiter=",", skiprows=1)` reads), the array as `.npy`.

import { save } from "../js/index.js";
import { $, fileStem, offer, showError } from "./state.js";

/** Rows per piece of a CSV of all rows. */
const CSV_PIECE = 4096;

/** @param {string} cell */
function csvCell(cell) {
  return /[",\n\r]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/**
 * @param {HTMLElement} panel
 * @param {import("../js/open.js").NpyFile} file
 * @param {string} label
 * @param {Blob | undefined} npy the array's .npy file as it is, where it is a Blob or a slice of one (saved as it is, not read)
 * @param {() => [number, number]} shown the rows on screen, `[first, end)`
 */
export function setUpExports(panel, file, label, npy, shown) {
  const base = fileStem(label);
  /** Rows a to b as CSV: a header of column names, each subarray value a column of its own. */
  const csv = async (/** @type {number} */ a, /** @type {number} */ b) => {
    // Each piece becomes a Blob at once: the browser holds the text (on disk when large),
    // not this page's heap.
    /** @type {Blob[]} */
    const parts = [];
    for (let s = a; s < b || (s === a && a === b); s += CSV_PIECE) {
      const e = Math.min(b, s + CSV_PIECE);
      const { columns, rows } = (await file.rows(s, e)).table(0, e - s, { split: true });
      const head = s === a ? `${columns.map(csvCell).join(",")}\n` : "";
      parts.push(new Blob([head + rows.map((r) => `${r.map(csvCell).join(",")}\n`).join("")]));
      if (a === b) break;
    }
    return new Blob(parts, { type: "text/csv" });
  };
  const run = (/** @type {() => Promise<void>} */ job) => job().catch((e) => showError(panel, e));
  $(panel, ".csv-shown").onclick = () =>
    run(async () => {
      const [a, b] = shown();
      offer(await csv(a, b), `${base}-rows-${a}-${b}.csv`);
    });
  $(panel, ".csv-all").onclick = () => run(async () => offer(await csv(0, file.rowCount), `${base}.csv`));
  $(panel, ".save-npy").onclick = () =>
    run(async () => {
      if (npy !== undefined) return offer(npy, `${base}.npy`);
      // save() gives bytes of an ArrayBuffer of their own, never shared memory.
      const bytes = /** @type {BlobPart} */ (save(await file.read()));
      offer(new Blob([bytes], { type: "application/octet-stream" }), `${base}.npy`);
    });
}

