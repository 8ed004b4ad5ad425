// Filtering a record array's rows by a condition on its fields, as NumPy's boolean masks
// do (`a[(a["flags"] == 1) & (a["t0"] > 0.5)]`): a small expression language parsed here
// (no eval), evaluated a piece of rows at a time while the file is read by ranges.
//
//   condition := or
//   or        := and ("||" and)*
//   and       := not ("&&" not)*
//   not       := "!" not | "(" or ")" | compare
//   compare   := operand ("==" | "!=" | "<" | "<=" | ">" | ">=") operand
//   operand   := field | number | string | "true" | "false"
//   field     := name ("." name)* ("[" integer ("," integer)* "]")?
//   number    := "-"? (digits ("." digits)? (e exponent)? | "nan" | "inf")

import { NpyError } from "../js/index.js";
import { Cancelled, streamRows } from "./stream.js";
import { $, showError, stats as record } from "./state.js";

/** Matching rows shown (and printed) at most; all are counted. */
export const SHOWN = 1000;

/**
 * @typedef {import("../js/open.js").NpyFile} NpyFile
 * @typedef {import("../js/array.js").NpyArray} NpyArray
 * @typedef {{path: string, dtype: {type: string, str: string}, dims: readonly number[]}} Leaf
 * @typedef {{kind: "field", leaf: Leaf, at: number, pos: number, text: string}} FieldRef
 * @typedef {{kind: "number", value: number | bigint, pos: number} | {kind: "string", value: string, pos: number} | FieldRef} Operand
 * @typedef {{kind: "compare", op: string, left: Operand, right: Operand, pos: number}
 *   | {kind: "and", left: Condition, right: Condition}
 *   | {kind: "or", left: Condition, right: Condition}
 *   | {kind: "not", inner: Condition}} Condition
 */

/** An expression that does not parse, or names what the array does not have; `pos` counts from 0. */
export class FilterError extends Error {
  /**
   * @param {string} message
   * @param {number} pos
   * @param {string} source
   */
  constructor(message, pos, source) {
    super(`at character ${pos + 1}: ${message}\n  ${source}\n  ${" ".repeat(pos)}^`);
    this.name = "FilterError";
    this.pos = pos;
  }
}

const OPERATORS = ["==", "!=", "<=", ">=", "<", ">"];

/**
 * @typedef {{type: "name" | "number" | "string" | "op" | "end", text: string, value?: number | bigint | string, pos: number}} Token
 */

/**
 * The expression's tokens.
 * @param {string} source
 * @returns {Token[]}
 */
function tokens(source) {
  /** @type {Token[]} */
  const out = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const rest = source.slice(i);
    const number = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(rest);
    if (number) {
      // A whole number beyond 2^53 is a bigint: compared exactly with 64-bit integers.
      const exact = /^\d+$/.test(number[0]) && !Number.isSafeInteger(Number(number[0]));
      out.push({ type: "number", text: number[0], value: exact ? BigInt(number[0]) : Number(number[0]), pos: i });
      i += number[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (name) {
      out.push({ type: "name", text: name[0], pos: i });
      i += name[0].length;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let value = "";
      while (j < source.length && source[j] !== c) {
        if (source[j] === "\\" && j + 1 < source.length) j++;
        value += source[j++];
      }
      if (j >= source.length) throw new FilterError(`the string opened here has no closing ${c}`, i, source);
      out.push({ type: "string", text: source.slice(i, j + 1), value, pos: i });
      i = j + 1;
      continue;
    }
    const op = ["&&", "||", ...OPERATORS, "!", "(", ")", "[", "]", ",", ".", "-"].find((o) => rest.startsWith(o));
    if (op === undefined) {
      const hint = c === "=" ? " (equality is ==)" : c === "&" || c === "|" ? ` (and is &&, or is ||)` : "";
      throw new FilterError(`unexpected '${c}'${hint}`, i, source);
    }
    out.push({ type: "op", text: op, pos: i });
    i += op.length;
  }
  out.push({ type: "end", text: "the end", pos: source.length });
  return out;
}

/**
 * Parses `source` into a condition on the leaves `leaves` (an array's columns): a field is
 * a leaf's dotted path, a subarray field's value one index per axis of its shape.
 * @param {string} source
 * @param {readonly Leaf[]} leaves
 * @returns {Condition}
 */
export function parseFilter(source, leaves) {
  const list = tokens(source);
  let k = 0;
  const peek = () => list[k];
  const fail = (/** @type {string} */ why, /** @type {Token} */ at = peek()) => new FilterError(why, at.pos, source);
  const known = () => leaves.map((l) => (l.dims.length > 0 ? `${l.path}[${l.dims.map(() => "i").join(", ")}]` : l.path)).join(", ");
  const take = (/** @type {string} */ text) => {
    if (peek().type === "op" && peek().text === text) {
      k++;
      return true;
    }
    return false;
  };

  /** @returns {Condition} */
  const or = () => {
    let left = and();
    while (take("||")) left = { kind: "or", left, right: and() };
    return left;
  };
  /** @returns {Condition} */
  const and = () => {
    let left = not();
    while (take("&&")) left = { kind: "and", left, right: not() };
    return left;
  };
  /** @returns {Condition} */
  const not = () => {
    if (take("!")) return { kind: "not", inner: not() };
    const open = peek();
    if (take("(")) {
      const inner = or();
      if (!take(")")) throw fail(`expected ')' to close the '(' at character ${open.pos + 1}, found ${describe(peek())}`);
      return inner;
    }
    return compare();
  };
  /** @returns {Condition} */
  const compare = () => {
    const left = operand();
    const at = peek();
    const op = at.type === "op" && OPERATORS.includes(at.text) ? at.text : null;
    if (op === null) throw fail(`expected a comparison (${OPERATORS.join(" ")}) after ${operandText(left)}, found ${describe(at)}`);
    k++;
    const right = operand();
    check(left, right, at);
    return { kind: "compare", op, left, right, pos: at.pos };
  };
  /** @returns {Operand} */
  const operand = () => {
    const t = peek();
    if (t.type === "op" && t.text === "-") {
      k++;
      const n = peek();
      if (n.type === "number" || (n.type === "name" && (n.text === "inf" || n.text === "nan"))) {
        const inner = /** @type {{value: number | bigint}} */ (operand());
        return { kind: "number", value: -inner.value, pos: t.pos };
      }
      throw fail(`expected a number after '-', found ${describe(n)}`, n);
    }
    if (t.type === "number") {
      k++;
      return { kind: "number", value: /** @type {number | bigint} */ (t.value), pos: t.pos };
    }
    if (t.type === "string") {
      k++;
      return { kind: "string", value: /** @type {string} */ (t.value), pos: t.pos };
    }
    if (t.type === "name") {
      const words = { nan: NaN, inf: Infinity, true: 1, false: 0 };
      if (Object.hasOwn(words, t.text) && !leaves.some((l) => l.path === t.text)) {
        k++;
        return { kind: "number", value: words[/** @type {keyof typeof words} */ (t.text)], pos: t.pos };
      }
      return field();
    }
    throw fail(`expected a field, a number or a string, found ${describe(t)}`);
  };
  /** @returns {FieldRef} */
  const field = () => {
    const start = peek();
    const names = [start.text];
    k++;
    while (peek().type === "op" && peek().text === ".") {
      k++;
      if (peek().type !== "name") throw fail(`expected a field name after '.', found ${describe(peek())}`);
      names.push(peek().text);
      k++;
    }
    const path = names.join(".");
    const leaf = leaves.find((l) => l.path === path);
    if (leaf === undefined) throw fail(`no field '${path}': the fields are ${known()}`, start);
    /** @type {number[]} */
    const index = [];
    const open = peek();
    if (take("[")) {
      do {
        const t = peek();
        if (t.type !== "number" || typeof t.value !== "number" || !Number.isInteger(t.value)) throw fail(`expected an index (a whole number), found ${describe(t)}`);
        index.push(/** @type {number} */ (t.value));
        k++;
      } while (take(","));
      if (!take("]")) throw fail(`expected ']' to close the '[' at character ${open.pos + 1}, found ${describe(peek())}`);
    }
    if (leaf.dims.length === 0 && index.length > 0) throw fail(`field '${path}' holds one value a row: it takes no index`, open);
    if (leaf.dims.length !== index.length) {
      throw fail(
        index.length === 0
          ? `field '${path}' holds ${leaf.dims.join("×")} values a row: pick one, as ${path}[${leaf.dims.map(() => 0).join(", ")}]`
          : `field '${path}' has ${leaf.dims.length} ${leaf.dims.length === 1 ? "axis" : "axes"} (shape (${leaf.dims.join(", ")})), not ${index.length}`,
        open,
      );
    }
    let at = 0;
    index.forEach((i, d) => {
      if (i >= leaf.dims[d]) throw fail(`index ${i} is out of range for axis ${d} of '${path}' (length ${leaf.dims[d]})`, open);
      at = at * leaf.dims[d] + i;
    });
    const text = source.slice(start.pos, list[k - 1].pos + list[k - 1].text.length);
    return { kind: "field", leaf, at, pos: start.pos, text };
  };
  /**
   * Refuses a comparison NumPy would not make: a string with a number, no field at all.
   * @param {Operand} left
   * @param {Operand} right
   * @param {Token} at
   */
  const check = (left, right, at) => {
    if (left.kind !== "field" && right.kind !== "field") throw fail("a comparison needs a field on one side", at);
    for (const [a, b] of [[left, right], [right, left]]) {
      if (a.kind !== "field") continue;
      const stringy = /^[SU]/.test(a.leaf.dtype.type);
      const otherStringy = b.kind === "string" || (b.kind === "field" && /^[SU]/.test(b.leaf.dtype.type));
      if (stringy !== otherStringy) {
        const what = stringy ? "text: compare it with a string in quotes" : `${a.leaf.dtype.str} values: compare it with a number`;
        throw new FilterError(`field '${a.leaf.path}' holds ${what}`, b.pos, source);
      }
      if (!/^([SU]|f(2|4|8)|[iu][1248]|b1|[Mm]8)/.test(a.leaf.dtype.type)) {
        throw new FilterError(`field '${a.leaf.path}' holds ${a.leaf.dtype.str} values, which this filter does not compare`, a.pos, source);
      }
    }
  };

  if (peek().type === "end") throw fail("the condition is empty: give one, as flags == 1 && t0 > 0.5");
  const condition = or();
  if (peek().type !== "end") throw fail(`expected && or || or the end, found ${describe(peek())}`);
  return condition;
}

/** @param {Token} t */
function describe(t) {
  return t.type === "end" ? "the end" : `'${t.text}'`;
}

/** @param {Operand} o */
function operandText(o) {
  return o.kind === "field" ? `'${o.text}'` : o.kind === "string" ? JSON.stringify(o.value) : String(o.value);
}

/**
 * The field paths a condition reads.
 * @param {Condition} c
 * @param {Set<string>} [out]
 * @returns {Set<string>}
 */
export function fieldsOf(c, out = new Set()) {
  if (c.kind === "compare") {
    for (const o of [c.left, c.right]) if (o.kind === "field") out.add(o.leaf.path);
  } else if (c.kind === "not") fieldsOf(c.inner, out);
  else {
    fieldsOf(c.left, out);
    fieldsOf(c.right, out);
  }
  return out;
}

/**
 * Which of a piece's `n` rows meet `c`: a byte per row, 1 where it does. Comparisons are
 * NumPy's: any comparison with NaN is false but `!=`; integers of 64 bits are compared
 * exactly (a bigint with a number, as JavaScript compares them).
 * @param {Condition} c
 * @param {number} n
 * @param {(path: string) => ArrayLike<unknown>} column a field's values in the piece
 * @returns {Uint8Array}
 */
export function evaluate(c, n, column) {
  if (c.kind === "not") {
    const m = evaluate(c.inner, n, column);
    for (let i = 0; i < n; i++) m[i] ^= 1;
    return m;
  }
  if (c.kind === "and" || c.kind === "or") {
    const a = evaluate(c.left, n, column);
    const b = evaluate(c.right, n, column);
    if (c.kind === "and") for (let i = 0; i < n; i++) a[i] &= b[i];
    else for (let i = 0; i < n; i++) a[i] |= b[i];
    return a;
  }
  /** @returns {(i: number) => number | bigint | string} */
  const get = (/** @type {Operand} */ o) => {
    if (o.kind !== "field") {
      const v = o.value;
      return () => v;
    }
    const values = /** @type {ArrayLike<number | bigint | string>} */ (column(o.leaf.path));
    const per = o.leaf.dims.reduce((p, d) => p * d, 1);
    const at = o.at;
    return per === 1 ? (i) => values[i] : (i) => values[i * per + at];
  };
  const left = get(c.left);
  const right = get(c.right);
  const out = new Uint8Array(n);
  const test = COMPARE[c.op];
  for (let i = 0; i < n; i++) out[i] = test(left(i), right(i)) ? 1 : 0;
  return out;
}

/**
 * The comparisons, on numbers, bigints (exact with numbers too) and strings. `==` is
 * JavaScript's loose equality for a bigint and a number (1n == 1), strict otherwise.
 * @type {Record<string, (a: number | bigint | string, b: number | bigint | string) => boolean>}
 */
const COMPARE = {
  "==": (a, b) => (typeof a === typeof b ? a === b : a == b),
  "!=": (a, b) => !(typeof a === typeof b ? a === b : a == b),
  "<": (a, b) => a < b,
  "<=": (a, b) => a <= b,
  ">": (a, b) => a > b,
  ">=": (a, b) => a >= b,
};

/**
 * Why an array's rows are not filtered: they are rows of a 1-d record array's records.
 * @param {NpyFile} file
 */
function oneDimensional(file) {
  return `rows are filtered in one-dimensional record arrays; this one has shape (${file.shape.join(", ")}${file.shape.length === 1 ? "," : ""})`;
}

/**
 * @typedef {object} FilterResult
 * @property {number} count rows that meet the condition
 * @property {number[]} rows the first SHOWN of them
 * @property {string[]} columns the printed rows' columns
 * @property {string[][]} printed those rows as NumPy prints them (the package's `table`)
 */

/**
 * The rows of `file` that meet `source`'s condition, read a piece at a time: their count,
 * and the first `shown` printed.
 * @param {NpyFile} file
 * @param {string} source
 * @param {import("./stream.js").StreamOptions & {shown?: number}} [options]
 * @returns {Promise<FilterResult>}
 */
export async function filterRows(file, source, options = {}) {
  if (file.dtype.kind !== "record") {
    throw new NpyError(`reading '${file.name}': rows are filtered by their fields, and a ${/** @type {{str?: string}} */ (file.dtype).str ?? file.descr} array has none`, {
      kind: "usage",
      file: file.name,
    });
  }
  if (file.shape.length !== 1) throw new NpyError(`reading '${file.name}': ${oneDimensional(file)}`, { kind: "usage", file: file.name });
  const condition = parseFilter(source, file.leaves);
  const paths = [...fieldsOf(condition)];
  const shown = options.shown ?? SHOWN;
  let count = 0;
  /** @type {number[]} */
  const rows = [];
  /** @type {string[][]} */
  const printed = [];
  /** @type {string[]} */
  let columns = [];
  await streamRows(
    file,
    (piece, start) => {
      /** @type {Map<string, ArrayLike<unknown>>} */
      const values = new Map(paths.map((p) => [p, /** @type {ArrayLike<unknown>} */ (piece.column(p).data)]));
      const mask = evaluate(condition, piece.rowCount, (p) => /** @type {ArrayLike<unknown>} */ (values.get(p)));
      for (let i = 0; i < mask.length; i++) {
        if (mask[i] === 0) continue;
        count++;
        if (rows.length >= shown) continue;
        rows.push(start + i);
        const table = piece.table(i, i + 1);
        columns = table.columns;
        printed.push(table.rows[0]);
      }
    },
    options,
  );
  return { count, rows, columns, printed };
}

// ---------------------------------------------------------------------------------------
// The view

/**
 * The filter of a record array's rows: an expression (typed, or built by the form: a
 * field, an operator and a value, "Add"), run over the file with progress and Cancel; the
 * matching rows' count and the first SHOWN printed, each row number a button that shows
 * the row in the rows grid.
 * @param {import("./array.js").ViewContext} ctx
 */
export async function setUpFilter({ tab, box, section, file, label }) {
  const part = $(section, ".filter");
  if (file.dtype.kind !== "record") {
    part.hidden = true;
    return;
  }
  part.hidden = false;
  if (file.shape.length !== 1) {
    // A row of an N-d record array holds many records: say so rather than offer a form.
    const note = document.createElement("p");
    note.dataset.testid = "filter-note";
    note.textContent = oneDimensional(file);
    part.replaceChildren($(part, "h3"), note);
    return;
  }
  /** @type {HTMLInputElement} */
  const expression = $(section, ".filter-expr");
  /** @type {HTMLSelectElement} */
  const field = $(section, ".filter-field");
  /** @type {HTMLSelectElement} */
  const op = $(section, ".filter-op");
  /** @type {HTMLInputElement} */
  const value = $(section, ".filter-value");
  /** @type {HTMLButtonElement} */
  const cancel = $(section, ".filter-cancel");
  /** @type {HTMLProgressElement} */
  const bar = $(section, ".filter-progress");
  const status = $(section, ".filter-status");
  const error = $(section, ".filter-error");
  const head = $(section, ".filter-rows thead tr");
  const body = $(section, ".filter-rows tbody");
  const comparable = file.leaves.filter((l) => /^([SU]|f(2|4|8)|[iu][1248]|b1|[Mm]8)/.test(l.dtype.type));
  field.replaceChildren(
    ...comparable.flatMap((l) => {
      const per = l.dims.reduce((n, d) => n * d, 1);
      if (per === 1) return [new Option(l.path, l.path)];
      // A subarray field offers its first value; the index is edited in the expression.
      const first = `${l.path}[${l.dims.map(() => 0).join(", ")}]`;
      return [new Option(first, first)];
    }),
  );
  $(section, ".filter-add").addEventListener("click", () => {
    const leaf = comparable.find((l) => field.value.startsWith(l.path) && (field.value === l.path || field.value[l.path.length] === "["));
    const raw = value.value.trim();
    const quoted = leaf && /^[SU]/.test(leaf.dtype.type) && !/^["']/.test(raw) ? JSON.stringify(raw) : raw;
    const term = `${field.value} ${op.value} ${quoted}`;
    expression.value = expression.value.trim() === "" ? term : `${expression.value.trim()} && ${term}`;
    expression.focus();
  });
  /** @type {AbortController | null} */
  let controller = null;
  cancel.addEventListener("click", () => controller?.abort());
  $(section, ".filter-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    controller?.abort();
    const mine = new AbortController();
    controller = mine;
    const source = expression.value;
    error.hidden = true;
    cancel.disabled = false;
    bar.hidden = false;
    bar.value = 0;
    section.dataset.filter = "running";
    const began = performance.now();
    try {
      const got = await filterRows(file, source, {
        signal: mine.signal,
        onProgress: (done, total) => {
          bar.value = total === 0 ? 1 : done / total;
          status.textContent = `filtering: ${Math.floor((100 * done) / Math.max(1, total))}% of ${total.toLocaleString("en")} rows`;
        },
      });
      const ms = performance.now() - began;
      showRows(head, body, got, box, tab);
      const more = got.count > got.rows.length ? `; the first ${got.rows.length.toLocaleString("en")} shown` : "";
      status.textContent = `${got.count.toLocaleString("en")} of ${file.rowCount.toLocaleString("en")} rows match${more} (${(ms / 1000).toFixed(2)} s)`;
      record.lastFilter = { label, expression: source, count: got.count, rows: got.rows, ms };
      section.dataset.filter = "done";
    } catch (e) {
      if (e instanceof FilterError) {
        error.textContent = e.message;
        error.hidden = false;
        status.textContent = "";
        section.dataset.filter = "error";
      } else if (e instanceof Cancelled) {
        status.textContent = `filter ${e.message}; no result`;
        section.dataset.filter = "cancelled";
      } else {
        status.textContent = "";
        section.dataset.filter = "failed";
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
 * The matching rows: a row-number button each (showing it in the rows grid) and its cells.
 * @param {HTMLElement} head
 * @param {HTMLElement} body
 * @param {FilterResult} got
 * @param {HTMLElement} box
 * @param {import("./state.js").Tab} tab
 */
function showRows(head, body, got, box, tab) {
  head.replaceChildren(
    ...["row", ...got.columns].map((name) => {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = name;
      return th;
    }),
  );
  body.replaceChildren(
    ...got.rows.map((r, k) => {
      const tr = document.createElement("tr");
      tr.dataset.row = String(r);
      const th = document.createElement("th");
      th.scope = "row";
      const go = document.createElement("button");
      go.type = "button";
      go.textContent = String(r);
      go.title = `show row ${r} in the rows grid`;
      go.addEventListener("click", () => {
        /** @type {HTMLButtonElement | null} */ (box.querySelector('.views [data-view="rows"]'))?.click();
        tab.scrollToRow?.(r);
      });
      th.append(go);
      tr.append(th);
      for (const cell of got.printed[k]) {
        const td = document.createElement("td");
        td.textContent = cell;
        tr.append(td);
      }
      return tr;
    }),
  );
}
