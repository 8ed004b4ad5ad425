// The viewer's image view in Debian's Chromium, on arrays NumPy wrote: an image (512 x 512
// <f4 with NaN and +-inf) in three colormaps and two contrasts, a photo (128 x 192 x 3 u1)
// as RGB and one channel of it (the RGB toggle off), RGBA floats (clipped, NaN), a volume (16 x 64 x 64) sliced along its middle axis and shown transposed, a 4-d
// (t, z, y, x) Fortran-order series, a boolean mask and a complex signal (magnitude and
// phase). For each, pixels read back from the canvas at chosen array indices equal the
// colours numpy_image.py computes with the same tables and mapping, the hover text equals
// NumPy's str() of the element, and the saved PNG is the slice's size (its IHDR). A 4 GiB
// image's overview reads under 16 MB, counted by a wrapped Blob.prototype.slice (not the
// page's own count), then a zoom reads the region at full density. Screenshots go to
// target/npy-js/viewer/ (image.png, volume.png).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { viewerSession } from "./chromium.js";
import { ROOT, SCRATCH, python } from "./support.js";

const OUT = join(SCRATCH, "viewer-image");
const NUMPY = join(ROOT, "npy-js", "tests", "viewer", "numpy_image.py");
const COLORMAPS = join(ROOT, "npy-js", "viewer", "colormaps.json");
/** The large image: 4 GiB of <f4 (32,768 x 32,768), sparse on disk. */
const LARGE = [32_768, 32_768];
/** The most bytes the overview may read. */
const OVERVIEW_BUDGET = 16_000_000;

/** NumPy's side (numpy_image.py), its stdout. */
function numpy(...args) {
  return execFileSync(python(), [NUMPY, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
}

/** A screenshot into this test's own folder (tests run at once empty theirs when they start). */
async function keep(page, name) {
  await page.screenshot({ path: join(OUT, name) });
}

/** The width and height a PNG's IHDR gives. */
function pngSize(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "a PNG signature");
  assert.equal(Buffer.from(bytes.subarray(12, 16)).toString("latin1"), "IHDR");
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  return [view.getUint32(16), view.getUint32(20)];
}

describe("the image view in Chromium", { timeout: 300_000 }, () => {
  const viewer = viewerSession();
  /** @type {any} */ let page;
  /** @type {any[]} */ let cases;
  const pageErrors = viewer.pageErrors;

  before(async () => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    cases = JSON.parse(numpy("make", OUT, COLORMAPS));
    numpy("large", OUT, String(LARGE[0]), String(LARGE[1]));
    // An independent count of the bytes the page reads from Files (globalThis.sliced).
    await viewer.open({ mounts: [["/", join(ROOT, "npy-js")]], countSlices: true });
    page = viewer.page;
  });

  after(() => viewer.close(join(OUT, "last.png")));

  const shown = ".panel:not([hidden]) .view[data-view=image]:not([hidden])";
  const canvasOf = `${shown} [data-testid=image-canvas]`;

  /** Opens DIR/name as a File in a new tab; resolves once its image is drawn. */
  async function openFile(name) {
    const before = await page.evaluate(() => globalThis.npyViewer.tabs.length);
    const input = await page.$("[data-testid=files]");
    await input.uploadFile(join(OUT, name));
    await page.waitForFunction((n, label) => globalThis.npyViewer.tabs.length > n && globalThis.npyViewer.firstRows[label] !== undefined, {}, before, name);
    const error = await page.$eval(".panel:not([hidden]) [data-testid=error]", (el) => (el.hidden ? "" : el.textContent));
    assert.equal(error, "", `${name}: no error`);
    await page.waitForSelector(canvasOf);
  }

  /** Waits for the canvas to be drawn after `change` ran in the page with `arg`. */
  async function redrawn(change, arg) {
    const before = await page.$eval(canvasOf, (el) => Number(el.dataset.drawn));
    await page.evaluate(change, arg);
    await page.waitForFunction((sel, n) => Number(document.querySelector(sel)?.dataset.drawn) > n, {}, canvasOf, before);
  }

  /** Sets a select of the image view and waits for the redraw. */
  async function choose(testid, value) {
    await redrawn(
      ([sel, v]) => {
        const el = document.querySelector(sel);
        if (el.value === v) {
          // Already so: redraw all the same, so the wait below ends.
          el.dispatchEvent(new Event("change"));
          return;
        }
        el.value = v;
        el.dispatchEvent(new Event("change"));
      },
      [`${shown} [data-testid=${testid}]`, value],
    );
  }

  /** Applies a case's view settings (axes, sliders, colormap, contrast, complex part). */
  async function setUp(c) {
    if (c.view.rgb === false) {
      await redrawn((sel) => document.querySelector(sel).click(), `${shown} [data-testid=slice-rgb]`);
    }
    if (c.view.rows !== undefined) await choose("slice-rows", String(c.view.rows));
    if (c.view.cols !== undefined) await choose("slice-cols", String(c.view.cols));
    for (const [axis, value] of Object.entries(c.view.at ?? {})) {
      await redrawn(
        ([sel, v]) => {
          const el = document.querySelector(sel);
          el.value = v;
          el.dispatchEvent(new Event("input"));
        },
        [`${shown} [data-testid=slice-axis-${axis}]`, String(value)],
      );
      // The last slider's slice drawn, not an earlier one still on its way.
      await page.waitForFunction((sel, a, v) => JSON.parse(document.querySelector(sel).dataset.slice ?? "[]")[a] === v, {}, canvasOf, Number(axis), value);
    }
    if (c.mode === "scalar" || c.mode === "complex") {
      await choose("image-map", c.map);
      await choose("image-contrast", String(c.contrast));
    }
    if (c.mode === "complex") await choose("image-part", c.part);
  }

  /** The canvas's colour at the centre of slice pixel (r, c). */
  async function colours(samples) {
    return page.$eval(
      canvasOf,
      (el, points) => {
        const zoom = Number(el.dataset.zoom);
        const g = el.getContext("2d");
        return points.map(([r, c]) => {
          const x = Math.floor(Number(el.dataset.x) + c * zoom + zoom / 2);
          const y = Math.floor(Number(el.dataset.y) + r * zoom + zoom / 2);
          return [...g.getImageData(x, y, 1, 1).data.slice(0, 3)];
        });
      },
      samples,
    );
  }

  /** The hover text over slice pixel (r, c): [index, value]. */
  async function hover(r, c, index) {
    const { x, y, zoom, box } = await page.$eval(canvasOf, (el) => {
      el.scrollIntoView({ block: "start" });
      const b = el.getBoundingClientRect();
      return { x: Number(el.dataset.x), y: Number(el.dataset.y), zoom: Number(el.dataset.zoom), box: { left: b.left, top: b.top } };
    });
    await page.mouse.move(box.left + x + c * zoom + zoom / 2, box.top + y + r * zoom + zoom / 2);
    const want = `a[${index.join(", ")}]`;
    await page.waitForFunction((sel, w) => document.querySelector(sel)?.textContent === w, {}, `${shown} [data-testid=hover-index]`, want);
    return page.$eval(`${shown} [data-testid=hover-value]`, (el) => el.textContent);
  }

  it("draws each array as NumPy's colours, prints hovered values as NumPy, saves PNGs of the slice's size", async () => {
    const opened = new Set();
    for (const c of cases) {
      if (!opened.has(c.file)) {
        await openFile(c.file);
        opened.add(c.file);
      }
      await setUp(c);
      const size = await page.$eval(canvasOf, (el) => [Number(el.dataset.rows), Number(el.dataset.cols), Number(el.dataset.zoom), el.dataset.level]);
      assert.deepEqual(size.slice(0, 2), c.size, `${c.name}: the slice's size`);
      assert.ok(size[2] >= 1 && Number.isInteger(size[2]), `${c.name}: each array pixel covers whole canvas pixels (zoom ${size[2]})`);
      assert.equal(size[3], "full", `${c.name}: read whole`);
      const got = await colours(c.samples);
      for (const [i, [r, col]] of c.samples.entries()) {
        assert.deepEqual(got[i], c.colours[i], `${c.name}: pixel (${r}, ${col}), a[${c.indices[i].join(", ")}] = ${c.texts[i]}`);
      }
      for (const i of [0, 1, 2, c.samples.length - 1]) {
        const [r, col] = c.samples[i];
        assert.equal(await hover(r, col, c.indices[i]), c.texts[i], `${c.name}: the hover text of a[${c.indices[i].join(", ")}]`);
      }
      if (c.name === "image") {
        // From the keyboard: a pan left by 32 pixels, and the line says the centre pixel.
        await page.focus(canvasOf);
        await page.keyboard.press("ArrowLeft");
        const [r, col] = await page.$eval(canvasOf, (el) => {
          const z = Number(el.dataset.zoom);
          return [Math.floor((el.height / 2 - Number(el.dataset.y)) / z), Math.floor((el.width / 2 - Number(el.dataset.x)) / z)];
        });
        const want = `a[${r}, ${col}]`;
        await page.waitForFunction((sel, w) => document.querySelector(sel)?.textContent === w, {}, `${shown} [data-testid=hover-index]`, want);
        const text = await page.$eval(`${shown} [data-testid=hover-value]`, (el) => el.textContent);
        assert.equal(text, numpy("str", join(OUT, c.file), String(r), String(col)), `${c.name}: the centre pixel's value after a key`);
        // Zoomed in, a pointer resting on a pixel reads it once: moves within it read
        // nothing more, the next pixel one element.
        await page.keyboard.press("+");
        await page.keyboard.press("+");
        const z = await page.$eval(canvasOf, (el) => Number(el.dataset.zoom));
        assert.ok(z >= 3, `zoomed in to ${z} canvas pixels an element`);
        const sliced = () => page.evaluate(() => globalThis.sliced);
        let before = await sliced();
        await hover(r, col + 1, [r, col + 1]);
        const one = (await sliced()) - before;
        assert.ok(one > 0, `a hover reads its element (${one} bytes)`);
        const { x, y, box } = await page.$eval(canvasOf, (el) => {
          const b = el.getBoundingClientRect();
          return { x: Number(el.dataset.x), y: Number(el.dataset.y), box: { left: b.left, top: b.top } };
        });
        before = await sliced();
        for (let k = 0; k < 10; k++) {
          const d = (k % 3) - 1;
          await page.mouse.move(box.left + x + (col + 1) * z + z / 2 + d, box.top + y + r * z + z / 2 - d);
        }
        await hover(r, col + 2, [r, col + 2]);
        assert.equal((await sliced()) - before, one, "moves within a pixel read nothing; the next pixel one element");
        await page.keyboard.press("0");
        await keep(page, "image.png");
      }
      if (c.name === "volume") await keep(page, "volume.png");
      await page.evaluate(() => (globalThis.npyViewer.lastExport = null));
      await page.click(`${shown} [data-testid=image-png]`);
      await page.waitForFunction(() => globalThis.npyViewer.lastExport?.name.endsWith(".png"));
      const png = new Uint8Array(await page.evaluate(async () => [...new Uint8Array(await globalThis.npyViewer.lastExport.blob.arrayBuffer())]));
      assert.deepEqual(pngSize(png), [c.size[1], c.size[0]], `${c.name}: the PNG is the slice's width and height`);
    }
    assert.deepEqual(pageErrors, []);
  });

  it("shows a large image's overview from under 16 MB, then reads the region zoomed into", async () => {
    const before = await page.evaluate(() => globalThis.sliced);
    await openFile("large.npy");
    await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.level === "overview", {}, canvasOf);
    const read = (await page.evaluate(() => globalThis.sliced)) - before;
    assert.ok(read > 0 && read < OVERVIEW_BUDGET, `the overview read ${read} bytes`);
    const overview = await page.$eval(canvasOf, (el) => JSON.parse(el.dataset.slice));
    assert.ok(overview[0][2] > 1, `the overview takes every ${overview[0][2]}th row`);
    // Zoomed in to 1 array pixel per screen pixel around the centre: the region on screen at full density.
    await page.focus(canvasOf);
    const zoomIn = async () => {
      const z = await page.$eval(canvasOf, (el) => Number(el.dataset.zoom));
      if (z >= 1) return false;
      await page.keyboard.press("+");
      return true;
    };
    while (await zoomIn());
    // Counted from the last zoom on: a refinement of an earlier zoom stops at once.
    await page.evaluate(() => (globalThis.sliced = 0));
    await page.waitForFunction(
      (sel) => {
        const el = document.querySelector(sel);
        return el?.dataset.level === "refined" && JSON.parse(el.dataset.fine)[0][2] === 1;
      },
      {},
      canvasOf,
    );
    const region = await page.$eval(canvasOf, (el) => JSON.parse(el.dataset.fine));
    assert.equal(region[1][2], 1, "columns at full density");
    const after = await page.evaluate(() => globalThis.sliced);
    const [rows, cols] = [region[0][1] - region[0][0], region[1][1] - region[1][0]];
    // Rows 128 KiB apart, each read alone: exactly the region's bytes, and at most the one
    // pixel a key says at the canvas's centre (image.js's showPixel: a read of its 4 bytes),
    // whose landing races the counter's reset (it landed after it on an idle machine).
    const region4 = rows * cols * 4;
    assert.ok(after === region4 || after === region4 + 4, `the zoom read ${after} bytes for ${rows} x ${cols} pixels (${region4})`);
    // The region's pixels, coloured with the overview's contrast, are NumPy's.
    const overviewIndex = await page.$eval(canvasOf, (el) => el.dataset.slice);
    const want = JSON.parse(numpy("large-colours", join(OUT, "large.npy"), overviewIndex, JSON.stringify(region), COLORMAPS));
    const got = await colours(want.pixels.map(([r, c]) => [r, c]));
    for (const [i, [r, c, rgb]] of want.pixels.entries()) assert.deepEqual(got[i], rgb, `large.npy: pixel (${r}, ${c})`);
    assert.deepEqual(pageErrors, []);
  });
});
