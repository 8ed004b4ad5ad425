// A static HTTP server on 127.0.0.1, for the viewer (`node npy-js/viewer/serve.mjs`, or
// `cargo xtask js --viewer`, serves the package's folder: the page at /viewer/) and for
// the tests' reads by URL. It serves directories at path prefixes (a folder as its
// index.html) and honours `Range: bytes=a-b`, `a-` and `-n` (206 with Content-Range, 416
// past the end), pins versions by a strong ETag (`If-Match` that differs: 412), sends
// `Cache-Control: no-store` so a browser asks for every range, and logs every request
// (method, path, range, If-Match, status, body bytes) so a test can count what a read
// fetched. With `uploads`, `PUT /upload/NAME` stores a body (64 MiB at most) there.
// `close()` stops it and its connections; tests call it in an `after` hook.

import { createReadStream, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".png": "image/png",
};

/**
 * @typedef {{method: string | undefined, path: string, range: string | null, ifMatch: string | null, status: number, bytes: number}} Request
 */

/**
 * Serves `mounts` (`[prefix, directory]`, the first prefix that matches wins).
 * @param {{mounts: [string, string][], uploads?: string, ranges?: boolean, port?: number}} options `ranges: false` makes a server that ignores Range (200, the whole file); `port` 0 (the default) takes a free one
 * @returns {Promise<{url: string, log: Request[], close(): Promise<void>}>}
 */
export async function serve({ mounts, uploads, ranges = true, port = 0 }) {
  /** @type {Request[]} */
  const log = [];
  const server = createServer((req, res) => {
    /** @type {Request} */
    const entry = { method: req.method, path: "", range: req.headers.range ?? null, ifMatch: /** @type {string | undefined} */ (req.headers["if-match"]) ?? null, status: 0, bytes: 0 };
    log.push(entry);
    const send = (/** @type {number} */ status, /** @type {Record<string, string>} */ headers = {}, /** @type {string | undefined} */ body = undefined) => {
      entry.status = status;
      res.writeHead(status, { "Cache-Control": "no-store", ...headers });
      res.end(body);
    };
    try {
      entry.path = decodeURIComponent(new URL(req.url ?? "/", "http://127.0.0.1").pathname);
      if (req.method === "PUT" && uploads !== undefined) return upload(req, entry, uploads, send);
      if (req.method !== "GET" && req.method !== "HEAD") return send(405, { Allow: "GET, HEAD" });
      const mount = mounts.find(([p]) => entry.path.startsWith(p));
      if (mount === undefined) return send(404, { "Content-Type": "text/plain" }, "not found");
      const root = resolve(mount[1]);
      let file = resolve(root, entry.path.slice(mount[0].length));
      if (file !== root && !file.startsWith(root + sep)) return send(403);
      // A folder is its index.html, at a path that ends in "/" (so its page's relative
      // links resolve inside it).
      if (existsSync(file) && statSync(file).isDirectory()) {
        if (!entry.path.endsWith("/")) return send(301, { Location: `${entry.path}/` });
        file = join(file, "index.html");
      }
      const stat = existsSync(file) ? statSync(file) : undefined;
      if (!stat?.isFile()) return send(404, { "Content-Type": "text/plain" }, "not found");
      const size = stat.size;
      const etag = `"${size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
      /** @type {Record<string, string>} */
      const headers = {
        ETag: etag,
        "Last-Modified": stat.mtime.toUTCString(),
        "Content-Type": TYPES[/** @type {keyof typeof TYPES} */ (extname(file))] ?? "application/octet-stream",
        ...(ranges ? { "Accept-Ranges": "bytes" } : {}),
      };
      let [start, end, status] = [0, size - 1, 200];
      const range = /^bytes=(\d*)-(\d*)$/.exec(entry.range ?? "");
      if (ranges && range && (range[1] !== "" || range[2] !== "")) {
        const ifMatch = entry.ifMatch;
        if (ifMatch && ifMatch.trim() !== "*" && !ifMatch.split(",").map((t) => t.trim()).includes(etag)) return send(412, headers);
        // bytes=a-b, bytes=a- (to the end), bytes=-n (the last n); other forms get the whole file.
        if (range[1] === "") [start, end] = [Math.max(0, size - Number(range[2])), size - 1];
        else [start, end] = [Number(range[1]), range[2] === "" ? size - 1 : Math.min(Number(range[2]), size - 1)];
        if (start >= size || end < start) return send(416, { ...headers, "Content-Range": `bytes */${size}` });
        status = 206;
        headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
      }
      headers["Content-Length"] = String(Math.max(0, end - start + 1));
      entry.status = status;
      res.writeHead(status, { "Cache-Control": "no-store", ...headers });
      if (req.method === "HEAD" || size === 0) return res.end();
      entry.bytes = end - start + 1;
      createReadStream(file, { start, end })
        .on("error", (e) => res.destroy(e))
        .pipe(res);
    } catch (e) {
      send(500, { "Content-Type": "text/plain" }, String(e));
    }
  });
  await new Promise((ok, fail) => server.once("error", fail).listen(port, "127.0.0.1", () => ok(undefined)));
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}`,
    log,
    close: async () => {
      server.closeAllConnections();
      await new Promise((ok) => {
        const timer = setTimeout(ok, 5000);
        server.close(() => {
          clearTimeout(timer);
          ok(undefined);
        });
      });
    },
  };
}

/**
 * `PUT /upload/NAME`: the body (64 MiB at most) into `dir`/NAME.
 * @param {import("node:http").IncomingMessage} req
 * @param {Request} entry
 * @param {string} dir
 * @param {(status: number) => void} send
 */
function upload(req, entry, dir, send) {
  const name = /^\/upload\/([\w.-]+)$/.exec(entry.path)?.[1];
  if (!name || name.startsWith(".")) return send(403);
  /** @type {Buffer[]} */
  const chunks = [];
  let length = 0;
  req.on("data", (chunk) => {
    length += chunk.length;
    if (length > 64 << 20) req.destroy();
    else chunks.push(chunk);
  });
  req.on("end", () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, name), Buffer.concat(chunks));
    entry.bytes = length;
    send(201);
  });
}

/**
 * `node npy-js/viewer/serve.mjs [--port N] [--files DIR]`: serves the package's folder
 * (the viewer at /viewer/) and, with `--files`, a directory at /files/ (so the page opens
 * its files by URL, by ranges), until stopped.
 */
async function main() {
  const args = process.argv.slice(2);
  const value = (/** @type {string} */ flag) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const here = dirname(fileURLToPath(import.meta.url));
  /** @type {[string, string][]} */
  const mounts = [["/", resolve(here, "..")]];
  const files = value("--files");
  if (files !== undefined) mounts.unshift(["/files/", resolve(files)]);
  const server = await serve({ mounts, port: Number(value("--port") ?? 8000) });
  console.log(`npy viewer: ${server.url}/viewer/${files === undefined ? "" : `  (files of ${resolve(files)} at ${server.url}/files/)`}`);
  console.log("stop it with Ctrl-C");
  const stop = () => server.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
