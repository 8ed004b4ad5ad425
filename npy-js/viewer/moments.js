// A column's statistics as numbers arrive, a piece at a time: counts, NumPy's nan-min/max,
// mean and std (ddof=0) as accurate as its pairwise sums, exact integer sums, and
// np.histogram's bins. Pure: no reads, no page; stats.js feeds it.

import { NpyError } from "../js/index.js";

/**
 * @typedef {Float64Array | Float32Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array} Numbers
 */

/** Values whose sum stays exact in a double (2^53 / 2^32): integer sums go to a BigInt after this many. */
const EXACT_RUN = 1 << 20;

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
 * The rounding of np.histogram's bin dtype, the result type of the column and the range's
 * Python floats: float32 or float16 for those columns, float64 for the rest.
 * @param {string} type
 * @returns {(x: number) => number}
 */
export function binRounding(type) {
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
export function histogramPiece(values, kind, nat, edges, counts) {
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
