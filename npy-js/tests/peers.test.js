// What the JavaScript readers npy is compared with do today with NumPy's files: the
// README's comparison table, asserted cell by cell, so that a peer that changes (a fix, a
// new bug) fails this test and the table is changed with it.
//
// Each cell is what the reader gives for one of NumPy's files (its reference corpus, made
// by np.save and np.savez): "yes" (NumPy's values, shape and order), "wrong" (it gives
// something, but not NumPy's values or shape: `why` says what), or "no" (it throws:
// `throws` matches the error). Values are compared as the corpus tests compare npy's
// (tests/support.js: NumPy's values as numpy_values.py writes them).
//
// The peers are the package's pinned dev dependencies (package.json): npyjs, numpy-parser
// (`fromArrayBuffer`) and loaders.gl's NPYLoader (through @loaders.gl/core's `parse`, as
// its users call it); their versions are asserted too. npy-js/README.md's table is
// checked against these cells: a Markdown table whose header names the peers
// (npyjs, numpy-parser, loaders.gl), a row per feature whose first cell names it as
// FEATURES' `readme` matches, each peer's cell starting with its verdict (yes/no/wrong,
// or ✓/✗/⚠). The table as it stands is printed as a diagnostic, for the README.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";

import { parse as loadersParse } from "@loaders.gl/core";
import { NPYLoader } from "@loaders.gl/textures";
import * as npyjs from "npyjs";

import { load, loadNpz, save } from "../js/node.js";
import { CORPUS, ROOT, canonical, numpyValues } from "./support.js";

const require = createRequire(import.meta.url);
const numpyParser = require("numpy-parser");
const PACKAGE = join(ROOT, "npy-js");

/** Strings of `<U4`, more than npyjs's `String.fromCodePoint(...codes)` takes as arguments. */
const MANY_STRINGS = 100_000;

/**
 * The features (the table's rows): the file each is read from, and the README row that
 * states it (`readme`, tried in this order: the first that matches a row's first cell).
 */
const FEATURES = [
  { key: "plain", label: "plain little-endian `<f8`", file: "scalar/le_f8.npy", readme: /plain|little[- ]endian/i },
  { key: "big", label: "big-endian `>f8`", file: "scalar/be_f8.npy", readme: /big[- ]endian/i },
  { key: "record", label: "record array (seismic traces)", file: "record/traces_packed.npy", readme: /record|struct/i },
  {
    key: "many",
    label: `${MANY_STRINGS.toLocaleString("en")} \`<U4\` strings`,
    file: undefined,
    readme: /100[, ]?000|100k|many|large/i,
    optional: true,
  },
  { key: "unicode", label: "`U` strings (CJK, non-BMP)", file: "string/le_U10.npy", readme: /\bU\b|unicode|string/i },
  { key: "npz", label: "`.npz` archive", file: "npz/positional_stored.npz", readme: /npz|archive/i },
  { key: "fortran", label: "Fortran order", file: "fortran/3x4_le_f8_F.npy", readme: /fortran/i },
];

/**
 * Each reader: its README column (`column`, matched against the header's cells); how it
 * is called on a file's bytes (an ArrayBuffer of its own, as npyjs, numpy-parser and
 * loaders.gl take them), giving `{data, shape, fortranOrder}` of the array (or `{members}`
 * of an archive); its version; and what it does with each feature (`cells`).
 */
const READERS = [
  {
    name: "npy",
    column: /^[`*[]*npy(?![\w-])/i,
    version: JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")).version,
    read: (buffer) => {
      const bytes = new Uint8Array(buffer);
      if (bytes[0] === 0x50) {
        return { members: Object.fromEntries([...loadNpz(bytes)].map(([name, a]) => [name, ofNpy(a)])) };
      }
      return ofNpy(load(bytes));
    },
    cells: {
      plain: { verdict: "yes" },
      big: { verdict: "yes" },
      record: { verdict: "yes" },
      many: { verdict: "yes" },
      unicode: { verdict: "yes" },
      npz: { verdict: "yes" },
      fortran: { verdict: "yes" },
    },
  },
  {
    name: "npyjs",
    column: /npyjs/i,
    package: "npyjs",
    read: (buffer) => {
      const got = npyjs.parse(buffer);
      return { data: got.data, shape: got.shape, fortranOrder: got.fortranOrder };
    },
    cells: {
      plain: { verdict: "yes" },
      big: { verdict: "no", throws: /^Error: Unsupported dtype: >f8$/ },
      record: { verdict: "no", throws: /^Error: Malformed \.npy header$/ },
      // String.fromCodePoint(...all code points): a stack overflow past ~100k arguments.
      many: { verdict: "no", throws: /^RangeError: Maximum call stack size exceeded$/ },
      // Cut into strings by UTF-16 units after String.fromCodePoint: a non-BMP character
      // (two units) shifts every string after it; 7 strings for 6.
      unicode: { verdict: "wrong", why: "values" },
      npz: { verdict: "no", throws: /^Error: Not an \.npy file$/ },
      // The data in storage order and `fortranOrder: true`, as npy gives them.
      fortran: { verdict: "yes" },
    },
  },
  {
    name: "numpy-parser",
    column: /numpy-parser/i,
    package: "numpy-parser",
    read: (buffer) => {
      const got = numpyParser.fromArrayBuffer(buffer);
      return { data: got.data, shape: got.shape, fortranOrder: false };
    },
    cells: {
      // Right values, but a 1-D shape (13,) comes as [13, 1] (its header rewrite).
      plain: { verdict: "wrong", why: "shape" },
      // Its own bug: the error message names an undefined variable.
      big: { verdict: "no", throws: /^ReferenceError: dtype is not defined$/ },
      record: { verdict: "no", throws: /^SyntaxError: .*JSON/ },
      // It lowercases the whole header: `<U4` becomes `<u4`, and the strings' code points
      // come as a Uint32Array (`<U10` has no such twin, and throws).
      many: { verdict: "wrong", why: "values" },
      unicode: { verdict: "no", throws: /^ReferenceError: dtype is not defined$/ },
      npz: { verdict: "no", throws: /^Error: unknown file type/ },
      fortran: { verdict: "no", throws: /^Error: NPY file is written in Fortran byte order/ },
    },
  },
  {
    name: "loaders.gl NPYLoader",
    column: /loaders\.gl|NPYLoader/i,
    package: "@loaders.gl/textures",
    read: async (buffer) => {
      const got = await loadersParse(buffer, NPYLoader, { worker: false });
      return { data: got.data, shape: got.header.shape, fortranOrder: got.header.fortran_order };
    },
    cells: {
      plain: { verdict: "yes" },
      big: { verdict: "no", throws: /^Error: Incorrect endianness$/ },
      record: { verdict: "no", throws: /^SyntaxError: .*JSON/ },
      many: { verdict: "no", throws: /^Error: Unimplemented type <U4$/ },
      unicode: { verdict: "no", throws: /^Error: Unimplemented type <U10$/ },
      npz: { verdict: "no", throws: /^SyntaxError: .*JSON/ },
      // The header's `True` is no JSON (its parser replaces only `False`).
      fortran: { verdict: "no", throws: /^SyntaxError: .*JSON/ },
    },
  },
];

/** An NpyArray as the readers' common form: a plain array's data, or a record's columns. */
function ofNpy(array) {
  if (array.dtype.kind !== "record") return { data: array.data, shape: [...array.shape], fortranOrder: array.fortranOrder };
  const columns = array.columns();
  return {
    columns: Object.fromEntries(Object.entries(columns).map(([path, c]) => [path, { data: c.data, dtype: c.dtype }])),
    shape: [...array.shape],
    fortranOrder: array.fortranOrder,
  };
}

/** The `type` of a plain descr as the manifest writes it (`'<f8'` → `f8`). */
function typeOf(descr) {
  return descr.replace(/^'[<>|=]?/, "").replace(/'$/, "");
}

/** NumPy's arrays: each file's (and archive member's) entry of numpy_values.py, and the generated one's. */
let expected;
function numpy() {
  if (expected === undefined) {
    expected = new Map();
    for (const e of numpyValues()) {
      const list = expected.get(e.file) ?? [];
      list.push(e);
      expected.set(e.file, list);
    }
  }
  return expected;
}

/** The strings of the `many` feature, and their file (np.save's bytes: npy writes them byte for byte as NumPy). */
const manyStrings = Array.from({ length: MANY_STRINGS }, (_, i) => `s${i % 1000}`);
const manyFile = save({ dtype: "<U4", data: manyStrings });

function bytesOf(feature) {
  const bytes = feature.file === undefined ? manyFile : readFileSync(join(CORPUS, feature.file));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}

/** NumPy's arrays of a feature's file: `[{member, descr, shape, fortranOrder, columns}]`. */
function wantOf(feature) {
  if (feature.file === undefined) {
    return [{ member: null, descr: "'<U4'", shape: [MANY_STRINGS], fortran_order: false, columns: { "": { values: manyStrings } } }];
  }
  return numpy().get(feature.file);
}

/**
 * Whether `got` (a reader's one array) is NumPy's `want`: undefined when it is, else what
 * differs ("values" or "shape").
 */
function differs(got, want) {
  const paths = Object.keys(want.columns);
  for (const path of paths) {
    const column = got.columns ? got.columns[path] : path === "" ? { data: got.data, dtype: { type: typeOf(want.descr) } } : undefined;
    if (column === undefined || column.data === undefined) return "values";
    let values;
    try {
      values = canonical(column.dtype, column.data);
    } catch {
      return "values";
    }
    if (JSON.stringify(values) !== JSON.stringify(want.columns[path].values)) return "values";
  }
  if (JSON.stringify([...got.shape]) !== JSON.stringify(want.shape)) return "shape";
  const ordered = want.shape.filter((d) => d > 1).length > 1;
  if (ordered && Boolean(got.fortranOrder) !== want.fortran_order) return "shape";
  return undefined;
}

/** What `reader` does with `feature`: `{verdict, why?, error?}`. */
async function outcome(reader, feature) {
  let got;
  try {
    got = await reader.read(bytesOf(feature));
  } catch (e) {
    return { verdict: "no", error: `${e?.constructor?.name}: ${e?.message}` };
  }
  const want = wantOf(feature);
  if (got.members !== undefined) {
    const names = want.map((w) => w.member.replace(/\.npy$/, ""));
    if (JSON.stringify(Object.keys(got.members)) !== JSON.stringify(names)) return { verdict: "wrong", why: "values" };
    for (const w of want) {
      const why = differs(got.members[w.member.replace(/\.npy$/, "")], w);
      if (why) return { verdict: "wrong", why };
    }
    return { verdict: "yes" };
  }
  if (want.length !== 1) return { verdict: "wrong", why: "values" };
  const why = differs(got, want[0]);
  return why ? { verdict: "wrong", why } : { verdict: "yes" };
}

/** The outcomes, found once for every test below. */
const found = new Map();
async function outcomes() {
  if (found.size === 0) {
    for (const reader of READERS) {
      for (const feature of FEATURES) found.set(`${reader.name}\0${feature.key}`, await outcome(reader, feature));
    }
  }
  return found;
}

const versionOf = (reader) =>
  reader.version ?? JSON.parse(readFileSync(join(PACKAGE, "node_modules", reader.package, "package.json"), "utf8")).version;

test("the peers are the versions package.json pins", () => {
  const pins = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")).devDependencies;
  for (const reader of READERS.filter((r) => r.package)) assert.equal(versionOf(reader), pins[reader.package], reader.package);
  assert.equal(versionOf({ package: "@loaders.gl/core" }), pins["@loaders.gl/core"]);
});

for (const reader of READERS) {
  for (const feature of FEATURES) {
    test(`${reader.name}: ${feature.label}`, async () => {
      const cell = reader.cells[feature.key];
      const got = (await outcomes()).get(`${reader.name}\0${feature.key}`);
      const says = `${reader.name} on ${feature.file ?? "the generated file"}: ${JSON.stringify(got)}; the table says ${JSON.stringify(cell)} (change the table, here and in the README)`;
      assert.equal(got.verdict, cell.verdict, says);
      if (cell.verdict === "no") assert.match(got.error, cell.throws, says);
      if (cell.verdict === "wrong") assert.equal(got.why, cell.why, says);
    });
  }
}

/** A cell as the README writes it: the verdict, and why or what it throws. */
function cellText(reader, feature) {
  const cell = reader.cells[feature.key];
  const got = found.get(`${reader.name}\0${feature.key}`);
  if (cell.verdict === "yes") return "yes";
  if (cell.verdict === "wrong") return `wrong ${cell.why}`;
  return `no (${got?.error?.split(":")[0] ?? "throws"})`;
}

/** The table as Markdown, features by readers. */
function markdown() {
  const header = ["", ...READERS.map((r) => `${r.name} ${versionOf(r)}`)];
  const rows = FEATURES.map((f) => [f.label, ...READERS.map((r) => cellText(r, f))]);
  return [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

/** A README cell's verdict: yes, no or wrong (or their marks), from its first word. */
function readmeVerdict(text) {
  const t = text.trim().replace(/^[*_`]+/, "");
  if (/^(yes|✓|✅|✔)/i.test(t)) return "yes";
  if (/^(no|✗|❌|✘|throws)/i.test(t)) return "no";
  if (/^(wrong|⚠|partly|partial)/i.test(t)) return "wrong";
  return undefined;
}

test("the README's comparison table says what the peers do", async (t) => {
  await outcomes();
  t.diagnostic("the table as the peers stand:");
  for (const line of markdown().split("\n")) t.diagnostic(line);
  const readme = join(PACKAGE, "README.md");
  assert.ok(existsSync(readme), "npy-js/README.md is missing");
  const lines = readFileSync(readme, "utf8").split("\n");
  const split = (line) => line.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
  const start = lines.findIndex((l) => l.trim().startsWith("|") && /npyjs/.test(l) && /numpy-parser/.test(l) && /loaders\.gl/.test(l));
  assert.notEqual(start, -1, "npy-js/README.md has no table naming npyjs, numpy-parser and loaders.gl");
  const header = split(lines[start]);
  const rows = [];
  for (let i = start + 2; i < lines.length && lines[i].trim().startsWith("|"); i++) rows.push(split(lines[i]));
  for (const feature of FEATURES) {
    const row = rows.find((r) => FEATURES.find((f) => f.readme.test(r[0])) === feature);
    if (row === undefined) {
      assert.ok(feature.optional, `the README's table has no row for ${feature.label}`);
      continue;
    }
    for (const reader of READERS) {
      const column = header.findIndex((h) => reader.column.test(h));
      if (column === -1) continue;
      const verdict = readmeVerdict(row[column] ?? "");
      assert.equal(verdict, reader.cells[feature.key].verdict, `README: ${feature.label} × ${reader.name} says "${row[column]}"`);
    }
  }
});
