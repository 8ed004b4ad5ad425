// The viewer's matrix grid in Debian's Chromium: arrays NumPy wrote (10,000 x 768
// embeddings, a big-endian Fortran-order matrix, a mask, a complex signal) shown a cell per
// element, each cell as NumPy prints the element, the far corner reached by the row and
// column inputs and by the keyboard, reading only the tiles on screen. Screenshots go to
// target/npy-js/viewer-matrix/.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { viewerSession } from "./chromium.js";
import { ROOT, SCRATCH, python } from "./support.js";

const OUT = join(SCRATCH, "viewer-matrix");
const NUMPY = join(ROOT, "npy-js", "tests", "viewer", "numpy_matrix.py");
/** Bytes showing the far corner of the embeddings may read: the tiles on screen. */
const CORNER_BUDGET = 1_000_000;

/** NumPy's side (numpy_matrix.py), its stdout. */
function numpy(...args) {
  return execFileSync(python(), [NUMPY, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
}

/** NumPy's printed elements of `file` at `indexes` (`[i, j]` pairs). */
function numpyCells(file, indexes) {
  return JSON.parse(numpy("cells", join(OUT, file), ...indexes.map((ix) => ix.join(","))));
}

describe("the viewer's matrix grid in Chromium", { timeout: 240_000 }, () => {
  const viewer = viewerSession();
  /** @type {any} */ let page;
  const pageErrors = viewer.pageErrors;

  before(async () => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    numpy("make", OUT);
    await viewer.open({ mounts: [["/", join(ROOT, "npy-js")]] });
    page = viewer.page;
  });

  after(async () => {
    await viewer.close(join(OUT, "last.png"));
    assert.deepEqual(pageErrors, [], "errors in the page");
  });

  /** Opens `file` of OUT in a new tab, on its matrix view. */
  async function openMatrix(file) {
    const input = await page.$("[data-testid=files]");
    await input.uploadFile(join(OUT, file));
    await page.waitForFunction((name) => globalThis.npyViewer.firstRows[name] !== undefined, {}, file);
    await page.click(".panel:not([hidden]) [data-testid=view-matrix]");
    await page.waitForSelector(".panel:not([hidden]) .view[data-view=matrix]:not([hidden])");
  }

  /** The text of cell (r, c), once printed (it must be on screen). */
  async function cell(r, c) {
    const selector = `.panel:not([hidden]) [data-cell="${r},${c}"]:not(.pending)`;
    await page.waitForSelector(selector);
    return page.$eval(selector, (el) => el.textContent);
  }

  /** Moves the grid to cell (r, c) by its row and column inputs. */
  async function go(r, c) {
    for (const [which, value] of [["matrix-row", r], ["matrix-col", c]]) {
      await page.$eval(
        `.panel:not([hidden]) [data-testid=${which}]`,
        (el, v) => {
          el.value = String(v);
          el.dispatchEvent(new Event("change"));
        },
        value,
      );
    }
  }

  it("shows 10,000 x 768 embeddings cell by cell as NumPy prints them, reading the tiles on screen", async () => {
    await openMatrix("embeddings.npy");
    const buttons = await page.$$eval(".panel:not([hidden]) .views [role=tab]:not([hidden])", (bs) => bs.map((b) => b.dataset.view));
    assert.ok(buttons.includes("rows") && buttons.includes("matrix"), `views ${buttons}`);
    const first = [[0, 0], [0, 1], [1, 0], [5, 9]];
    assert.deepEqual(await Promise.all(first.map(([r, c]) => cell(r, c))), numpyCells("embeddings.npy", first));
    const heads = await page.$$eval(".panel:not([hidden]) .matrix-cells > .head", (ds) => ds.slice(0, 4).map((d) => d.textContent));
    assert.deepEqual(heads, ["", "0", "1", "2"]);

    const before = await page.evaluate(() => globalThis.npyViewer.bytesRead["embeddings.npy"]);
    await go(9999, 767);
    const corner = [[9999, 767], [9998, 767], [9999, 760]];
    assert.deepEqual(await Promise.all(corner.map(([r, c]) => cell(r, c))), numpyCells("embeddings.npy", corner));
    const line = await page.$eval(".panel:not([hidden]) [data-testid=matrix-cell]", (el) => el.textContent);
    assert.equal(line, `[9999, 767] = ${numpyCells("embeddings.npy", [[9999, 767]])[0]}`);
    const read = (await page.evaluate(() => globalThis.npyViewer.bytesRead["embeddings.npy"])) - before;
    assert.ok(read > 0 && read < CORNER_BUDGET, `the far corner read ${read} bytes`);
    const total = await page.evaluate(() => globalThis.npyViewer.bytesRead["embeddings.npy"]);
    const size = statSync(join(OUT, "embeddings.npy")).size;
    assert.ok(total < size / 5, `${total} of ${size} bytes read in all`);

    // The keyboard moves the selected cell, and the line says what it holds.
    await page.focus(".panel:not([hidden]) [data-testid=matrix]");
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("ArrowUp");
    await page.waitForFunction(() => document.querySelector(".panel:not([hidden]) [data-testid=matrix-cell]")?.textContent?.startsWith("[9998, 766] = "));
    const moved = await page.$eval(".panel:not([hidden]) [data-testid=matrix-cell]", (el) => el.textContent);
    assert.equal(moved, `[9998, 766] = ${numpyCells("embeddings.npy", [[9998, 766]])[0]}`);
    await page.screenshot({ path: join(OUT, "embeddings.png") });
  });

  it("shows a big-endian Fortran-order matrix, a mask and a complex signal as NumPy prints them", async () => {
    for (const [file, shape] of [["fortran.npy", [300, 200]], ["mask.npy", [40, 50]], ["signal.npy", [30, 40]]]) {
      await openMatrix(file);
      const near = [[0, 0], [1, 2], [3, 1], [7, 5]];
      assert.deepEqual(await Promise.all(near.map(([r, c]) => cell(r, c))), numpyCells(file, near), file);
      const last = [shape[0] - 1, shape[1] - 1];
      await go(...last);
      assert.deepEqual([await cell(...last)], numpyCells(file, [last]), `${file} at ${last}`);
    }
  });

  it("shows a volume's slices: the axes chosen, a slider (and its keys) through the other", async () => {
    await openMatrix("volume.npy");
    const view = ".panel:not([hidden]) .view[data-view=matrix]";
    /** The cells at `at` ([r, c] pairs), and NumPy's of the volume at `index(r, c)`. */
    const check = async (at, index, what) => {
      const got = await Promise.all(at.map(([r, c]) => cell(r, c)));
      assert.deepEqual(got, numpyCells("volume.npy", at.map(([r, c]) => index(r, c))), what);
    };
    const at = [[0, 0], [5, 7]];
    // First axes 1 and 2, axis 0 at its middle.
    await check(at, (r, c) => [8, r, c], "axis 0 at 8");
    await page.$eval(`${view} [data-testid=slice-axis-0]`, (el) => {
      el.value = "3";
      el.dispatchEvent(new Event("input"));
    });
    await check(at, (r, c) => [3, r, c], "axis 0 at 3");
    await page.focus(`${view} [data-testid=slice-axis-0]`);
    await page.keyboard.press("ArrowRight");
    await page.waitForFunction((v) => document.querySelector(`${v} [data-testid=slice-axis-0]`)?.value === "4", {}, view);
    await check(at, (r, c) => [4, r, c], "axis 0 at 4, by its key");
    await go(63, 47);
    await check([[63, 47], [60, 40]], (r, c) => [4, r, c], "the far corner of axis 0 at 4");
    // Rows along axis 0: the columns stay axis 2, axis 1 is at its middle.
    await page.select(`${view} [data-testid=slice-rows]`, "0");
    const position = await page.$eval(`${view} [data-testid=matrix-position]`, (el) => el.textContent);
    assert.match(position, /of 16 \(axis 0\), .* of 48 \(axis 2\)$/);
    await check([[0, 0], [15, 5]], (r, c) => [r, 32, c], "axes 0 and 2, axis 1 at 32");
    // Columns before rows in the file's order: shown transposed.
    await page.select(`${view} [data-testid=slice-rows]`, "2");
    await page.select(`${view} [data-testid=slice-cols]`, "0");
    await check([[0, 0], [10, 9]], (r, c) => [c, 32, r], "axis 2 down, axis 0 across");
  });
});
