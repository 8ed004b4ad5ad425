// Where bytes come from for `open`: one small interface, `{name, byteLength, read(start,
// end): Promise<Uint8Array>, close()}` (hyparquet's AsyncBuffer, with a name for errors),
// and an adapter each for bytes in memory, a Blob or File, a Node FileHandle or path, a
// URL read by HTTP range requests, and any `{byteLength, slice(start, end)}`.

import { NpyError, reading } from "./errors.js";
import { asBytes, describe } from "./bytes.js";

/**
 * @typedef {object} Source
 * @property {string | undefined} name what errors call it: the file's name or path, the URL
 * @property {number} byteLength
 * @property {(start: number, end: number) => Promise<Uint8Array>} read bytes `start` to `end` (exactly those)
 * @property {Uint8Array} [bytes] all of them, when they are in memory
 * @property {() => Promise<void>} close releases what the source opened (a file)
 */

/**
 * @typedef {object} SourceOptions
 * @property {string} [name] what errors call the source (default: a File's name, the path or URL)
 * @property {RequestInit} [fetchOptions] for a URL: what `fetch` is given besides the Range header (credentials, headers)
 */

/** Bytes of a URL read by the first request: an `.npy` header, or a zip's first bytes. */
const FIRST = 64 << 10;

/**
 * A Source for `input`.
 * @param {unknown} input
 * @param {SourceOptions} options
 * @returns {Promise<Source>}
 */
export async function sourceOf(input, options) {
  if (input instanceof ArrayBuffer || ArrayBuffer.isView(input)) {
    return memory(asBytes(input), options.name);
  }
  if (typeof Blob === "function" && input instanceof Blob) {
    const name = options.name ?? /** @type {any} */ (input).name;
    return {
      name,
      byteLength: input.size,
      read: async (start, end) => exactly(new Uint8Array(await input.slice(start, end).arrayBuffer()), start, end, name),
      close: async () => {},
    };
  }
  if (input instanceof URL || typeof input === "string") {
    const text = String(input);
    if (/^https?:/i.test(text) || typeof process === "undefined" || !process.versions?.node) {
      return http(text, options);
    }
    const fs = await import("node:fs/promises");
    let handle;
    try {
      handle = await fs.open(text.startsWith("file:") ? new URL(text) : text, "r");
    } catch (e) {
      throw new NpyError(reading(options.name ?? text, /** @type {Error} */ (e).message), { kind: "io", file: options.name ?? text, cause: e });
    }
    return fileHandle(handle, options.name ?? text, true);
  }
  if (isFileHandle(input)) return fileHandle(input, options.name, false);
  const any = /** @type {any} */ (input);
  if (any !== null && typeof any === "object" && typeof any.byteLength === "number") {
    const name = options.name ?? any.name;
    if (typeof any.read === "function") {
      return { name, byteLength: any.byteLength, read: async (s, e) => exactly(asBytes(await any.read(s, e)), s, e, name), close: async () => {} };
    }
    if (typeof any.slice === "function") {
      return { name, byteLength: any.byteLength, read: async (s, e) => exactly(asBytes(await any.slice(s, e)), s, e, name), close: async () => {} };
    }
  }
  throw new NpyError(
    `open takes bytes, a Blob or File, a URL, a path or FileHandle (in Node), or {byteLength, slice(start, end)}; not ${describe(input)}`,
    { kind: "usage" },
  );
}

/**
 * @param {Uint8Array} bytes
 * @param {string | undefined} name
 * @returns {Source}
 */
export function memory(bytes, name) {
  return { name, byteLength: bytes.length, bytes, read: async (s, e) => bytes.subarray(s, e), close: async () => {} };
}

/** @param {any} v */
function isFileHandle(v) {
  return v !== null && typeof v === "object" && typeof v.fd === "number" && typeof v.read === "function" && typeof v.stat === "function";
}

/**
 * A Node FileHandle as a Source; `owned`: opened here, so closed by `close`.
 * @param {any} handle
 * @param {string | undefined} name
 * @param {boolean} owned
 * @returns {Promise<Source>}
 */
async function fileHandle(handle, name, owned) {
  const { size } = await handle.stat();
  return {
    name,
    byteLength: size,
    read: async (start, end) => {
      const out = new Uint8Array(end - start);
      let got = 0;
      while (got < out.length) {
        const { bytesRead } = await handle.read(out, got, out.length - got, start + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return exactly(out.subarray(0, got), start, end, name);
    },
    close: async () => {
      if (owned) await handle.close();
    },
  };
}

/**
 * `bytes`, checked to be all of `start` to `end` (a file that shrank, a server that sent
 * less, gives fewer).
 * @param {Uint8Array} bytes
 * @param {number} start
 * @param {number} end
 * @param {string | undefined} name
 */
function exactly(bytes, start, end, name) {
  if (bytes.length !== end - start) {
    throw new NpyError(reading(name, `asked for bytes ${start} to ${end}, got ${bytes.length}: the source is shorter than it said, or changed`), {
      kind: "truncated",
      file: name,
    });
  }
  return bytes;
}

/**
 * A URL as a Source, by HTTP range requests pinned to the version first read (its ETag,
 * or else its Last-Modified date): a file that changes between reads is an error, not a
 * mix of two files. A server that ignores ranges sends the whole file at once.
 * @param {string} url
 * @param {SourceOptions} options
 * @returns {Promise<Source>}
 */
async function http(url, options) {
  const name = options.name ?? url;
  const fail = (/** @type {string} */ why, /** @type {string} */ kind = "io", /** @type {unknown} */ cause = undefined) =>
    new NpyError(reading(name, why), { kind, file: name, cause });
  /** @param {Record<string, string>} headers */
  const get = async (headers) => {
    const init = options.fetchOptions ?? {};
    try {
      const merged = new Headers(init.headers ?? {});
      for (const [key, value] of Object.entries(headers)) merged.set(key, value);
      return await fetch(url, { ...init, headers: merged });
    } catch (e) {
      throw fail(`the request failed: ${/** @type {Error} */ (e).message}`, "io", e);
    }
  };
  const first = await get({ Range: `bytes=0-${FIRST - 1}` });
  if (first.status === 200) {
    return memory(new Uint8Array(await first.arrayBuffer()), name);
  }
  if (first.status === 416) {
    // Range Not Satisfiable for bytes=0-: an empty file.
    return memory(new Uint8Array(0), name);
  }
  if (first.status !== 206) throw fail(`HTTP ${first.status} ${first.statusText}`.trim());
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(first.headers.get("Content-Range") ?? "");
  if (!range) {
    throw fail(
      "the server answered a range request without a Content-Range header giving the file's length (a server on another origin must list Content-Range in Access-Control-Expose-Headers)",
    );
  }
  const byteLength = Number(range[3]);
  const head = new Uint8Array(await first.arrayBuffer());
  const etag = first.headers.get("ETag");
  const modified = first.headers.get("Last-Modified");
  /** @type {Record<string, string>} */
  const pin = etag && !etag.startsWith("W/") ? { "If-Match": etag } : modified ? { "If-Unmodified-Since": modified } : {};
  return {
    name,
    byteLength,
    read: async (start, end) => {
      if (end <= head.length) return head.subarray(start, end);
      if (start === end) return new Uint8Array(0);
      const res = await get({ Range: `bytes=${start}-${end - 1}`, ...pin });
      if (res.status === 412) throw fail("the file changed since it was opened (its ETag or date is not the one first read)", "io");
      if (res.status !== 206) throw fail(`HTTP ${res.status} ${res.statusText} for bytes ${start} to ${end}`.trim());
      const got = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(res.headers.get("Content-Range") ?? "");
      if (!got || Number(got[1]) !== start || Number(got[3]) !== byteLength) {
        throw fail(`the server sent another range than bytes ${start} to ${end} of ${byteLength}`);
      }
      return exactly(new Uint8Array(await res.arrayBuffer()), start, end, name);
    },
    close: async () => {},
  };
}
