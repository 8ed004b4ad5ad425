// What the tests share: where the corpus and the scratch directory are, NumPy's values of
// the corpus (made by numpy_values.py with the Python CI uses), and values in the
// canonical text numpy_values.py writes (canonical.js, which the browser test's page
// imports too).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export { canonical, canonicalFloat } from "./canonical.js";

const here = dirname(fileURLToPath(import.meta.url));
/** The repository's root. */
export const ROOT = resolve(here, "../..");
/** NumPy's reference corpus, beside the checkout. */
export const CORPUS = resolve(ROOT, "../shared/corpus/public");
/** Scratch space of the tests, under target/. */
export const SCRATCH = join(ROOT, "target", "npy-js");

/**
 * The Python with NumPy: $NPY_PYTHON (cargo xtask sets it), else the venv `cargo xtask
 * venv` makes. The tests need it; its absence fails them, saying how to make it.
 */
export function python() {
  const candidates = [process.env.NPY_PYTHON, join(ROOT, "target", "numpy-venv", "bin", "python")];
  const found = candidates.find((p) => p && existsSync(p));
  if (!found) {
    throw new Error("these tests compare with NumPy: set NPY_PYTHON, or run `cargo xtask venv` to make target/numpy-venv");
  }
  return found;
}

/** Runs a Python script of these tests with NumPy; its stdout. */
export function runPython(script, ...args) {
  return execFileSync(python(), [join(here, script), ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
}

let expected;
/** NumPy's values of every corpus array (numpy_values.py), made once per run. */
export function numpyValues() {
  if (expected === undefined) {
    if (!existsSync(CORPUS)) throw new Error(`the NumPy corpus is missing: ${CORPUS} (../shared beside the checkout)`);
    mkdirSync(SCRATCH, { recursive: true });
    const out = join(SCRATCH, `numpy-values-${process.pid}.json`);
    runPython("numpy_values.py", CORPUS, out);
    expected = JSON.parse(readFileSync(out, "utf8"));
  }
  return expected;
}

/** The corpus's manifest: NumPy's headers, shapes and hashes of every file. */
export function manifest() {
  return JSON.parse(readFileSync(join(CORPUS, "manifest.json"), "utf8"));
}

/**
 * NumPy's values of `dir/stem.npy`, as make_files.py's `expect` wrote them: `{descr,
 * shape, columns: {path: {bytes, width} | {strings}}}`, `bytes` each leaf's values
 * little-endian (raveled as a column gives them), `width` the bytes of one element's.
 */
export function numpyExpected(dir, stem) {
  const want = JSON.parse(readFileSync(join(dir, `${stem}.expect.json`), "utf8"));
  for (const column of Object.values(want.columns)) {
    if (column.bin !== undefined) column.bytes = readFileSync(join(dir, column.bin));
  }
  return want;
}

/** The typed array that holds the values of each scalar type `numpyExpected` writes. */
export const HELD = {
  f8: Float64Array, f4: Float32Array, c16: Float64Array, c8: Float32Array,
  i8: BigInt64Array, i4: Int32Array, i2: Int16Array, i1: Int8Array,
  u8: BigUint64Array, u4: Uint32Array, u2: Uint16Array, u1: Uint8Array, b1: Uint8Array,
};

/** A column of `numpyExpected` as the typed array its values are held in. */
export function numpyTyped(column) {
  const { bytes } = column;
  return new HELD[column.type](bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

/**
 * Elements `start` to `end` of NumPy's values (`numpyExpected`) as `rows()` gives them: a
 * record's fields by name, nested records as objects, a field of several values (a
 * subarray, a complex number) as a typed array of them.
 */
export function numpyRows(want, start, end) {
  const rows = Array.from({ length: end - start }, () => ({}));
  for (const [path, column] of Object.entries(want.columns)) {
    const names = path.split(".");
    const typed = column.strings ?? numpyTyped(column);
    const per = column.strings ? 1 : column.width / typed.BYTES_PER_ELEMENT;
    rows.forEach((row, r) => {
      let at = row;
      for (const name of names.slice(0, -1)) at = at[name] ??= {};
      const k = start + r;
      at[names[names.length - 1]] = per === 1 ? typed[k] : typed.slice(k * per, (k + 1) * per);
    });
  }
  return rows;
}

/** The bytes of a typed array's values. */
export function bytesOf(typed) {
  return Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength);
}

/**
 * Asserts that `values` (a column's `data`: a typed array or strings) are NumPy's values
 * `want` (a column of `numpyExpected`) of elements `start` to `end`, naming the first
 * element that differs.
 */
export function assertValues(values, want, start, end, what) {
  if (want.strings !== undefined) {
    const strings = want.strings.slice(start, end);
    assert.equal(values.length, strings.length, `${what}: ${values.length} values, NumPy has ${strings.length}`);
    const at = strings.findIndex((s, i) => values[i] !== s);
    assert.equal(at, -1, `${what}: element ${start + at} is ${JSON.stringify(values[at])}, NumPy's ${JSON.stringify(strings[at])}`);
    return;
  }
  const got = bytesOf(values);
  const expected = want.bytes.subarray(start * want.width, end * want.width);
  assert.equal(got.length, expected.length, `${what}: ${got.length} bytes of values, NumPy has ${expected.length}`);
  if (!got.equals(expected)) {
    let at = 0;
    while (got[at] === expected[at]) at++;
    assert.fail(`${what}: element ${start + Math.floor(at / want.width)} differs from NumPy's (byte ${at} of the values)`);
  }
}

/**
 * Asserts that every column of `array` holds NumPy's values (`numpyExpected`) of
 * elements `start` to `end`.
 */
export function assertColumns(array, want, start, end, what) {
  const columns = array.columns();
  assert.deepEqual(Object.keys(columns), Object.keys(want.columns), what);
  for (const [path, column] of Object.entries(columns)) assertValues(column.data, want.columns[path], start, end, `${what} '${path}'`);
}
