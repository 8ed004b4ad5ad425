// Archives: `loadNpz` over bytes in memory, the archive half of `open` over ranged reads,
// and `NpzWriter`. What reads an archive is written once, as generators that yield the
// byte ranges they need (`[start, end]`) and are sent the bytes (bytes.js's `runSync`
// answers from memory, `runAsync` from a ranged source). The directory's checks and each
// member's decompression, size and CRC-32 checks are npy-core's.

import { NpyError, reading } from "./errors.js";
import { asBytes, describe, runSync } from "./bytes.js";
import { load } from "./array.js";
import { save } from "./save.js";
import { bound, call } from "./wasm.js";

/** Bytes read from an archive's end first: its end record with the longest comment, and a directory of about a thousand members. */
export const NPZ_TAIL = (64 << 10) + 22;
/** Bytes read at a time where the directory needs more than it was given. */
const BLOCK = 256 << 10;
/** Bytes of a member's stored data pushed to its decoder at a time. */
export const PIECE = 4 << 20;
/** Bytes a member's decoder gives at a time at most. */
const STEP = 1 << 20;
/** Members claiming at most this many bytes get their buffer at once. */
const UP_FRONT = 1 << 30;

/** @typedef {import("../index.d.ts").NpzOptions} NpzOptions */

/** @typedef {import("../index.d.ts").MemberInfo} MemberInfo */

/**
 * Reads and checks an archive's directory: its end first, then every member's local header
 * at once (npy-core says where they are), then npy-core's checks over what was fetched;
 * what they still need (a local header longer than expected, a directory beyond the end
 * fetched) is fetched a block at a time.
 * @param {number} length
 * @param {NpzOptions} options
 * @param {((start: number, end: number) => Uint8Array) | undefined} readSync
 * @returns {Generator<import("./bytes.js").Request, MemberInfo[], Uint8Array[]>}
 */
export function* directory(length, options, readSync) {
  const where = { file: options.name };
  const opener = call(
    () => new bound.NpzOpener(length, options.name, options.maxEntries, options.maxInflatedSize, options.maxHeaderSize),
    where,
  );
  try {
    const tailStart = Math.max(0, length - NPZ_TAIL);
    const [tail] = yield [[tailStart, length]];
    call(() => opener.add(tailStart, tail), where);
    if (readSync === undefined) {
      for (;;) {
        const answer = call(() => JSON.parse(opener.headerRanges()), where);
        /** @type {import("./bytes.js").Request} */
        const ranges = answer.ranges ?? [[answer.need, Math.min(length, answer.need + BLOCK)]];
        if (ranges.length > 0) {
          const got = yield ranges;
          ranges.forEach(([start], i) => call(() => opener.add(start, got[i]), where));
        }
        if (answer.ranges !== undefined) break;
      }
    }
    for (;;) {
      const answer = call(() => JSON.parse(opener.open(readSync)), where);
      if (answer.members !== undefined) return answer.members;
      const end = Math.min(length, answer.need + BLOCK);
      const [more] = yield [[answer.need, end]];
      call(() => opener.add(answer.need, more), where);
    }
  } finally {
    opener.free();
  }
}

/**
 * A member's bytes as read (decompressed, its size and CRC-32 checked).
 * @param {MemberInfo} info
 * @param {NpzOptions} options
 * @param {((done: number, total: number) => void) | undefined} onProgress
 * @returns {Generator<import("./bytes.js").Request, Uint8Array, Uint8Array[]>}
 */
export function* memberBytes(info, options, onProgress) {
  const where = { file: options.name, member: info.member };
  const stream = call(() => new bound.MemberStream(info.member, info.compression, info.size, info.crc32, options.name), where);
  try {
    // The claimed size is room enough. Up to a GiB it is allocated at once (pages a member
    // does not fill are never touched); beyond, what is allocated grows with what the data
    // gives, from 16 MiB past the stored size, so a member that claims more than it holds
    // costs no more than its bytes.
    const first = info.size <= UP_FRONT ? info.size : Math.min(info.size, info.compressedSize + (16 << 20));
    let out = bytes(first, info, options);
    let made = 0;
    const pull = () => {
      for (;;) {
        if (out.length < Math.min(info.size, made + STEP)) {
          const grown = bytes(Math.min(info.size, Math.max(2 * out.length, made + STEP)), info, options);
          grown.set(out.subarray(0, made));
          out = grown;
        }
        const m = call(() => stream.pull(out, made), where);
        if (m === 0) return;
        made += m;
      }
    };
    for (let at = 0; at < info.compressedSize; at += PIECE) {
      const end = Math.min(info.compressedSize, at + PIECE);
      const [piece] = yield [[info.dataStart + at, info.dataStart + end]];
      call(() => stream.push(piece), where);
      pull();
      onProgress?.(end, info.compressedSize);
    }
    pull();
    call(() => stream.finish(), where);
    return out.length === made ? out : out.subarray(0, made);
  } finally {
    stream.free();
  }
}

/**
 * A buffer of `n` bytes for member `info`: an NpyError naming it when this platform cannot
 * allocate that much (a member larger than an ArrayBuffer holds, or than memory).
 * @param {number} n
 * @param {MemberInfo} info
 * @param {NpzOptions} options
 */
function bytes(n, info, options) {
  try {
    return new Uint8Array(n);
  } catch (e) {
    throw new NpyError(reading(options.name, `member '${info.member}': ${info.size} bytes do not fit in memory here (${/** @type {Error} */ (e).message})`), {
      kind: "usage",
      file: options.name,
      member: info.member,
      cause: e,
    });
  }
}

/**
 * An `.npz` archive in memory, its directory read and checked now, members read when
 * asked for (`get`), as `np.load` gives an `NpzFile`.
 * @param {ArrayBuffer | ArrayBufferView} input
 * @param {NpzOptions} [options]
 * @returns {NpzArchive}
 */
export function loadNpz(input, options = {}) {
  const bytes = asBytes(input);
  const members = runSync(directory(bytes.length, options, (start, end) => bytes.subarray(start, end)), bytes);
  return new NpzArchive(members, options, (info) => runSync(memberBytes(info, options, undefined), bytes));
}

/** What an archive in memory (NpzArchive) and one opened by ranges (NpzFile) share: its directory. */
export class Members {
  /** @type {MemberInfo[]} */ #members;
  /** @type {NpzOptions} */ #options;

  /**
   * @param {MemberInfo[]} members
   * @param {NpzOptions} options
   */
  constructor(members, options) {
    this.#members = members;
    this.#options = options;
  }

  /** The arrays' names, as `np.load(f).files`: member names without `.npy`, in archive order. */
  get names() {
    return this.#members.map((m) => m.name);
  }

  /** Each member as the directory describes it, in archive order. */
  get members() {
    return this.#members.map((m) => ({ ...m }));
  }

  /** @param {string} name */
  has(name) {
    return this.#members.some((m) => m.name === name);
  }

  /**
   * Member `name`'s directory entry, or an NpyError listing the names there are.
   * @param {string} name
   */
  member(name) {
    const info = this.#members.find((m) => m.name === name);
    if (info === undefined) {
      const known = this.#members.map((m) => `'${m.name}'`).join(", ");
      throw new NpyError(reading(this.#options.name, `no member '${name}' (members: ${known || "none"})`), {
        kind: "npz",
        file: this.#options.name,
      });
    }
    return info;
  }
}

/** An archive's members by name, each read (and cached) when first asked for. */
export class NpzArchive extends Members {
  /** @type {NpzOptions} */ #options;
  /** @type {(info: MemberInfo) => Uint8Array} */ #read;
  /** @type {Map<string, import("./array.js").NpyArray>} */ #cache = new Map();

  /**
   * @param {MemberInfo[]} members
   * @param {NpzOptions} options
   * @param {(info: MemberInfo) => Uint8Array} read
   */
  constructor(members, options, read) {
    super(members, options);
    this.#options = options;
    this.#read = read;
  }

  /**
   * Array `name`, read now (decompressed and checked) or from an earlier `get`.
   * @param {string} name
   */
  get(name) {
    const cached = this.#cache.get(name);
    if (cached !== undefined) return cached;
    const info = this.member(name);
    const array = loadMember(this.#read(info), info, this.#options);
    this.#cache.set(name, array);
    return array;
  }

  /** `[name, array]` for every member, each read as `get` reads it. */
  *[Symbol.iterator]() {
    for (const name of this.names) yield /** @type {[string, import("./array.js").NpyArray]} */ ([name, this.get(name)]);
  }
}

/**
 * A member's bytes as an array, errors naming the archive and member.
 * @param {Uint8Array} bytes
 * @param {MemberInfo} info
 * @param {NpzOptions} options
 */
export function loadMember(bytes, info, options) {
  try {
    return load(bytes, { ...options, name: options.name });
  } catch (e) {
    if (e instanceof NpyError && e.member === undefined) {
      const message = e.message.replace(/^(reading '[^']*': )?/, (m) => `${m}member '${info.member}': `);
      throw new NpyError(message, { kind: e.kind, file: options.name, member: info.member, cause: e });
    }
    throw e;
  }
}

/**
 * Writes an `.npz` archive in memory, an array at a time: with Zstandard members by
 * default (`"zstd"`, which `np.load` reads on Python 3.14 and later, and on 3.11 to 3.13
 * after `import zipfile_zstd`), as `np.savez_compressed` (`"deflate"`) or as `np.savez`
 * (`"stored"`).
 */
export class NpzWriter {
  /** @type {any} */ #writer;
  #compression;
  #level;

  /**
   * @param {{compression?: import("../index.d.ts").Compression, level?: number}} [options] every member's compression unless `add` says otherwise: `"zstd"` (the default, as Python's `npy.NpzWriter`), `"deflate"` (`np.savez_compressed`'s) or `"stored"` (`np.savez`'s); levels at their defaults unless given (zstd 8, of 1 to 22; deflate 6, of 1 to 9)
   */
  constructor({ compression = "zstd", level } = {}) {
    this.#compression = compression;
    this.#level = level;
    this.#writer = call(() => new bound.NpzWriter());
  }

  /**
   * Adds array `name` (member `name.npy`): anything `save` takes.
   * @param {string} name
   * @param {Parameters<typeof save>[0]} array
   * @param {{compression?: import("../index.d.ts").Compression, level?: number}} [options]
   * @returns {this}
   */
  add(name, array, { compression = this.#compression, level = compression === this.#compression ? this.#level : undefined } = {}) {
    if (this.#writer === undefined) throw new NpyError("the archive is finished: make a new NpzWriter", { kind: "usage" });
    if (typeof name !== "string") throw new NpyError(`a member's name is a string, not ${describe(name)}`, { kind: "usage" });
    const npy = save(array);
    call(() => this.#writer.add(name, npy, compression, level), { member: `${name}.npy` });
    return this;
  }

  /**
   * The archive's bytes; the writer is done.
   * @returns {Uint8Array}
   */
  finish() {
    const writer = this.#writer;
    if (writer === undefined) throw new NpyError("the archive is finished: make a new NpzWriter", { kind: "usage" });
    this.#writer = undefined;
    try {
      return call(() => writer.finish());
    } finally {
      writer.free();
    }
  }
}
