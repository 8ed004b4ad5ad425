// The rows grid: an array's rows along its first axis, printed as NumPy prints them (the
// package's `table`), a column per field; virtually scrolled (only the rows on screen exist
// and are read, a block at a time), with a selected row the keyboard moves.

import { $, showError } from "./state.js";

/** Rows fetched and printed at a time. */
const BLOCK = 256;
/** Blocks kept printed. */
const KEPT_BLOCKS = 64;
/** Pixels a scroll area may be tall before rows are spread over it by ratio. */
const MAX_PX = 8_000_000;

/**
 * The rows shown in a panel: the printed blocks, the rows on screen and the selected one.
 * @typedef {object} Rows
 * @property {import("../js/open.js").NpyFile} file
 * @property {string[]} columns
 * @property {Map<number, Promise<string[][]>>} blocks
 * @property {Map<number, string[][]>} printed
 * @property {number} first the first row on screen
 * @property {number} visible rows on screen
 * @property {number} selected
 * @property {() => void} render
 * @property {(row: number) => void} scrollTo selects a row and brings it on screen
 */

/**
 * Sets up the panel's rows grid for `file`; resolves once its first rows are printed.
 * @param {HTMLElement} panel
 * @param {import("../js/open.js").NpyFile} file
 * @returns {Promise<Rows>}
 */
export async function setUpRows(panel, file) {
  /** @type {Rows} */
  const view = {
    file,
    columns: file.fields.length > 0 ? file.fields : ["value"],
    blocks: new Map(),
    printed: new Map(),
    first: 0,
    visible: 0,
    selected: 0,
    render: () => {},
    scrollTo: () => {},
  };
  setUpGrid(panel, view);
  await block(view, 0);
  view.render();
  return view;
}

/**
 * The printed rows of block `k`, read and printed when first asked for; once printed,
 * also in `view.printed`, for rows drawn at once.
 * @param {Rows} view
 * @param {number} k
 */
function block(view, k) {
  const known = view.blocks.get(k);
  if (known !== undefined) {
    // The most recently asked for last.
    view.blocks.delete(k);
    view.blocks.set(k, known);
    return known;
  }
  const start = k * BLOCK;
  const end = Math.min(view.file.rowCount, start + BLOCK);
  /** @type {Promise<string[][]>} */
  const got = view.file.rows(start, end).then(
    (rows) => {
      const printed = rows.table().rows;
      if (view.blocks.has(k)) view.printed.set(k, printed);
      return printed;
    },
    (/** @type {unknown} */ e) => {
      // Asked again when next shown: a URL's read may fail once and work the next time.
      if (view.blocks.get(k) === got) view.blocks.delete(k);
      throw e;
    },
  );
  view.blocks.set(k, got);
  // Keep the last KEPT_BLOCKS blocks asked for.
  if (view.blocks.size > KEPT_BLOCKS) {
    const oldest = /** @type {number} */ (view.blocks.keys().next().value);
    view.blocks.delete(oldest);
    view.printed.delete(oldest);
  }
  return got;
}

/**
 * The grid: a header of column names and rows virtually scrolled (only the rows on screen
 * exist), printed a block at a time as they come; keyboard: arrows, Page Up/Down, Home,
 * End move the selected row.
 * @param {HTMLElement} panel
 * @param {Rows} view
 */
function setUpGrid(panel, view) {
  const grid = $(panel, ".grid");
  const head = $(panel, ".grid-head");
  const scroll = $(panel, ".grid-scroll");
  const spacer = $(panel, ".grid-spacer");
  const rowsBox = $(panel, ".grid-rows");
  const position = $(panel, ".position");
  /** @type {HTMLInputElement} */
  const jump = $(panel, ".jump");
  // The selected row's id, unique in the page: its tab panel's id and "-selected".
  const selectedId = `${(panel.closest(".panel") ?? panel).id}-selected`;
  const rowHeight = parseFloat(getComputedStyle(document.documentElement).getPropertyValue("--row")) || 24;
  const count = view.file.rowCount;
  grid.setAttribute("aria-rowcount", String(count + 1));
  grid.setAttribute("aria-colcount", String(view.columns.length + 1));
  head.replaceChildren(
    ...["row", ...view.columns].map((name) => {
      const cell = document.createElement("div");
      cell.setAttribute("role", "columnheader");
      cell.textContent = name;
      return cell;
    }),
  );
  const full = count * rowHeight;
  const scaled = full > MAX_PX;
  spacer.style.height = `${scaled ? MAX_PX : full}px`;
  jump.max = String(Math.max(0, count - 1));

  const visible = () => Math.max(1, Math.ceil(scroll.clientHeight / rowHeight));
  const lastFirst = () => Math.max(0, count - visible());
  const firstAt = () => {
    if (!scaled) return Math.min(lastFirst(), Math.floor(scroll.scrollTop / rowHeight));
    const ratio = scroll.scrollTop / Math.max(1, scroll.scrollHeight - scroll.clientHeight);
    return Math.round(ratio * lastFirst());
  };
  const scrollTo = (/** @type {number} */ first) => {
    scroll.scrollTop = scaled ? (first / Math.max(1, lastFirst())) * (scroll.scrollHeight - scroll.clientHeight) : first * rowHeight;
  };

  let drawn = 0;
  view.render = () => {
    const first = firstAt();
    view.first = first;
    const n = Math.min(visible() + 1, count - first);
    rowsBox.style.transform = `translateY(${scaled ? scroll.scrollTop : first * rowHeight}px)`;
    while (rowsBox.children.length < n) {
      const row = document.createElement("div");
      row.className = "grid-row";
      row.setAttribute("role", "row");
      row.addEventListener("click", () => {
        view.selected = Number(row.dataset.row);
        view.render();
      });
      rowsBox.append(row);
    }
    while (rowsBox.children.length > n) rowsBox.lastElementChild?.remove();
    view.visible = n;
    const token = ++drawn;
    for (let i = 0; i < n; i++) {
      const r = first + i;
      const row = /** @type {HTMLElement} */ (rowsBox.children[i]);
      row.dataset.row = String(r);
      row.setAttribute("aria-rowindex", String(r + 2));
      row.setAttribute("aria-selected", String(r === view.selected));
      if (r === view.selected) row.id = selectedId;
      else row.removeAttribute("id");
      const k = Math.floor(r / BLOCK);
      const printed = view.printed.get(k);
      if (printed) {
        fillRow(row, r, printed[r - k * BLOCK], view.columns.length);
        continue;
      }
      fillRow(row, r, null, view.columns.length);
      block(view, k).then(
        (rows) => {
          if (token === drawn) fillRow(row, r, rows[r - k * BLOCK], view.columns.length);
        },
        (e) => showError(panel, e),
      );
    }
    // The selected row, for assistive technology, while it is on screen.
    if (view.selected >= first && view.selected < first + n) grid.setAttribute("aria-activedescendant", selectedId);
    else grid.removeAttribute("aria-activedescendant");
    position.textContent = count === 0 ? "no rows" : `rows ${first.toLocaleString("en")}–${(first + n - 1).toLocaleString("en")} of ${count.toLocaleString("en")}`;
  };
  scroll.addEventListener("scroll", () => view.render(), { passive: true });
  new ResizeObserver(() => view.render()).observe(scroll);
  jump.addEventListener("change", () => view.scrollTo(Math.max(0, Math.min(count - 1, Math.floor(Number(jump.value) || 0)))));
  grid.addEventListener("keydown", (event) => {
    const moves = /** @type {Record<string, number>} */ ({
      ArrowDown: 1,
      ArrowUp: -1,
      PageDown: visible() - 1,
      PageUp: -(visible() - 1),
      Home: -Infinity,
      End: Infinity,
    });
    if (!(event.key in moves) || count === 0) return;
    event.preventDefault();
    view.selected = Math.max(0, Math.min(count - 1, view.selected + moves[event.key]));
    if (view.selected < view.first) scrollTo(view.selected);
    else if (view.selected >= view.first + visible()) scrollTo(view.selected - visible() + 1);
    view.render();
  });
  view.scrollTo = (r) => {
    view.selected = r;
    scrollTo(Math.min(r, lastFirst()));
    view.render();
  };
}

/**
 * @param {HTMLElement} row
 * @param {number} r
 * @param {string[] | null | undefined} cells
 * @param {number} columns
 */
function fillRow(row, r, cells, columns) {
  row.classList.toggle("pending", !cells);
  while (row.children.length < columns + 1) {
    const cell = document.createElement("div");
    cell.setAttribute("role", "gridcell");
    row.append(cell);
  }
  row.children[0].textContent = String(r);
  for (let c = 0; c < columns; c++) {
    const text = cells ? cells[c] : "…";
    const cell = /** @type {HTMLElement} */ (row.children[c + 1]);
    cell.textContent = text;
    cell.title = cells ? text : "";
  }
}

