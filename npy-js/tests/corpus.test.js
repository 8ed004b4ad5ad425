// Every file of NumPy's reference corpus loads with NumPy's values: the header as NumPy
// wrote it, the data's bytes (SHA-256 against the manifest), and every leaf's values
// against what NumPy gives for them (numpy_values.py), plain arrays through `data`, records
// through `column(path)` and `columns()`, archives through `loadNpz`.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { NpyError, load, loadNpz } from "../js/node.js";
import { CORPUS, canonical, manifest, numpyValues } from "./support.js";

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

/** Checks one array against its manifest entry (header, bytes) and NumPy's values. */
function check(array, entry, numpy) {
  assert.equal(array.header, entry.header);
  assert.equal(array.descr, entry.descr);
  assert.deepEqual([...array.shape], entry.shape);
  assert.equal(array.fortranOrder, entry.fortran_order);
  assert.deepEqual([...array.version], entry.version);
  assert.equal(sha256(array.bytes), entry.sha256_data);
  const paths = Object.keys(numpy.columns);
  assert.deepEqual(array.dtype.kind === "record" ? array.fields : [""], paths);
  const columns = array.dtype.kind === "record" ? array.columns() : { "": array };
  for (const path of paths) {
    const want = numpy.columns[path];
    const column = path === "" ? array : array.column(path);
    if (want.error !== undefined) {
      assert.throws(() => column.data, (e) => e instanceof NpyError && e.kind === "invalid_value", path);
      continue;
    }
    assert.equal(column.fortranOrder && column.shape.filter((d) => d > 1).length > 1 ? "F" : "C", want.order === "F" && column.shape.filter((d) => d > 1).length > 1 ? "F" : "C");
    const leaf = column.dtype;
    assert.deepEqual(canonical(leaf, column.data), want.values, `${path}: values`);
    // columns() reads every field in one pass, to the same arrays.
    assert.deepEqual(canonical(leaf, columns[path].data), want.values, `${path}: columns()`);
  }
}

const byFile = new Map();
for (const e of numpyValues()) byFile.set(`${e.file}\0${e.member ?? ""}`, e);

for (const entry of manifest()) {
  test(`corpus ${entry.file}`, () => {
    const bytes = readFileSync(join(CORPUS, entry.file));
    if (entry.kind === "npy") {
      check(load(bytes, { name: entry.file, maxHeaderSize: 1 << 30 }), entry, byFile.get(`${entry.file}\0`));
      return;
    }
    const archive = loadNpz(bytes, { name: entry.file, maxHeaderSize: 1 << 30 });
    assert.deepEqual(archive.names, entry.members.map((m) => m.key));
    assert.deepEqual(
      archive.members.map((m) => [m.member, m.compression, m.crc32, m.compressedSize, m.size]),
      entry.members.map((m) => [m.name, m.compressed ? "deflate" : "stored", parseInt(m.crc32, 16), m.compress_size, m.file_size]),
    );
    for (const member of entry.members) {
      check(archive.get(member.key), member, byFile.get(`${entry.file}\0${member.name}`));
    }
  });
}

test("every corpus array was compared", () => {
  const arrays = manifest().reduce((n, e) => n + (e.kind === "npy" ? 1 : e.members.length), 0);
  assert.equal(numpyValues().length, arrays);
});
