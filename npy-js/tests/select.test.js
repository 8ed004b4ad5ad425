// NpyFile.select: NumPy's basic indexing read by ranges. For many indexes of arrays NumPy
// wrote (C and Fortran order, 0-d to 4-d, records, big-endian, complex, bools, objects;
// numbers, negative numbers, whole axes, steps, empty ranges), the result equals NumPy's
// `a[...]` (shape and bytes in C order), and the reads, counted at a `{byteLength, slice}`
// source, take exactly the selected elements' bytes plus gaps of at most 64 KiB between
// them (two reads are never closer than that). Bad indexes give an NpyError naming the
// file; an aborted signal stops the reads.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";

import { NpyError, open } from "../js/node.js";
import { SCRATCH, runPython } from "./support.js";

const DIR = join(SCRATCH, "select");
/** Reads closer than this are one read (open.js's GAP). */
const GAP = 64 << 10;

/** @type {any[]} */
let cases;

/**
 * A `{byteLength, slice}` source over `bytes` that records each read.
 * @param {Uint8Array} bytes
 */
function counting(bytes) {
  /** @type {[number, number][]} */
  const reads = [];
  return {
    reads,
    source: {
      byteLength: bytes.length,
      slice: async (/** @type {number} */ s, /** @type {number} */ e) => {
        reads.push([s, e]);
        return bytes.slice(s, e);
      },
    },
  };
}

/** Opens DIR/name.npy through a counting source; its reads so far dropped (the header's). */
async function opened(name) {
  const { reads, source } = counting(new Uint8Array(readFileSync(join(DIR, `${name}.npy`))));
  const file = /** @type {import("../js/open.js").NpyFile} */ (await open(source, { name: `${name}.npy` }));
  reads.length = 0;
  return { file, reads };
}

/**
 * Checks that `reads` take the elements at storage positions `needed` (sorted) and no
 * more than the gaps of at most GAP bytes between them.
 */
function checkReads(reads, needed, itemsize, dataOffset, what) {
  const sorted = [...reads].sort((a, b) => a[0] - b[0]);
  const starts = needed.map((p) => dataOffset + p * itemsize);
  let k = 0;
  for (const [i, [s, e]] of sorted.entries()) {
    if (i > 0) assert.ok(s - sorted[i - 1][1] > GAP, `${what}: reads ${JSON.stringify(sorted[i - 1])} and ${JSON.stringify([s, e])} are within ${GAP} bytes, not one read`);
    assert.equal(s, starts[k], `${what}: read ${i} starts at ${s}, not at the next element taken (${starts[k]})`);
    let last = starts[k];
    k++;
    while (k < starts.length && starts[k] < e) {
      assert.ok(starts[k] - (last + itemsize) <= GAP, `${what}: a gap of more than ${GAP} bytes inside read ${i}`);
      last = starts[k];
      k++;
    }
    assert.equal(e, last + itemsize, `${what}: read ${i} ends at ${e}, not after its last element (${last + itemsize})`);
  }
  assert.equal(k, starts.length, `${what}: ${starts.length - k} elements taken were never read`);
}

describe("NpyFile.select", () => {
  before(() => {
    mkdirSync(DIR, { recursive: true });
    cases = JSON.parse(runPython("numpy_select.py", DIR));
  });

  it("equals NumPy's a[...] for many indexes, reading only the elements taken", async () => {
    assert.ok(cases.length > 300, `${cases.length} cases`);
    const files = new Set();
    for (const c of cases.filter((c) => c.file !== "long_c")) {
      files.add(c.file);
      const { file, reads } = await opened(c.file);
      const what = `${c.file}[${JSON.stringify(c.index)}]`;
      const got = await file.select(c.index);
      assert.deepEqual([...got.shape], c.shape, `${what}: shape`);
      assert.equal(got.fortranOrder, false, `${what}: C order`);
      if (c.values !== undefined) {
        assert.deepEqual(Array.from(/** @type {unknown[]} */ (got.data), Number), c.values, `${what}: values`);
        continue;
      }
      assert.equal(Buffer.from(got.bytes).toString("hex"), c.hex, `${what}: bytes`);
      checkReads(reads, c.needed, c.itemsize, file.dataOffset, what);
    }
    assert.equal(files.size, 15);
  });

  it("takes a column of a long matrix, three million pieces, in reads of at most 16 MiB", async () => {
    const long = cases.filter((c) => c.file === "long_c");
    assert.equal(long.length, 2);
    for (const c of long) {
      const { file, reads } = await opened("long_c");
      const got = await file.select(c.index);
      assert.deepEqual(got.shape, c.shape);
      assert.equal(createHash("sha256").update(got.bytes).digest("hex"), c.sha256, `long_c[${JSON.stringify(c.index)}]`);
      // Each read is what one read in flight holds: joined pieces up to MAX_READ.
      const widest = Math.max(...reads.map(([s, e]) => e - s));
      assert.ok(widest <= (16 << 20) + 8, `a read of ${widest} bytes`);
      assert.ok(reads.length >= 2, `${reads.length} reads`);
    }
  });

  it("reads exactly the elements taken when they are farther apart than 64 KiB", async () => {
    for (const name of ["wide_c", "tall_f"]) {
      for (const c of cases.filter((c) => c.file === name)) {
        const { file, reads } = await opened(name);
        await file.select(c.index);
        const read = reads.reduce((n, [s, e]) => n + e - s, 0);
        const rows = c.index.some((e) => Array.isArray(e) && e[2] === 2) || typeof c.index[0] === "number";
        if (rows) assert.equal(read, c.needed.length * 4, `${name}[${JSON.stringify(c.index)}]: ${read} bytes read for ${c.needed.length} elements`);
        assert.ok(reads.length <= c.needed.length);
      }
    }
  });

  it("refuses indexes out of range with an NpyError naming the file", async () => {
    const { file, reads } = await opened("three_c");
    const bad = [
      [4],
      [-5],
      [0, 5],
      [[0, 5]],
      [[2, 1]],
      [null, [0, 6]],
      [null, null, [0, 6, 0]],
      [0.5],
      [0, 0, 0, 0],
      [null, "1"],
      "0",
    ];
    for (const index of bad) {
      await assert.rejects(
        // @ts-ignore: deliberately wrong types
        file.select(index),
        (e) => e instanceof NpyError && e.kind === "usage" && e.file === "three_c.npy" && e.message.startsWith("reading 'three_c.npy': select: "),
        JSON.stringify(index),
      );
    }
    assert.equal(reads.length, 0, "nothing is read for a bad index");
  });

  it("stops when its signal is aborted", async () => {
    const { file, reads } = await opened("wide_c");
    const stop = new AbortController();
    stop.abort(new Error("enough"));
    await assert.rejects(file.select([null, [5, 10]], { signal: stop.signal }), /enough/);
    assert.equal(reads.length, 0);
    const late = new AbortController();
    const pending = file.select([null, [0, 100_000, 20_000]], { signal: late.signal });
    late.abort(new Error("late"));
    await assert.rejects(pending, /late/);
    assert.ok(reads.length <= 8, `${reads.length} of 40 reads made after the abort`);
  });
});
