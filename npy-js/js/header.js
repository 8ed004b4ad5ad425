// Headers, both ways, each through npy-core in the WebAssembly module: a file's header
// read (once, here, for `load`, `open` and an archive's members: the first bytes, then as
// many more as the header needs), and the header `np.save` writes for an array.

import { bound, call, FLOAT16 } from "./wasm.js";

/** Bytes read first for a header: every header NumPy writes for fewer than ~100 fields. */
export const PREFIX = 4096;

/**
 * @typedef {{file?: string, member?: string}} Where what errors name: the file, the member
 */

/**
 * The header in `prefix`, the first bytes of a file of `length` bytes, as npy-core reads
 * it (its description: `{descr, dtype, columns, shape, dataOffset, dataLength...}`), or
 * `{need: n}` when it needs the first `n` bytes. `ranges`: the data is read by ranges, so
 * it may be larger than this module holds at once.
 * @param {Uint8Array} prefix
 * @param {number} length
 * @param {number | undefined} maxHeaderSize
 * @param {boolean} ranges
 * @param {Where} where
 * @returns {any}
 */
export function parseHeader(prefix, length, maxHeaderSize, ranges, where) {
  return call(() => JSON.parse(bound.readHeader(prefix, length, maxHeaderSize, FLOAT16, where.file, ranges)), where);
}

/**
 * Reads the header of the file of `length` bytes at `base`: its first bytes (`first`, when
 * the caller has read them already), then as many as the header says it needs. A reading
 * generator (bytes.js runs it over memory or a ranged source).
 * @param {number} base
 * @param {number} length
 * @param {{maxHeaderSize?: number}} options
 * @param {boolean} ranges as `parseHeader`'s
 * @param {Where} where
 * @param {Uint8Array} [first]
 * @returns {Generator<import("./bytes.js").Request, any, Uint8Array[]>}
 */
export function* readHeader(base, length, options, ranges, where, first) {
  let prefix = first ?? (yield [[base, base + Math.min(length, PREFIX)]])[0];
  for (;;) {
    const info = parseHeader(prefix, length, options.maxHeaderSize, ranges, where);
    if (info.need === undefined) return info;
    [prefix] = yield [[base, base + info.need]];
  }
}

/**
 * The preamble and header np.save writes for an array of `descr`, `shape` and order (in
 * `version` where it fits, else the oldest that fits), made by npy-core, which refuses one
 * whose data this 32-bit module cannot hold (2 GiB or more): made before the data is read,
 * so that asking for too much fails before reading it.
 * @param {string} descr
 * @param {readonly number[]} shape
 * @param {boolean} fortranOrder
 * @param {readonly number[] | undefined} version
 * @param {Where} [where]
 * @returns {Uint8Array}
 */
export function encodeHeader(descr, shape, fortranOrder, version, where) {
  return call(() => bound.encodeHeader(descr, [...shape], fortranOrder, version === undefined ? undefined : Uint8Array.from(version)), where);
}
