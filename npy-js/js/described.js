// What an array in memory (NpyArray) and a file opened by ranges (NpyFile) share: their
// header, as the WebAssembly module describes it.

/** @type {WeakMap<Described, any>} */
const descriptions = new WeakMap();

/**
 * The description `readHeader` gave for `of` (its columns, data offset and length...),
 * for the modules that build on it.
 * @param {Described} of
 * @returns {any}
 */
export function description(of) {
  return descriptions.get(of);
}

/** A header's description: dtype, shape, order, version and text. */
export class Described {
  /** @param {any} info the description, as `readHeader` gives it */
  constructor(info) {
    Object.freeze(info.shape);
    Object.freeze(info.version);
    descriptions.set(this, info);
  }

  /** The dtype as the header's `descr` holds it: `'<f8'`, `[('x', '<f4'), ...]`. */
  get descr() {
    return /** @type {string} */ (description(this).descr);
  }

  /**
   * The dtype as a tree: `{kind: "scalar" | "record" | "subarray", descr, itemsize, ...}`,
   * frozen (the arrays of one header share it).
   * @returns {import("../index.d.ts").DType}
   */
  get dtype() {
    return description(this).dtype;
  }

  /** The shape (`[]` for a 0-d array). */
  get shape() {
    return /** @type {readonly number[]} */ (description(this).shape);
  }

  /** Whether the data is in Fortran (column-major) order. */
  get fortranOrder() {
    return /** @type {boolean} */ (description(this).fortranOrder);
  }

  /** The format version, `[major, minor]`. */
  get version() {
    return /** @type {readonly [number, number]} */ (description(this).version);
  }

  /** The header text as the file holds it: the dict, its padding and the newline. */
  get header() {
    return /** @type {string} */ (description(this).header);
  }

  /** Rows along the first axis (1 for a 0-d array). */
  get rowCount() {
    return this.shape.length === 0 ? 1 : this.shape[0];
  }

  /**
   * Every scalar the dtype holds, a column each: `{path, dtype, dims}`, `path` the dotted
   * field path (`""` for a plain array), `dtype` the scalar's tree, `dims` a subarray
   * field's shape (`[]` for none). What `column(path)` reads.
   * @returns {readonly {path: string, dtype: import("../index.d.ts").ScalarDType, dims: readonly number[]}[]}
   */
  get leaves() {
    return description(this).columns.map((/** @type {any} */ c) => ({ path: c.path, dtype: c.dtype, dims: c.dims }));
  }

  /**
   * The dotted paths of a record's fields (its columns): `["trace_id", "receiver.x", ...]`;
   * `[]` for other dtypes.
   * @returns {string[]}
   */
  get fields() {
    return this.dtype.kind === "record" ? description(this).columns.map((/** @type {any} */ c) => c.path) : [];
  }
}
