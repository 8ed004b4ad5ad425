// What the tests share: where the corpus and the scratch directory are, NumPy's values of
// the corpus (made by numpy_values.py with the Python CI uses), and values in the
// canonical text numpy_values.py writes.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

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

/** A float as numpy_values.py writes it: "nan", or the little-endian hex of the float64. */
export function canonicalFloat(x) {
  const v = Number(x);
  if (Number.isNaN(v)) return "nan";
  return Buffer.from(new Float64Array([v]).buffer).toString("hex");
}

/**
 * A leaf's values (what `data` gives for an array of that leaf's dtype) as numpy_values.py
 * writes them.
 * @param {any} dtype the leaf's dtype tree
 * @param {any} data
 */
export function canonical(dtype, data) {
  const type = dtype.type;
  if (type.startsWith("c")) {
    const out = [];
    for (let i = 0; i < data.length; i += 2) out.push([canonicalFloat(data[i]), canonicalFloat(data[i + 1])]);
    return out;
  }
  if (type.startsWith("f")) return Array.from(data, canonicalFloat);
  if (type.startsWith("S") || type.startsWith("U")) return Array.from(data);
  if (type.startsWith("V")) return Array.from(data, (v) => Buffer.from(v).toString("hex"));
  return Array.from(data, (v) => String(v));
}

/** The corpus's manifest: NumPy's headers, shapes and hashes of every file. */
export function manifest() {
  return JSON.parse(readFileSync(join(CORPUS, "manifest.json"), "utf8"));
}
