// What the tests share: where the corpus and the scratch directory are, NumPy's values of
// the corpus (made by numpy_values.py with the Python CI uses), and values in the
// canonical text numpy_values.py writes (canonical.js, which the browser test's page
// imports too).

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
