// NpyArray and `load` (a .npy file's bytes to an NpyArray): an array's values, its
// columns (a record's fields, each an NpyArray of its own), its rows as objects and as
// NumPy prints them. Headers, dtypes and every conversion of values are npy-core's, through
// the WebAssembly module; this module holds bytes and typed arrays.

import { NpyError, reading } from "./errors.js";
import { TYPED } from "./dtypes.js";
import { FLOAT16, bound, call } from "./wasm.js";
import { Described, description } from "./described.js";
import { asBytes, isZip, product, reorder, runSync } from "./bytes.js";
import { encodeHeader, parseHeader, readHeader } from "./header.js";

/** The most values a JavaScript array (and a typed array, here) holds. */
const MAX_VALUES = 2 ** 32 - 1;

/** Rows written as text per call into the WebAssembly module. */
const TEXT_ROWS = 4096;

/** Lets only this module make NpyArrays. */
const MAKE = Symbol("NpyArray");

/** @typedef {import("../index.d.ts").LoadOptions} LoadOptions */

/**
 * A `.npy` file's array, from its bytes: the header is parsed now, values when asked for.
 * Plain little-endian data is a view on `input` (no copy) when its alignment allows; an
 * object array is decoded now, without running its pickle.
 * @param {ArrayBuffer | ArrayBufferView} input
 * @param {LoadOptions} [options]
 * @returns {NpyArray}
 */
export function load(input, options = {}) {
  const bytes = asBytes(input);
  if (isZip(bytes)) {
    throw new NpyError(reading(options.name, "a zip archive (an .npz), not a .npy file: read it with loadNpz or open"), {
      kind: "format",
      file: options.name,
    });
  }
  const info = runSync(readHeader(0, bytes.length, options, false, { file: options.name }), bytes);
  const end = info.dataLength === null ? bytes.length : info.dataOffset + info.dataLength;
  return new NpyArray(MAKE, info, bytes.subarray(info.dataOffset, end), options);
}

/**
 * One array: a header (dtype, shape, order, as a `.npy` file has them) and its data's
 * bytes. `data` gives the values of a plain array; a record array's values are its
 * fields, `column(path)` each (an NpyArray of its own), `rows()` as objects.
 */
export class NpyArray extends Described {
  /** @type {Uint8Array} */ #bytes;
  /** @type {LoadOptions} */ #options;
  /** @type {unknown} */ #values;
  /** @type {unknown[] | undefined} */ #objects;

  /**
   * Not for callers: arrays come from `load`, `loadNpz`, `open` and `column`.
   * @param {symbol} token
   * @param {any} info
   * @param {Uint8Array} bytes
   * @param {LoadOptions} options
   */
  constructor(token, info, bytes, options) {
    if (token !== MAKE) {
      throw new NpyError("NpyArrays come from load, loadNpz, open or column; save takes plain descriptions", {
        kind: "usage",
      });
    }
    let objects;
    if (info.dataLength === null) {
      const decoded = call(
        () =>
          bound.decodeObjects(
            bytes,
            options.maxObjectBytes,
            (/** @type {Uint8Array} */ inner) => load(inner, { ...options }),
            options.name,
          ),
        { file: options.name },
      );
      // The pickle's shape and order are the array's, as np.load keeps them.
      info = { ...info, shape: decoded.shape, fortranOrder: decoded.fortranOrder };
      objects = decoded.values;
    }
    super(info);
    this.#bytes = bytes;
    this.#options = options;
    this.#objects = objects;
  }

  /** How many elements the array holds (1 for a 0-d array). */
  get size() {
    return product(this.shape);
  }

  /** The data's bytes, as stored (an object array's: its pickle). */
  get bytes() {
    return this.#bytes;
  }

  /**
   * The values, in storage order (C, or Fortran when `fortranOrder`): a typed array
   * (`BigInt64Array` for 64-bit integers and datetimes, `Float16Array` where the platform
   * has it, else `Float32Array`; complex numbers as interleaved real and imaginary parts),
   * `string[]` for `S` and `U`, `Uint8Array[]` for `V`, and JavaScript values for
   * objects. Plain little-endian data is a view on the input's memory where its
   * alignment allows. A record array has no one array of values: see `column`.
   * @returns {import("../index.d.ts").Values}
   */
  get data() {
    if (this.#values === undefined) this.#values = this.#decode();
    return /** @type {import("../index.d.ts").Values} */ (this.#values);
  }

  /** @returns {unknown} */
  #decode() {
    if (this.#objects !== undefined) return this.#objects;
    if (this.dtype.kind === "record") {
      throw new NpyError(
        reading(
          this.#options.name,
          `a record array has a typed array per field, not one: use column(path), columns() or rows() (fields: ${this.fields.join(", ")})`,
        ),
        { kind: "usage", file: this.#options.name },
      );
    }
    const leaf = description(this).columns[0];
    const T = TYPED[leaf.output];
    const type = leaf.dtype.type;
    // Plain little-endian data, the values as they are: a view, or one copy when unaligned.
    const asIs =
      T !== undefined &&
      leaf.dtype.byteOrder !== ">" &&
      type !== "f16" &&
      type !== "c32" &&
      (type !== "f2" || FLOAT16);
    if (asIs) {
      const n = Math.floor(this.#bytes.length / T.BYTES_PER_ELEMENT);
      if (this.#bytes.byteOffset % T.BYTES_PER_ELEMENT === 0) return new T(this.#bytes.buffer, this.#bytes.byteOffset, n);
      return new T(this.#bytes.slice().buffer, 0, n);
    }
    return decodeColumns(this.descr, [leaf], [""], this.#bytes, this.dtype.itemsize, 0, this.size, false, this.#options)[0];
  }

  /**
   * A record's field (a scalar leaf, by dotted path: `"receiver.x"`) as an array of its
   * own, of the field's dtype, its shape the array's followed by the field's subarray
   * dims (`samples` of 64 per record: `[n, 64]`). A plain array's only column is `""`.
   * @param {string} path
   * @returns {NpyArray}
   */
  column(path) {
    return this.#columns([path])[path];
  }

  /**
   * Every field as `column(path)` gives it, read in one pass: `{path: NpyArray}`.
   * @returns {Record<string, NpyArray>}
   */
  columns() {
    return this.#columns(description(this).columns.map((/** @type {any} */ c) => c.path));
  }

  /** @param {string[]} paths */
  #columns(paths) {
    if (this.#objects !== undefined) {
      throw new NpyError(reading(this.#options.name, "an object array has no fields: use data"), {
        kind: "usage",
        file: this.#options.name,
      });
    }
    const leaves = paths.map((p) => {
      const leaf = description(this).columns.find((/** @type {any} */ c) => c.path === p);
      if (leaf === undefined) {
        const known = description(this).columns.map((/** @type {any} */ c) => `'${c.path}'`).join(", ");
        throw new NpyError(reading(this.#options.name, `no field '${p}' in dtype ${this.descr}: its fields are ${known}`), {
          kind: "usage",
          file: this.#options.name,
        });
      }
      return leaf;
    });
    const bytes = decodeColumns(this.descr, leaves, paths, this.#bytes, this.dtype.itemsize, 0, this.size, true, this.#options);
    /** @type {Record<string, NpyArray>} */
    const out = {};
    leaves.forEach((leaf, i) => {
      out[leaf.path] = columnArray(leaf, this.shape, this.fortranOrder, /** @type {Uint8Array} */ (bytes[i]), this.#options);
    });
    return out;
  }

  /**
   * Elements `start` to `end` (storage order; the rows of a 1-D array) as objects: a
   * record's fields by name, nested records as objects, subarray fields as arrays of
   * their values (flat, C order). A plain array's elements are its values.
   * @param {number} [start]
   * @param {number} [end]
   * @returns {unknown[]}
   */
  rows(start = 0, end = this.size) {
    const n = this.size;
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > n || start > end) {
      throw new NpyError(reading(this.#options.name, `rows ${start} to ${end} of ${n}: out of range`), {
        kind: "usage",
        file: this.#options.name,
      });
    }
    if (this.#objects !== undefined) return this.#objects.slice(start, end);
    const leaves = description(this).columns;
    const paths = leaves.map((/** @type {any} */ c) => c.path);
    const values = decodeColumns(this.descr, leaves, paths, this.#bytes, this.dtype.itemsize, start, end - start, false, this.#options);
    const rows = new Array(end - start);
    for (let r = 0; r < rows.length; r++) {
      if (this.dtype.kind !== "record") {
        rows[r] = leafValue(leaves[0], values[0], r);
        continue;
      }
      /** @type {Record<string, any>} */
      const row = {};
      leaves.forEach((/** @type {any} */ leaf, /** @type {number} */ i) => {
        const names = leaf.path.split(".");
        let at = row;
        for (const name of names.slice(0, -1)) at = at[name] ??= {};
        at[names[names.length - 1]] = leafValue(leaf, values[i], r);
      });
      rows[r] = row;
    }
    return rows;
  }

  /**
   * Rows `start` to `end` along the first axis as NumPy prints them: `{columns, rows}`,
   * per row a string per column. A column is a field (`fields`; a plain array's one value,
   * `value`), its cell NumPy's `str()` of the row's part of it (`str(a[i]["t0"])`; a
   * subarray field, or an N-d array's row, as NumPy prints an array: `[0.5 1.  2. ]`);
   * Python's `str()` of an object array's element. With `split`, each scalar of a field's
   * values in a row is a column of its own (`samples[0]`, `samples[1]`...: numbers, as a
   * CSV file wants them).
   * @param {number} [start]
   * @param {number} [end]
   * @param {{split?: boolean}} [options]
   * @returns {{columns: string[], rows: string[][]}}
   */
  table(start = 0, end = this.rowCount, { split = false } = {}) {
    const n = this.rowCount;
    const where = { file: this.#options.name };
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > n || start > end) {
      throw new NpyError(reading(this.#options.name, `rows ${start} to ${end} of ${n}: out of range`), {
        kind: "usage",
        file: this.#options.name,
      });
    }
    const rest = this.shape.slice(1);
    if (this.#objects !== undefined) {
      const texts = call(() => bound.objectTexts(this.#bytes, this.#options.maxObjectBytes, this.#options.name), where);
      return { columns: ["value"], rows: texts.slice(start, end).map((/** @type {string} */ t) => [t]) };
    }
    const rowBytes = product(rest) * this.dtype.itemsize;
    // The rows' bytes in C order (a Fortran-order array's put in it first).
    let bytes = this.#bytes;
    if (this.fortranOrder && this.shape.filter((d) => d > 1).length > 1) bytes = reorder(bytes, this.shape, this.dtype.itemsize, true);
    const texts = call(() => new bound.Texts(this.descr, rest, split), where);
    try {
      /** @type {string[][]} */
      const rows = [];
      for (let a = start; a < end; a += TEXT_ROWS) {
        const b = Math.min(end, a + TEXT_ROWS);
        rows.push(...call(() => texts.rows(bytes.subarray(a * rowBytes, b * rowBytes), b - a, a), where));
      }
      return { columns: texts.names(), rows };
    } finally {
      texts.free();
    }
  }

  /** What console.log shows in Node. */
  [Symbol.for("nodejs.util.inspect.custom")]() {
    return `NpyArray { descr: ${this.descr}, shape: [${this.shape.join(", ")}]${this.fortranOrder ? ", fortranOrder: true" : ""} }`;
  }
}

/**
 * Element `r`'s value of a decoded leaf: one value, or the element's values (a subarray
 * field) as an array of them.
 * @param {any} leaf
 * @param {any} values
 * @param {number} r
 */
function leafValue(leaf, values, r) {
  const per = product(leaf.dims) * leaf.lanes;
  if (per === 1) return values[r];
  return values.slice(r * per, (r + 1) * per);
}

/**
 * The columns `leaves` (at `paths`) of `count` elements from element `first` of `bytes`:
 * npy-core's plans in the WebAssembly module, fed about a MiB of elements at a time.
 * `asWritten`: each column's bytes in the dtype's own type (a Uint8Array each); else its
 * values (typed arrays, strings, byte arrays).
 * @param {string} descr
 * @param {any[]} leaves
 * @param {string[]} paths
 * @param {Uint8Array} bytes
 * @param {number} itemsize
 * @param {number} first
 * @param {number} count
 * @param {boolean} asWritten
 * @param {LoadOptions} options
 * @returns {unknown[]}
 */
export function decodeColumns(descr, leaves, paths, bytes, itemsize, first, count, asWritten, options) {
  const where = { file: options.name };
  for (const leaf of leaves) {
    // Elements of no bytes cost nothing in a file: 10**18 of them fit in a header.
    if (count * product(leaf.dims) > MAX_VALUES) {
      throw new NpyError(
        reading(options.name, `${count * product(leaf.dims)} values of ${leaf.path === "" ? "the array" : `field '${leaf.path}'`} are more than a JavaScript array holds (${MAX_VALUES})`),
        { kind: "usage", file: options.name },
      );
    }
  }
  const decoder = call(() => new bound.Decoder(descr, paths, FLOAT16, asWritten), where);
  try {
    const outputs = leaves.map((leaf) => {
      const per = product(leaf.dims);
      if (asWritten || leaf.output === "void") return new Uint8Array(count * per * leaf.dtype.itemsize);
      if (leaf.output === "string") return new Array(count * per);
      return new TYPED[leaf.output](count * per * leaf.lanes);
    });
    const targets = outputs.map((o) => (ArrayBuffer.isView(o) ? new Uint8Array(o.buffer, o.byteOffset, o.byteLength) : o));
    const piece = decoder.pieceElements;
    for (let a = 0; a < count; a += piece) {
      const b = Math.min(count, a + piece);
      const input = bytes.subarray((first + a) * itemsize, (first + b) * itemsize);
      call(() => decoder.decode(input, b - a, a, targets), where);
    }
    if (asWritten) return outputs;
    return outputs.map((o, i) => {
      if (leaves[i].output !== "void") return o;
      const size = leaves[i].dtype.itemsize;
      const bytesOf = /** @type {Uint8Array} */ (o);
      return Array.from({ length: bytesOf.length / (size || 1) || count * product(leaves[i].dims) }, (_, k) =>
        bytesOf.subarray(k * size, (k + 1) * size),
      );
    });
  } finally {
    decoder.free();
  }
}

/**
 * A column's bytes (its leaf's own type, `dims` values per element) as an NpyArray of
 * shape `shape` + `dims`. A Fortran-order array's column keeps that order when it has no
 * dims; with dims and more than one dim over 1 outside them, its elements are put in C
 * order (no NumPy order has the dims fastest and the rest in Fortran order).
 * @param {any} leaf
 * @param {readonly number[]} shape
 * @param {boolean} fortranOrder
 * @param {Uint8Array} bytes
 * @param {LoadOptions} options
 */
function columnArray(leaf, shape, fortranOrder, bytes, options) {
  const dims = leaf.dims;
  const full = [...shape, ...dims];
  let order = fortranOrder;
  let data = bytes;
  if (fortranOrder && dims.length > 0) {
    order = false;
    if (shape.filter((d) => d > 1).length > 1) data = reorder(bytes, shape, product(dims) * leaf.dtype.itemsize, true);
  }
  return arrayOf(leaf.dtype.descr, full, order, data, options);
}

/**
 * An NpyArray of `descr`, `shape` and order whose data's bytes are `data`: the header
 * np.save would write for it (`header`, when `encodeHeader` made it already), as `load`
 * reads it.
 * @param {string} descr
 * @param {readonly number[]} shape
 * @param {boolean} fortranOrder
 * @param {Uint8Array} data
 * @param {LoadOptions} options
 * @param {Uint8Array} [header]
 */
export function arrayOf(descr, shape, fortranOrder, data, options, header = encodeHeader(descr, shape, fortranOrder, undefined, { file: options.name })) {
  const info = parseHeader(header, header.length + data.length, undefined, false, { file: options.name });
  return new NpyArray(MAKE, info, data, options);
}

/**
 * An NpyArray of a file's header (as `readHeader` read it) and its data's bytes.
 * @param {any} info
 * @param {Uint8Array} data
 * @param {LoadOptions} options
 */
export function arrayOfHeader(info, data, options) {
  return new NpyArray(MAKE, info, data, options);
}
