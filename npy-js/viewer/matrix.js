// The matrix grid: a 2-d array, or a 2-d slice of an N-d one, as a spreadsheet: a column
// per index of the shown column axis, a row per index of the row axis, index headers that
// stay in view, virtually scrolled both ways. Only the tiles on screen are read (by
// `NpyFile.select`, so a slice through a large volume reads its own bytes) and printed as
// NumPy prints each element.

import { $ } from "./state.js";

/** Rows and columns of a tile: what one read and one print cover. */
const TILE_ROWS = 64;
const TILE_COLS = 32;
/** Tiles kept printed. */
const KEPT_TILES = 256;
/** Pixels a scroll area may span before indexes are spread over it by ratio. */
const MAX_PX = 8_000_000;

/**
 * What the grid shows: `rows` × `cols` cells, printed a block at a time by `read`.
 * @typedef {object} Matrix
 * @property {number} rows
 * @property {number} cols
 * @property {string} rowAxis what the rows are (`axis 0`), for the position line
 * @property {string} colAxis
 * @property {(r0: number, r1: number, c0: number, c1: number, signal: AbortSignal) => Promise<string[][]>} read
 *   cells `[r0, r1) × [c0, c1)` as NumPy prints them, a row of strings per row
 */

/**
 * The matrix of a 2-d slice of `file`: axis `rows` shown down, `cols` across, and
 * `index(rows, cols)` the select index of a block of it (rows and columns as
 * `[start, stop, step]`), as the slicer gives it (slice.js).
 * @param {import("../js/open.js").NpyFile} file
 * @param {{rows: number, cols: number}} axes
 * @param {(rows: [number, number, number], cols: [number, number, number]) => (number | null | [number, number, number])[]} index
 * @returns {Matrix}
 */
export function sliceMatrix(file, { rows: rowAxis, cols: colAxis }, index) {
  return {
    rows: file.shape[rowAxis],
    cols: file.shape[colAxis],
    rowAxis: `axis ${rowAxis}`,
    colAxis: `axis ${colAxis}`,
    read: async (r0, r1, c0, c1, signal) => {
      const block = await file.select(index([r0, r1, 1], [c0, c1, 1]), { signal });
      const printed = block.table(0, block.rowCount, { split: true }).rows;
      // The kept axes come in the file's order: the columns first when cols < rows.
      return rowAxis < colAxis ? printed : transpose(printed, r1 - r0, c1 - c0);
    },
  };
}

/**
 * @param {string[][]} cells `cols` rows of `rows` strings
 * @param {number} rows
 * @param {number} cols
 */
function transpose(cells, rows, cols) {
  return Array.from({ length: rows }, (_, r) => Array.from({ length: cols }, (_, c) => cells[c][r]));
}

/**
 * Shows `matrix` in `section` (its `.matrix` grid), replacing what it showed, with cell
 * `at` selected and on screen; returns what stops its reads and listeners (before the
 * next matrix replaces it) and tells the selected cell.
 * @param {HTMLElement} section
 * @param {Matrix} matrix
 * @param {(e: unknown) => void} failed told a read's error
 * @param {[number, number]} [at]
 * @returns {{stop: () => void, selected: () => [number, number]}}
 */
export function showMatrix(section, matrix, failed, at = [0, 0]) {
  const scroll = $(section, ".matrix-scroll");
  const spacer = $(section, ".matrix-spacer");
  const cellsBox = $(section, ".matrix-cells");
  const position = $(section, ".matrix-position");
  const cell = $(section, ".matrix-cell");
  const controller = new AbortController();
  const style = getComputedStyle(document.documentElement);
  const rowHeight = parseFloat(style.getPropertyValue("--row")) || 24;
  const colWidth = parseFloat(style.getPropertyValue("--matrix-col")) || 112;
  const headWidth = Math.max(56, 9 * String(matrix.rows).length + 24);
  const { rows, cols } = matrix;
  const fullW = cols * colWidth;
  const fullH = rows * rowHeight;
  // What there is to scroll: past MAX_PX, a span the indexes are spread over by ratio;
  // else exactly the rows and columns not wholly on screen, so the scroll stops with the
  // last ones wholly in view (set again when the area resizes).
  const extent = () => {
    const w = fullW > MAX_PX ? MAX_PX : Math.max(0, cols - visibleCols()) * colWidth;
    const h = fullH > MAX_PX ? MAX_PX : Math.max(0, rows - visibleRows()) * rowHeight;
    spacer.style.width = `${scroll.clientWidth + w}px`;
    spacer.style.height = `${scroll.clientHeight + h}px`;
  };
  scroll.scrollTop = 0;
  scroll.scrollLeft = 0;

  /** @type {Map<string, Promise<string[][]>>} */
  const tiles = new Map();
  /** @type {Map<string, string[][]>} */
  const printed = new Map();
  const tile = (/** @type {number} */ tr, /** @type {number} */ tc) => {
    const key = `${tr},${tc}`;
    const known = tiles.get(key);
    if (known !== undefined) {
      tiles.delete(key);
      tiles.set(key, known);
      return known;
    }
    const r0 = tr * TILE_ROWS;
    const c0 = tc * TILE_COLS;
    const got = matrix.read(r0, Math.min(rows, r0 + TILE_ROWS), c0, Math.min(cols, c0 + TILE_COLS), controller.signal).then(
      (cells) => {
        if (tiles.get(key) === got) printed.set(key, cells);
        return cells;
      },
      (e) => {
        if (tiles.get(key) === got) tiles.delete(key);
        throw e;
      },
    );
    tiles.set(key, got);
    if (tiles.size > KEPT_TILES) {
      const oldest = /** @type {string} */ (tiles.keys().next().value);
      tiles.delete(oldest);
      printed.delete(oldest);
    }
    return got;
  };

  // Rows and columns wholly on screen; the first of each from the scroll position (by
  // ratio past MAX_PX), so that the last ones can be scrolled wholly into view.
  const visibleRows = () => Math.max(1, Math.floor((scroll.clientHeight - rowHeight) / rowHeight));
  const visibleCols = () => Math.max(1, Math.floor((scroll.clientWidth - headWidth) / colWidth));
  const firstOf = (/** @type {number} */ at, /** @type {number} */ max, /** @type {number} */ full, /** @type {number} */ unit, /** @type {number} */ count, /** @type {number} */ seen) => {
    const last = Math.max(0, count - seen);
    if (full <= MAX_PX) return Math.min(last, Math.floor(at / unit));
    return Math.round((at / Math.max(1, max)) * last);
  };
  const firstRow = () => firstOf(scroll.scrollTop, scroll.scrollHeight - scroll.clientHeight, fullH, rowHeight, rows, visibleRows());
  const firstCol = () => firstOf(scroll.scrollLeft, scroll.scrollWidth - scroll.clientWidth, fullW, colWidth, cols, visibleCols());
  const scrollTo = (/** @type {number} */ r, /** @type {number} */ c) => {
    const at = (/** @type {number} */ i, /** @type {number} */ full, /** @type {number} */ unit, /** @type {number} */ count, /** @type {number} */ seen, /** @type {number} */ max) =>
      full <= MAX_PX ? i * unit : (i / Math.max(1, count - seen)) * max;
    scroll.scrollTop = at(r, fullH, rowHeight, rows, visibleRows(), scroll.scrollHeight - scroll.clientHeight);
    scroll.scrollLeft = at(c, fullW, colWidth, cols, visibleCols(), scroll.scrollWidth - scroll.clientWidth);
  };

  /** The selected cell, which the keyboard moves and the line below the grid prints. */
  /** @type {[number, number]} */
  let selected = [0, 0];
  let drawn = 0;
  const render = () => {
    const r0 = firstRow();
    const c0 = firstCol();
    // Those wholly on screen and the one partly on screen after them.
    const nr = Math.min(visibleRows() + 1, rows - r0);
    const nc = Math.min(visibleCols() + 1, cols - c0);
    // The layer of cells is the size of the area on screen, moved with it: it never widens
    // what there is to scroll.
    cellsBox.style.transform = `translate(${scroll.scrollLeft}px, ${scroll.scrollTop}px)`;
    cellsBox.style.width = `${scroll.clientWidth}px`;
    cellsBox.style.height = `${scroll.clientHeight}px`;
    cellsBox.style.gridTemplateColumns = `${headWidth}px repeat(${Math.max(0, nc)}, ${colWidth}px)`;
    const want = (nr + 1) * (nc + 1);
    while (cellsBox.children.length < want) cellsBox.append(document.createElement("div"));
    while (cellsBox.children.length > want) cellsBox.lastElementChild?.remove();
    const token = ++drawn;
    for (let i = -1; i < nr; i++) {
      for (let j = -1; j < nc; j++) {
        const div = /** @type {HTMLElement} */ (cellsBox.children[(i + 1) * (nc + 1) + (j + 1)]);
        const r = r0 + i;
        const c = c0 + j;
        if (i < 0 || j < 0) {
          div.className = "head";
          div.textContent = i < 0 && j < 0 ? "" : i < 0 ? String(c) : String(r);
          delete div.dataset.cell;
          continue;
        }
        div.dataset.cell = `${r},${c}`;
        div.className = r === selected[0] && c === selected[1] ? "selected" : "";
        const tr = Math.floor(r / TILE_ROWS);
        const tc = Math.floor(c / TILE_COLS);
        const known = printed.get(`${tr},${tc}`);
        const fill = (/** @type {string[][] | undefined} */ cells) => {
          const text = cells ? cells[r - tr * TILE_ROWS][c - tc * TILE_COLS] : "…";
          div.textContent = text;
          div.title = cells ? `[${r}, ${c}] ${text}` : "";
          div.classList.toggle("pending", !cells);
        };
        fill(known);
        if (known === undefined) {
          tile(tr, tc).then(
            (cells) => {
              if (token === drawn) fill(cells);
              if (r === selected[0] && c === selected[1]) describe();
            },
            (e) => {
              if (!controller.signal.aborted) failed(e);
            },
          );
        }
      }
    }
    position.textContent =
      rows === 0 || cols === 0
        ? "no cells"
        : `rows ${r0.toLocaleString("en")}–${(r0 + nr - 1).toLocaleString("en")} of ${rows.toLocaleString("en")} (${matrix.rowAxis}), ` +
          `columns ${c0.toLocaleString("en")}–${(c0 + nc - 1).toLocaleString("en")} of ${cols.toLocaleString("en")} (${matrix.colAxis})`;
  };
  const describe = () => {
    const [r, c] = selected;
    const text = printed.get(`${Math.floor(r / TILE_ROWS)},${Math.floor(c / TILE_COLS)}`)?.[r % TILE_ROWS]?.[c % TILE_COLS];
    cell.textContent = rows === 0 || cols === 0 ? "" : `[${r}, ${c}] = ${text ?? "…"}`;
  };
  const select = (/** @type {number} */ r, /** @type {number} */ c) => {
    selected = [Math.max(0, Math.min(rows - 1, r)), Math.max(0, Math.min(cols - 1, c))];
    const [sr, sc] = selected;
    const fr = firstRow();
    const fc = firstCol();
    const nr = visibleRows();
    const nc = visibleCols();
    const tr = sr < fr ? sr : sr >= fr + nr ? sr - nr + 1 : fr;
    const tc = sc < fc ? sc : sc >= fc + nc ? sc - nc + 1 : fc;
    if (tr !== fr || tc !== fc) scrollTo(tr, tc);
    render();
    describe();
  };

  const onScroll = () => render();
  scroll.addEventListener("scroll", onScroll, { passive: true });
  const resized = new ResizeObserver(() => {
    extent();
    render();
  });
  resized.observe(scroll);
  const onKey = (/** @type {KeyboardEvent} */ event) => {
    const page = event.key.startsWith("Page") ? visibleRows() - 1 : 0;
    const moves = /** @type {Record<string, [number, number]>} */ ({
      ArrowDown: [1, 0],
      ArrowUp: [-1, 0],
      ArrowRight: [0, 1],
      ArrowLeft: [0, -1],
      PageDown: [page, 0],
      PageUp: [-page, 0],
      Home: event.ctrlKey ? [-Infinity, -Infinity] : [0, -Infinity],
      End: event.ctrlKey ? [Infinity, Infinity] : [0, Infinity],
    });
    const move = moves[event.key];
    if (move === undefined || rows === 0 || cols === 0) return;
    event.preventDefault();
    select(selected[0] + move[0], selected[1] + move[1]);
  };
  scroll.addEventListener("keydown", onKey);
  const onClick = (/** @type {MouseEvent} */ event) => {
    const at = /** @type {HTMLElement} */ (event.target).closest("[data-cell]");
    if (!(at instanceof HTMLElement) || at.dataset.cell === undefined) return;
    const [r, c] = at.dataset.cell.split(",").map(Number);
    select(r, c);
  };
  cellsBox.addEventListener("click", onClick);
  /** @type {HTMLInputElement} */
  const goRow = $(section, ".matrix-row");
  /** @type {HTMLInputElement} */
  const goCol = $(section, ".matrix-col");
  goRow.max = String(Math.max(0, rows - 1));
  goCol.max = String(Math.max(0, cols - 1));
  const onGo = () => select(Math.floor(Number(goRow.value) || 0), Math.floor(Number(goCol.value) || 0));
  goRow.addEventListener("change", onGo);
  goCol.addEventListener("change", onGo);
  extent();
  select(at[0], at[1]);
  goRow.value = String(selected[0]);
  goCol.value = String(selected[1]);
  const stop = () => {
    controller.abort();
    scroll.removeEventListener("scroll", onScroll);
    scroll.removeEventListener("keydown", onKey);
    cellsBox.removeEventListener("click", onClick);
    goRow.removeEventListener("change", onGo);
    goCol.removeEventListener("change", onGo);
    resized.disconnect();
  };
  return { stop, selected: () => selected };
}
