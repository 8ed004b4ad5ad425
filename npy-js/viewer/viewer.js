// The npy viewer: NumPy's .npy and .npz files opened in the page with the npy package, a
// tab each. Files are read by ranges (a File's slices, a URL's HTTP ranges): the header
// and an archive's directory at once, then only the rows on screen. Values are printed as
// NumPy prints them (the package's `table`), plotted on a canvas, and taken away as CSV or
// .npy. Nothing leaves the browser. `window.npyViewer` tells tests and the bench what
// happened (bytes read, when rows first showed, the last export).

import { NpyError, open, save } from "../js/index.js";

/** Rows fetched and printed at a time. */
const BLOCK = 256;
/** Blocks kept printed. */
const KEPT_BLOCKS = 64;
/** Pixels a scroll area may be tall before rows are spread over it by ratio. */
const MAX_PX = 8_000_000;
/** The most bytes a compressed member may inflate to: it is held in memory. */
const MAX_INFLATED = 1 << 30;
/** Rows a plot of a column reads at most. */
const PLOT_ROWS = 200_000;
/** Rows per piece of a CSV of all rows. */
const CSV_PIECE = 4096;

/** What tests and the bench read. */
const stats = {
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
};
/** @type {any} */ (globalThis).npyViewer = stats;

const tabs = /** @type {HTMLElement} */ (document.getElementById("tabs"));
const panels = /** @type {HTMLElement} */ (document.getElementById("panels"));
const template = /** @type {HTMLTemplateElement} */ (document.getElementById("panel"));

/**
 * One open file: its tab and panel, and what is shown in it.
 * @typedef {object} Tab
 * @property {string} name
 * @property {HTMLButtonElement} button
 * @property {HTMLElement} panel
 * @property {any} [archive] an NpzFile
 * @property {View} [view] the array shown
 * @property {Blob} [blob] the File the tab opened, if it opened one
 */

/**
 * An array shown in a panel: an NpyFile, its columns, the printed blocks, the selection.
 * @typedef {object} View
 * @property {any} file an NpyFile
 * @property {Blob | undefined} npy the array's .npy file as it is, where it is a Blob or a slice of one (saved as it is, not read)
 * @property {string} label
 * @property {string[]} columns
 * @property {Map<number, Promise<string[][]>>} blocks
 * @property {Map<number, string[][]>} printed
 * @property {number} first
 * @property {number} visible
 * @property {number} selected
 * @property {() => void} render
 */

// ---------------------------------------------------------------------------------------
// Opening files

/** @param {File} file */
function counted(file) {
  stats.bytesRead[file.name] ??= 0;
  return {
    name: file.name,
    byteLength: file.size,
    slice: async (/** @type {number} */ start, /** @type {number} */ end) => {
      stats.bytesRead[file.name] += end - start;
      return file.slice(start, end).arrayBuffer();
    },
  };
}

/**
 * Opens `source` (a counted File, or a URL) in a new tab named `name`.
 * @param {unknown} source
 * @param {string} name
 * @param {Blob} [blob] the File that `source` reads
 */
async function openTab(source, name, blob) {
  const tab = addTab(name);
  tab.blob = blob;
  const began = performance.now();
  try {
    const opened = await open(source, { name });
    if (opened.kind === "npz") {
      tab.archive = opened;
      showMembers(tab, opened);
    } else {
      await showArray(tab, opened, name, began, blob);
    }
  } catch (e) {
    showError(tab, e);
  }
  return tab;
}

/** @param {string} name */
function addTab(name) {
  document.getElementById("drop")?.setAttribute("hidden", "");
  const panel = /** @type {HTMLElement} */ (template.content.firstElementChild?.cloneNode(true));
  const id = `tab-${stats.tabs.length}`;
  panel.id = `${id}-panel`;
  panel.setAttribute("aria-labelledby", id);
  const button = document.createElement("button");
  button.type = "button";
  button.id = id;
  button.setAttribute("role", "tab");
  button.setAttribute("aria-controls", panel.id);
  button.textContent = name;
  button.addEventListener("click", () => select(tab));
  button.addEventListener("keydown", (event) => {
    const i = stats.tabs.indexOf(tab);
    const next = event.key === "ArrowRight" ? i + 1 : event.key === "ArrowLeft" ? i - 1 : -1;
    if (next >= 0 && next < stats.tabs.length) {
      select(stats.tabs[next]);
      stats.tabs[next].button.focus();
    }
  });
  tabs.append(button);
  panels.append(panel);
  /** @type {Tab} */
  const tab = { name, button, panel };
  stats.tabs.push(tab);
  select(tab);
  return tab;
}

/** @param {Tab} tab */
function select(tab) {
  for (const t of stats.tabs) {
    const on = t === tab;
    t.button.setAttribute("aria-selected", String(on));
    t.button.tabIndex = on ? 0 : -1;
    t.panel.hidden = !on;
  }
}

/**
 * @param {Tab} tab
 * @param {unknown} e
 */
function showError(tab, e) {
  const box = /** @type {HTMLElement} */ (tab.panel.querySelector(".error"));
  box.textContent = e instanceof NpyError ? e.message : `Unexpected error: ${e instanceof Error ? e.message : String(e)}`;
  box.hidden = false;
}

/**
 * @param {Tab} tab
 * @param {any} archive an NpzFile
 */
function showMembers(tab, archive) {
  const box = /** @type {HTMLElement} */ (tab.panel.querySelector(".members"));
  const body = /** @type {HTMLElement} */ (box.querySelector("tbody"));
  box.hidden = false;
  for (const m of archive.members) {
    const row = document.createElement("tr");
    const cells = [m.name, m.compression, m.compressedSize.toLocaleString("en"), m.size.toLocaleString("en")];
    for (const [i, text] of cells.entries()) {
      const td = document.createElement("td");
      td.textContent = text;
      if (i >= 2) td.className = "n";
      row.append(td);
    }
    const open = document.createElement("button");
    open.type = "button";
    open.textContent = "Show";
    open.dataset.member = m.name;
    open.addEventListener("click", () => showMember(tab, archive, m.name, row));
    const td = document.createElement("td");
    td.append(open);
    row.append(td);
    body.append(row);
  }
  if (archive.members.length > 0) showMember(tab, archive, archive.members[0].name, /** @type {HTMLElement} */ (body.firstElementChild));
}

/**
 * Shows member `name` of an archive: a stored one read by ranges, a compressed one
 * decompressed as a stream first, with its progress.
 * @param {Tab} tab
 * @param {any} archive
 * @param {string} name
 * @param {HTMLElement} row
 */
async function showMember(tab, archive, name, row) {
  for (const r of row.parentElement?.children ?? []) r.removeAttribute("aria-current");
  row.setAttribute("aria-current", "true");
  const progress = /** @type {HTMLElement} */ (tab.panel.querySelector(".progress"));
  const bar = /** @type {HTMLProgressElement} */ (progress.querySelector("progress"));
  const text = /** @type {HTMLElement} */ (progress.querySelector("span"));
  const began = performance.now();
  const info = archive.members.find((/** @type {any} */ m) => m.name === name);
  try {
    // A compressed member is inflated into this page's memory: within reason, asked
    // before any of it is (the decoder holds a member to the size it claims).
    if (info.compression !== "stored" && info.size > MAX_INFLATED) {
      throw new NpyError(
        `reading '${tab.name}': member '${info.member}' inflates to ${info.size.toLocaleString("en")} bytes; ` +
          `this page inflates ${MAX_INFLATED.toLocaleString("en")} at most, in memory (a stored member of any size is read by ranges)`,
        { kind: "usage" },
      );
    }
    const member = await archive.open(name, {
      onProgress: (/** @type {number} */ done, /** @type {number} */ total) => {
        progress.hidden = false;
        bar.value = done / total;
        text.textContent = `decompressing ${name}: ${Math.round((100 * done) / total)}%`;
      },
    });
    progress.hidden = true;
    // A stored member of a File is a slice of it, saved as it is.
    const npy = tab.blob && info.compression === "stored" ? tab.blob.slice(info.dataStart, info.dataStart + info.size) : undefined;
    await showArray(tab, member, `${tab.name}: ${name}`, began, npy);
  } catch (e) {
    progress.hidden = true;
    /** @type {HTMLElement} */ (tab.panel.querySelector(".array")).hidden = true;
    showError(tab, e);
  }
}

// ---------------------------------------------------------------------------------------
// An array: its header, dtype tree, rows, plot and exports

/**
 * @param {Tab} tab
 * @param {any} file an NpyFile
 * @param {string} label
 * @param {number} began when the open started
 * @param {Blob} [npy] the array's .npy file as it is, where it is a Blob or a slice of one
 */
async function showArray(tab, file, label, began, npy) {
  const panel = tab.panel;
  const box = /** @type {HTMLElement} */ (panel.querySelector(".array"));
  box.hidden = false;
  /** @type {HTMLElement} */ (panel.querySelector(".error")).hidden = true;
  facts(panel, file);
  /** @type {HTMLElement} */ (panel.querySelector(".header-text")).textContent = file.header;
  const tree = /** @type {HTMLElement} */ (panel.querySelector(".dtype-tree"));
  tree.replaceChildren(dtypeTree(file.dtype, "element"));
  const columns = file.fields.length > 0 ? file.fields : ["value"];
  /** @type {View} */
  const view = { file, npy, label, columns, blocks: new Map(), printed: new Map(), first: 0, visible: 0, selected: 0, render: () => {} };
  tab.view = view;
  setUpGrid(tab, view);
  setUpPlot(tab, view);
  setUpExports(tab, view);
  await block(view, 0);
  view.render();
  // On screen: after the frame that paints them.
  await new Promise((painted) => requestAnimationFrame(() => setTimeout(painted, 0)));
  stats.firstRows[label] = performance.now() - began;
  performance.mark(`npy-rows:${label}`);
}

/**
 * @param {HTMLElement} panel
 * @param {any} file
 */
function facts(panel, file) {
  const list = /** @type {HTMLElement} */ (panel.querySelector(".facts"));
  const size = file.shape.reduce((/** @type {number} */ n, /** @type {number} */ d) => n * d, 1);
  const items = [
    ["shape", `(${file.shape.join(", ")}${file.shape.length === 1 ? "," : ""})`],
    ["order", file.fortranOrder ? "Fortran (column-major)" : "C (row-major)"],
    ["elements", size.toLocaleString("en")],
    ["dtype", file.dtype.kind === "scalar" ? file.dtype.str : file.descr],
    ["itemsize", `${file.dtype.itemsize} bytes`],
    ["data", `${(size * file.dtype.itemsize).toLocaleString("en")} bytes from byte ${file.dataOffset}`],
    ["version", file.version.join(".")],
  ];
  list.replaceChildren(
    ...items.flatMap(([k, v]) => {
      const dt = document.createElement("dt");
      dt.textContent = k;
      const dd = document.createElement("dd");
      dd.textContent = v;
      dd.dataset.fact = k;
      return [dt, dd];
    }),
  );
}

/**
 * The dtype as a tree of lists: fields with their offsets, nested records, subarrays,
 * byte order, and padding where no field is.
 * @param {any} dtype
 * @param {string} name
 * @param {number} [offset]
 * @returns {HTMLElement}
 */
function dtypeTree(dtype, name, offset) {
  const ul = document.createElement("ul");
  ul.setAttribute("role", offset === undefined ? "tree" : "group");
  ul.append(dtypeNode(dtype, name, offset));
  return ul;
}

/**
 * @param {any} dtype
 * @param {string} name
 * @param {number | undefined} offset
 */
function dtypeNode(dtype, name, offset) {
  const li = document.createElement("li");
  li.setAttribute("role", "treeitem");
  const label = document.createElement("span");
  const at = offset === undefined ? "" : ` at byte ${offset}`;
  const title = document.createElement("span");
  title.className = "name";
  title.textContent = name;
  label.append(title, ` ${at}: `);
  if (dtype.kind === "scalar") {
    const code = document.createElement("code");
    code.textContent = dtype.str;
    const kind = document.createElement("span");
    kind.className = "kind";
    kind.textContent = ` ${describeScalar(dtype)}`;
    label.append(code, kind);
    li.append(label);
    return li;
  }
  if (dtype.kind === "subarray") {
    label.append(`subarray of shape (${dtype.shape.join(", ")}${dtype.shape.length === 1 ? "," : ""}), ${dtype.itemsize} bytes`);
    li.append(label);
    const ul = document.createElement("ul");
    ul.setAttribute("role", "group");
    ul.append(dtypeNode(dtype.base, "each", undefined));
    li.append(ul);
    return li;
  }
  label.append(`record of ${dtype.fields.length} field${dtype.fields.length === 1 ? "" : "s"}, ${dtype.itemsize} bytes`);
  li.append(label);
  const ul = document.createElement("ul");
  ul.setAttribute("role", "group");
  /** @type {[number, HTMLElement][]} */
  const parts = dtype.fields.map((/** @type {any} */ f) => [f.offset, dtypeNode(f.dtype, f.title ? `${f.name} (${f.title})` : f.name, f.offset)]);
  for (const p of dtype.padding) {
    const pad = document.createElement("li");
    pad.setAttribute("role", "treeitem");
    pad.className = "padding";
    pad.textContent = `padding at byte ${p.offset}: ${p.size} byte${p.size === 1 ? "" : "s"}`;
    parts.push([p.offset, pad]);
  }
  parts.sort((a, b) => a[0] - b[0]);
  ul.append(...parts.map(([, node]) => node));
  li.append(ul);
  return li;
}

/** @param {any} dtype a scalar dtype tree */
function describeScalar(dtype) {
  const kinds = /** @type {Record<string, string>} */ ({
    b: "boolean",
    i: "signed integer",
    u: "unsigned integer",
    f: "float",
    c: "complex",
    M: "datetime",
    m: "timedelta",
    S: "bytes",
    U: "unicode string",
    V: "raw bytes",
    O: "Python object",
  });
  const kind = kinds[dtype.type[0]] ?? dtype.type;
  const order = dtype.byteOrder === "<" ? ", little-endian" : dtype.byteOrder === ">" ? ", big-endian" : "";
  const unit = dtype.unit ? `, unit ${dtype.unit}` : "";
  return `(${kind}, ${dtype.itemsize} byte${dtype.itemsize === 1 ? "" : "s"}${order}${unit})`;
}

/**
 * The printed rows of block `k`, read and printed when first asked for; once printed,
 * also in `view.printed`, for rows drawn at once.
 * @param {View} view
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
    (/** @type {any} */ rows) => {
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
 * @param {Tab} tab
 * @param {View} view
 */
function setUpGrid(tab, view) {
  const panel = tab.panel;
  const grid = /** @type {HTMLElement} */ (panel.querySelector(".grid"));
  const head = /** @type {HTMLElement} */ (panel.querySelector(".grid-head"));
  const scroll = /** @type {HTMLElement} */ (panel.querySelector(".grid-scroll"));
  const spacer = /** @type {HTMLElement} */ (panel.querySelector(".grid-spacer"));
  const rowsBox = /** @type {HTMLElement} */ (panel.querySelector(".grid-rows"));
  const position = /** @type {HTMLElement} */ (panel.querySelector(".position"));
  const jump = /** @type {HTMLInputElement} */ (panel.querySelector(".jump"));
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
      if (r === view.selected) row.id = `${panel.id}-selected`;
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
        (e) => showError(tab, e),
      );
    }
    // The selected row, for assistive technology, while it is on screen.
    if (view.selected >= first && view.selected < first + n) grid.setAttribute("aria-activedescendant", `${panel.id}-selected`);
    else grid.removeAttribute("aria-activedescendant");
    position.textContent = count === 0 ? "no rows" : `rows ${first.toLocaleString("en")}–${(first + n - 1).toLocaleString("en")} of ${count.toLocaleString("en")}`;
  };
  scroll.addEventListener("scroll", () => view.render(), { passive: true });
  new ResizeObserver(() => view.render()).observe(scroll);
  jump.addEventListener("change", () => {
    const r = Math.max(0, Math.min(count - 1, Math.floor(Number(jump.value) || 0)));
    view.selected = r;
    scrollTo(Math.min(r, lastFirst()));
    view.render();
  });
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
  /** @type {any} */ (tab).scrollToRow = (/** @type {number} */ r) => {
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

// ---------------------------------------------------------------------------------------
// Plots

/**
 * The plot: a numeric column against row number, the selected row's subarray as a line,
 * or a column's histogram, on a canvas with labelled axes; saved as PNG.
 * @param {Tab} tab
 * @param {View} view
 */
function setUpPlot(tab, view) {
  const panel = tab.panel;
  const kind = /** @type {HTMLSelectElement} */ (panel.querySelector(".plot-kind"));
  const field = /** @type {HTMLSelectElement} */ (panel.querySelector(".plot-field"));
  const from = /** @type {HTMLInputElement} */ (panel.querySelector(".plot-from"));
  const to = /** @type {HTMLInputElement} */ (panel.querySelector(".plot-to"));
  const canvas = /** @type {HTMLCanvasElement} */ (panel.querySelector("canvas"));
  const leaves = numericLeaves(view.file.dtype);
  const fill = () => {
    const wanted = kind.value === "row" ? leaves.filter((l) => l.dims > 1) : leaves.filter((l) => l.dims === 1);
    field.replaceChildren(...wanted.map((l) => new Option(l.path || "value", l.path)));
    field.disabled = wanted.length === 0;
  };
  kind.addEventListener("change", fill);
  if (leaves.some((l) => l.dims > 1)) kind.value = "row";
  fill();
  from.value = "0";
  to.value = String(Math.min(view.file.rowCount, 10_000));
  /** @type {HTMLButtonElement} */ (panel.querySelector(".plot-draw")).addEventListener("click", () =>
    draw().catch((e) => showError(tab, e)),
  );
  /** @type {HTMLButtonElement} */ (panel.querySelector(".plot-png")).addEventListener("click", () => {
    canvas.toBlob((blob) => blob && offer(blob, `${view.label.replace(/[^\w.-]+/g, "_")}-plot.png`), "image/png");
  });
  async function draw() {
    if (field.disabled) throw new NpyError("no numeric field to plot", { kind: "usage" });
    const path = field.value;
    const name = path || "value";
    if (kind.value === "row") {
      const r = view.selected;
      const values = numbers((await view.file.rows(r, r + 1)).column(path));
      plotLine(canvas, values, { title: `${name} of row ${r}`, x: "index", y: name });
      return;
    }
    const a = Math.max(0, Math.min(view.file.rowCount, Math.floor(Number(from.value) || 0)));
    const b = Math.max(a, Math.min(view.file.rowCount, a + PLOT_ROWS, Math.floor(Number(to.value) || 0)));
    const values = numbers((await view.file.rows(a, b)).column(path));
    if (kind.value === "histogram") plotHistogram(canvas, values, { title: `${name}, rows ${a} to ${b}`, x: name, y: "rows" });
    else plotLine(canvas, values, { title: `${name}, rows ${a} to ${b}`, x: "row", y: name, offset: a });
  }
  /** @type {any} */ (tab).draw = draw;
}

/**
 * The numeric leaves of a dtype (integers, floats, booleans, datetimes as their counts):
 * `{path, dims}`, dims the values one element holds.
 * @param {any} dtype
 */
function numericLeaves(dtype) {
  /** @type {{path: string, dims: number}[]} */
  const out = [];
  const walk = (/** @type {any} */ d, /** @type {string} */ path, /** @type {number} */ dims) => {
    if (d.kind === "record") for (const f of d.fields) walk(f.dtype, path ? `${path}.${f.name}` : f.name, dims);
    else if (d.kind === "subarray") walk(d.base, path, dims * d.shape.reduce((/** @type {number} */ n, /** @type {number} */ k) => n * k, 1));
    else if (/^[biufMm]/.test(d.type) && d.type !== "f16") out.push({ path, dims });
  };
  walk(dtype, "", 1);
  return out;
}

/**
 * A column's values as numbers.
 * @param {any} array
 * @returns {number[]}
 */
function numbers(array) {
  return Array.from(/** @type {ArrayLike<number | bigint>} */ (array.data), Number);
}

/**
 * @param {HTMLCanvasElement} canvas
 * @param {{title: string, x: string, y: string}} labels
 * @param {[number, number]} xs
 * @param {[number, number]} ys
 */
function axes(canvas, labels, xs, ys) {
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
function niceTicks([lo, hi]) {
  const raw = (hi - lo) / 5;
  if (!(raw > 0) || !Number.isFinite(raw)) return [lo];
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const out = [];
  for (let k = Math.ceil(lo / step); k * step <= hi + step * 1e-9; k++) out.push(k * step);
  return out;
}

/** @param {number} v */
function tick(v) {
  const r = Number(v.toPrecision(6));
  if (Number.isInteger(r) && Math.abs(r) < 1e15) return String(r);
  return Math.abs(r) >= 1e6 || Math.abs(r) < 1e-3 ? r.toExponential().replace(/e\+?/, "e") : String(r);
}

/** @param {number[]} values */
function range(values) {
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
function plotLine(canvas, values, labels) {
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
 * @param {HTMLCanvasElement} canvas
 * @param {number[]} values
 * @param {{title: string, x: string, y: string}} labels
 */
function plotHistogram(canvas, values, labels) {
  const [lo, hi] = range(values);
  const bins = new Array(50).fill(0);
  for (const v of values) {
    if (Number.isFinite(v)) bins[Math.min(bins.length - 1, Math.floor(((v - lo) / (hi - lo)) * bins.length))]++;
  }
  const { g, x, y, accent } = axes(canvas, labels, [lo, hi], [0, Math.max(1, ...bins)]);
  g.fillStyle = accent;
  bins.forEach((n, i) => {
    const a = x(lo + ((hi - lo) * i) / bins.length);
    const b = x(lo + ((hi - lo) * (i + 1)) / bins.length);
    g.fillRect(a + 0.5, y(n), Math.max(1, b - a - 1), y(0) - y(n));
  });
  canvas.dataset.drawn = labels.title;
}

// ---------------------------------------------------------------------------------------
// Taking data away

/**
 * Offers `blob` as a download named `name`.
 * @param {Blob} blob
 * @param {string} name
 */
function offer(blob, name) {
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

/** @param {string} cell */
function csvCell(cell) {
  return /[",\n\r]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/**
 * @param {Tab} tab
 * @param {View} view
 */
function setUpExports(tab, view) {
  const panel = tab.panel;
  const base = view.label.replace(/[^\w.-]+/g, "_").replace(/\.np[yz]$/, "");
  /** Rows a to b as CSV: a header of column names, each subarray value a column of its own. */
  const csv = async (/** @type {number} */ a, /** @type {number} */ b) => {
    // Each piece becomes a Blob at once: the browser holds the text (on disk when large),
    // not this page's heap.
    /** @type {Blob[]} */
    const parts = [];
    for (let s = a; s < b || (s === a && a === b); s += CSV_PIECE) {
      const e = Math.min(b, s + CSV_PIECE);
      const { columns, rows } = (await view.file.rows(s, e)).table(0, e - s, { split: true });
      const head = s === a ? `${columns.map(csvCell).join(",")}\n` : "";
      parts.push(new Blob([head + rows.map((/** @type {string[]} */ r) => `${r.map(csvCell).join(",")}\n`).join("")]));
      if (a === b) break;
    }
    return new Blob(parts, { type: "text/csv" });
  };
  const run = (/** @type {() => Promise<void>} */ job) => job().catch((e) => showError(tab, e));
  /** @type {HTMLButtonElement} */ (panel.querySelector(".csv-shown")).onclick = () =>
    run(async () => {
      const a = view.first;
      const b = Math.min(view.file.rowCount, a + view.visible);
      offer(await csv(a, b), `${base}-rows-${a}-${b}.csv`);
    });
  /** @type {HTMLButtonElement} */ (panel.querySelector(".csv-all")).onclick = () =>
    run(async () => offer(await csv(0, view.file.rowCount), `${base}.csv`));
  /** @type {HTMLButtonElement} */ (panel.querySelector(".save-npy")).onclick = () =>
    run(async () => {
      if (view.npy !== undefined) return offer(view.npy, `${base}.npy`);
      // save() gives bytes of an ArrayBuffer of their own, never shared memory.
      const bytes = /** @type {BlobPart} */ (save(await view.file.read()));
      offer(new Blob([bytes], { type: "application/octet-stream" }), `${base}.npy`);
    });
}

// ---------------------------------------------------------------------------------------
// The page

const files = /** @type {HTMLInputElement} */ (document.getElementById("files"));
files.addEventListener("change", () => {
  for (const file of files.files ?? []) openTab(counted(file), file.name, file);
  files.value = "";
});
/** @type {HTMLFormElement} */ (document.getElementById("url-form")).addEventListener("submit", (event) => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ (document.getElementById("url"));
  const url = new URL(input.value, location.href).href;
  openTab(url, url);
});
addEventListener("dragover", (event) => {
  event.preventDefault();
  document.body.classList.add("dragging");
});
addEventListener("dragleave", () => document.body.classList.remove("dragging"));
addEventListener("drop", (event) => {
  event.preventDefault();
  document.body.classList.remove("dragging");
  for (const file of event.dataTransfer?.files ?? []) openTab(counted(file), file.name, file);
});

// Offline once loaded: the page, the package and its module are kept by a service worker.
if ("serviceWorker" in navigator && location.protocol !== "file:") {
  navigator.serviceWorker.register("sw.js").catch(() => {});
}

/** @type {any} */ (globalThis).npyViewer.open = openTab;
/** @type {any} */ (globalThis).npyViewer.readyMs = performance.now();
/** @type {any} */ (globalThis).npyViewer.ready = true;
