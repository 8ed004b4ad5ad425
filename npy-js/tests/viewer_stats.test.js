// The viewer's Statistics view (npy-js/viewer/stats.js, filter.js) in Debian's Chromium,
// against NumPy: files NumPy writes (a <f8 array with NaNs, infinities and zeros, an <i8
// over the whole int64 range, datetimes with NaT, values on the bins' edges) and the main job's traces (a nested
// float32 field, a subarray field over all its values): count, NaNs, zeros, ±inf, min,
// max exact, mean and std within 1e-12 of NumPy's float64 ones, and the histogram's edges
// and counts equal np.histogram's. A filter's count and first rows equal NumPy's boolean
// mask's; cancelling stops the reads (counted by a wrapped Blob.prototype.slice, not by
// the page); a bad expression's error text. Screenshots go to target/npy-js/viewer-stats/.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { viewerSession } from "./chromium.js";
import { ROOT, SCRATCH, python } from "./support.js";

const OUT = join(SCRATCH, "viewer-stats");
const TRACES = join(ROOT, "target", "seismic", "traces.npy");
const NUMPY = join(ROOT, "npy-js", "tests", "viewer", "numpy_stats.py");
/**
 * How far the page's mean and std may be from NumPy's (float64, pairwise sums): both are
 * within about ε·log2(n) (≈ 5e-15 for 10^8 values) of the exact ones, relative to the mean
 * absolute value (a mean) or the std; 1e-12 leaves room for that and still catches a lost
 * or doubled piece (an error near 1/n ≈ 1e-6) or a float32 accumulator (≈ 1e-7).
 */
const TOLERANCE = 1e-12;
/** The sections of the page this test reads, in the tab shown. */
const STATS = ".panel:not([hidden]) .view[data-view=stats]";

/** NumPy's side (numpy_stats.py), its JSON output. */
function numpy(...args) {
  return JSON.parse(execFileSync(python(), [NUMPY, ...args], { encoding: "utf8", maxBuffer: 1 << 26 }));
}

/** A number as the page prints it ("nan", "inf", "-inf" and JavaScript's shortest text). */
function parse(text) {
  return { nan: NaN, inf: Infinity, "-inf": -Infinity }[text] ?? Number(text);
}

describe("the viewer's statistics and filter in Chromium", { timeout: 300_000 }, () => {
  const viewer = viewerSession();
  /** @type {any} */ let page;
  const pageErrors = viewer.pageErrors;

  before(async () => {
    assert.ok(existsSync(TRACES), `no ${TRACES}: run \`cargo run --release --example seismic\` (cargo xtask js --test does)`);
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    execFileSync(python(), [NUMPY, "make", OUT]);
    // An independent count of the bytes the page reads from its Files (globalThis.sliced).
    await viewer.open({ mounts: [["/", join(ROOT, "npy-js")]], countSlices: true, timeout: 60_000 });
    page = viewer.page;
  });

  after(() => viewer.close(join(OUT, "last.png")));

  /** Opens `file` in a new tab and shows its Statistics view. */
  async function openStats(file, name) {
    const input = await page.$("[data-testid=files]");
    await input.uploadFile(file);
    await page.waitForFunction((n) => globalThis.npyViewer.firstRows[n] !== undefined, {}, name);
    await page.click(".panel:not([hidden]) [data-testid=view-stats]");
    await page.waitForSelector(`${STATS}:not([hidden]) [data-testid=stats-column] option`);
  }

  /** Computes the statistics of `path` with `bins` bins in the tab shown; the page's table and bins. */
  async function compute(path, bins, index = "") {
    await page.select(`${STATS} [data-testid=stats-column]`, path);
    await page.$eval(`${STATS} [data-testid=stats-slice]`, (el, i) => (el.value = i), index);
    await page.$eval(`${STATS} [data-testid=stats-bins]`, (el, b) => (el.value = String(b)), bins);
    await page.click(`${STATS} [data-testid=stats-run]`);
    await page.waitForFunction((sel) => ["done", "failed"].includes(document.querySelector(sel)?.dataset.state ?? ""), { timeout: 120_000 }, STATS);
    return page.$eval(STATS, (section) => ({
      state: section.dataset.state,
      stats: Object.fromEntries([...section.querySelectorAll("td[data-stat]")].map((td) => [td.dataset.stat, td.textContent])),
      bins: [...section.querySelectorAll("[data-testid=stats-bins-table] tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent)),
      drawn: JSON.parse(section.querySelector("[data-testid=stats-histogram]").dataset.counts ?? "null"),
    }));
  }

  /** The page's statistics of `path` (of the slice `index`, if given) equal NumPy's. */
  async function same(file, path, bins, index) {
    const want = numpy("stats", file, path, String(bins), ...(index === undefined ? [] : [index]));
    const got = await compute(path, bins, index ?? "");
    assert.equal(got.state, "done");
    const s = got.stats;
    for (const key of ["count", "nans", "zeros", "posInf", "negInf"]) assert.equal(s[key], String(want[key]), `${path} ${key}`);
    for (const key of ["min", "max"]) {
      if (typeof want[key] === "string") assert.equal(s[key], want[key], `${path} ${key}: exact`);
      else assert.ok(Object.is(parse(s[key]), want[key]) || parse(s[key]) === want[key], `${path} ${key}: ${s[key]}, NumPy ${want[key]}`);
    }
    for (const [key, scale] of [["mean", want.scale], ["finiteMean", want.scale], ["std", want.std], ["finiteStd", want.finiteStd]]) {
      const g = parse(s[key]);
      const w = typeof want[key] === "string" ? parse(want[key]) : want[key];
      if (!Number.isFinite(w)) assert.ok(Object.is(g, w), `${path} ${key}: ${g}, NumPy ${w}`);
      else assert.ok(Math.abs(g - w) <= TOLERANCE * scale, `${path} ${key}: ${g}, NumPy ${w} (|difference| ${Math.abs(g - w)} > ${TOLERANCE} × ${scale})`);
    }
    assert.deepEqual(got.bins.map((r) => Number(r[2])), want.counts, `${path}: the histogram's counts`);
    assert.deepEqual(got.drawn, want.counts, `${path}: the counts drawn`);
    const edges = [...got.bins.map((r) => parse(r[0])), parse(got.bins[got.bins.length - 1][1])];
    assert.deepEqual(edges, want.edges, `${path}: the histogram's edges`);
    return got;
  }

  it("gives a <f8 array's statistics with NaNs, infinities and zeros as NumPy does", async () => {
    await openStats(join(OUT, "f8.npy"), "f8.npy");
    const got = await same(join(OUT, "f8.npy"), "", 50);
    // Its infinities: np.nanmean is NaN (both signs), the finite values' mean a number.
    assert.equal(got.stats.mean, "nan");
    assert.notEqual(got.stats.finiteMean, "nan");
    await page.screenshot({ path: join(OUT, "f8.png"), fullPage: true });
  });

  it("bins values on and beside the bins' edges as np.histogram does", async () => {
    await openStats(join(OUT, "edges.npy"), "edges.npy");
    await same(join(OUT, "edges.npy"), "", 97);
  });

  it("gives a slice's statistics (NumPy's a[index]) of a Fortran-order volume", async () => {
    await openStats(join(OUT, "volume.npy"), "volume.npy");
    // The slice the image view shows (its slicer at the middle of axis 0, at first).
    await page.click(`${STATS} [data-testid=stats-shown]`);
    await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === "done", {}, STATS);
    const shown = await page.$eval(`${STATS} [data-testid=stats-slice]`, (el) => el.value);
    assert.equal(shown, "8, 0:64, 0:48");
    await same(join(OUT, "volume.npy"), "", 16, shown);
    for (const index of ["3", "-1, 5:-8:3", ":, 7, :"]) await same(join(OUT, "volume.npy"), "", 16, index);
    await same(join(OUT, "volume.npy"), "", 16);
    // A slice NumPy reads backwards, refused with its reason.
    await page.$eval(`${STATS} [data-testid=stats-slice]`, (el) => (el.value = "2:9, ::-1"));
    await page.click(`${STATS} [data-testid=stats-run]`);
    await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === "failed", {}, STATS);
    const message = await page.$eval(".panel:not([hidden]) [data-testid=error]", (el) => el.textContent);
    assert.equal(message, "slice '2:9, ::-1': entry 2 ('::-1') has a step below 1 (this page reads slices forward)");
    await page.$eval(`${STATS} [data-testid=stats-slice]`, (el) => (el.value = ""));
  });

  it("gives an <i8 array's extremes and sum exactly, datetimes as their counts with NaT apart", async () => {
    await openStats(join(OUT, "i8.npy"), "i8.npy");
    await same(join(OUT, "i8.npy"), "", 20);
    await openStats(join(OUT, "dt.npy"), "dt.npy");
    const got = await same(join(OUT, "dt.npy"), "", 30);
    assert.equal(got.stats.nans, "200");
  });

  it("gives a nested float32 field's and a subarray field's statistics over the 1M traces", async () => {
    await openStats(TRACES, "traces.npy");
    const options = await page.$$eval(`${STATS} [data-testid=stats-column] option`, (os) => os.map((o) => o.value));
    assert.deepEqual(options, ["trace_id", "receiver.x", "receiver.y", "receiver.z", "t0", "dt", "flags", "samples"]);
    // One value in all: the range widened by 0.5 each way, float32 edges.
    await same(TRACES, "receiver.z", 20);
    await same(TRACES, "samples", 64);
    await page.screenshot({ path: join(OUT, "traces.png"), fullPage: true });
  });

  it("stops reading at once when cancelled, and says so", async () => {
    await page.select(`${STATS} [data-testid=stats-column]`, "samples");
    const before = await page.evaluate(() => globalThis.sliced);
    await page.click(`${STATS} [data-testid=stats-run]`);
    await page.waitForFunction((sel) => document.querySelector(`${sel} [data-testid=stats-progress]`).value > 0.05, {}, STATS);
    const atCancel = await page.$eval(`${STATS} [data-testid=stats-cancel]`, (button) => {
      button.click();
      return globalThis.sliced;
    });
    await page.waitForFunction((sel) => document.querySelector(sel).dataset.state === "cancelled", {}, STATS);
    await new Promise((r) => setTimeout(r, 1500));
    const later = await page.evaluate(() => globalThis.sliced);
    assert.equal(later, atCancel, "no byte is read after Cancel");
    const size = statSync(TRACES).size;
    assert.ok(atCancel - before < size, `${atCancel - before} bytes read before the cancel, of ${size}`);
    const status = await page.$eval(`${STATS} [data-testid=stats-status]`, (el) => el.textContent);
    assert.match(status, /^samples: cancelled after [\d,]+ rows; nothing computed$/);
    // Nothing of the run before (the same column's, complete) is left shown.
    const left = await page.$eval(STATS, (el) => ({
      stats: el.querySelectorAll("[data-stat]").length,
      bins: el.querySelectorAll("[data-count]").length,
      counts: el.querySelector("canvas")?.dataset.counts ?? null,
    }));
    assert.deepEqual(left, { stats: 0, bins: 0, counts: null });
  });

  it("filters the traces' rows as NumPy's boolean mask does, built with the form", async () => {
    await page.$eval(`${STATS} [data-testid=filter-expr]`, (el) => (el.value = ""));
    for (const [field, op, value] of [["flags", "==", "1"], ["t0", ">", "0.5"]]) {
      await page.select(`${STATS} [data-testid=filter-field]`, field);
      await page.select(`${STATS} [data-testid=filter-op]`, op);
      await page.$eval(`${STATS} [data-testid=filter-value]`, (el, v) => (el.value = v), value);
      await page.click(`${STATS} [data-testid=filter-add]`);
    }
    const expression = await page.$eval(`${STATS} [data-testid=filter-expr]`, (el) => el.value);
    assert.equal(expression, "flags == 1 && t0 > 0.5");
    await filtered("flags-t0", 1000);
    await page.screenshot({ path: join(OUT, "filter.png"), fullPage: true });
    // Subarray values, a nested field, || and !, typed.
    await page.$eval(`${STATS} [data-testid=filter-expr]`, (el) => (el.value = "(samples[3] > 500 && samples[3] <= 502.5) || !(receiver.x < 518737.5)"));
    await filtered("samples", 735);
    // A row's number shows it in the rows grid.
    await page.click(`${STATS} [data-testid=filter-rows] tbody tr:nth-child(2) th button`);
    await page.waitForFunction(() => document.querySelector('.panel:not([hidden]) .grid-row[aria-selected="true"]')?.dataset.row === "501");
  });

  /** Runs the expression typed; its count and first rows equal NumPy's mask `name`'s. */
  async function filtered(name, shown, file = TRACES, rows = 1_000_000) {
    await page.click(`${STATS} [data-testid=filter-run]`);
    await page.waitForFunction((sel) => ["done", "error", "failed"].includes(document.querySelector(sel).dataset.filter ?? ""), { timeout: 120_000 }, STATS);
    const want = numpy("filter", file, name, String(shown));
    const got = await page.$eval(STATS, (section) => ({
      state: section.dataset.filter,
      status: section.querySelector("[data-testid=filter-status]").textContent,
      rows: [...section.querySelectorAll("[data-testid=filter-rows] tbody tr")].map((tr) => [...tr.children].map((c) => c.textContent)),
    }));
    assert.equal(got.state, "done", got.status);
    assert.match(got.status, new RegExp(`^${want.count.toLocaleString("en")} of ${rows.toLocaleString("en")} rows match`));
    assert.equal(got.rows.length, Math.min(shown, want.count));
    assert.deepEqual(got.rows.map((r) => Number(r[0])), want.rows);
    assert.deepEqual(got.rows.slice(0, 50), want.printed.slice(0, 50));
  }

  it("says where an expression is wrong, and which fields there are", async () => {
    await page.click(".panel:not([hidden]) [data-testid=view-stats]");
    const error = async (text) => {
      await page.$eval(`${STATS} [data-testid=filter-expr]`, (el, t) => (el.value = t), text);
      await page.click(`${STATS} [data-testid=filter-run]`);
      await page.waitForFunction((sel) => document.querySelector(sel).dataset.filter === "error", {}, STATS);
      return page.$eval(`${STATS} [data-testid=filter-error]`, (el) => el.textContent);
    };
    assert.equal(await error("flags = 1"), "at character 7: unexpected '=' (equality is ==)\n  flags = 1\n        ^");
    assert.equal(
      await error("flag == 1"),
      "at character 1: no field 'flag': the fields are trace_id, receiver.x, receiver.y, receiver.z, t0, dt, flags, samples[i]\n  flag == 1\n  ^",
    );
    assert.match(await error("(t0 > 1"), /^at character 8: expected '\)' to close the '\(' at character 1, found the end/);
    assert.match(await error("samples > 1"), /^at character 9: field 'samples' holds 64 values a row: pick one, as samples\[0\]/);
    assert.match(await error("samples[64] > 1"), /^at character 8: index 64 is out of range for axis 0 of 'samples' \(length 64\)/);
    assert.match(await error("t0 > 'x'"), /^at character 6: field 't0' holds <f8 values: compare it with a number/);
    assert.deepEqual(pageErrors, []);
  });

  it("is reached with the keyboard", async () => {
    await page.focus(".panel:not([hidden]) [data-testid=view-rows]");
    await page.keyboard.press("ArrowRight");
    await page.waitForFunction(() => !document.querySelector(".panel:not([hidden]) .view[data-view=stats]").hidden);
    const focused = await page.evaluate(() => document.activeElement?.dataset.testid);
    assert.equal(focused, "view-stats");
  });

  it("filters text, 64-bit integers beyond 2**53 exactly, and NaNs as NumPy does; a boolean's statistics", async () => {
    await openStats(join(OUT, "records.npy"), "records.npy");
    await page.$eval(`${STATS} [data-testid=filter-expr]`, (el) => (el.value = '(name == "ünï" && n > 9007199254740993) || (name >= \'ccc\' && x != x)'));
    await filtered("records", 1000, join(OUT, "records.npy"), 100_000);
    // A boolean field's statistics: as 0 and 1.
    await same(join(OUT, "records.npy"), "ok", 2);
  });

  it("says why a 2-d record array's rows are not filtered", async () => {
    await openStats(join(OUT, "grid.npy"), "grid.npy");
    const note = await page.$eval(`${STATS} [data-testid=filter-note]`, (el) => el.textContent);
    assert.equal(note, "rows are filtered in one-dimensional record arrays; this one has shape (3, 4)");
    assert.equal(await page.$(`${STATS} [data-testid=filter-expr]`), null);
  });
});
