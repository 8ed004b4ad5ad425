// What the package writes, NumPy reads equal: every file of NumPy's corpus written back
// (`save(load(bytes))`, archives member by member through NpzWriter) must pass
// check_roundtrip.py --strict, headers byte for byte as np.save writes them; and written
// from its values alone (`save({dtype, shape, data | columns})`), every file whose values
// say all its bytes must pass it too.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";

import { NpzWriter, load, loadNpz, save } from "../js/node.js";
import { CORPUS, ROOT, SCRATCH, manifest, python } from "./support.js";

/**
 * Files whose values do not say all their bytes, so a write from values alone differs:
 * each with why. Their bytes still come back whole through `save(load(bytes))`.
 */
const NOT_FROM_VALUES = {
  "exotic/longdouble_le.npy": "long doubles are held as the nearest doubles",
  "exotic/longdouble_be_3x2.npy": "long doubles are held as the nearest doubles",
  "exotic/clongdouble_le.npy": "long doubles are held as the nearest doubles",
  "exotic/clongdouble_be_0d.npy": "long doubles are held as the nearest doubles",
  "exotic/struct_with_longdouble.npy": "long doubles are held as the nearest doubles",
  "exotic/unicode_invalid_codepoints.npy": "code units beyond Unicode are no string's",
  "exotic/bool_noncanonical.npy": "booleans other than 0 and 1 are written from bytes only",
  "struct/aligned_padding_junk.npy": "padding bytes are no field's values (np.save zeroes a new array's)",
  "struct/offsets_gap_junk.npy": "padding bytes are no field's values (np.save zeroes a new array's)",
};

/** Runs check_roundtrip.py --strict over `orig` and `out`; its report. */
function checkRoundtrip(orig, out) {
  const checker = resolve(ROOT, "../shared/tools/check_roundtrip.py");
  try {
    return execFileSync(python(), [checker, orig, out, "--strict"], { encoding: "utf8", maxBuffer: 1 << 28 });
  } catch (e) {
    assert.fail(`check_roundtrip.py failed:\n${e.stdout}${e.stderr}`);
  }
}

/** `np.savez`'s archive of `archive`'s members, each compressed as it was. */
function rewriteArchive(archive) {
  const writer = new NpzWriter();
  for (const m of archive.members) writer.add(m.name, archive.get(m.name), { compression: m.compression });
  return writer.finish();
}

/** An array written from its values: `data`, or a record's `columns`. */
function fromValues(array) {
  const spec = { dtype: array.descr, shape: [...array.shape], fortranOrder: array.fortranOrder };
  if (array.dtype.kind !== "record") return save({ ...spec, data: array.data });
  const columns = {};
  for (const [path, column] of Object.entries(array.columns())) columns[path] = column.data;
  return save({ ...spec, columns });
}

test("NumPy's corpus written back passes check_roundtrip.py --strict", () => {
  const out = join(SCRATCH, "roundtrip");
  rmSync(out, { recursive: true, force: true });
  for (const entry of manifest()) {
    const bytes = readFileSync(join(CORPUS, entry.file));
    const path = join(out, entry.file);
    mkdirSync(dirname(path), { recursive: true });
    const options = { name: entry.file, maxHeaderSize: 1 << 30 };
    writeFileSync(path, entry.kind === "npy" ? save(load(bytes, options)) : rewriteArchive(loadNpz(bytes, options)));
  }
  const report = checkRoundtrip(CORPUS, out);
  assert.match(report, new RegExp(`^${manifest().length} passed, 0 failed$`, "m"));
});

test("NumPy's corpus written from its values passes check_roundtrip.py --strict", () => {
  const base = join(SCRATCH, "from-values");
  rmSync(base, { recursive: true, force: true });
  let files = 0;
  for (const entry of manifest()) {
    if (Object.hasOwn(NOT_FROM_VALUES, entry.file)) continue;
    const bytes = readFileSync(join(CORPUS, entry.file));
    const options = { name: entry.file, maxHeaderSize: 1 << 30 };
    let written;
    if (entry.kind === "npy") {
      written = fromValues(load(bytes, options));
    } else {
      const archive = loadNpz(bytes, options);
      const writer = new NpzWriter();
      for (const m of archive.members) {
        writer.add(m.name, load(fromValues(archive.get(m.name))), { compression: m.compression });
      }
      written = writer.finish();
    }
    for (const [dir, content] of [["orig", null], ["out", written]]) {
      const path = join(base, dir, entry.file);
      mkdirSync(dirname(path), { recursive: true });
      if (content === null) copyFileSync(join(CORPUS, entry.file), path);
      else writeFileSync(path, content);
    }
    files++;
  }
  const report = checkRoundtrip(join(base, "orig"), join(base, "out"));
  assert.match(report, new RegExp(`^${files} passed, 0 failed$`, "m"));
  assert.equal(files, manifest().length - Object.keys(NOT_FROM_VALUES).length);
});
