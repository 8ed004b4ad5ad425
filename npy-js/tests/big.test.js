// Arrays of several MiB, which the package converts a MiB at a time (npy-js/src/decode.rs
// and encode.rs, fed by js/array.js and js/save.js): NumPy writes them with their values
// (make_files.py big: plain and big-endian numbers, booleans, strings, records with a
// nested record, a big-endian field and a subarray). Each must read as NumPy's values
// whole (`load`: its data, its columns, its rows from a start no piece begins at) and by
// ranges (`open(path).rows(a, b)`); and, written from NumPy's values (`save`), be
// np.save's file byte for byte, which NumPy loads equal (numpy_same.py). A conversion that
// put every piece at the start of its output, or took every piece from the start of its
// input, fails here.

import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, test } from "node:test";

import { load, open, save } from "../js/node.js";
import { HELD, SCRATCH, assertColumns, assertValues, numpyExpected, numpyTyped, runPython } from "./support.js";

const DIR = join(SCRATCH, "big");
/** make_files.py's `big` arrays. */
const NAMES = ["f8", "i4", "u1", "c16", "b1", "f4_be", "i8_be", "U6", "S5", "records"];
/** Those whose `rows()` are checked too: numbers, big-endian integers, strings, records. */
const ROWS = ["f8", "i8_be", "U6", "records"];
/** Bytes of elements the package converts at once (decode.rs and encode.rs: PIECE_BYTES). */
const PIECE = 1 << 20;

before(() => {
  mkdirSync(DIR, { recursive: true });
  runPython("make_files.py", "big", DIR);
});

/** Rows `a` to `b` of a file: `a` at no piece's start, a little over two pieces' worth. */
function range(array) {
  const perPiece = Math.max(1, Math.floor(PIECE / array.dtype.itemsize));
  const a = 12_345;
  assert.notEqual(a % perPiece, 0);
  const b = a + 2 * perPiece + 1_000;
  assert.ok(b < array.rowCount);
  assert.ok((b - a) * array.dtype.itemsize > 2 * PIECE, "the range spans more than two pieces");
  return [a, b];
}

test("several MiB of each kind load as NumPy's values: data, columns and rows", () => {
  for (const name of NAMES) {
    const want = numpyExpected(DIR, name);
    const a = load(readFileSync(join(DIR, `${name}.npy`)), { name });
    assert.equal(a.descr, want.descr, name);
    assert.deepEqual([...a.shape], want.shape, name);
    assert.ok(a.bytes.length > 2 * PIECE, `${name}: ${a.bytes.length} bytes are not more than two pieces`);
    assertColumns(a, want, 0, a.size, `${name}: columns()`);
    if (a.dtype.kind !== "record") assertValues(a.data, want.columns[""], 0, a.size, `${name}: data`);
    // rows(a, b): elements a to b as values, converted from element a on (one array of a
    // kind: JavaScript values of millions of elements take a second an array).
    if (!ROWS.includes(name)) continue;
    const [from, to] = range(a);
    const rows = a.rows(from, to);
    // Each field of the rows (a record's by its path; a subarray's values in a row) as a column.
    for (const [path, column] of Object.entries(want.columns)) {
      const field = rows.flatMap((row) => {
        let v = row;
        for (const key of path === "" ? [] : path.split(".")) v = v[key];
        return ArrayBuffer.isView(v) ? [...v] : [v];
      });
      const values = column.strings ? field : HELD[column.type].from(field);
      assertValues(values, column, from, to, `${name}: rows(${from}, ${to}) '${path}'`);
    }
  }
});

test("several MiB of each kind read by ranges from a path are NumPy's values", async () => {
  for (const name of NAMES) {
    const want = numpyExpected(DIR, name);
    const file = await open(join(DIR, `${name}.npy`));
    try {
      const [a, b] = range(file);
      const part = await file.rows(a, b);
      assert.deepEqual([...part.shape], [b - a], name);
      assertColumns(part, want, a, b, `${name}: rows ${a} to ${b}, columns()`);
      if (part.dtype.kind !== "record") assertValues(part.data, want.columns[""], a, b, `${name}: rows ${a} to ${b}, data`);
    } finally {
      await file.close();
    }
  }
});

test("several MiB of each kind written from NumPy's values are np.save's files", () => {
  const out = join(SCRATCH, "big-saved");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const name of NAMES) {
    const want = numpyExpected(DIR, name);
    const header = load(readFileSync(join(DIR, `${name}.npy`)));
    /** @type {Record<string, unknown>} */
    const columns = {};
    for (const leaf of header.leaves) {
      const c = want.columns[leaf.path];
      columns[leaf.path] = c.strings ?? numpyTyped(c);
    }
    const spec = header.dtype.kind === "record" ? { dtype: want.descr, columns } : { dtype: header.dtype.str, data: columns[""] };
    const bytes = save({ ...spec, shape: want.shape });
    writeFileSync(join(out, `${name}.npy`), bytes);
    assert.ok(Buffer.from(bytes).equals(readFileSync(join(DIR, `${name}.npy`))), `${name}: not np.save's bytes`);
  }
  assert.match(runPython("numpy_same.py", DIR, out), new RegExp(`^${NAMES.length} files equal$`, "m"));
  // Kept only while they differ: 50 MB.
  rmSync(out, { recursive: true, force: true });
});
