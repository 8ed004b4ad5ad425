// Statistics of a column: an array (all of it), a record's numeric field (a subarray field
// over all its values) or the slice an image shows. Count, min, max, mean, std, NaNs,
// zeros, ±inf as NumPy's nan-functions give them, and a histogram with np.histogram's bins,
// computed while the file is read a piece at a time (progress, cancel).

import { NpyError } from "../js/index.js";
import { plotBins } from "./plot.js";
import { $, showError, stats as record } from "./state.js";

/**
 * Bytes of rows read at a time: a File's slice costs a round trip to the browser's
 * process, which 32 MiB pieces make small next to their bytes (Chromium 156, a 1 GB
 * `<f8` column, four reads in flight: 16 MiB pieces 436-627 MB/s, 32 MiB 719-738, 64 MiB
 * 709-737), and a piece is counted in about 10 ms.
 */
export const PIECE_BYTES = 32 << 20;
/** Reads in flight while a piece is counted: the reads overlap the loop over the pieces before them. */
export const AHEAD = 4;
/** Values whose sum stays exact in a double (2^53 / 2^32): integer sums go to a BigInt after this many. */
const EXACT_RUN = 1 << 20;
/** The bins a histogram has unless asked for others. */
export const DEFAULT_BINS = 50;

/**
 * @typedef {import("../js/open.js").NpyFile} NpyFile
 * @typedef {import("../js/array.js").NpyArray} NpyArray
 * @typedef {Float64Array | Float32Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array} Numbers
 */

/**
 * What a column holds, for the statistics: floats, integers (booleans, datetimes as their
 * counts), or 64-bit integers read as exact pairs of 32-bit halves.
 * @typedef {"float" | "int" | "int64" | "uint64"} Kind
 */

/**
 * A column's statistics, NumPy's names: `count` values, `nans` of them NaN (NaT for
 * datetimes), `zeros`, `posInf`/`negInf`; `min`/`max` as np.nanmin/np.nanmax (a bigint for
 * 64-bit integers: exact), `mean`/`std` as np.nanmean/np.nanstd (ddof=0) in float64, and
 * `finiteMean`/`finiteStd` over the finite values alone; `sum` the exact sum of an integer
 * column; `finiteMin`/`finiteMax` the range of the histogram.
 * @typedef {object} Summary
 * @property {Kind} kind
 * @property {number} count
 * @property {number} nans
 * @property {number} zeros
 * @property {number} posInf
 * @property {number} negInf
 * @property {number | bigint} min
 * @property {number | bigint} max
 * @property {number} finiteMin
 * @property {number} finiteMax
 * @property {number} mean
 * @property {number} std
 * @property {number} finiteMean
 * @property {number} finiteStd
 * @property {bigint | null} sum
 */

/**
 * A running summary of the values seen so far. Each piece is counted in two passes (its
 * sum, then the squares of its deviations from its mean with the residual correction of
 * the corrected two-pass algorithm), and pieces merge by Chan et al.'s formula: the mean
 * and variance are as accurate as NumPy's pairwise sums, whatever the column's length.
 */
export class Accumulator {
  /** @param {Kind} kind */
  constructor(kind) {
    this.kind = kind;
    this.count = 0;
    this.nans = 0;
    this.zeros = 0;
    this.posInf = 0;
    this.negInf = 0;
    /** Finite values merged so far, their mean and sum of squared deviations. */
    this.n = 0;
    this.mean = 0;
    this.m2 = 0;
    this.lo = Infinity;
    this.hi = -Infinity;
    /** Exact integer sum, and the exact extremes of a 64-bit integer column. */
    this.sum = 0n;
    /** @type {bigint | null} */ this.loBig = null;
    /** @type {bigint | null} */ this.hiBig = null;
  }

  /**
   * Adds a piece's values.
   * @param {Numbers | Float32Array} values
   * @param {boolean} [nat] whether the most negative 64-bit integer is NaT (datetimes)
   */
  add(values, nat = false) {
    this.count += values.length;
    if (this.kind === "float") this.#floats(/** @type {Float64Array} */ (values));
    else if (this.kind === "int") this.#ints(/** @type {Int32Array} */ (values));
    else this.#int64(/** @type {BigInt64Array} */ (values), this.kind === "int64", nat);
  }

  /**
   * Merges a piece's finite values' count, mean and squared deviations (Chan et al.).
   * @param {number} n
   * @param {number} mean
   * @param {number} m2
   */
  #merge(n, mean, m2) {
    if (n === 0) return;
    const total = this.n + n;
    const delta = mean - this.mean;
    this.mean += delta * (n / total);
    this.m2 += m2 + delta * delta * ((this.n * n) / total);
    this.n = total;
  }

  /** @param {Float64Array} v */
  #floats(v) {
    if (!this.#allFinite(v)) this.#someNotFinite(v);
  }

  /**
   * A piece whose values are all finite, as most are: its sum, extremes and zeros in one
   * pass with four sums (independent additions run side by side), its deviations in a
   * second. False, with nothing counted, when a value is not finite.
   * @param {Float64Array} v
   */
  #allFinite(v) {
    const n = v.length;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let lo = this.lo;
    let hi = this.hi;
    let zeros = 0;
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const a = v[i];
      const b = v[i + 1];
      const c = v[i + 2];
      const d = v[i + 3];
      s0 += a;
      s1 += b;
      s2 += c;
      s3 += d;
      if (a < lo) lo = a;
      if (a > hi) hi = a;
      if (b < lo) lo = b;
      if (b > hi) hi = b;
      if (c < lo) lo = c;
      if (c > hi) hi = c;
      if (d < lo) lo = d;
      if (d > hi) hi = d;
      if (a === 0) zeros++;
      if (b === 0) zeros++;
      if (c === 0) zeros++;
      if (d === 0) zeros++;
    }
    for (; i < n; i++) {
      const a = v[i];
      s0 += a;
      if (a < lo) lo = a;
      if (a > hi) hi = a;
      if (a === 0) zeros++;
    }
    const sum = s0 + s1 + s2 + s3;
    // A NaN or an infinity makes the sum NaN or infinite; so may finite values that overflow,
    // which the careful pass counts too.
    if (!Number.isFinite(sum) || n === 0) return n === 0;
    this.lo = lo;
    this.hi = hi;
    this.zeros += zeros;
    const m = sum / n;
    let r0 = 0;
    let r1 = 0;
    let q0 = 0;
    let q1 = 0;
    i = 0;
    for (; i + 2 <= n; i += 2) {
      const a = v[i] - m;
      const b = v[i + 1] - m;
      r0 += a;
      r1 += b;
      q0 += a * a;
      q1 += b * b;
    }
    if (i < n) {
      const a = v[i] - m;
      r0 += a;
      q0 += a * a;
    }
    const r = r0 + r1;
    this.#merge(n, m + r / n, q0 + q1 - (r * r) / n);
    return true;
  }

  /**
   * A piece with NaNs or infinities: each value classified, the finite ones summed.
   * @param {Float64Array} v
   */
  #someNotFinite(v) {
    let sum = 0;
    let bad = 0;
    let lo = this.lo;
    let hi = this.hi;
    let zeros = 0;
    let nans = 0;
    let pos = 0;
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      // x - x is 0 for a finite x alone (inf - inf and NaN - NaN are NaN).
      if (x - x === 0) {
        sum += x;
        if (x < lo) lo = x;
        if (x > hi) hi = x;
        if (x === 0) zeros++;
      } else {
        bad++;
        if (x !== x) nans++;
        else if (x > 0) pos++;
      }
    }
    const n = v.length - bad;
    this.nans += nans;
    this.posInf += pos;
    this.negInf += bad - nans - pos;
    this.zeros += zeros;
    this.lo = lo;
    this.hi = hi;
    if (n === 0) return;
    const m = sum / n;
    let r = 0;
    let m2 = 0;
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (x - x !== 0) continue;
      const d = x - m;
      r += d;
      m2 += d * d;
    }
    this.#merge(n, m + r / n, m2 - (r * r) / n);
  }

  /**
   * Integers of up to 32 bits (booleans as 0 and 1): sums exact in doubles for runs of
   * EXACT_RUN values, then in a BigInt.
   * @param {Int32Array} v
   */
  #ints(v) {
    let lo = this.lo;
    let hi = this.hi;
    let zeros = 0;
    let total = 0n;
    for (let a = 0; a < v.length; a += EXACT_RUN) {
      const b = Math.min(v.length, a + EXACT_RUN);
      let sum = 0;
      for (let i = a; i < b; i++) {
        const x = v[i];
        sum += x;
        if (x < lo) lo = x;
        if (x > hi) hi = x;
        if (x === 0) zeros++;
      }
      total += BigInt(sum);
    }
    this.lo = lo;
    this.hi = hi;
    this.zeros += zeros;
    this.sum += total;
    if (v.length === 0) return;
    const m = Number(total) / v.length;
    let r = 0;
    let m2 = 0;
    for (let i = 0; i < v.length; i++) {
      const d = v[i] - m;
      r += d;
      m2 += d * d;
    }
    this.#merge(v.length, m + r / v.length, m2 - (r * r) / v.length);
  }

  /**
   * 64-bit integers (datetimes and timedeltas as their counts) as pairs of 32-bit halves,
   * with no BigInt per value: the sum exact (halves summed apart), the extremes exact
   * (compared half by half), each value as a double (one rounding) for the deviations.
   * @param {BigInt64Array | BigUint64Array} values
   * @param {boolean} signed
   * @param {boolean} nat
   */
  #int64(values, signed, nat) {
    const words = new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
    const highs = signed ? new Int32Array(values.buffer, values.byteOffset, values.length * 2) : words;
    let zeros = 0;
    let nats = 0;
    let total = 0n;
    let loHi = Infinity;
    let loLo = Infinity;
    let hiHi = -Infinity;
    let hiLo = -Infinity;
    for (let a = 0; a < values.length; a += EXACT_RUN) {
      const b = Math.min(values.length, a + EXACT_RUN);
      let sumLo = 0;
      let sumHi = 0;
      for (let i = a; i < b; i++) {
        const low = words[2 * i];
        const high = highs[2 * i + 1];
        if (nat && high === -0x80000000 && low === 0) {
          nats++;
          continue;
        }
        sumLo += low;
        sumHi += high;
        if ((low | high) === 0) zeros++;
        if (high < loHi || (high === loHi && low < loLo)) {
          loHi = high;
          loLo = low;
        }
        if (high > hiHi || (high === hiHi && low > hiLo)) {
          hiHi = high;
          hiLo = low;
        }
      }
      total += (BigInt(sumHi) << 32n) + BigInt(sumLo);
    }
    this.zeros += zeros;
    this.nans += nats;
    if (loHi !== Infinity) {
      const lo = (BigInt(loHi) << 32n) + BigInt(loLo);
      const hi = (BigInt(hiHi) << 32n) + BigInt(hiLo);
      if (this.loBig === null || lo < this.loBig) this.loBig = lo;
      if (this.hiBig === null || hi > /** @type {bigint} */ (this.hiBig)) this.hiBig = hi;
      this.lo = Number(this.loBig);
      this.hi = Number(this.hiBig);
    }
    this.sum += total;
    const n = values.length - nats;
    if (n === 0) return;
    const m = Number(total) / n;
    let r = 0;
    let m2 = 0;
    for (let i = 0; i < values.length; i++) {
      const high = highs[2 * i + 1];
      const low = words[2 * i];
      if (nats > 0 && high === -0x80000000 && low === 0) continue;
      const d = high * 4294967296 + low - m;
      r += d;
      m2 += d * d;
    }
    this.#merge(n, m + r / n, m2 - (r * r) / n);
  }

  /** @returns {Summary} */
  summary() {
    const finite = this.n > 0;
    const finiteMean = finite ? (this.kind === "float" ? this.mean : exactMean(this.sum, this.n)) : NaN;
    const finiteStd = finite ? Math.sqrt(Math.max(0, this.m2) / this.n) : NaN;
    // np.nanmean and np.nanstd: an infinity makes the mean infinite (NaN for both signs)
    // and the std NaN (its deviation is inf - inf).
    const inf = this.posInf + this.negInf > 0;
    const mean = this.posInf > 0 && this.negInf > 0 ? NaN : this.posInf > 0 ? Infinity : this.negInf > 0 ? -Infinity : finiteMean;
    const big = this.kind === "int64" || this.kind === "uint64";
    const none = this.n === 0 && this.posInf + this.negInf === 0;
    return {
      kind: this.kind,
      count: this.count,
      nans: this.nans,
      zeros: this.zeros,
      posInf: this.posInf,
      negInf: this.negInf,
      min: big && this.loBig !== null ? this.loBig : none ? NaN : this.negInf > 0 ? -Infinity : this.lo,
      max: big && this.hiBig !== null ? this.hiBig : none ? NaN : this.posInf > 0 ? Infinity : this.hi,
      finiteMin: finite ? this.lo : NaN,
      finiteMax: finite ? this.hi : NaN,
      mean,
      std: inf ? NaN : finiteStd,
      finiteMean,
      finiteStd,
      sum: this.kind === "float" ? null : this.sum,
    };
  }
}

/**
 * An exact integer sum over `n`, rounded once or twice: the quotient's integer part exact,
 * its fraction in a double.
 * @param {bigint} sum
 * @param {number} n
 */
function exactMean(sum, n) {
  const q = sum / BigInt(n);
  const rest = sum - q * BigInt(n);
  return Number(q) + Number(rest) / n;
}

/**
 * The bin edges np.histogram gives `bins` bins over `[lo, hi]` (np.linspace in float64,
 * then in the bins' dtype: float32 for a float32 column, float16 for float16), the range
 * widened by 0.5 each way when it is one value, as NumPy widens it.
 * @param {number} lo
 * @param {number} hi
 * @param {number} bins
 * @param {(x: number) => number} round to the bins' dtype
 */
export function binEdges(lo, hi, bins, round = (x) => x) {
  if (lo === hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const edges = new Float64Array(bins + 1);
  const step = (hi - lo) / bins;
  for (let i = 0; i <= bins; i++) edges[i] = round(step === 0 ? (i / bins) * (hi - lo) + lo : i * step + lo);
  edges[bins] = round(hi);
  return edges;
}

/**
 * Counts a piece's finite values into the bins `edges` bound, as np.histogram does: an
 * estimate of each value's bin from its position in the range, then moved to the bin whose
 * edges hold it (`edges[i] <= x < edges[i + 1]`, the last bin closed).
 * @param {ArrayLike<number>} values
 * @param {Float64Array} edges
 * @param {Float64Array} counts
 * @param {(i: number) => number} [at] value i as a double, when `values` are not numbers
 */
export function countBins(values, edges, counts, at) {
  const bins = counts.length;
  const lo = edges[0];
  const hi = edges[bins];
  const scale = bins / (hi - lo);
  const n = values.length;
  if (at !== undefined) {
    for (let i = 0; i < n; i++) {
      const x = at(i);
      if (!(x >= lo && x <= hi)) continue;
      let k = Math.floor((x - lo) * scale);
      if (k >= bins) k = bins - 1;
      if (x < edges[k]) k--;
      else if (k < bins - 1 && x >= edges[k + 1]) k++;
      counts[k]++;
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    const x = values[i];
    if (!(x >= lo && x <= hi)) continue;
    let k = Math.floor((x - lo) * scale);
    if (k >= bins) k = bins - 1;
    if (x < edges[k]) k--;
    else if (k < bins - 1 && x >= edges[k + 1]) k++;
    counts[k]++;
  }
}

/**
 * The kind of statistics a leaf's values take, or an error saying why it has none.
 * @param {{path: string, dtype: {type: string, str: string}}} leaf
 * @param {string | undefined} file
 * @returns {Kind}
 */
export function kindOf(leaf, file) {
  const t = leaf.dtype.type;
  if (/^f(2|4|8)$/.test(t)) return "float";
  if (/^[iu](1|2|4)$/.test(t) || t === "b1") return "int";
  if (t === "i8" || /^[Mm]8/.test(t)) return "int64";
  if (t === "u8") return "uint64";
  const what = leaf.path === "" ? "the array" : `field '${leaf.path}'`;
  throw new NpyError(`reading '${file}': ${what} holds ${leaf.dtype.str} values, which have no statistics here (numbers, booleans and datetimes do)`, {
    kind: "usage",
    file,
  });
}

/**
 * The numeric leaves of an array: the columns statistics are offered for.
 * @param {NpyFile} file
 */
export function statsLeaves(file) {
  return file.leaves.filter((l) => /^(f[248]|[iu][1248]|b1|[Mm]8)/.test(l.dtype.type));
}

/** Thrown when a computation is cancelled. */
export class Cancelled extends Error {
  /** @param {number} done rows read before the cancel */
  constructor(done) {
    super(`cancelled after ${done.toLocaleString("en")} rows`);
    this.name = "Cancelled";
    this.done = done;
  }
}

/**
 * `promise`, or a Cancelled error as soon as `signal` aborts (the read's bytes are then
 * dropped when they come).
 * @template T
 * @param {Promise<T>} promise
 * @param {AbortSignal | undefined} signal
 * @param {number} done
 * @returns {Promise<T>}
 */
function unlessAborted(promise, signal, done) {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(new Cancelled(done));
  return new Promise((resolve, reject) => {
    const stop = () => reject(new Cancelled(done));
    signal.addEventListener("abort", stop, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", stop);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", stop);
        reject(e);
      },
    );
  });
}

/**
 * @typedef {object} StreamOptions
 * @property {AbortSignal} [signal] stops the reads: none starts after it aborts, and the wait for one in flight ends at once
 * @property {(done: number, total: number) => void} [onProgress] told the rows read so far, and of how many
 * @property {number} [pieceBytes] bytes of rows a read takes (default PIECE_BYTES)
 */

/**
 * Reads the file's rows a piece at a time, in order, AHEAD reads in flight, and gives
 * each piece (an NpyArray of rows `start` on) to `each`.
 * @param {NpyFile} file
 * @param {(piece: NpyArray, start: number) => void} each
 * @param {StreamOptions} [options]
 */
export async function streamRows(file, each, { signal, onProgress, pieceBytes = PIECE_BYTES } = {}) {
  const total = file.rowCount;
  const rowBytes = Math.max(1, file.shape.slice(1).reduce((n, d) => n * d, 1) * file.dtype.itemsize);
  const step = Math.max(1, Math.floor(pieceBytes / rowBytes));
  /** @type {Promise<NpyArray>[]} */
  const reads = [];
  let next = 0;
  const more = () => {
    while (reads.length < AHEAD && next < total && !signal?.aborted) {
      const b = Math.min(total, next + step);
      const read = file.rows(next, b);
      // A read whose piece is never taken (a cancel, an earlier error) fails quietly.
      read.catch(() => {});
      reads.push(read);
      next = b;
    }
  };
  let done = 0;
  onProgress?.(0, total);
  more();
  while (done < total) {
    if (signal?.aborted) throw new Cancelled(done);
    const piece = await unlessAborted(/** @type {Promise<NpyArray>} */ (reads.shift()), signal, done);
    more();
    each(piece, done);
    done += piece.rowCount;
    onProgress?.(done, total);
  }
}

/**
 * A piece's values of `path` as numbers in a typed array (a view where the package gives
 * one), every value of a subarray field.
 * @param {NpyArray} piece
 * @param {string} path
 * @returns {Numbers}
 */
export function valuesOf(piece, path) {
  const column = path === "" && piece.dtype.kind !== "record" ? piece : piece.column(path);
  return /** @type {Numbers} */ (column.data);
}

/**
 * @typedef {object} StatsOptions
 * @property {number} [bins] the histogram's bins (default DEFAULT_BINS); 0: no histogram
 */

/**
 * The statistics of a column of `file` (`path`: a numeric leaf, `""` for a plain array),
 * read by ranges, and its histogram (a second pass, once the range is known):
 * `{summary, edges, counts, statsMs}`, `statsMs` the first pass's time.
 * @param {NpyFile} file
 * @param {string} path
 * @param {StreamOptions & StatsOptions} [options]
 */
export async function columnStats(file, path, options = {}) {
  const leaf = file.leaves.find((l) => l.path === path);
  if (leaf === undefined) {
    throw new NpyError(`reading '${file.name}': no numeric column '${path}': its columns are ${statsLeaves(file).map((l) => `'${l.path}'`).join(", ")}`, {
      kind: "usage",
      file: file.name,
    });
  }
  const kind = kindOf(leaf, file.name);
  const nat = /^[Mm]8/.test(leaf.dtype.type);
  const acc = new Accumulator(kind);
  const bins = options.bins ?? DEFAULT_BINS;
  const twice = bins > 0 ? 2 : 1;
  const progress = options.onProgress;
  const began = performance.now();
  await streamRows(file, (piece) => acc.add(valuesOf(piece, path), nat), {
    ...options,
    onProgress: progress && ((done, total) => progress(done, total * twice)),
  });
  const summary = acc.summary();
  const statsMs = performance.now() - began;
  if (bins === 0 || !(summary.finiteMin <= summary.finiteMax)) return { summary, edges: null, counts: null, statsMs };
  const round = binRounding(leaf.dtype.type);
  const edges = binEdges(summary.finiteMin, summary.finiteMax, bins, round);
  const counts = new Float64Array(bins);
  await streamRows(file, (piece) => histogramPiece(valuesOf(piece, path), kind, nat, edges, counts), {
    ...options,
    onProgress: progress && ((done, total) => progress(total + done, total * 2)),
  });
  return { summary, edges, counts, statsMs };
}

/**
 * The statistics of an array in memory (`path`: a numeric leaf, `""` for a plain array):
 * `{summary, edges, counts}`.
 * @param {NpyArray} array
 * @param {string} path
 * @param {StatsOptions & {name?: string}} [options] `name`: the file's, for errors
 */
export function arrayStats(array, path, options = {}) {
  const leaf = array.leaves.find((l) => l.path === path);
  if (leaf === undefined) {
    const columns = array.leaves.map((l) => `'${l.path}'`).join(", ");
    throw new NpyError(`reading '${options.name}': no column '${path}': the columns are ${columns}`, { kind: "usage", file: options.name });
  }
  const kind = kindOf(leaf, options.name);
  const nat = /^[Mm]8/.test(leaf.dtype.type);
  const values = valuesOf(array, path);
  const acc = new Accumulator(kind);
  acc.add(values, nat);
  const summary = acc.summary();
  const bins = options.bins ?? DEFAULT_BINS;
  if (bins === 0 || !(summary.finiteMin <= summary.finiteMax)) return { summary, edges: null, counts: null };
  const edges = binEdges(summary.finiteMin, summary.finiteMax, bins, binRounding(leaf.dtype.type));
  const counts = new Float64Array(bins);
  histogramPiece(values, kind, nat, edges, counts);
  return { summary, edges, counts };
}

/**
 * The statistics of a slice of `file` (the one an image shows: NumPy's basic index, as
 * `NpyFile.select` takes it), read alone by ranges: `{summary, edges, counts}`.
 * @param {NpyFile} file
 * @param {Index} index
 * @param {string} path
 * @param {StatsOptions & {signal?: AbortSignal}} [options]
 */
export async function selectionStats(file, index, path, options = {}) {
  const slice = await unlessAborted(file.select(index, { signal: options.signal }), options.signal, 0);
  return arrayStats(slice, path, { ...options, name: file.name });
}

/** @typedef {(number | null | [number, number, number])[]} Index */

/**
 * A NumPy index as text (`2, :, 10:20`, `-1`, `::4`: an entry per axis, missing ones the
 * whole axis) as `NpyFile.select` takes it: a number, null (`:`) or `[start, stop, step]`
 * (negative bounds count from the end and are clipped to the axis, as NumPy's are; steps
 * are positive). An error names the entry that is wrong.
 * @param {string} text
 * @param {readonly number[]} shape
 * @returns {Index}
 */
export function parseIndex(text, shape) {
  const parts = text.split(",");
  const fail = (/** @type {number} */ k, /** @type {string} */ why) =>
    new NpyError(`slice '${text}': entry ${k + 1} ('${parts[k].trim()}') ${why}`, { kind: "usage" });
  if (parts.length > shape.length) {
    throw new NpyError(`slice '${text}': ${parts.length} entries for an array of ${shape.length} ${shape.length === 1 ? "axis" : "axes"}`, { kind: "usage" });
  }
  return parts.map((raw, k) => {
    const part = raw.trim();
    const dim = shape[k];
    const integer = (/** @type {string} */ t) => (/^[+-]?\d+$/.test(t.trim()) ? Number(t) : NaN);
    if (part === "" || part === ":" || part === "::") return null;
    if (!part.includes(":")) {
      const i = integer(part);
      if (Number.isNaN(i)) throw fail(k, "is not an index: a whole number, or start:stop:step");
      if (i < -dim || i >= dim) throw fail(k, `is out of range for an axis of length ${dim}`);
      return i;
    }
    const bits = part.split(":");
    if (bits.length > 3) throw fail(k, "has more than start:stop:step");
    const [a, b, c] = bits.map((t) => (t.trim() === "" ? undefined : integer(t)));
    if ([a, b, c].some((v) => Number.isNaN(v))) throw fail(k, "is not start:stop:step of whole numbers");
    const step = c ?? 1;
    if (step < 1) throw fail(k, "has a step below 1 (this page reads slices forward)");
    const bound = (/** @type {number | undefined} */ v, /** @type {number} */ otherwise) =>
      v === undefined ? otherwise : Math.max(0, Math.min(dim, v < 0 ? v + dim : v));
    const start = bound(a, 0);
    const stop = Math.max(start, bound(b, dim));
    return [start, stop, step];
  });
}

/**
 * The rounding of np.histogram's bin dtype, the result type of the column and the range's
 * Python floats: float32 or float16 for those columns, float64 for the rest.
 * @param {string} type
 * @returns {(x: number) => number}
 */
function binRounding(type) {
  if (type === "f4") return Math.fround;
  const half = /** @type {{f16round?: (x: number) => number}} */ (/** @type {unknown} */ (Math)).f16round;
  if (type === "f2" && half !== undefined) return half;
  return (x) => x;
}

/**
 * @param {Numbers} values
 * @param {Kind} kind
 * @param {boolean} nat
 * @param {Float64Array} edges
 * @param {Float64Array} counts
 */
function histogramPiece(values, kind, nat, edges, counts) {
  if (kind === "float" || kind === "int") return countBins(/** @type {Float64Array} */ (values), edges, counts);
  const big = /** @type {BigInt64Array} */ (values);
  const words = new Uint32Array(big.buffer, big.byteOffset, big.length * 2);
  const highs = kind === "int64" ? new Int32Array(big.buffer, big.byteOffset, big.length * 2) : words;
  countBins(/** @type {ArrayLike<number>} */ ({ length: big.length }), edges, counts, (i) => {
    const high = highs[2 * i + 1];
    const low = words[2 * i];
    return nat && high === -0x80000000 && low === 0 ? NaN : high * 4294967296 + low;
  });
}

// ---------------------------------------------------------------------------------------
// The view

/**
 * A value as the table shows it: a bigint as its digits, a double as JavaScript's
 * shortest round-trip text (what Python's repr of a float64 gives).
 * @param {number | bigint} v
 */
function text(v) {
  if (typeof v === "bigint") return v.toString();
  if (Number.isNaN(v)) return "nan";
  if (v === Infinity) return "inf";
  if (v === -Infinity) return "-inf";
  return String(v);
}

/**
 * The Statistics view: a column (every numeric leaf; a subarray field's values all
 * together), its statistics and histogram computed by streaming over the file, with
 * progress and a Cancel button.
 * @param {import("./array.js").ViewContext} ctx
 */
export async function setUpStats({ tab, section, file, label }) {
  /** @type {HTMLSelectElement} */
  const column = $(section, ".stats-column");
  /** @type {HTMLInputElement} */
  const binsInput = $(section, ".stats-bins");
  /** @type {HTMLButtonElement} */
  const run = $(section, ".stats-run");
  /** @type {HTMLButtonElement} */
  const cancel = $(section, ".stats-cancel");
  /** @type {HTMLProgressElement} */
  const bar = $(section, ".stats-progress");
  const status = $(section, ".stats-status");
  const table = $(section, ".stats-table tbody");
  /** @type {HTMLCanvasElement} */
  const canvas = $(section, ".stats-histogram");
  const binsTable = $(section, ".stats-bins-table tbody");
  /** @type {HTMLInputElement} */
  const sliceInput = $(section, ".stats-slice");
  // An array of two dims or more: statistics of a slice too (the one the image shows).
  $(section, ".stats-slice-label").hidden = file.shape.length < 2;
  /** @type {HTMLButtonElement} */
  const shown = $(section, ".stats-shown");
  // The image view, once set up, says which slice it shows: a button fills it in and runs.
  const offerShown = () => (shown.hidden = file.shape.length < 2 || tab.shownSlice === undefined);
  offerShown();
  new MutationObserver(offerShown).observe(section, { attributes: true, attributeFilter: ["hidden"] });
  shown.addEventListener("click", () => {
    if (tab.shownSlice === undefined) return;
    sliceInput.value = indexText(tab.shownSlice());
    run.click();
  });
  const leaves = statsLeaves(file);
  column.replaceChildren(
    ...leaves.map((l) => {
      const per = l.dims.reduce((n, d) => n * d, 1);
      const name = l.path || "the whole array";
      return new Option(per > 1 ? `${name} (${per} values a row)` : name, l.path);
    }),
  );
  column.disabled = run.disabled = leaves.length === 0;
  if (leaves.length === 0) status.textContent = "no numeric column";
  binsInput.value = String(DEFAULT_BINS);
  /** @type {AbortController | null} */
  let controller = null;
  cancel.addEventListener("click", () => controller?.abort());
  run.addEventListener("click", async () => {
    controller?.abort();
    const mine = new AbortController();
    controller = mine;
    const path = column.value;
    const sliceText = file.shape.length < 2 ? "" : sliceInput.value.trim();
    const name = `${path || "value"}${sliceText === "" ? "" : ` of [${sliceText}]`}`;
    const bins = Math.max(1, Math.min(10_000, Math.floor(Number(binsInput.value) || DEFAULT_BINS)));
    const began = performance.now();
    cancel.disabled = false;
    bar.hidden = false;
    bar.value = 0;
    status.textContent = `reading ${name}…`;
    section.dataset.state = "running";
    const errorBox = section.closest(".panel")?.querySelector(".error");
    if (errorBox instanceof HTMLElement) errorBox.hidden = true;
    try {
      const got =
        sliceText === ""
          ? await columnStats(file, path, {
              bins,
              signal: mine.signal,
              onProgress: (done, total) => {
                bar.value = total === 0 ? 1 : done / total;
                status.textContent = `reading ${name}: ${Math.floor((100 * done) / Math.max(1, total))}%`;
              },
            })
          : { statsMs: NaN, ...(await selectionStats(file, parseIndex(sliceText, file.shape), path, { bins, signal: mine.signal })) };
      const ms = performance.now() - began;
      showSummary(table, got.summary);
      showBins(binsTable, got.edges, got.counts);
      if (got.edges && got.counts) {
        plotBins(canvas, got.edges, Array.from(got.counts), { title: `${name}: ${bins} bins of its finite values`, x: name, y: "values" });
      }
      status.textContent = `${name}: ${got.summary.count.toLocaleString("en")} values in ${(ms / 1000).toFixed(2)} s`;
      record.lastStats = { label, path, ms, statsMs: got.statsMs, bytes: columnBytes(file, path), summary: got.summary, edges: got.edges && Array.from(got.edges), counts: got.counts && Array.from(got.counts) };
      section.dataset.state = "done";
    } catch (e) {
      if (e instanceof Cancelled) {
        status.textContent = `${name}: ${e.message}; nothing computed`;
        section.dataset.state = "cancelled";
      } else {
        status.textContent = "";
        section.dataset.state = "failed";
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
 * An index as NumPy's text: `7, :, 0:64`, `0:64:2`.
 * @param {Index} index
 */
export function indexText(index) {
  return index.map((e) => (e === null ? ":" : typeof e === "number" ? String(e) : e[2] === 1 ? `${e[0]}:${e[1]}` : `${e[0]}:${e[1]}:${e[2]}`)).join(", ");
}

/**
 * The bytes of a column's values in the file (what a statistics' rate is counted in).
 * @param {NpyFile} file
 * @param {string} path
 */
function columnBytes(file, path) {
  const leaf = file.leaves.find((l) => l.path === path);
  const per = leaf === undefined ? 0 : leaf.dims.reduce((n, d) => n * d, 1) * leaf.dtype.itemsize;
  return file.shape.reduce((n, d) => n * d, 1) * per;
}

/**
 * @param {HTMLElement} body
 * @param {Summary} s
 */
function showSummary(body, s) {
  /** @type {[string, string, number | bigint][]} */
  const rows = [
    ["count", "values", s.count],
    ["nans", s.kind === "int64" ? "NaN or NaT" : "NaN", s.nans],
    ["zeros", "zeros", s.zeros],
    ["posInf", "+inf", s.posInf],
    ["negInf", "-inf", s.negInf],
    ["min", "min (np.nanmin)", s.min],
    ["max", "max (np.nanmax)", s.max],
    ["mean", "mean (np.nanmean)", s.mean],
    ["std", "std (np.nanstd)", s.std],
    ["finiteMean", "mean of the finite values", s.finiteMean],
    ["finiteStd", "std of the finite values", s.finiteStd],
  ];
  if (s.sum !== null) rows.push(["sum", "sum (exact)", s.sum]);
  body.replaceChildren(
    ...rows.map(([key, name, v]) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = name;
      const td = document.createElement("td");
      td.dataset.stat = key;
      td.textContent = text(v);
      tr.append(th, td);
      return tr;
    }),
  );
}

/**
 * The histogram's bins as a table: each bin's edges and count.
 * @param {HTMLElement} body
 * @param {Float64Array | null} edges
 * @param {Float64Array | null} counts
 */
function showBins(body, edges, counts) {
  if (edges === null || counts === null) {
    body.replaceChildren();
    return;
  }
  body.replaceChildren(
    ...Array.from(counts, (n, i) => {
      const tr = document.createElement("tr");
      for (const v of [edges[i], edges[i + 1], n]) {
        const td = document.createElement("td");
        td.textContent = text(v);
        tr.append(td);
      }
      tr.lastElementChild?.setAttribute("data-count", String(n));
      return tr;
    }),
  );
}
