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
  const end = headerEnd(prefix);
  const known = end === undefined ? undefined : recall(prefix, end, length, maxHeaderSize, ranges);
  if (known !== undefined) return known;
  const info = call(() => JSON.parse(bound.readHeader(prefix, length, maxHeaderSize, FLOAT16, where.file, ranges)), where);
  if (end !== undefined && info.need === undefined) {
    PARSED.unshift({ head: prefix.slice(0, end), length, maxHeaderSize, ranges, info: deepFreeze(info) });
    if (PARSED.length > PARSED_MAX) PARSED.pop();
  }
  return info;
}

/**
 * The descriptions of the headers parsed lately, the latest first, with all that
 * `readHeader` reads to give one: the preamble and header bytes, the file's length and
 * the options. A page loading thousands of small tiles of one dtype and shape crosses
 * into WebAssembly (~20 µs a call, the whole of a 100-value load) for the first only.
 * Frozen, since the arrays of one header share them.
 * @type {{head: Uint8Array, length: number, maxHeaderSize: number | undefined, ranges: boolean, info: any}[]}
 */
const PARSED = [];
const PARSED_MAX = 16;
/** The longest header (preamble included) a description is kept for. */
const KEPT_MAX = 4096;

/**
 * Where the header at the start of `prefix` ends, by its preamble's length field (npy-core
 * checks the rest when it parses it first); `undefined` when `prefix` does not hold it all,
 * it is longer than `KEPT_MAX`, or the version is not one of NumPy's.
 * @param {Uint8Array} prefix
 * @returns {number | undefined}
 */
function headerEnd(prefix) {
  if (prefix.length < 12) return undefined;
  const major = prefix[6];
  let end;
  if (major === 1) end = 10 + (prefix[8] | (prefix[9] << 8));
  else if (major === 2 || major === 3) end = 12 + (prefix[8] | (prefix[9] << 8) | (prefix[10] << 16)) + prefix[11] * 2 ** 24;
  else return undefined;
  return end > KEPT_MAX || end > prefix.length ? undefined : end;
}

/**
 * The kept description of the header `prefix[0, end)` read with these arguments, moved to
 * the front; `undefined` if none is kept.
 * @param {Uint8Array} prefix
 * @param {number} end
 * @param {number} length
 * @param {number | undefined} maxHeaderSize
 * @param {boolean} ranges
 * @returns {any}
 */
function recall(prefix, end, length, maxHeaderSize, ranges) {
  for (let k = 0; k < PARSED.length; k++) {
    const kept = PARSED[k];
    if (kept.head.length !== end || kept.length !== length || kept.maxHeaderSize !== maxHeaderSize || kept.ranges !== ranges) {
      continue;
    }
    let i = 0;
    while (i < end && kept.head[i] === prefix[i]) i++;
    if (i < end) continue;
    if (k > 0) PARSED.unshift(...PARSED.splice(k, 1));
    return kept.info;
  }
  return undefined;
}

/**
 * `value` and every object and array in it, frozen.
 * @template T
 * @param {T} value
 * @returns {T}
 */
function deepFreeze(value) {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
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
