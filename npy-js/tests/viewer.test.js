// The viewer page (npy-js/viewer/) in Debian's Chromium, as David uses it: the main job's
// 1M traces opened as a File (the header as NumPy wrote it, the dtype tree with its
// padding, rows 0 and 999,999 printed as NumPy prints them, the bytes read to get there),
// a trace drawn and saved as PNG, a CSV of the rows shown that np.loadtxt reads equal, the
// array saved as .npy (the File itself), an archive of the traces by URL (its members, a
// stored one's rows by ranges, a deflated one streamed, saved as the bytes NumPy wrote and
// all its rows as CSV), a 2 GB file by ranges, a hostile file's and a bomb's messages,
// the page offline in a dark scheme, the keyboard, and an object array's values.
// Screenshots go to target/npy-js/viewer/.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { viewerSession, withTimeout } from "./chromium.js";
import { ROOT, SCRATCH, python } from "./support.js";

const OUT = join(SCRATCH, "viewer");
const TRACES = join(ROOT, "target", "seismic", "traces.npy");
const NUMPY = join(ROOT, "npy-js", "tests", "viewer", "numpy_view.py");
/** Bytes scrolling to the last row may read. */
const SCROLL_BUDGET = 1_000_000;

/** NumPy's side (numpy_view.py), its stdout. */
function numpy(...args) {
  return execFileSync(python(), [NUMPY, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
}

describe("the viewer in Chromium", { timeout: 240_000 }, () => {
  const viewer = viewerSession();
  /** @type {any} */ let server;
  /** @type {any} */ let browser;
  /** @type {any} */ let page;
  const pageErrors = viewer.pageErrors;

  before(async () => {
    assert.ok(existsSync(TRACES), `no ${TRACES}: run \`cargo run --release --example seismic\` (cargo xtask js --test does)`);
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    numpy("make", OUT, TRACES);
    writeFileSync(join(OUT, "random.npy"), Buffer.from(Array.from({ length: 100 }, (_, i) => (i * 7919) % 251)));
    await viewer.open({ mounts: [["/files/", OUT], ["/", join(ROOT, "npy-js")]] });
    ({ server, browser, page } = viewer);
  });

  after(() => viewer.close(join(OUT, "last.png")));

  /** The cells of grid row `r` of the selected tab once printed. */
  async function cells(r) {
    await page.waitForFunction(
      (row) => {
        const el = document.querySelector(`.panel:not([hidden]) .grid-row[data-row="${row}"]:not(.pending)`);
        return el !== null && el.children.length > 1;
      },
      {},
      r,
    );
    return page.$$eval(`.panel:not([hidden]) .grid-row[data-row="${r}"] > div`, (divs) => divs.map((d) => d.textContent));
  }

  it("opens the traces as a File: header, dtype tree, rows 0 and 999,999 as NumPy prints them", async () => {
    const input = await page.$("[data-testid=files]");
    await input.uploadFile(TRACES);
    await page.waitForFunction(() => globalThis.npyViewer.firstRows["traces.npy"] !== undefined);
    const want = JSON.parse(numpy("rows", TRACES, "0", "999999"));
    const header = await page.$eval(".panel:not([hidden]) [data-testid=header-text]", (el) => el.textContent);
    assert.equal(header, want.header);
    const columns = await page.$$eval(".panel:not([hidden]) .grid-head > div", (divs) => divs.map((d) => d.textContent));
    assert.deepEqual(columns, ["row", ...want.columns]);
    const tree = await page.$eval(".panel:not([hidden]) [data-testid=dtype-tree]", (el) => el.textContent.replace(/\s+/g, " "));
    for (const part of ["trace_id at byte 0: <i4", "padding at byte 4: 4 bytes", "receiver at byte 8: record of 3 fields", "samples at byte 48: subarray of shape (64,)", "each : <f4"]) {
      assert.ok(tree.includes(part), `the dtype tree has "${part}": ${tree}`);
    }
    assert.deepEqual((await cells(0)).slice(1), want.rows[0]);
    const before = await page.evaluate(() => globalThis.npyViewer.bytesRead["traces.npy"]);
    await page.$eval(".panel:not([hidden]) [data-testid=jump]", (el) => {
      el.value = "999999";
      el.dispatchEvent(new Event("change"));
    });
    assert.deepEqual((await cells(999_999)).slice(1), want.rows[1]);
    const read = (await page.evaluate(() => globalThis.npyViewer.bytesRead["traces.npy"])) - before;
    assert.ok(read < SCROLL_BUDGET, `scrolling to row 999,999 read ${read} bytes`);
    const size = statSync(TRACES).size;
    const total = await page.evaluate(() => globalThis.npyViewer.bytesRead["traces.npy"]);
    assert.ok(total < size / 50, `${total} of ${size} bytes read in all`);
    await page.screenshot({ path: join(OUT, "traces.png") });
  });

  it("draws a trace, saves it as PNG, and gives a CSV that np.loadtxt reads equal", async () => {
    await page.$eval(".panel:not([hidden]) [data-testid=jump]", (el) => {
      el.value = "0";
      el.dispatchEvent(new Event("change"));
    });
    await page.select(".panel:not([hidden]) [data-testid=plot-kind]", "row");
    await page.select(".panel:not([hidden]) [data-testid=plot-field]", "samples");
    await page.click(".panel:not([hidden]) [data-testid=plot-draw]");
    await page.waitForFunction(() => document.querySelector(".panel:not([hidden]) canvas")?.dataset.drawn === "samples of row 0");
    await page.click(".panel:not([hidden]) [data-testid=plot-png]");
    await page.waitForFunction(() => globalThis.npyViewer.lastExport?.name.endsWith("-plot.png"));
    const png = await page.evaluate(async () => [...new Uint8Array(await globalThis.npyViewer.lastExport.blob.arrayBuffer()).slice(0, 8)]);
    assert.deepEqual(png, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const plot = await page.$(".panel:not([hidden]) [data-testid=plot]");
    await plot.screenshot({ path: join(OUT, "trace-plot.png") });

    await page.click(".panel:not([hidden]) [data-testid=csv-shown]");
    await page.waitForFunction(() => globalThis.npyViewer.lastExport?.name.endsWith(".csv"));
    const { name, text } = await page.evaluate(async () => ({ name: globalThis.npyViewer.lastExport.name, text: await globalThis.npyViewer.lastExport.blob.text() }));
    const [, start, end] = /rows-(\d+)-(\d+)\.csv$/.exec(name);
    assert.equal(text.trim().split("\n").length, Number(end) - Number(start) + 1);
    const csv = join(OUT, "shown.csv");
    writeFileSync(csv, text);
    assert.match(numpy("csv", csv, TRACES, start), /^ok: \d+ rows, 71 columns/);

    // The array as .npy: the File itself, nothing read.
    const before = await page.evaluate(() => globalThis.npyViewer.bytesRead["traces.npy"]);
    await page.click(".panel:not([hidden]) [data-testid=save-npy]");
    await page.waitForFunction(() => globalThis.npyViewer.lastExport?.name === "traces.npy");
    const saved = await page.evaluate(() => {
      const blob = globalThis.npyViewer.lastExport.blob;
      return { file: blob instanceof File && blob.name === "traces.npy", size: blob.size, read: globalThis.npyViewer.bytesRead["traces.npy"] };
    });
    assert.deepEqual(saved, { file: true, size: statSync(TRACES).size, read: before });
  });

  it("opens an archive of the traces by URL: its members, stored rows by ranges, a deflated one streamed", async () => {
    await page.type("[data-testid=url]", `${server.url}/files/archive.npz`);
    server.log.length = 0;
    await page.click("[data-testid=url-form] button");
    await page.waitForFunction(() => globalThis.npyViewer.firstRows[`${location.origin}/files/archive.npz: traces`] !== undefined);
    const members = await page.$$eval(".panel:not([hidden]) [data-testid=members] tbody tr", (rows) => rows.map((r) => [...r.children].slice(0, 2).map((c) => c.textContent)));
    assert.deepEqual(members, [["traces", "stored"], ["first", "deflate"]]);
    const want = JSON.parse(numpy("rows", join(OUT, "archive.npz"), "traces", "0", "99999"));
    assert.deepEqual((await cells(0)).slice(1), want.rows[0]);
    await page.$eval(".panel:not([hidden]) [data-testid=jump]", (el) => {
      el.value = "99999";
      el.dispatchEvent(new Event("change"));
    });
    assert.deepEqual((await cells(99_999)).slice(1), want.rows[1]);
    const fetched = server.log.filter((r) => r.path === "/files/archive.npz").reduce((n, r) => n + r.bytes, 0);
    assert.ok(fetched < 2_000_000, `the archive's rows fetched ${fetched} bytes of ${statSync(join(OUT, "archive.npz")).size}`);
    await page.click(".panel:not([hidden]) [data-member=first]");
    await page.waitForFunction(() => globalThis.npyViewer.firstRows[`${location.origin}/files/archive.npz: first`] !== undefined);
    const first = JSON.parse(numpy("rows", join(OUT, "archive.npz"), "first", "999"));
    await page.$eval(".panel:not([hidden]) [data-testid=jump]", (el) => {
      el.value = "999";
      el.dispatchEvent(new Event("change"));
    });
    assert.deepEqual((await cells(999)).slice(1), first.rows[0]);
    await page.screenshot({ path: join(OUT, "archive.png") });

    // The deflated member as .npy: the bytes NumPy wrote into the archive.
    await page.click(".panel:not([hidden]) [data-testid=save-npy]");
    await page.waitForFunction(() => globalThis.npyViewer.lastExport?.name.endsWith("first.npy"));
    const bytes = await page.evaluate(async () => [...new Uint8Array(await globalThis.npyViewer.lastExport.blob.arrayBuffer())]);
    writeFileSync(join(OUT, "first.npy"), Buffer.from(bytes));
    assert.match(numpy("same", join(OUT, "first.npy"), join(OUT, "archive.npz"), "first"), /^ok: \d+ bytes/);

    // All its rows as CSV.
    await page.click(".panel:not([hidden]) [data-testid=csv-all]");
    await page.waitForFunction(() => /first\.csv$/.test(globalThis.npyViewer.lastExport?.name ?? ""));
    writeFileSync(join(OUT, "first.csv"), await page.evaluate(() => globalThis.npyViewer.lastExport.blob.text()));
    assert.match(numpy("csv", join(OUT, "first.csv"), join(OUT, "archive.npz"), "0", "first"), /^ok: 1000 rows, 71 columns/);
  });

  it("opens a 2 GB file at once, reading only the rows it shows", async () => {
    const input = await page.$("[data-testid=files]");
    await input.uploadFile(join(OUT, "big.npy"));
    await page.waitForFunction(() => globalThis.npyViewer.firstRows["big.npy"] !== undefined);
    assert.deepEqual((await cells(0)).slice(1), ["1.5"]);
    for (const [row, value] of [[123_456_789, "-3.25"], [249_999_999, "42.5"]]) {
      await page.$eval(
        ".panel:not([hidden]) [data-testid=jump]",
        (el, r) => {
          el.value = String(r);
          el.dispatchEvent(new Event("change"));
        },
        row,
      );
      assert.deepEqual((await cells(row)).slice(1), [value]);
    }
    const read = await page.evaluate(() => globalThis.npyViewer.bytesRead["big.npy"]);
    assert.ok(read < SCROLL_BUDGET, `${read} bytes read`);
  });

  it("says what is wrong with a file that is no NumPy file's, and keeps working", async () => {
    const input = await page.$("[data-testid=files]");
    await input.uploadFile(join(OUT, "random.npy"));
    await page.waitForFunction(() => document.querySelector(".panel:not([hidden]) [data-testid=error]")?.hidden === false);
    const message = await page.$eval(".panel:not([hidden]) [data-testid=error]", (el) => el.textContent);
    assert.match(message, /^reading 'random\.npy': not a \.npy file: bad magic/);
    await page.screenshot({ path: join(OUT, "error.png") });
    // A member that inflates past what the page holds: refused before it is inflated.
    await input.uploadFile(join(OUT, "zeros.npz"));
    await page.waitForFunction(() => document.querySelector(".panel:not([hidden]) [data-testid=error]")?.hidden === false);
    const refused = await page.$eval(".panel:not([hidden]) [data-testid=error]", (el) => el.textContent);
    assert.match(refused, /^reading 'zeros\.npz': member 'zeros\.npy' inflates to 1,200,000,128 bytes; this page inflates 1,073,741,824 at most/);
    // The page still opens files.
    await input.uploadFile(TRACES);
    await page.waitForFunction(() => Object.keys(globalThis.npyViewer.firstRows).filter((k) => k === "traces.npy").length === 1 && globalThis.npyViewer.tabs.length === 6);
    assert.deepEqual(pageErrors, []);
  });

  it("opens files offline once loaded, readable in a dark scheme", async () => {
    await withTimeout(page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined)), 30_000, "the service worker");
    const offline = await browser.newPage();
    try {
      offline.on("pageerror", (e) => pageErrors.push(String(e)));
      offline.setDefaultTimeout(30_000);
      await offline.setViewport({ width: 1280, height: 800 });
      await offline.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      await offline.setOfflineMode(true);
      await offline.goto(`${server.url}/viewer/`, { waitUntil: "load" });
      await offline.waitForFunction(() => globalThis.npyViewer?.ready === true);
      const input = await offline.$("[data-testid=files]");
      await input.uploadFile(TRACES);
      await offline.waitForFunction(() => globalThis.npyViewer.firstRows["traces.npy"] !== undefined);
      // Light text on a dark page.
      const [bg, fg] = await offline.evaluate(() => {
        const style = getComputedStyle(document.body);
        const rgb = (/** @type {string} */ c) => (c.match(/\d+/g) ?? []).slice(0, 3).map(Number);
        return [rgb(style.backgroundColor), rgb(style.color)];
      });
      const light = (/** @type {number[]} */ c) => c.reduce((a, b) => a + b, 0) / 3;
      assert.ok(light(bg) < 60 && light(fg) > 180, `background ${bg}, text ${fg}`);
      await offline.screenshot({ path: join(OUT, "dark-offline.png") });
    } finally {
      await offline.close();
    }
  });

  it("moves through rows with the keyboard", async () => {
    await page.click(".panel:not([hidden]) [data-testid=grid]");
    await page.keyboard.press("End");
    await page.waitForFunction(() => document.querySelector('.panel:not([hidden]) .grid-row[aria-selected="true"]')?.dataset.row === "999999");
    await page.keyboard.press("Home");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await page.waitForFunction(() => document.querySelector('.panel:not([hidden]) .grid-row[aria-selected="true"]')?.dataset.row === "2");
    // Assistive technology is told which row is selected.
    const active = await page.$eval(".panel:not([hidden]) [data-testid=grid]", (grid) => {
      const id = grid.getAttribute("aria-activedescendant");
      return id === null ? null : document.getElementById(id)?.dataset.row;
    });
    assert.equal(active, "2");
  });

  it("shows an object array's values, running no pickle", async () => {
    const input = await page.$("[data-testid=files]");
    await input.uploadFile(join(OUT, "objects.npy"));
    await page.waitForFunction(() => globalThis.npyViewer.firstRows["objects.npy"] !== undefined);
    const want = JSON.parse(numpy("rows", join(OUT, "objects.npy"), "0", "1", "2", "3", "4"));
    for (let r = 0; r < 5; r++) assert.deepEqual((await cells(r)).slice(1), want.rows[r], `row ${r}`);
  });
});
