// `table()` prints rows as NumPy prints them: for every array of NumPy's reference corpus
// and for object arrays and N-d rows np.save wrote, the first rows' and the last row's
// cells equal NumPy's str() of each leaf's part of the row (numpy_table.py); a row NumPy
// cannot print is refused, but for a generic datetime, printed as its count (as npy-core
// prints it). `split` gives each scalar of a row a column of its own.

import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";

import { NpyError, load, loadNpz } from "../js/node.js";
import { CORPUS, SCRATCH, manifest, runPython } from "./support.js";

const DIR = join(SCRATCH, "table");
rmSync(DIR, { recursive: true, force: true });
mkdirSync(DIR, { recursive: true });
runPython("numpy_table.py", "make", DIR);
const made = readdirSync(DIR).map((f) => join(DIR, f));
const files = [...manifest().map((e) => join(CORPUS, e.file)), ...made];
runPython("numpy_table.py", join(DIR, "numpy.json"), ...files);
const numpy = JSON.parse(readFileSync(join(DIR, "numpy.json"), "utf8"));

/** Checks `array`'s printed rows against NumPy's. */
function check(array, rows) {
  for (const [at, want] of Object.entries(rows)) {
    const i = Number(at);
    if (!Array.isArray(want) && /generic units/.test(want.error)) {
      // NumPy refuses to place a generic datetime in time; the package prints its count.
      const { rows: got } = array.table(i, i + 1);
      assert.match(got[0][0], /^-?\d+ generic time units$/, `row ${i}`);
      continue;
    }
    if (!Array.isArray(want)) {
      assert.throws(() => array.table(i, i + 1), (e) => e instanceof NpyError, `row ${i}: NumPy says ${want.error}`);
      continue;
    }
    const { columns, rows: got } = array.table(i, i + 1);
    assert.equal(columns.length, want.length, `row ${i}: columns ${columns}`);
    assert.deepEqual(got[0], want, `row ${i}`);
  }
}

for (const entry of numpy) {
  const name = relative(CORPUS, entry.file).startsWith("..") ? relative(DIR, entry.file) : relative(CORPUS, entry.file);
  test(`table of ${name}${entry.member ? `: ${entry.member}` : ""}`, () => {
    const bytes = readFileSync(entry.file);
    const options = { name, maxHeaderSize: 1 << 30 };
    const array = entry.member === null ? load(bytes, options) : loadNpz(bytes, options).get(entry.member.replace(/\.npy$/, ""));
    check(array, entry.rows);
  });
}

test("table() names its columns by path, and split gives each scalar of a row a column", () => {
  const array = load(readFileSync(join(DIR, "records_2d.npy")), { name: "records_2d.npy" });
  assert.deepEqual(array.table(0, 0), { columns: ["t", "z", "s"], rows: [] });
  const { columns, rows } = array.table(1, 3, { split: true });
  assert.deepEqual(columns, ["t[0]", "t[1]", "z[0]", "z[1]", "s[0][0]", "s[0][1]", "s[1][0]", "s[1][1]"]);
  assert.deepEqual(rows[0], ["2024-01-01T00:00:00.252", "2024-01-01T00:00:00.253", "(2+1j)", "(3+1.5j)", "ab", "ç", "ab", "ç"]);
  assert.equal(rows.length, 2);
  const plain = load(readFileSync(join(DIR, "cube_f.npy")), { name: "cube_f.npy" });
  const split = plain.table(2, 3, { split: true });
  assert.equal(split.columns.length, 20);
  assert.deepEqual([split.columns[0], split.columns[19]], ["[0][0]", "[3][4]"]);
  assert.equal(split.rows[0][19], String(59 / 7));
});

test("table() refuses rows out of range, naming the file", () => {
  const array = load(readFileSync(join(DIR, "cube_f.npy")), { name: "cube_f.npy" });
  for (const [a, b] of [[-1, 2], [0, 4], [2, 1], [0.5, 1]]) {
    assert.throws(() => array.table(a, b), (e) => e instanceof NpyError && e.kind === "usage" && e.message.includes("cube_f.npy"), `${a}..${b}`);
  }
});
