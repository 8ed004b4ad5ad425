// The viewer page (npy-js/viewer/) on the seismic traces in Debian's headless Chromium:
// node viewer.mjs --traces TRACES --dir DIR [--stats F8] [--repeat K] (`cargo xtask bench
// --only js` runs it; see xtask/src/bench.rs).
//
// Rows (`bench <name> best=<s> median=<s> bytes=<n>`):
// - viewer_open: the 290 MB file picked in the page's file input, to its first rows on
//   screen (the page's own clock, `npyViewer.firstRows`: from the input's change to the
//   frame after the rows are in the grid), in a new page each run (`bytes=0`: it reads
//   the rows on screen, not the file).
// - viewer_ready (context): the page loaded, to its module instantiated and the page
//   ready for files (`npyViewer.readyMs`), from a loopback server (after the warm-up,
//   from the page's service worker's cache).
// - viewer_scroll: not a time: the bytes the page read from the File to show row 999,999
//   after the first rows (`npyViewer.bytesRead`), its times 0.
// - viewer_stats: F8 (a 1 GB `<f8` file NumPy wrote) picked, its Statistics view's Compute:
//   count, NaNs, zeros, min, max, mean and std of all its values, streamed from the File
//   (the page's own clock, `npyViewer.lastStats.statsMs`; `bytes=` the column's bytes, so
//   the rate is bytes / best).
// - viewer_stats_histogram (context): the same Compute to its histogram too (a second
//   pass over the file, once the range is known: np.histogram's bins), twice the bytes read.
// - viewer_stats_floor (context): the same File's bytes read alone in the same page, as
//   the statistics read them (Blob slices of stats.js's PIECE_BYTES, AHEAD in flight), and
//   thrown away: the floor of any statistics streamed from a File in this browser.
// - viewer_overview: a 4 GiB `<f4` image (32,768 x 32,768, DIR/image-4g.npy, sparse on
//   disk: zeros but for a band of rows every 2,048) picked in the file input, to its
//   overview drawn on the image view's canvas (the page's clock, `npyViewer.firstRows`);
//   `bytes=` the bytes read from the File to get there, counted by a wrapped
//   `Blob.prototype.slice` (not the page's own count). A page that cannot show it gives a
//   `#` line saying why, and no row (the goal is then missed).
// - viewer_overview_bytes: not a time: those bytes again, as a size row.
// - viewer_slice: a 2.1 GB `<f4` volume (500 x 1024 x 1024, DIR/volume-2g.npy, sparse)
//   shown one (1024 x 1024) slice at a time: the slider of axis 0 moved by one (its
//   ArrowRight key), to the next slice drawn (the view's own clock: the slice's select
//   to its pixels on the canvas), 10 moves a run; `bytes=` a slice's bytes.
// - viewer_slice_strided (context): the same volume shown (axis 0, axis 2) with the slider
//   on axis 1: each slice is 500 rows 4 MB apart, one read each.
//
// K runs (default 3) after one untimed warm-up, each in a page of its own; the first
// run's rows are checked against what the page must show (row 0's trace_id 0, row
// 999,999's 999999), so a page that shows nothing cannot time well.

import { existsSync, mkdtempSync, openSync, closeSync, ftruncateSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { serve } from "../viewer/serve.mjs";
import { closeBrowser, launch } from "../tests/chromium.js";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function parseArgs(argv) {
  const args = { traces: undefined, dir: undefined, stats: undefined, repeat: 3 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--traces") args.traces = value;
    else if (flag === "--dir") args.dir = value;
    else if (flag === "--stats") args.stats = value;
    else if (flag === "--repeat") args.repeat = Number(value);
    else throw new Error(`unknown argument ${flag}`);
  }
  if (args.traces === undefined || args.dir === undefined) throw new Error("usage: node viewer.mjs --traces TRACES --dir DIR [--stats F8] [--repeat K]");
  if (!Number.isInteger(args.repeat) || args.repeat < 1) throw new Error("--repeat takes a positive integer");
  return args;
}

/** Opens `traces` in a new page: its time to first rows (ms), and the bytes scrolling to the last row read. */
async function run(browser, url, traces, check) {
  const page = await browser.newPage();
  try {
    page.setDefaultTimeout(30_000);
    await page.setViewport({ width: 1280, height: 1000 });
    await page.goto(url, { waitUntil: "load" });
    await page.waitForFunction(() => globalThis.npyViewer?.ready === true);
    const readyMs = await page.evaluate(() => globalThis.npyViewer.readyMs);
    const input = await page.$("[data-testid=files]");
    await input.uploadFile(traces);
    await page.waitForFunction(() => globalThis.npyViewer.firstRows["traces.npy"] !== undefined);
    const ms = await page.evaluate(() => globalThis.npyViewer.firstRows["traces.npy"]);
    const id = (row) => page.$eval(`.grid-row[data-row="${row}"] > div:nth-child(2)`, (el) => el.textContent);
    if (check && (await id(0)) !== "0") throw new Error(`row 0 shows trace_id ${await id(0)}, not 0`);
    const before = await page.evaluate(() => globalThis.npyViewer.bytesRead["traces.npy"]);
    await page.$eval("[data-testid=jump]", (el) => {
      el.value = "999999";
      el.dispatchEvent(new Event("change"));
    });
    const last = '.grid-row[data-row="999999"]:not(.pending)';
    await page.waitForFunction((sel) => (document.querySelector(sel)?.children.length ?? 0) > 1, {}, last);
    const read = (await page.evaluate(() => globalThis.npyViewer.bytesRead["traces.npy"])) - before;
    if (check && (await id(999_999)) !== "999999") throw new Error(`row 999,999 shows trace_id ${await id(999_999)}, not 999999`);
    return { ms, read, readyMs };
  } finally {
    await page.close();
  }
}

/**
 * Opens `file` (a plain array) in a new page and computes its statistics and histogram in
 * the Statistics view: the page's record of it (`npyViewer.lastStats`).
 */
async function statsRun(browser, url, file, check) {
  const page = await browser.newPage();
  try {
    page.setDefaultTimeout(300_000);
    await page.setViewport({ width: 1280, height: 1000 });
    await page.goto(url, { waitUntil: "load" });
    await page.waitForFunction(() => globalThis.npyViewer?.ready === true);
    const input = await page.$("[data-testid=files]");
    await input.uploadFile(file);
    await page.waitForFunction(() => globalThis.npyViewer.tabs.length === 1 && Object.keys(globalThis.npyViewer.firstRows).length === 1);
    await page.click("[data-testid=view-stats]");
    await page.waitForSelector(".view[data-view=stats]:not([hidden]) [data-testid=stats-run]");
    await page.click("[data-testid=stats-run]");
    await page.waitForFunction(() => ["done", "failed", "cancelled"].includes(document.querySelector(".view[data-view=stats]").dataset.state ?? ""));
    const got = await page.evaluate(() => {
      const s = globalThis.npyViewer.lastStats;
      return s && { ms: s.ms, statsMs: s.statsMs, bytes: s.bytes, count: s.summary.count, min: s.summary.finiteMin, max: s.summary.finiteMax, bins: s.counts?.reduce((a, b) => a + b, 0) };
    });
    if (got === null) throw new Error(`no statistics of ${file}: ${await page.$eval("[data-testid=error]", (el) => el.textContent)}`);
    const n = (statSync(file).size - 128) / 8;
    if (check && (got.count !== n || !(got.min <= got.max) || got.bins !== n)) {
      throw new Error(`the statistics of ${file} counted ${got.count} values (${got.bins} in the histogram), not ${n}`);
    }
    // The floor: the File's data read as the statistics read it, nothing computed.
    got.floorMs = await page.evaluate(async () => {
      const { AHEAD, PIECE_BYTES } = await import("/viewer/stream.js");
      // A module that no longer exports them would make this floor read nothing.
      if (!(AHEAD >= 1 && PIECE_BYTES >= 1)) throw new Error(`viewer/stream.js gives AHEAD ${AHEAD}, PIECE_BYTES ${PIECE_BYTES}`);
      const blob = globalThis.npyViewer.tabs[0].blob;
      const began = performance.now();
      const reads = [];
      let next = 128;
      const more = () => {
        while (reads.length < AHEAD && next < blob.size) {
          const end = Math.min(blob.size, next + PIECE_BYTES);
          reads.push(blob.slice(next, end).arrayBuffer());
          next = end;
        }
      };
      more();
      while (reads.length > 0) {
        await reads.shift();
        more();
      }
      return performance.now() - began;
    });
    return got;
  } finally {
    await page.close();
  }
}

/**
 * A `.npy` file of `descr` and `shape` at `path`, sparse on disk: a version 1.0 header as
 * np.save writes it, zeros but for `bands` (rows of values written, each at its byte
 * offset in the data). Kept for later runs when its size is right.
 */
function sparse(path, descr, shape, itemsize, bands) {
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(", ")}), }`;
  const pad = (64 - ((10 + dict.length + 1) % 64)) % 64;
  const text = `${dict}${" ".repeat(pad)}\n`;
  const header = Buffer.concat([Buffer.from([0x93]), Buffer.from("NUMPY"), Buffer.from([1, 0, text.length & 0xff, text.length >> 8]), Buffer.from(text, "latin1")]);
  const size = header.length + shape.reduce((n, d) => n * d, 1) * itemsize;
  if (existsSync(path) && statSync(path).size === size) return path;
  const fd = openSync(path, "w");
  try {
    writeSync(fd, header, 0, header.length, 0);
    ftruncateSync(fd, size);
    for (const [offset, bytes] of bands) writeSync(fd, bytes, 0, bytes.length, header.length + offset);
  } finally {
    closeSync(fd);
  }
  return path;
}

/** A new page of the viewer with Blob.prototype.slice counted (`globalThis.sliced`). */
async function viewerPage(browser, url) {
  const page = await browser.newPage();
  page.setDefaultTimeout(60_000);
  await page.evaluateOnNewDocument(() => {
    const slice = Blob.prototype.slice;
    globalThis.sliced = 0;
    Blob.prototype.slice = function (start = 0, end = this.size, type) {
      const a = start < 0 ? Math.max(0, this.size + start) : Math.min(start, this.size);
      const b = end < 0 ? Math.max(0, this.size + end) : Math.min(end, this.size);
      globalThis.sliced += Math.max(0, b - a);
      return slice.call(this, start, end, type);
    };
  });
  await page.setViewport({ width: 1280, height: 1000 });
  await page.goto(url, { waitUntil: "load" });
  await page.waitForFunction(() => globalThis.npyViewer?.ready === true);
  return page;
}

/** Picks `path` in a page's file input; its image view's canvas selector once drawn, or throws the page's error. */
async function pick(page, path, name) {
  const input = await page.$("[data-testid=files]");
  await input.uploadFile(path);
  const canvas = ".panel:not([hidden]) [data-testid=image-canvas]";
  await page.waitForFunction(
    (n, sel) => {
      const error = document.querySelector(".panel:not([hidden]) [data-testid=error]");
      return (error && !error.hidden) || (globalThis.npyViewer.firstRows[n] !== undefined && document.querySelector(sel)?.dataset.drawn);
    },
    {},
    name,
    canvas,
  );
  const error = await page.$eval(".panel:not([hidden]) [data-testid=error]", (el) => (el.hidden ? "" : el.textContent));
  if (error) throw new Error(`${name}: the page says: ${error}`);
  return canvas;
}

/** The 4 GiB image picked, to its overview drawn: [ms, bytes read]. */
async function overview(browser, url, image) {
  const page = await viewerPage(browser, url);
  try {
    const canvas = await pick(page, image, "image-4g.npy");
    const [level, rows, cols] = await page.$eval(canvas, (el) => [el.dataset.level, el.dataset.rows, el.dataset.cols]);
    if (level !== "overview" || rows !== "32768" || cols !== "32768") throw new Error(`the page drew ${level} of ${rows} x ${cols}, not an overview of 32768 x 32768`);
    return { ms: await page.evaluate(() => globalThis.npyViewer.firstRows["image-4g.npy"]), bytes: await page.evaluate(() => globalThis.sliced) };
  } finally {
    await page.close();
  }
}

/**
 * The volume picked, then the slider of `axis` moved `moves` times by its ArrowRight key:
 * each move's time to the next slice drawn (the view's own clock). `shown`: the axes shown
 * as [rows, cols], set first.
 */
async function slices(browser, url, volume, axis, shown, moves) {
  const page = await viewerPage(browser, url);
  try {
    const canvas = await pick(page, volume, "volume-2g.npy");
    const view = ".panel:not([hidden]) .view[data-view=image]";
    for (const [which, a] of [["rows", shown[0]], ["cols", shown[1]]]) {
      await page.$eval(`${view} [data-testid=slice-${which}]`, (el, v) => {
        el.value = String(v);
        el.dispatchEvent(new Event("change"));
      }, a);
    }
    const slider = `${view} [data-testid=slice-axis-${axis}]`;
    const at = (sel, a) => page.$eval(sel, (el, k) => JSON.parse(el.dataset.slice ?? "[]")[k], a);
    await page.waitForFunction((sel, s, a) => JSON.parse(document.querySelector(sel).dataset.slice ?? "[]")[a] === Number(document.querySelector(s).value), {}, canvas, slider, axis);
    const ms = [];
    for (let i = 0; i < moves; i++) {
      const from = await at(canvas, axis);
      await page.focus(slider);
      await page.keyboard.press("ArrowRight");
      await page.waitForFunction((sel, a, v) => JSON.parse(document.querySelector(sel).dataset.slice ?? "[]")[a] === v, {}, canvas, axis, from + 1);
      ms.push(await page.$eval(canvas, (el) => Number(el.dataset.ms)));
    }
    return ms;
  } finally {
    await page.close();
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const size = statSync(args.traces).size;
  const server = await serve({ mounts: [["/", PACKAGE]] });
  const profile = mkdtempSync(join(tmpdir(), "npy-viewer-bench-"));
  let browser;
  try {
    browser = await launch(profile);
    console.log(`# ${await browser.version()}; the page served from 127.0.0.1; the traces ${size} bytes; ${args.repeat} runs after a warm-up`);
    const url = `${server.url}/viewer/`;
    await run(browser, url, args.traces, true);
    const runs = [];
    for (let i = 0; i < args.repeat; i++) runs.push(await run(browser, url, args.traces, false));
    const row = (name, seconds, bytes) => {
      const sorted = [...seconds].sort((a, b) => a - b);
      console.log(`bench ${name} best=${sorted[0]} median=${sorted[Math.floor(sorted.length / 2)]} bytes=${bytes}`);
    };
    // bytes=0: the page reads 20 KB of the file, not its size (a rate would be meaningless).
    row("viewer_open", runs.map((r) => r.ms / 1000), 0);
    row("viewer_ready", runs.map((r) => r.readyMs / 1000), 0);
    console.log(`bench viewer_scroll best=0 median=0 bytes=${Math.max(...runs.map((r) => r.read))}`);
    if (args.stats !== undefined) {
      await statsRun(browser, url, args.stats, true);
      const computed = [];
      for (let i = 0; i < args.repeat; i++) computed.push(await statsRun(browser, url, args.stats, false));
      const best = Math.min(...computed.map((r) => r.statsMs));
      console.log(`# viewer_stats: ${computed[0].bytes} bytes of <f8 at ${((computed[0].bytes / best) * 1e-3).toFixed(0)} MB/s (best)`);
      row("viewer_stats", computed.map((r) => r.statsMs / 1000), computed[0].bytes);
      row("viewer_stats_histogram", computed.map((r) => r.ms / 1000), computed[0].bytes);
      row("viewer_stats_floor", computed.map((r) => r.floorMs / 1000), computed[0].bytes);
    }

    const side = 32_768;
    const band = Buffer.from(new Float32Array(side).map((_, i) => i / (side - 1)).buffer);
    const image = sparse(join(args.dir, "image-4g.npy"), "<f4", [side, side], 4, Array.from({ length: side / 2048 }, (_, k) => [k * 2048 * side * 4, band]));
    const volume = sparse(join(args.dir, "volume-2g.npy"), "<f4", [500, 1024, 1024], 4, []);
    try {
      await overview(browser, url, image);
      const shown = [];
      for (let i = 0; i < args.repeat; i++) shown.push(await overview(browser, url, image));
      row("viewer_overview", shown.map((r) => r.ms / 1000), Math.max(...shown.map((r) => r.bytes)));
      console.log(`bench viewer_overview_bytes best=0 median=0 bytes=${Math.max(...shown.map((r) => r.bytes))}`);
    } catch (e) {
      console.log(`# viewer_overview: not measured: ${e.message}`);
    }
    try {
      await slices(browser, url, volume, 0, [1, 2], 2);
      const moves = [];
      for (let i = 0; i < args.repeat; i++) moves.push(...(await slices(browser, url, volume, 0, [1, 2], 10)));
      row("viewer_slice", moves.map((ms) => ms / 1000), 1024 * 1024 * 4);
      const strided = [];
      for (let i = 0; i < args.repeat; i++) strided.push(...(await slices(browser, url, volume, 1, [0, 2], 5)));
      row("viewer_slice_strided", strided.map((ms) => ms / 1000), 500 * 1024 * 4);
    } catch (e) {
      console.log(`# viewer_slice: not measured: ${e.message}`);
    }
  } finally {
    if (browser) await closeBrowser(browser);
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

await main();
