// Bytes, before anything is known of what they hold: an input as a Uint8Array, the zip
// magic test, element order, and the two runners of the reading generators (header.js,
// npz.js) that yield the byte ranges they need: `runSync` answers from memory, `runAsync`
// from a ranged source.

import { NpyError } from "./errors.js";

/** Ranges read at once from a source. */
const PARALLEL = 8;

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

/**
 * What a value is, for errors: `null`, its type, or its class's name.
 * @param {unknown} v
 */
export function describe(v) {
  if (v === null) return "null";
  if (typeof v !== "object") return typeof v;
  return v.constructor?.name ?? "an object";
}

/**
 * Whether a file's first bytes are a zip archive's (an `.npz`): `PK\x03\x04`, or
 * `PK\x05\x06` for an empty one, as npy-core's `FileKind::of` tells them.
 * @param {Uint8Array} first
 */
export function isZip(first) {
  return first[0] === 0x50 && first[1] === 0x4b && ((first[2] === 0x03 && first[3] === 0x04) || (first[2] === 0x05 && first[3] === 0x06));
}

/**
 * The elements of an array of `shape` (1 for a 0-d array).
 * @param {readonly number[]} shape
 */
export function product(shape) {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
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
 * A request of a reading generator: byte ranges `[start, end]`, answered with their bytes
 * in the same order (ranges of one request may be read at once).
 * @typedef {[number, number][]} Request
 */

/**
 * Runs a reading generator over bytes in memory.
 * @template T
 * @param {Generator<Request, T, Uint8Array[]>} gen
 * @param {Uint8Array} bytes
 * @returns {T}
 */
export function runSync(gen, bytes) {
  let step = gen.next();
  while (!step.done) step = gen.next(step.value.map(([start, end]) => bytes.subarray(start, end)));
  return step.value;
}

/**
 * Runs a reading generator over a ranged source, reading each request's ranges at once (at
 * most 8 at a time).
 * @template T
 * @param {Generator<Request, T, Uint8Array[]>} gen
 * @param {{read(start: number, end: number): Promise<Uint8Array>}} source
 * @returns {Promise<T>}
 */
export async function runAsync(gen, source) {
  let step = gen.next();
  while (!step.done) {
    const ranges = step.value;
    /** @type {Uint8Array[]} */
    const got = new Array(ranges.length);
    try {
      for (let i = 0; i < ranges.length; i += PARALLEL) {
        await Promise.all(ranges.slice(i, i + PARALLEL).map(async ([start, end], k) => (got[i + k] = await source.read(start, end))));
      }
    } catch (e) {
      gen.return(/** @type {any} */ (undefined));
      throw e;
    }
    step = gen.next(got);
  }
  return step.value;
}
