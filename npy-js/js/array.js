// NpyArray and the two calls on whole files in memory: `load` (a .npy file's bytes to an
// NpyArray) and `save` (an NpyArray, a typed array or a description of one to the bytes
// np.save writes). Headers, dtypes and every conversion of values are npy-core's, through
// the WebAssembly module; this module holds bytes and typed arrays.

import { NpyError, reading } from "./errors.js";
import { TYPED, descrOf, dtypeOfTyped } from "./dtypes.js";
import { FLOAT16, bound, call } from "./wasm.js";
import { Described, description } from "./described.js";

/** Bytes read first for a header: every header NumPy writes for fewer than ~100 fields. */
const PREFIX = 4096;

/** The most values a JavaScript array (and a typed array, here) holds. */
const MAX_VALUES = 2 ** 32 - 1;

/** Rows written as text per call into the WebAssembly module. */
const TEXT_ROWS = 4096;

/** Lets only this module make NpyArrays. */
const MAKE = Symbol("NpyArray");

/**
 * `input` as a Uint8Array over the same memory: an ArrayBuffer, any typed array or
 * DataView (Node's Buffer too), read from its own offset and length.
 * @param {unknown} input
 * @param {string} what
 * @returns {Uint8Array}
 */
export function asBytes(input, what = "the input") {
  if (input instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && input instanceof SharedArrayBuffer)) {
    return new Uint8Array(input);
  }
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new NpyError(`${what} must be an ArrayBuffer, a typed array or a DataView, not ${describe(input)}`, {
    kind: "usage",
  });
}

/** @param {unknown} v */
export function describe(v) {
  if (v === null) return "null";
  if (typeof v !== "object") return typeof v;
  return v.constructor?.name ?? "an object";
}

/** @param {readonly number[]} shape */
export function product(shape) {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/**
 * The header of a file whose first bytes `read(n)` gives (synchronously), of `length`
 * bytes: npy-core's header codec, asked again with more bytes when the header is longer
 * than the first read.
 * @param {(n: number) => Uint8Array} read
 * @param {number} length
 * @param {LoadOptions} options
 */
export function headerOf(read, length, options) {
  let prefix = read(Math.min(length, PREFIX));
  for (;;) {
    const info = call(
      () => JSON.parse(bound.readHeader(prefix, length, options.maxHeaderSize, FLOAT16, options.name, false)),
      { file: options.name },
    );
    if (info.need === undefined) return info;
    prefix = read(info.need);
  }
}

/**
 * @typedef {object} LoadOptions
 * @property {string} [name] the file's name, for errors
 * @property {number} [maxHeaderSize] the longest header read, in bytes (default 16 MiB)
 * @property {number} [maxObjectBytes] the memory an object array's values may take (npy-core's default: 128 MiB plus 4 bytes per pickle byte)
 */

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
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) {
    throw new NpyError(reading(options.name, "a zip archive (an .npz), not a .npy file: read it with loadNpz or open"), {
      kind: "format",
      file: options.name,
    });
  }
  const info = headerOf((n) => bytes.subarray(0, n), bytes.length, options);
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
   */
  get data() {
    if (this.#values === undefined) this.#values = this.#decode();
    return this.#values;
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
 * The header np.save would write for an array of `descr`, `shape` and order, made by
 * npy-core, which refuses one whose data this 32-bit module cannot hold (2 GiB or more):
 * made before the data is read, so that asking for too much fails before reading it.
 * @param {string} descr
 * @param {readonly number[]} shape
 * @param {boolean} fortranOrder
 * @param {LoadOptions} options
 */
export function headerFor(descr, shape, fortranOrder, options) {
  return call(() => bound.encodeHeader(descr, [...shape], fortranOrder, undefined), { file: options.name });
}

/**
 * An NpyArray of `descr`, `shape` and order whose data's bytes are `data`: the header
 * np.save would write for it (`header`, when `headerFor` made it already), as `load` reads it.
 * @param {string} descr
 * @param {readonly number[]} shape
 * @param {boolean} fortranOrder
 * @param {Uint8Array} data
 * @param {LoadOptions} options
 * @param {Uint8Array} [header]
 */
export function arrayOf(descr, shape, fortranOrder, data, options, header = headerFor(descr, shape, fortranOrder, options)) {
  const info = call(() => JSON.parse(bound.readHeader(header, header.length + data.length, undefined, FLOAT16, options.name, false)), {
    file: options.name,
  });
  return new NpyArray(MAKE, info, data, options);
}

/**
 * An NpyArray of a file's header (as `headerOf` read it) and its data's bytes.
 * @param {any} info
 * @param {Uint8Array} data
 * @param {LoadOptions} options
 */
export function arrayOfHeader(info, data, options) {
  return new NpyArray(MAKE, info, data, options);
}

/**
 * Blocks of `block` values (bytes, or items of an array) stored in Fortran order over
 * `shape`, put in C order (`toC`), or the other way.
 * @template {ArrayLike<any> & {slice(a: number, b: number): any}} T
 * @param {T} values
 * @param {readonly number[]} shape
 * @param {number} block
 * @param {boolean} toC
 * @returns {T}
 */
export function reorder(values, shape, block, toC) {
  const typed = ArrayBuffer.isView(values);
  const out = typed ? new /** @type {any} */ (values.constructor)(values.length) : new Array(values.length);
  const n = product(shape);
  const index = new Array(shape.length).fill(0);
  for (let c = 0; c < n; c++) {
    // index: the C-order position c as a multi-index; f: its Fortran-order position.
    let f = 0;
    for (let k = shape.length - 1; k >= 0; k--) f = f * shape[k] + index[k];
    const [from, to] = toC ? [f, c] : [c, f];
    for (let j = 0; j < block; j++) out[to * block + j] = values[from * block + j];
    for (let k = shape.length - 1; k >= 0; k--) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

/**
 * @typedef {object} ArraySpec
 * @property {string} [dtype] a type string (`<f8`, `>i4`, `<U5`, `<M8[ns]`), NumPy's name (`float64`) or a record's descr (`[('x', '<f8'), ('n', '<i4', (3,))]`); inferred from a typed array `data`
 * @property {number[]} [shape] default: 1-D, as many elements as given
 * @property {boolean} [fortranOrder] whether the values are in Fortran order (default false)
 * @property {unknown} [data] a plain array's values, in storage order (as `NpyArray.data` gives them, or a plain Array)
 * @property {Record<string, unknown>} [columns] a record's values by field path (each as `data` would be, or an NpyArray)
 * @property {Record<string, unknown>[]} [rows] a record's elements as objects (as `rows()` gives them)
 */

/**
 * @typedef {object} SaveOptions
 * @property {[number, number]} [version] the format version to write in, when the header fits it (default: the oldest that fits, as np.save chooses)
 */

/**
 * The bytes `np.save` writes for an array: an NpyArray (its header as np.save writes it,
 * in its version where it fits, and its data's bytes as they are), a typed array (1-D,
 * its own dtype), or an ArraySpec.
 * @param {NpyArray | ArrayBufferView | ArraySpec} array
 * @param {SaveOptions} [options]
 * @returns {Uint8Array}
 */
export function save(array, options = {}) {
  if (array instanceof NpyArray) {
    return withHeader(array.descr, array.shape, array.fortranOrder, options.version ?? array.version, array.bytes);
  }
  if (ArrayBuffer.isView(array) && !(array instanceof DataView)) {
    return save({ data: array }, options);
  }
  if (array === null || typeof array !== "object") {
    throw new NpyError(`save takes an NpyArray, a typed array or {dtype, shape, data | columns | rows}, not ${describe(array)}`, {
      kind: "usage",
    });
  }
  const spec = /** @type {ArraySpec} */ (array);
  const given = ["data", "columns", "rows"].filter((k) => /** @type {any} */ (spec)[k] !== undefined);
  if (given.length !== 1) {
    throw new NpyError(`save takes one of data, columns and rows, not ${given.length ? given.join(" and ") : "none"}`, {
      kind: "usage",
    });
  }
  let dtype = spec.dtype;
  if (dtype === undefined) {
    dtype = spec.data instanceof NpyArray ? spec.data.descr : ArrayBuffer.isView(spec.data) ? dtypeOfTyped(/** @type {any} */ (spec.data)) : undefined;
    if (dtype === undefined) {
      throw new NpyError("save needs a dtype unless data is a typed array or an NpyArray", { kind: "usage" });
    }
  }
  const descr = descrOf(dtype);
  const fortranOrder = spec.fortranOrder ?? false;
  const described = call(() => JSON.parse(bound.describeDtype(descr, FLOAT16)));
  if (described.objects) return saveObjects(spec, fortranOrder);
  const leaves = described.columns;
  /** @type {Record<string, unknown>} */
  let columns;
  if (spec.data !== undefined) {
    if (described.dtype.kind === "record") {
      const fields = leaves.map((/** @type {any} */ l) => l.path).join(", ");
      throw new NpyError(`a record dtype takes columns or rows, not data (fields: ${fields})`, { kind: "usage" });
    }
    columns = { "": spec.data };
  } else if (spec.columns !== undefined) {
    columns = spec.columns;
  } else {
    columns = columnsOfRows(/** @type {any[]} */ (spec.rows), leaves);
  }
  const held = leaves.map((/** @type {any} */ leaf) => heldValues(leaf, columns[leaf.path]));
  const counts = held.map((/** @type {any} */ v, /** @type {number} */ i) => {
    const n = per(leaves[i]);
    return n === 0 ? undefined : v.length / n;
  });
  const known = counts.find((/** @type {number | undefined} */ c) => c !== undefined);
  const count = known ?? (spec.shape ? product(spec.shape) : (spec.rows?.length ?? 0));
  counts.forEach((/** @type {number | undefined} */ c, /** @type {number} */ i) => {
    if (c !== undefined && c !== count) {
      throw new NpyError(
        `field '${leaves[i].path}' holds ${held[i].length} values, which is not ${count} elements of ${per(leaves[i])}`,
        { kind: "usage", field: leaves[i].path },
      );
    }
  });
  const shape = spec.shape ?? [count];
  if (product(shape) !== count) {
    throw new NpyError(`${count} elements given for shape [${shape.join(", ")}] (${product(shape)} needed)`, {
      kind: "usage",
    });
  }
  // A Fortran-order array's columns with subarray dims come in C order, as `column` gives
  // them: their elements go back to the array's order.
  if (fortranOrder && shape.filter((d) => d > 1).length > 1) {
    leaves.forEach((/** @type {any} */ leaf, /** @type {number} */ i) => {
      if (leaf.dims.length > 0) held[i] = reorder(held[i], shape, per(leaf), false);
    });
  }
  // Plain little-endian values are the data's bytes as they are.
  const first = leaves[0];
  if (leaves.length === 1 && first.path === "" && ArrayBuffer.isView(held[0])) {
    const type = first.dtype.type;
    const asIs = first.output !== "void" && first.dtype.byteOrder !== ">" && type !== "b1" && type !== "f16" && type !== "c32";
    if (asIs && (type !== "f2" || (FLOAT16 && held[0] instanceof TYPED.Float16Array))) {
      return withHeader(described.descr, shape, fortranOrder, options.version, asBytes(held[0]));
    }
  }
  const itemsize = described.dtype.itemsize;
  const data = new Uint8Array(count * itemsize);
  const encoder = call(() => new bound.Encoder(descr, FLOAT16));
  try {
    const piece = encoder.pieceElements;
    for (let a = 0; a < count; a += piece) {
      const b = Math.min(count, a + piece);
      const inputs = held.map((/** @type {any} */ h, /** @type {number} */ i) => {
        const n = per(leaves[i]);
        const part = ArrayBuffer.isView(h) ? /** @type {Uint8Array} */ (h).subarray(a * n, b * n) : h.slice(a * n, b * n);
        return leaves[i].output === "string" ? part : asBytes(part);
      });
      data.set(call(() => encoder.encode(b - a, a, inputs)), a * itemsize);
    }
  } finally {
    encoder.free();
  }
  return withHeader(described.descr, shape, fortranOrder, options.version, data);
}

/**
 * Values per element of a leaf in the units its held form counts: bytes for void leaves,
 * two parts for complex numbers, else values.
 * @param {any} leaf
 */
function per(leaf) {
  return product(leaf.dims) * (leaf.output === "void" ? leaf.dtype.itemsize : leaf.lanes);
}

/**
 * `data` after the header np.save writes for it.
 * @param {string} descr
 * @param {readonly number[]} shape
 * @param {boolean} fortranOrder
 * @param {readonly number[] | undefined} version
 * @param {Uint8Array} data
 */
function withHeader(descr, shape, fortranOrder, version, data) {
  const header = call(() => bound.encodeHeader(descr, [...shape], fortranOrder, version === undefined ? undefined : Uint8Array.from(version)));
  const out = new Uint8Array(header.length + data.length);
  out.set(header);
  out.set(data, header.length);
  return out;
}

/**
 * A leaf's values in the form the WebAssembly encoder takes them: the typed array `data`
 * gives (checked to be that type), strings, or a void leaf's bytes; a plain Array is
 * converted, each value checked.
 * @param {any} leaf
 * @param {unknown} values
 * @returns {any}
 */
function heldValues(leaf, values) {
  const field = leaf.path === "" ? "" : ` '${leaf.path}'`;
  const fail = (/** @type {string} */ why) => new NpyError(`field${field}: ${why}`, { kind: "usage", field: leaf.path || undefined });
  if (values === undefined) throw fail("no values given");
  if (values instanceof NpyArray) values = values.data;
  if (leaf.output === "string") {
    if (!Array.isArray(values)) throw fail(`expected an array of strings, not ${describe(values)}`);
    return values;
  }
  if (leaf.output === "void") {
    if (values instanceof Uint8Array) return values;
    if (!Array.isArray(values)) throw fail(`expected Uint8Array values, not ${describe(values)}`);
    const size = leaf.dtype.itemsize;
    const out = new Uint8Array(values.length * size);
    values.forEach((v, k) => {
      if (!(v instanceof Uint8Array) || v.length !== size) throw fail(`element ${k} is not a Uint8Array of ${size} bytes`);
      out.set(v, k * size);
    });
    return out;
  }
  const T = TYPED[leaf.output];
  const f16Values = leaf.dtype.type === "f2" && (values instanceof Float32Array || values instanceof Float64Array);
  if (values instanceof T) return values;
  if (f16Values && FLOAT16) return TYPED.Float16Array.from(/** @type {Float32Array} */ (values));
  if (!Array.isArray(values) && !ArrayBuffer.isView(values)) throw fail(`expected a ${T.name} or an array, not ${describe(values)}`);
  const list = /** @type {ArrayLike<any>} */ (values);
  const integer = /^[iu]|^[Mm]8/.test(leaf.dtype.type) || leaf.dtype.type === "b1";
  if (integer) {
    const bits = leaf.dtype.type === "b1" ? 1 : 8 * (T.BYTES_PER_ELEMENT);
    const signed = leaf.dtype.type.startsWith("i") || /^[Mm]8/.test(leaf.dtype.type);
    const lo = leaf.dtype.type === "b1" ? 0n : signed ? -(1n << BigInt(bits - 1)) : 0n;
    const hi = leaf.dtype.type === "b1" ? 1n : signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
    const out = new T(list.length);
    for (let k = 0; k < list.length; k++) {
      let v = list[k];
      if (typeof v === "boolean") v = v ? 1 : 0;
      const ok = typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v));
      const big = ok ? BigInt(v) : 0n;
      if (!ok || big < lo || big > hi) throw fail(`element ${k}: ${String(v)} is not a ${leaf.dtype.str} value (${lo} to ${hi})`);
      out[k] = T === BigInt64Array || T === BigUint64Array ? big : Number(big);
    }
    return out;
  }
  const out = new T(list.length);
  for (let k = 0; k < list.length; k++) {
    const v = list[k];
    if (typeof v !== "number") throw fail(`element ${k}: ${describe(v)} is not a number`);
    out[k] = v;
  }
  return out;
}

/**
 * A record's rows (objects, as `rows()` gives them) as its columns.
 * @param {Record<string, any>[]} rows
 * @param {any[]} leaves
 */
function columnsOfRows(rows, leaves) {
  if (!Array.isArray(rows)) throw new NpyError(`rows must be an array of objects, not ${describe(rows)}`, { kind: "usage" });
  /** @type {Record<string, unknown[]>} */
  const columns = {};
  for (const leaf of leaves) {
    const names = leaf.path === "" ? [] : leaf.path.split(".");
    const per = product(leaf.dims) * leaf.lanes;
    const out = [];
    for (let r = 0; r < rows.length; r++) {
      let v = rows[r];
      for (const name of names) v = v?.[name];
      if (v === undefined) {
        throw new NpyError(`row ${r} has no field '${leaf.path}'`, { kind: "usage", field: leaf.path });
      }
      if (per === 1) out.push(v);
      else {
        const list = /** @type {ArrayLike<unknown>} */ (v);
        if (list.length !== per) throw new NpyError(`row ${r}: field '${leaf.path}' holds ${list.length} values, not ${per}`, { kind: "usage", field: leaf.path });
        for (let k = 0; k < per; k++) out.push(list[k]);
      }
    }
    columns[leaf.path] = out;
  }
  return columns;
}

/**
 * An object array's file.
 * @param {ArraySpec} spec
 * @param {boolean} fortranOrder
 */
function saveObjects(spec, fortranOrder) {
  const values = spec.data instanceof NpyArray ? spec.data.data : spec.data;
  if (!Array.isArray(values)) {
    throw new NpyError(`an object array's data is an Array of values, not ${describe(values)}`, { kind: "usage" });
  }
  const shape = spec.shape ?? [values.length];
  return call(() =>
    bound.encodeObjects(values, shape, fortranOrder, (/** @type {unknown} */ v) => (v instanceof NpyArray ? save(v) : undefined)),
  );
}
