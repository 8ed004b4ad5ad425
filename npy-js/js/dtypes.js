// What the JavaScript side knows of dtypes: the typed array each kind of value is held in
// (named by the WebAssembly side's column descriptions), the dtype of a typed array, and
// NumPy's dtype names. Everything else about a dtype comes from npy-core.

import { FLOAT16 } from "./wasm.js";

/** `Float16Array` where the platform has it. */
const Float16 = /** @type {any} */ (globalThis).Float16Array;

/**
 * Typed array constructors by name, as the column descriptions name them.
 * @type {Record<string, any>}
 */
export const TYPED = {
  Int8Array,
  Uint8Array,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  BigInt64Array,
  BigUint64Array,
  Float32Array,
  Float64Array,
  ...(FLOAT16 ? { Float16Array: Float16 } : {}),
};

/**
 * The dtype string (`dtype.str`) of a typed array's values, little-endian as typed arrays
 * hold them on every platform JavaScript runs on.
 * @param {ArrayBufferView} values
 * @returns {string | undefined}
 */
export function dtypeOfTyped(values) {
  if (values instanceof Float64Array) return "<f8";
  if (values instanceof Float32Array) return "<f4";
  if (FLOAT16 && values instanceof Float16) return "<f2";
  if (values instanceof Int8Array) return "|i1";
  if (values instanceof Uint8Array || values instanceof Uint8ClampedArray) return "|u1";
  if (values instanceof Int16Array) return "<i2";
  if (values instanceof Uint16Array) return "<u2";
  if (values instanceof Int32Array) return "<i4";
  if (values instanceof Uint32Array) return "<u4";
  if (values instanceof BigInt64Array) return "<i8";
  if (values instanceof BigUint64Array) return "<u8";
  return undefined;
}

/**
 * NumPy's dtype names (`np.dtype(name).str`), for callers who write `"float64"`.
 * @type {Record<string, string>}
 */
const NAMES = {
  bool: "|b1",
  int8: "|i1",
  uint8: "|u1",
  int16: "<i2",
  uint16: "<u2",
  int32: "<i4",
  uint32: "<u4",
  int64: "<i8",
  uint64: "<u8",
  float16: "<f2",
  float32: "<f4",
  float64: "<f8",
  longdouble: "<f16",
  complex64: "<c8",
  complex128: "<c16",
  clongdouble: "<c32",
  object: "|O",
};

/**
 * A dtype as the header codec reads it: NumPy's names (`float64`, `datetime64[ns]`,
 * `str` sizes as `<U5`) become type strings; anything else (a type string, a record's
 * list) goes to npy-core as it is.
 * @param {string} dtype
 */
export function descrOf(dtype) {
  const name = dtype.trim();
  if (Object.hasOwn(NAMES, name)) return NAMES[name];
  const dated = /^(datetime64|timedelta64)(\[.+\])?$/.exec(name);
  if (dated) return `<${dated[1] === "datetime64" ? "M8" : "m8"}${dated[2] ?? ""}`;
  return name;
}

/** The host is little-endian, as typed arrays' bytes are taken to be throughout. */
if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
  throw new Error("npy: this platform's typed arrays are big-endian, which npy does not support");
}
