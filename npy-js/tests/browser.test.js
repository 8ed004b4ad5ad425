// The package in a real browser: Debian's Chromium, headless, driven by puppeteer-core,
// opens a page (tests/browser/) that imports npy-js from a local server by its browser
// entry (/js/index.js, which fetches the WebAssembly module beside it) and uses it as a web
// page would: corpus files fetched whole, a large file opened as a File and by URL (HTTP
// range requests, which the server logs so the bytes fetched are counted), an archive by
// URL, a Zstandard archive, files that are no NumPy file's, and a record array saved for
// NumPy to read. Values are compared with NumPy's; screenshots of the page's table of
// results go to target/npy-js/browser/.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { serve } from "../viewer/serve.mjs";
import { closeBrowser, launch, withTimeout } from "./chromium.js";
import { CORPUS, ROOT, SCRATCH, canonicalFloat, python } from "./support.js";

/** The package's folder, which the server serves at /. */
const PACKAGE = join(ROOT, "npy-js");
/** The files the test makes, the page's uploads and the screenshots. */
const OUT = join(SCRATCH, "browser");
const HERE = join(PACKAGE, "tests", "browser");

/** Corpus files the page fetches whole and loads. */
const CORPUS_FILES = [
  "record/traces_be.npy",
  "struct/struct_in_subarray.npy",
  "struct/kitchen_sink.npy",
  "string/le_U10.npy",
  // Half floats, which Chromium gives as Float16Arrays (Node 20 has none: the other tests see Float32Arrays).
  "scalar/be_f2.npy",
  "fortran/2x5_be_f2_F.npy",
  "npz/compressed_mixed.npz",
];
/** big.npy: its records, and the rows read by ranges (the first in the first request's bytes, the others past them). */
const BIG_ROWS = 200_000;
const BIG_RANGES = [
  [0, 3],
  [123_456, 124_456],
  [199_990, 200_000],
];
/** big.npz's stored member: its records, and the rows read by ranges. */
const NPZ_ROWS = 100_000;
const NPZ_RANGES = [[50_000, 50_500]];
/** Bytes `open` reads first of a file whose kind it does not know yet (header.js PREFIX). */
const OPEN_FIRST = 4096;
/** Bytes the package's URL source fetches first (source.js: an .npy header, or a zip's first bytes). */
const URL_FIRST = 64 << 10;
/** Bytes an archive's directory is first read from (npz.js NPZ_TAIL). */
const NPZ_TAIL = (64 << 10) + 22;
/** Bytes the directory reads at a time where it needs more, each member's local header included (npz.js BLOCK). */
const NPZ_BLOCK = 256 << 10;


/** NumPy's reading of a file the page uploaded (numpy_read.py). */
function numpyRead(file) {
  try {
    return JSON.parse(execFileSync(python(), [join(HERE, "numpy_read.py"), file], { encoding: "utf8", maxBuffer: 1 << 28 }));
  } catch (e) {
    const hint = /zstd/.test(String(e.stderr)) && /No such file|not found/.test(String(e.stderr)) ? " (the zstd command is missing: apt-get install zstd)" : "";
    assert.fail(`numpy_read.py ${file} failed${hint}:\n${e.stderr ?? e.message}`);
  }
}

/** Bytes the server sent for `path`, from its log: the requests and their total. */
function fetched(log, path) {
  const requests = log.filter((e) => e.path === path);
  return { requests, bytes: requests.reduce((n, e) => n + e.bytes, 0) };
}

describe("npy-js in Chromium", { timeout: 120_000 }, () => {
  let server;
  let origin;
  let log;
  let userDataDir;
  let browser;
  let page;
  let expected;
  let finished = false;
  const pageErrors = [];
  const consoleMessages = [];

  /** Runs the page's check `name` (tests/browser/page.js) on `arg`. */
  const run = (name, arg) => withTimeout(page.evaluate((n, a) => window.checks[n](a), name, arg), 30_000, `the page's check ${name}`);

  // What set-up failed on (Chromium or puppeteer-core missing...): every test fails with it,
  // rather than being cancelled as a failed before hook leaves them.
  let setupError;
  const check = (name, fn) =>
    it(name, async (t) => {
      if (setupError) throw new Error(`set-up failed: ${setupError.message}`, { cause: setupError });
      return fn(t);
    });

  before(
    async () => {
      try {
        await setUp();
      } catch (e) {
        setupError = e;
      }
    },
    { timeout: 90_000 },
  );

  /** The files, the server, Chromium and the page. */
  async function setUp() {
    // The files and NumPy's values of them, made anew each run.
    mkdirSync(OUT, { recursive: true });
    rmSync(join(OUT, "uploads"), { recursive: true, force: true });
    rmSync(join(OUT, "failure.png"), { force: true });
    const spec = join(OUT, "spec.json");
    writeFileSync(
      spec,
      JSON.stringify({ corpus: CORPUS, corpus_files: CORPUS_FILES, big_rows: BIG_ROWS, big_ranges: BIG_RANGES, npz_rows: NPZ_ROWS, npz_ranges: NPZ_RANGES }),
    );
    execFileSync(python(), [join(HERE, "make_files.py"), OUT, spec], { encoding: "utf8" });
    expected = JSON.parse(readFileSync(join(OUT, "expected.json"), "utf8"));

    server = await serve({ mounts: [["/corpus/", CORPUS], ["/scratch/", OUT], ["/", PACKAGE]], uploads: join(OUT, "uploads") });
    ({ url: origin, log } = server);
    userDataDir = mkdtempSync(join(tmpdir(), "npy-js-chromium-"));
    browser = await launch(userDataDir);
    page = await browser.newPage();
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    page.on("console", (m) => consoleMessages.push(`${m.type()}: ${m.text()}`));
    await page.setViewport({ width: 1280, height: 800 });
    await page.goto(`${origin}/tests/browser/index.html`, { waitUntil: "load" });
    await page.waitForFunction(() => window.npyReady || window.npyFailed, { timeout: 20_000 }).catch((e) => {
      throw new Error(`the page did not load (${e.message}); its errors: ${pageErrors.join("; ") || "none"}`);
    });
    const failed = await page.evaluate(() => window.npyFailed);
    assert.equal(failed, undefined, `the page could not import the package from /js/index.js: ${failed}`);
  }

  after(async () => {
    // A screenshot of the page as it was when a check failed, then everything stopped and removed.
    if (page && !finished) {
      await withTimeout(page.screenshot({ path: join(OUT, "failure.png"), fullPage: true }), 10_000, "the failure screenshot").catch(() => {});
    }
    if (browser) await closeBrowser(browser);
    if (server) await server.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  check("imports the package from /js/index.js, its WebAssembly module fetched beside it", () => {
    const got = (path) => log.find((e) => e.path === path && e.status === 200);
    assert.ok(got("/js/index.js"), "GET /js/index.js");
    assert.ok(got("/wasm/npy_js_bg.wasm"), "GET /wasm/npy_js_bg.wasm");
    assert.ok(got("/tests/canonical.js"), "GET /tests/canonical.js");
  });

  check("the test's server answers ranges as the package expects (206, 416, If-Match → 412)", async () => {
    const url = `${origin}/corpus/record/traces_be.npy`;
    const size = statSync(join(CORPUS, "record/traces_be.npy")).size;
    const whole = await fetch(url);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get("accept-ranges"), "bytes");
    const etag = whole.headers.get("etag");
    assert.match(etag, /^"[^"]+"$/);
    assert.equal((await whole.arrayBuffer()).byteLength, size);
    for (const [range, status, contentRange, length] of [
      ["bytes=10-19", 206, `bytes 10-19/${size}`, 10],
      ["bytes=-5", 206, `bytes ${size - 5}-${size - 1}/${size}`, 5],
      [`bytes=${size - 3}-`, 206, `bytes ${size - 3}-${size - 1}/${size}`, 3],
      [`bytes=${size}-`, 416, `bytes */${size}`, 0],
    ]) {
      const res = await fetch(url, { headers: { Range: range, "If-Match": etag } });
      assert.equal(res.status, status, range);
      assert.equal(res.headers.get("content-range"), contentRange, range);
      assert.equal((await res.arrayBuffer()).byteLength, length, range);
    }
    const stale = await fetch(url, { headers: { Range: "bytes=0-9", "If-Match": '"not-this-one"' } });
    assert.equal(stale.status, 412);
    await stale.arrayBuffer();
    const outside = await fetch(`${origin}/corpus/..%2f..%2f..%2fetc%2fpasswd`);
    assert.equal(outside.status, 403);
    await outside.arrayBuffer();
  });

  check("load and loadNpz of corpus files fetched whole give NumPy's values", async () => {
    const got = await run("wholeFiles", expected.corpus);
    for (const file of CORPUS_FILES) {
      const entries = expected.corpus[file];
      assert.deepEqual(Object.keys(got[file]), entries.map((e) => e.member ?? ""), file);
      for (const entry of entries) {
        const array = got[file][entry.member ?? ""];
        const what = `${file} ${entry.member ?? ""}`;
        assert.equal(array.descr, entry.descr, what);
        assert.deepEqual(array.shape, entry.shape, what);
        const want = Object.fromEntries(Object.entries(entry.columns).map(([p, c]) => [p, c.values ?? { error: "invalid_value" }]));
        assert.deepEqual(array.values, want, what);
      }
    }
    assert.ok(Object.values(got["npz/compressed_mixed.npz"]).every((m) => m.compression === "deflate"));
    assert.deepEqual(got["scalar/be_f2.npy"][""].types, { "": "Float16Array" });
    assert.deepEqual(got["fortran/2x5_be_f2_F.npy"][""].types, { "": "Float16Array" });
  });

  check("open(File) reads the header at once and rows by slices of the File", async (t) => {
    const input = await page.$("#file");
    await withTimeout(input.uploadFile(join(OUT, "big.npy")), 20_000, "uploadFile");
    const got = await run("openFile", { ranges: BIG_RANGES, expected: expected.big.rows });
    assert.equal(got.name, "big.npy");
    assert.equal(got.header.kind, "npy");
    assert.equal(got.header.descr, expected.big.descr);
    assert.deepEqual(got.header.shape, [BIG_ROWS]);
    got.rows.forEach((rows, i) => assert.deepEqual(rows, expected.big.rows[i], `rows ${BIG_RANGES[i]}`));
    // What it read of the File: its first bytes (the header), then one slice per range of rows.
    const read = got.slices.reduce((n, [a, b]) => n + b - a, 0);
    const rowBytes = BIG_RANGES.reduce((n, [a, b]) => n + (b - a) * expected.big.itemsize, 0);
    t.diagnostic(`File big.npy: ${got.slices.length} slices, ${read} of ${statSync(join(OUT, "big.npy")).size} bytes read`);
    assert.equal(got.slices.length, 1 + BIG_RANGES.length, JSON.stringify(got.slices));
    assert.ok(read <= OPEN_FIRST + rowBytes, JSON.stringify(got.slices));
  });

  check("open(url) fetches the header and each read's rows by ranges, not the file", async (t) => {
    const path = "/scratch/big.npy";
    log.length = 0;
    const got = await run("openUrl", { path, ranges: BIG_RANGES, expected: expected.big.rows });
    assert.equal(got.name, `${origin}${path}`);
    assert.equal(got.header.descr, expected.big.descr);
    assert.deepEqual(got.header.shape, [BIG_ROWS]);
    got.rows.forEach((rows, i) => assert.deepEqual(rows, expected.big.rows[i], `rows ${BIG_RANGES[i]}`));

    const size = statSync(join(OUT, "big.npy")).size;
    const { requests, bytes } = fetched(log, path);
    const rowBytes = BIG_RANGES.reduce((n, [a, b]) => n + (b - a) * expected.big.itemsize, 0);
    t.diagnostic(`big.npy: ${requests.length} requests, ${bytes} of ${size} bytes fetched (${((100 * bytes) / size).toFixed(2)}%), rows ${rowBytes} bytes`);
    assert.ok(requests.every((e) => e.range !== null && e.status === 206), JSON.stringify(requests));
    // One request for the header, one per range of rows past its bytes.
    assert.ok(requests.length <= 1 + BIG_RANGES.length, JSON.stringify(requests));
    assert.ok(bytes <= URL_FIRST + rowBytes, `${bytes} bytes fetched`);
    assert.ok(bytes < size / 100, `${bytes} of ${size} bytes fetched`);
    // Reads after the first are pinned to the version first read.
    assert.ok(requests.slice(1).every((e) => e.ifMatch !== null), "If-Match on every later read");
  });

  check("open(url) of an archive reads its directory, a stored member's rows by ranges, a deflated member whole", async (t) => {
    const path = "/scratch/big.npz";
    log.length = 0;
    const got = await run("openNpzUrl", {
      path,
      stored: { name: "traces", ranges: NPZ_RANGES, expected: expected.npz.traces },
      deflated: { name: "meta", expected: expected.npz.meta },
    });
    assert.equal(got.kind, "npz");
    assert.deepEqual(got.names, ["traces", "meta"]);
    assert.deepEqual(got.members.map((m) => m.compression), ["stored", "deflate"]);
    assert.deepEqual(got.header.shape, [NPZ_ROWS]);
    got.rows.forEach((rows, i) => assert.deepEqual(rows, expected.npz.traces[i], `traces rows ${NPZ_RANGES[i]}`));
    assert.deepEqual(got.deflated.shape, expected.npz.meta_shape);
    assert.deepEqual(got.deflated.values, expected.npz.meta);

    const size = statSync(join(OUT, "big.npz")).size;
    const { requests, bytes } = fetched(log, path);
    const rowBytes = NPZ_RANGES.reduce((n, [a, b]) => n + (b - a) * expected.big.itemsize, 0);
    const meta = got.members.find((m) => m.name === "meta").compressedSize;
    t.diagnostic(`big.npz: ${requests.length} requests, ${bytes} of ${size} bytes fetched (${((100 * bytes) / size).toFixed(2)}%), rows ${rowBytes} bytes, deflated member ${meta} bytes`);
    assert.ok(requests.every((e) => e.range !== null && e.status === 206), JSON.stringify(requests));
    // The rows, then the deflated member: one request each, of their bytes alone.
    assert.deepEqual(requests.slice(-2).map((e) => e.bytes), [rowBytes, meta], JSON.stringify(requests));
    // Before them, the directory: the first bytes, the tail, and each member's local header,
    // which the package reads with up to 256 KiB (npz.js BLOCK) though it is ~100 bytes.
    const members = got.members.length;
    assert.ok(bytes <= URL_FIRST + NPZ_TAIL + members * NPZ_BLOCK + rowBytes + meta, `${bytes} bytes fetched`);
    assert.ok(bytes < size / 10, `${bytes} of ${size} bytes fetched`);
  });

  check("a file changed on the server after open() is an NpyError, not a mix of two versions", async () => {
    const path = "/scratch/changing.npy";
    const file = join(OUT, "changing.npy");
    const header = await run("keepOpen", path);
    assert.deepEqual(header.shape, [2000]);
    // A new version: one byte of the last record changed, and a later modification time (a new ETag).
    const bytes = readFileSync(file);
    bytes[bytes.length - 1] ^= 0xff;
    writeFileSync(file, bytes);
    const later = new Date(Date.now() + 60_000);
    utimesSync(file, later, later);
    log.length = 0;
    const got = await run("readKept", [1500, 1510]);
    assert.equal(got.threw, true);
    assert.equal(got.name, "NpyError");
    assert.equal(got.file, `${origin}${path}`);
    assert.match(got.message, /changed since it was opened/);
    assert.ok(got.message.includes(`${origin}${path}`), got.message);
    assert.ok(fetched(log, path).requests.some((e) => e.status === 412 && e.ifMatch !== null), JSON.stringify(log));
  });

  check("a Zstandard archive written in the page reads back in the page and in NumPy", async () => {
    const got = await run("zstd");
    assert.equal(got.unsupported, undefined, `NpzWriter's zstd in the browser: ${got.unsupported}`);
    assert.deepEqual(got.members.map((m) => [m.member, m.compression]), [
      ["records.npy", "zstd"],
      ["wave.npy", "zstd"],
      ["labels.npy", "deflate"],
    ]);
    assert.deepEqual(got.inMemory, got.written);
    assert.deepEqual(got.byUrl, got.written);
    // NumPy (Python 3.11's zipfile has no Zstandard) reads the members that the zstd command decompressed.
    const numpy = numpyRead(join(OUT, "uploads", "zstd.npz"));
    for (const m of got.members) {
      assert.equal(numpy[m.member].method, m.compression, m.member);
      assert.deepEqual(numpy[m.member].columns, got.written[m.name], m.member);
    }
    await page.evaluate((a) => window.checks.note(a), { name: "NumPy reads zstd.npz (zstd command)", ok: true, detail: Object.keys(numpy).join(", ") });
  });

  check("files that are no NumPy file's throw NpyErrors naming them, and the page keeps working", async () => {
    const good = "record/traces_be.npy";
    const got = await run("hostile", {
      truncatedPath: "/scratch/truncated.npy",
      missingPath: "/scratch/missing.npy",
      good,
      goodExpected: expected.corpus[good][0],
    });
    const kinds = ["format", "format", "npz", "truncated", "format", "truncated", "io"];
    assert.equal(got.cases.length, kinds.length);
    got.cases.forEach((c, i) => {
      assert.equal(c.threw, true, `${c.what}: no error`);
      assert.equal(c.isNpyError, true, `${c.what}: ${c.message}`);
      assert.equal(c.kind, kinds[i], `${c.what}: ${c.message}`);
      assert.ok(c.message.includes(c.name), `${c.what}: the message names ${c.name}: ${c.message}`);
      assert.equal(c.file, c.name, c.what);
    });
    assert.match(got.cases[6].message, /HTTP 404/);
    const want = Object.fromEntries(Object.entries(expected.corpus[good][0].columns).map(([p, c]) => [p, c.values]));
    assert.deepEqual(got.after, want);
    // The errors as the page lists them: the table scrolled to its last rows.
    await page.evaluate(() => document.querySelector("#results tr:last-child").scrollIntoView({ block: "end" }));
    await withTimeout(page.screenshot({ path: join(OUT, "errors.png") }), 10_000, "screenshot");
  });

  check("save of a record array in the page: NumPy reads the values written", async () => {
    const dtype = "[('id', '<i4'), ('pos', [('x', '<f8'), ('y', '>f4')]), ('name', '<U6'), ('hist', '<u2', (3,)), ('when', '<M8[s]'), ('ok', '?'), ('h', '<f2')]";
    // Floats JSON cannot carry go as "nan", "-0", "inf" (the page decodes them).
    const rows = [
      { id: -7, pos: { x: 0.1, y: -2.5 }, name: "αβγ", hist: [1, 2, 65535], when: 1_700_000_000, ok: true, h: 0.333251953125 },
      { id: 2_147_483_647, pos: { x: "nan", y: "inf" }, name: "🌊x", hist: [0, 0, 7], when: -86_400, ok: false, h: 65504 },
      { id: 0, pos: { x: "-0", y: 0.75 }, name: "", hist: [3, 2, 1], when: 0, ok: true, h: "nan" },
    ];
    const float = (v) => canonicalFloat(v === "nan" ? NaN : v === "-0" ? -0 : v === "inf" ? Infinity : v);
    const want = {
      id: rows.map((r) => String(r.id)),
      "pos.x": rows.map((r) => float(r.pos.x)),
      "pos.y": rows.map((r) => float(r.pos.y)),
      name: rows.map((r) => r.name),
      hist: rows.flatMap((r) => r.hist.map(String)),
      when: rows.map((r) => String(r.when)),
      ok: rows.map((r) => (r.ok ? "1" : "0")),
      h: rows.map((r) => float(r.h)),
    };
    const got = await run("saveRecords", { dtype, rows });
    assert.deepEqual(got.values, want, "the page's load of its own bytes");
    const numpy = numpyRead(join(OUT, "uploads", "saved.npy"))[""];
    assert.equal(numpy.descr, got.descr);
    assert.deepEqual(numpy.shape, [rows.length]);
    assert.deepEqual(numpy.columns, want, "NumPy's np.load of the page's bytes");
    await page.evaluate((a) => window.checks.note(a), { name: "NumPy reads saved.npy", ok: true, detail: `${numpy.descr} [${numpy.shape}]` });
    const half = numpyRead(join(OUT, "uploads", "half.npy"))[""];
    assert.equal(half.descr, "'<f2'");
    assert.deepEqual(half.columns[""], got.half);
    await page.evaluate((a) => window.checks.note(a), { name: "NumPy reads half.npy", ok: true, detail: `${half.descr} [${half.shape}]` });
  });

  check("the page lists every check as passed, with no uncaught error; screenshot", async () => {
    const { passed, failed } = await page.evaluate(() => window.checks.summary());
    const shot = join(OUT, "results.png");
    await withTimeout(page.screenshot({ path: shot, fullPage: true }), 10_000, "screenshot");
    assert.equal(failed, 0, "checks failed in the page: see target/npy-js/browser/results.png");
    assert.ok(passed >= 20, `${passed} checks passed`);
    assert.deepEqual(pageErrors, []);
    // The console's only messages: the missing file's 404 and the changed file's 412, which the
    // checks asked for (no warning, such as one about the WebAssembly module's MIME type).
    assert.deepEqual(consoleMessages.toSorted(), [
      "error: Failed to load resource: the server responded with a status of 404 (Not Found)",
      "error: Failed to load resource: the server responded with a status of 412 (Precondition Failed)",
    ]);
    assert.ok(statSync(shot).size > 10_000);
    finished = true;
  });
});
