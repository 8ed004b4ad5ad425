// `open`: a file larger than memory, read by ranges, the JavaScript counterpart of
// np.load(mmap_mode="r"). The header (or an archive's directory) is read at once, rows and
// members when asked for.

import { NpyError, reading } from "./errors.js";
import { isZip, product, reorder, runAsync } from "./bytes.js";
import { PREFIX, encodeHeader, readHeader } from "./header.js";
import { arrayOf, arrayOfHeader, load } from "./array.js";
import { save } from "./save.js";
import { Described, description } from "./described.js";
import { Members, directory, loadMember, memberBytes } from "./npz.js";
import { memory, sourceOf } from "./source.js";

/** Reads of a Fortran-order array's rows closer than this are made one read. */
const GAP = 64 << 10;
/** Reads made at once. */
const PARALLEL = 8;
/** Bytes a read of a selection spans at most when it joins pieces: what each read in flight holds. */
const MAX_READ = 16 << 20;

/** @typedef {import("../index.d.ts").OpenOptions} OpenOptions */

/**
 * Opens an `.npy` or `.npz` file (told apart by its first bytes) without reading it all:
 * bytes in memory, a Blob or File, a URL (HTTP range requests), a path or FileHandle in
 * Node, or any `{byteLength, slice(start, end)}`.
 * @param {ArrayBuffer | ArrayBufferView | Blob | URL | string | import("../index.d.ts").RangedSource | object} input
 * @param {OpenOptions} [options]
 * @returns {Promise<NpyFile | NpzFile>}
 */
export async function open(input, options = {}) {
  const source = await sourceOf(input, options);
  const named = { ...options, name: source.name };
  try {
    // The first bytes tell an archive from an array, and hold most headers.
    const first = await source.read(0, Math.min(source.byteLength, PREFIX));
    if (isZip(first)) {
      const members = await runAsync(directory(source.byteLength, named, undefined), source);
      return new NpzFile(source, members, named);
    }
    const info = await runAsync(readHeader(0, source.byteLength, named, true, { file: named.name }, first), source);
    return new NpyFile(source, info, 0, named);
  } catch (e) {
    await source.close();
    throw e;
  }
}

/** An `.npy` file opened by `open`: its header now, its rows by ranged reads. */
export class NpyFile extends Described {
  /** @type {import("./source.js").Source} */ #source;
  #base;
  /** @type {import("./array.js").LoadOptions} */ #options;
  /** @type {Promise<import("./array.js").NpyArray> | undefined} */ #objects;

  /**
   * @param {import("./source.js").Source} source
   * @param {any} info the header, as the WebAssembly module reads it
   * @param {number} base where the file starts in the source (an archive's stored member)
   * @param {import("./array.js").LoadOptions} options
   */
  constructor(source, info, base, options) {
    super(info);
    this.#source = source;
    this.#base = base;
    this.#options = options;
  }

  get kind() {
    return /** @type {const} */ ("npy");
  }
  /** What errors call the file. */
  get name() {
    return this.#options.name;
  }
  /** Where the data starts in the file. */
  get dataOffset() {
    return /** @type {number} */ (description(this).dataOffset);
  }

  /** The whole array. */
  async read() {
    return this.rows(0, this.rowCount);
  }

  /**
   * Rows `start` to `end` along the first axis as an array of shape `[end - start,
   * ...shape.slice(1)]`, read by ranges: one for a C-order array, one per stretch of a
   * Fortran-order one. An object array is read whole (its data is one pickle).
   * @param {number} start
   * @param {number} [end]
   */
  async rows(start, end = start + 1) {
    const n = this.rowCount;
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > n || start > end) {
      throw new NpyError(reading(this.name, `rows ${start} to ${end} of ${n}: out of range`), { kind: "usage", file: this.name });
    }
    const at = this.#base + this.dataOffset;
    if (description(this).dataLength === null) {
      this.#objects ??= this.#source.read(at, this.#source.byteLength).then((bytes) =>
        arrayOfHeader(description(this), bytes, this.#options),
      );
      const whole = await this.#objects;
      if (start === 0 && end === n) return whole;
      // The rows of the values in C order (a Fortran-order array's put in it first).
      let values = /** @type {unknown[]} */ (whole.data);
      if (whole.fortranOrder && whole.shape.filter((/** @type {number} */ d) => d > 1).length > 1) values = reorder(values, whole.shape, 1, true);
      const rest = whole.shape.slice(1);
      const per = product(rest);
      return load(save({ dtype: "|O", shape: [end - start, ...rest], data: values.slice(start * per, end * per) }), this.#options);
    }
    const rest = this.shape.slice(1);
    const shape = this.shape.length === 0 ? [] : [end - start, ...rest];
    // The rows' header first: rows this module cannot hold (2 GiB or more, as `read()` of
    // a 4 GiB file asks) are refused before any byte is read.
    const header = encodeHeader(this.descr, shape, this.fortranOrder, undefined, { file: this.name });
    const rowBytes = product(rest) * this.dtype.itemsize;
    if (!this.fortranOrder || rest.every((/** @type {number} */ d) => d === 1) || this.shape.length < 2) {
      const bytes = await this.#source.read(at + start * rowBytes, at + end * rowBytes);
      return arrayOf(this.descr, shape, this.fortranOrder, bytes, this.#options, header);
    }
    // Fortran order: element (i, c) of the rows' c-th column of the array's flattened
    // other axes is at i + n c; the rows' part of each column is one range.
    const itemsize = this.dtype.itemsize;
    const columns = product(rest);
    const take = (end - start) * itemsize;
    const out = new Uint8Array(columns * take);
    /** @type {[number, number, number[]][]} */
    const reads = [];
    for (let c = 0; c < columns; c++) {
      const from = at + (start + n * c) * itemsize;
      const last = reads[reads.length - 1];
      if (last && from - last[1] <= GAP) {
        last[1] = from + take;
        last[2].push(c);
      } else reads.push([from, from + take, [c]]);
    }
    for (let i = 0; i < reads.length; i += PARALLEL) {
      await Promise.all(
        reads.slice(i, i + PARALLEL).map(async ([from, to, cols]) => {
          const bytes = await this.#source.read(from, to);
          for (const c of cols) {
            const offset = at + (start + n * c) * itemsize - from;
            out.set(bytes.subarray(offset, offset + take), c * take);
          }
        }),
      );
    }
    return arrayOf(this.descr, shape, true, out, this.#options, header);
  }

  /**
   * NumPy's basic indexing, `a[...]`, read by ranges: `index` has an entry per axis (missing
   * trailing ones mean the whole axis): a number (that index, the axis dropped; negative
   * counts from the end), `null` (the whole axis) or `[start, stop, step]` (0 <= start <=
   * stop <= the axis's length, step >= 1). The result is in C order, of the kept axes'
   * lengths. Only the selected elements' bytes are read: runs closer than 64 KiB are one
   * read of at most 16 MiB, 8 reads in flight, in C or Fortran order alike. An object array is read
   * whole (its data is one pickle).
   * @param {readonly (number | null | readonly [number, number, number?])[]} index
   * @param {{signal?: AbortSignal}} [options]
   * @returns {Promise<import("./array.js").NpyArray>}
   */
  async select(index, { signal } = {}) {
    const shape = this.shape;
    const axes = selection(shape, index, this.name);
    const kept = axes.filter((a) => a.kept).map((a) => a.count);
    const objects = description(this).dataLength === null;
    // The storage's axes from slowest to fastest (an object array's values keep the file's
    // order too), and each one's stride in elements.
    const order = shape.map((_, i) => (this.fortranOrder ? shape.length - 1 - i : i));
    /** @type {number[]} */
    const strides = new Array(shape.length);
    for (let k = order.length - 1, s = 1; k >= 0; k--) {
      strides[order[k]] = s;
      s *= shape[order[k]];
    }
    // The output's strides (C order over the kept axes), 0 for a dropped axis.
    /** @type {number[]} */
    const outStrides = new Array(shape.length).fill(0);
    for (let a = shape.length - 1, s = 1; a >= 0; a--) {
      if (axes[a].kept) {
        outStrides[a] = s;
        s *= axes[a].count;
      }
    }
    const total = product(kept);
    // The pieces: per combination of the indices of every axis but the fastest (the last
    // fastest), a run of `count` elements `step` apart. Computed from their number, never
    // listed: a column of a long matrix is millions of them.
    const outer = order.slice(0, -1);
    const pieceCount = total === 0 ? 0 : product(outer.map((a) => axes[a].count));
    let base = 0;
    for (const a of order) base += axes[a].start * strides[a];
    /** Piece p's first element in storage and its place in the result, in elements. */
    const piece = (/** @type {number} */ p) => {
      let from = base;
      let to = 0;
      for (let k = outer.length - 1; k >= 0; k--) {
        const a = outer[k];
        const i = p % axes[a].count;
        p = (p - i) / axes[a].count;
        from += i * axes[a].step * strides[a];
        to += i * outStrides[a];
      }
      return [from, to];
    };
    const fast = order.length === 0 ? -1 : order[order.length - 1];
    const count = fast < 0 ? 1 : axes[fast].count;
    const step = fast < 0 ? 1 : axes[fast].step * strides[fast];
    const outStep = fast < 0 ? 0 : outStrides[fast];
    if (objects) {
      const whole = await this.rows(0, this.rowCount);
      abortIf(signal);
      const values = /** @type {unknown[]} */ (whole.data);
      const out = new Array(total);
      for (let p = 0; p < pieceCount; p++) {
        const [from, to] = piece(p);
        for (let k = 0; k < count; k++) out[to + k * outStep] = values[from + k * step];
      }
      return load(save({ dtype: "|O", shape: kept, data: out }), this.#options);
    }
    const itemsize = this.dtype.itemsize;
    const at = this.#base + this.dataOffset;
    // The result's header before its bytes: a selection this module cannot hold (2 GiB or
    // more, as all of a 4 GiB image) is refused before anything is allocated or read.
    const header = encodeHeader(this.descr, kept, false, undefined, { file: this.name });
    const out = new Uint8Array(total * itemsize);
    // A piece's elements span from its first to its last; a stride wider than GAP makes
    // each element a piece of its own (a part, below).
    const split = count > 1 && step * itemsize > GAP;
    const span = split ? itemsize : ((count - 1) * step + 1) * itemsize;
    const each = split ? 1 : count;
    const parts = split ? pieceCount * count : pieceCount;
    /** Part q's first byte in the file, and its first element's place in the result. */
    const partAt = (/** @type {number} */ q) => {
      const k = split ? q % count : 0;
      const [from, to] = piece(split ? (q - k) / count : q);
      return [at + (from + k * step) * itemsize, to + k * outStep];
    };
    // The reads, made as workers ask for them: parts in storage order, joined while the gap
    // to the next is at most GAP and the read spans at most MAX_READ (more when one part does).
    let nextPart = 0;
    const nextRead = () => {
      if (nextPart >= parts) return null;
      const first = nextPart;
      const from = partAt(first)[0];
      let to = from + span;
      for (nextPart++; nextPart < parts; nextPart++) {
        const start = partAt(nextPart)[0];
        if (start - to > GAP || start + span - from > MAX_READ) break;
        to = start + span;
      }
      return { from, to, first, end: nextPart };
    };
    const stepBytes = step * itemsize;
    const outStepBytes = outStep * itemsize;
    const contiguous = each === 1 || (stepBytes === itemsize && outStepBytes === itemsize);
    const worker = async () => {
      for (let read = nextRead(); read !== null; read = nextRead()) {
        abortIf(signal);
        const { from, to, first, end } = read;
        const bytes = await this.#source.read(from, to);
        abortIf(signal);
        for (let q = first; q < end; q++) {
          const [start, place] = partAt(q);
          const src = start - from;
          const dst = place * itemsize;
          if (contiguous) out.set(bytes.subarray(src, src + each * itemsize), dst);
          else for (let k = 0; k < each; k++) out.set(bytes.subarray(src + k * stepBytes, src + k * stepBytes + itemsize), dst + k * outStepBytes);
        }
      }
    };
    abortIf(signal);
    await Promise.all(Array.from({ length: Math.min(PARALLEL, Math.max(1, parts)) }, worker));
    return arrayOf(this.descr, kept, false, out, this.#options, header);
  }

  /** Closes the file, when `open` opened it (a path). */
  async close() {
    await this.#source.close();
  }
}

/**
 * @typedef {object} Axis one axis of a selection
 * @property {number} start
 * @property {number} step
 * @property {number} count the indices taken
 * @property {boolean} kept whether the result has this axis
 */

/**
 * `index` checked against `shape`: an Axis each.
 * @param {readonly number[]} shape
 * @param {readonly (number | null | readonly [number, number, number?])[]} index
 * @param {string | undefined} name
 * @returns {Axis[]}
 */
function selection(shape, index, name) {
  const fail = (/** @type {string} */ why) => new NpyError(reading(name, `select: ${why}`), { kind: "usage", file: name });
  if (!Array.isArray(index)) throw fail("the index is an array with an entry per axis");
  if (index.length > shape.length) throw fail(`${index.length} indices for an array of ${shape.length} dimension${shape.length === 1 ? "" : "s"}`);
  return shape.map((dim, a) => {
    const e = index[a];
    if (e === null || e === undefined) return { start: 0, step: 1, count: dim, kept: true };
    if (typeof e === "number") {
      if (!Number.isInteger(e) || e < -dim || e >= dim) throw fail(`index ${e} is out of bounds for axis ${a} with size ${dim}`);
      return { start: e < 0 ? e + dim : e, step: 1, count: 1, kept: false };
    }
    if (!Array.isArray(e) || e.length < 2 || e.length > 3) throw fail(`axis ${a}: an entry is a number, null or [start, stop, step]`);
    const [start, stop, step = 1] = e;
    if (![start, stop, step].every(Number.isInteger) || step < 1 || start < 0 || start > stop || stop > dim) {
      throw fail(`axis ${a}: [${e.join(", ")}] is not 0 <= start <= stop <= ${dim} with step >= 1`);
    }
    return { start, step, count: Math.ceil((stop - start) / step), kept: true };
  });
}

/**
 * Throws the signal's reason once it is aborted.
 * @param {AbortSignal | undefined} signal
 */
function abortIf(signal) {
  if (signal?.aborted) throw signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

/** An `.npz` archive opened by `open`: its directory now, its members when asked for. */
export class NpzFile extends Members {
  /** @type {import("./source.js").Source} */ #source;
  /** @type {OpenOptions} */ #options;

  /**
   * @param {import("./source.js").Source} source
   * @param {import("./npz.js").MemberInfo[]} members
   * @param {OpenOptions} options
   */
  constructor(source, members, options) {
    super(members, options);
    this.#source = source;
    this.#options = options;
  }

  get kind() {
    return /** @type {const} */ ("npz");
  }
  /** What errors call the archive. */
  get name() {
    return this.#options.name;
  }
  /** The archive's length in bytes. */
  get byteLength() {
    return this.#source.byteLength;
  }

  /**
   * Array `name`, read whole: decompressed as a stream, its size and CRC-32 checked.
   * @param {string} name
   * @param {{onProgress?: (done: number, total: number) => void}} [options] told the stored bytes read so far, and of how many
   */
  async get(name, { onProgress } = {}) {
    const info = this.member(name);
    const bytes = await runAsync(memberBytes(info, this.#options, onProgress), this.#source);
    return loadMember(bytes, info, this.#options);
  }

  /**
   * Member `name` as an NpyFile: a stored member's rows are then read by ranges (not
   * checked against its CRC-32, which covers the whole member); a compressed member is
   * decompressed whole first (and checked), as `get` does.
   * @param {string} name
   * @param {{onProgress?: (done: number, total: number) => void}} [options]
   */
  async open(name, { onProgress } = {}) {
    const info = this.member(name);
    const named = { ...this.#options, name: this.#options.name };
    /** @type {import("./source.js").Source} */
    let source;
    let base = 0;
    if (info.compression === "stored") {
      source = this.#source;
      base = info.dataStart;
    } else {
      source = memory(await runAsync(memberBytes(info, this.#options, onProgress), this.#source), this.#options.name);
    }
    const length = info.size;
    const header = await runAsync(readHeader(base, length, named, true, { file: named.name, member: info.member }), source);
    const member = { ...source, byteLength: base + length, close: async () => {} };
    return new NpyFile(member, header, base, named);
  }

  /** Closes the archive, when `open` opened it (a path). */
  async close() {
    await this.#source.close();
  }
}
