// A static HTTP server on 127.0.0.1 for the tests of reads by URL: it serves files from a
// directory and honours `Range: bytes=a-b` (206 with Content-Range), `If-Match` (412 when
// the ETag differs) and logs every request, so a test can count the bytes a read fetched.
// `close()` stops it; tests call it in a `finally` or an `after` hook.

import { readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";

const TYPES = { ".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html", ".wasm": "application/wasm", ".json": "application/json" };

/**
 * Serves `root` on a free port of 127.0.0.1.
 * @param {string} root
 * @param {{ranges?: boolean}} [options] `ranges: false` makes a server that ignores Range headers (answers 200 with the whole file)
 * @returns {Promise<{url: string, log: {path: string, range: string | null, status: number, bytes: number}[], close(): Promise<void>}>}
 */
export async function serve(root, { ranges = true } = {}) {
  /** @type {{path: string, range: string | null, status: number, bytes: number}[]} */
  const log = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const file = normalize(join(root, path));
    const answer = (/** @type {number} */ status, /** @type {Buffer | string} */ body, /** @type {Record<string, string>} */ headers = {}) => {
      log.push({ path, range: req.headers.range ?? null, status, bytes: body.length });
      res.writeHead(status, headers);
      res.end(body);
    };
    let stat;
    try {
      if (!file.startsWith(normalize(root) + sep)) throw new Error("outside");
      stat = statSync(file);
      if (!stat.isFile()) throw new Error("not a file");
    } catch {
      answer(404, "not found");
      return;
    }
    const etag = `"${stat.size}-${stat.mtimeMs}"`;
    const type = TYPES[/** @type {keyof typeof TYPES} */ (extname(file))] ?? "application/octet-stream";
    const body = readFileSync(file);
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? "");
    if (!ranges || !range) {
      answer(200, body, { "Content-Type": type, ETag: etag, "Content-Length": String(body.length) });
      return;
    }
    if (req.headers["if-match"] !== undefined && req.headers["if-match"] !== etag) {
      answer(412, "precondition failed");
      return;
    }
    let [start, end] = [range[1], range[2]];
    let from = start === "" ? Math.max(0, body.length - Number(end)) : Number(start);
    let to = start === "" || end === "" ? body.length - 1 : Math.min(Number(end), body.length - 1);
    if (from >= body.length || from > to) {
      answer(416, "", { "Content-Range": `bytes */${body.length}` });
      return;
    }
    answer(206, body.subarray(from, to + 1), {
      "Content-Type": type,
      "Content-Range": `bytes ${from}-${to}/${body.length}`,
      "Accept-Ranges": "bytes",
      ETag: etag,
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}`,
    log,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}
