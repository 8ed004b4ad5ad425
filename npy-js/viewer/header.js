// An array's header as the page shows it: its facts (shape, order, sizes, version) and its
// dtype as a tree of fields with their offsets, byte orders, subarrays and padding.

import { $ } from "./state.js";

/** @typedef {import("../index.d.ts").DType} DType */
/** @typedef {import("../index.d.ts").ScalarDType} ScalarDType */

/**
 * Fills the panel's header section for `file`.
 * @param {HTMLElement} panel
 * @param {import("../js/open.js").NpyFile} file
 */
export function showHeader(panel, file) {
  facts(panel, file);
  $(panel, ".header-text").textContent = file.header;
  $(panel, ".dtype-tree").replaceChildren(dtypeTree(file.dtype, "element"));
}

/**
 * @param {HTMLElement} panel
 * @param {import("../js/open.js").NpyFile} file
 */
function facts(panel, file) {
  const list = $(panel, ".facts");
  const size = file.shape.reduce((n, d) => n * d, 1);
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
 * @param {DType} dtype
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
 * @param {DType} dtype
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
  const parts = dtype.fields.map((f) => [f.offset, dtypeNode(f.dtype, f.title ? `${f.name} (${f.title})` : f.name, f.offset)]);
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

/** @param {ScalarDType} dtype */
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
