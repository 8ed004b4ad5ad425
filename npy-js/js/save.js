// `save`: an NpyArray, a typed array or a description of one (its values, columns or rows)
// to the bytes np.save writes, every value checked against its dtype before it is
// encoded. The header and the encoding of values are npy-core's, through the WebAssembly
// module; this module gathers and checks the values.

import { NpyError } from "./errors.js";
import { TYPED, descrOf, dtypeOfTyped } from "./dtypes.js";
import { FLOAT16, bound, call } from "./wasm.js";
import { asBytes, describe, product, reorder } from "./bytes.js";
import { encodeHeader } from "./header.js";
import { NpyArray } from "./array.js";

/** @typedef {import("../index.d.ts").ArraySpec} ArraySpec */

/** @typedef {import("../index.d.ts").SaveOptions} SaveOptions */

/**
 * The bytes `np.save` writes for an array: an NpyArray (its header as np.save writes it,
 * in its version where it fits, and its data's bytes as they are), a typed array (1-D,
 * its own dtype), or an ArraySpec.
 * @param {NpyArray | import("../index.d.ts").TypedValues | ArraySpec} array
 * @param {SaveOptions} [options]
 * @returns {Uint8Array}
 */
export function save(array, options = {}) {
  if (array instanceof NpyArray) {
    return withHeader(array.descr, array.shape, array.fortranOrder, options.version ?? array.version, array.bytes);
  }
  if (ArrayBuffer.isView(array) && !(array instanceof DataView)) {
    return save({ data: /** @type {import("../index.d.ts").TypedValues} */ (array) }, options);
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
  const header = encodeHeader(descr, shape, fortranOrder, version);
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
  const shape = [...(spec.shape ?? [values.length])];
  return call(() =>
    bound.encodeObjects(values, shape, fortranOrder, (/** @type {unknown} */ v) => (v instanceof NpyArray ? save(v) : undefined)),
  );
}
