// Arrays of 2 GiB and more, opened by ranges though WebAssembly is 32-bit: a sparse 4 GiB
// `<f4` image and a 2.4 GB Fortran-order matrix written by NumPy, their header fields,
// rows and selections against NumPy's. Reading all of one, or loading its bytes, is an
// NpyError naming the file, refused before its data is read.

import assert from "node:assert/strict";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { open as openFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { NpyError, load, open } from "../js/node.js";
import { description } from "../js/described.js";
import { bound, call } from "../js/wasm.js";
import { SCRATCH, runPython } from "./support.js";

const DIR = join(SCRATCH, "large");
/** What NumPy reads of each file (make_files.py large): header fields and some rows. */
let numpy;

before(() => {
  // A run that crashed left its files: written afresh.
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  numpy = JSON.parse(runPython("make_files.py", "large", DIR));
});
after(() => {
  // 6.4 GB of holes: gone even when a test failed.
  rmSync(DIR, { recursive: true, force: true });
});

/**
 * A file as a `{byteLength, read}` source that counts the bytes read.
 * @param {string} name
 */
async function counted(name) {
  const handle = await openFile(join(DIR, name));
  const { size } = await handle.stat();
  const source = {
    name,
    byteLength: size,
    bytes: 0,
    read: async (/** @type {number} */ start, /** @type {number} */ end) => {
      source.bytes += end - start;
      const out = new Uint8Array(end - start);
      await handle.read(out, 0, out.length, start);
      return out;
    },
  };
  return { source, close: () => handle.close() };
}

/**
 * An array's values in C order, as NumPy's `tolist()` of its rows gives them (NaN for None).
 * @param {import("../js/array.js").NpyArray} a a 2-d array
 */
function rowsOf(a) {
  const [n, m] = a.shape;
  const data = /** @type {Float32Array} */ (a.data);
  const at = a.fortranOrder ? (/** @type {number} */ i, /** @type {number} */ j) => i + n * j : (i, j) => i * m + j;
  return Array.from({ length: n }, (_, i) => Array.from({ length: m }, (_, j) => data[at(i, j)]));
}

test("a 4 GiB image and a 2.4 GB Fortran-order matrix open by ranges, as NumPy reads them", async () => {
  for (const name of ["image.npy", "fortran.npy"]) {
    const want = numpy[name];
    // The files are holes but for the rows set (what keeps the test's disk use small).
    assert.ok(statSync(join(DIR, name)).blocks * 512 < 32 << 20, `${name} is not sparse`);
    const file = await open(join(DIR, name));
    try {
      assert.equal(file.kind, "npy");
      assert.deepEqual([...file.version], want.version, name);
      assert.equal(file.header, want.header, name);
      assert.equal(file.descr, want.descr, name);
      assert.deepEqual([...file.shape], want.shape, name);
      assert.equal(file.fortranOrder, want.fortranOrder, name);
      assert.equal(file.dataOffset, want.dataOffset, name);
      assert.equal(file.rowCount, want.shape[0], name);
      // Exact as a number: 4,294,967,296 is past every 32-bit count.
      assert.equal(description(file).dataLength, want.dataLength, name);
      for (const [start, stop, rows] of want.rows) {
        const part = await file.rows(start, stop);
        assert.deepEqual([...part.shape], [stop - start, want.shape[1]], `${name} rows ${start} to ${stop}`);
        assert.equal(part.fortranOrder, want.fortranOrder);
        const expected = rows.map((/** @type {(number | null)[]} */ r) => r.map((x) => (x === null ? NaN : x)));
        assert.deepEqual(rowsOf(part), expected, `${name} rows ${start} to ${stop}`);
      }
      for (const [index, shape, values] of want.selects) {
        const part = await file.select(index);
        assert.deepEqual([...part.shape], shape, `${name} select ${JSON.stringify(index)}`);
        const expected = values.map((/** @type {number | null} */ x) => (x === null ? NaN : x));
        assert.deepEqual([.../** @type {Float32Array} */ (part.data)], expected, `${name} select ${JSON.stringify(index)}`);
      }
    } finally {
      await file.close();
    }
  }
});

test("reading all of one is an NpyError naming the file, before its data is read", async () => {
  for (const name of ["image.npy", "fortran.npy"]) {
    const { source, close } = await counted(name);
    try {
      const file = await open(source);
      const header = source.bytes;
      const refused = (/** @type {unknown} */ e) =>
        e instanceof NpyError &&
        e.kind === "shape" &&
        e.file === name &&
        e.message.startsWith(`reading '${name}': invalid shape (`) &&
        /is over 2147483647, isize::MAX of this 32-bit host: the array can be read here only by ranges/.test(e.message);
      await assert.rejects(file.read(), refused, name);
      await assert.rejects(file.select([]), refused, name);
      // The fewest rows of 2 GiB or more (the image's exactly 2 GiB): too many for the module.
      const rows = Math.ceil(2 ** 31 / (4 * file.shape[1]));
      await assert.rejects(file.rows(0, rows), refused, name);
      assert.equal(source.bytes, header, `${name}: data was read`);
      // A few rows still read after the refusal.
      assert.deepEqual([...(await file.rows(1, 2)).shape], [1, file.shape[1]]);
    } finally {
      await close();
    }
  }
});

test("loading the bytes of one is an NpyError naming the file", async () => {
  // The 2.4 GB file whole in memory (its holes are zeros: the page is allocated lazily).
  const want = numpy["fortran.npy"];
  const { source, close } = await counted("fortran.npy");
  try {
    const bytes = new Uint8Array(want.fileLength);
    bytes.set(await source.read(0, want.dataOffset));
    assert.throws(
      () => load(bytes, { name: "fortran.npy" }),
      (e) =>
        e instanceof NpyError &&
        e.kind === "shape" &&
        e.file === "fortran.npy" &&
        /^reading 'fortran\.npy': invalid shape \(30000, 20000\): byte count 2400000000 is over 2147483647/.test(e.message),
    );
    // The image's first MiB: its header claims 4 GiB, which these bytes do not hold.
    const { source: image, close: closeImage } = await counted("image.npy");
    try {
      const head = await image.read(0, 1 << 20);
      assert.throws(
        () => load(head, { name: "image.npy" }),
        (e) => e instanceof NpyError && e.file === "image.npy" && e.kind === "truncated",
      );
    } finally {
      await closeImage();
    }
  } finally {
    await close();
  }
});

test("byte counts past what the 32-bit module addresses are errors, not wrapped", () => {
  // Four elements of 1 GiB are 2^32 bytes, 0 in 32 bits: they passed as no bytes at all.
  const descr = "'|V1073741824'";
  const tooMany = (/** @type {unknown} */ e) =>
    e instanceof NpyError && e.kind === "usage" && e.message === "4 times 1073741824 is more than this 32-bit module addresses";
  const none = new Uint8Array(0);
  assert.throws(() => call(() => new bound.Decoder(descr, undefined, false, false).decode(none, 4, 0, [none])), tooMany);
  assert.throws(() => call(() => new bound.Encoder(descr, false).encode(4, 0, [none])), tooMany);
  assert.throws(() => call(() => new bound.Texts(descr, [], false).rows(none, 4, 0)), tooMany);
});
