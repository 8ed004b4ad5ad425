// Object arrays, which NumPy pickles: every object fixture NumPy wrote (tests/data/object,
// pickle protocols 0 to 5, ragged arrays, np.save(dict), the standard library's types,
// StringDType) decodes to the values its manifest records, without running any pickle;
// arrays the package writes from JavaScript values load in NumPy (allow_pickle=True) equal
// to what they stand for (xtask/object_check.py); pickles that would run code are refused.
// Values given as {pytype, repr} (datetimes, zones, Decimal, Fraction, UUID, paths, range,
// slice, classes) hold Python's repr() of them, exactly (object_reprs.py, from each file).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { NpyArray, NpyError, NpzWriter, load, loadNpz, save } from "../js/node.js";
import { ROOT, SCRATCH, canonicalFloat, python, runPython } from "./support.js";

const DATA = join(ROOT, "tests", "data");
const hex = (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
const floatOf = (text) => ({ nan: NaN, inf: Infinity, "-inf": -Infinity })[text] ?? Number(text);

/** The Python type name each tag of the manifest's encoding stands for, when it has no JavaScript value of its own. */
const PYTYPES = {
  date: "datetime.date",
  time: "datetime.time",
  datetime: "datetime.datetime",
  timedelta: "datetime.timedelta",
  timezone: "datetime.timezone",
  zoneinfo: "zoneinfo.ZoneInfo",
  decimal: "decimal.Decimal",
  fraction: "fractions.Fraction",
  uuid: "uuid.UUID",
  range: "range",
  slice: "slice",
  type: "type",
};

/**
 * Asserts that JavaScript value `got` is what the manifest's tagged value `want` decodes
 * to; `reprs` is Python's tree of repr() texts over the same value (object_reprs.py).
 */
function same(got, want, where, reprs) {
  if (want === null || typeof want === "boolean" || typeof want === "string") {
    assert.equal(got, want, where);
    return;
  }
  const [[tag, inner]] = Object.entries(want);
  switch (tag) {
    case "int":
      assert.ok(typeof got === "bigint" ? true : Number.isSafeInteger(got), `${where}: ${typeof got}`);
      assert.equal(String(got), inner, where);
      if (typeof got === "bigint") assert.ok(BigInt(inner) > BigInt(Number.MAX_SAFE_INTEGER) || BigInt(inner) < -BigInt(Number.MAX_SAFE_INTEGER), `${where}: a safe integer as a bigint`);
      return;
    case "float":
      assert.equal(typeof got, "number", where);
      assert.equal(canonicalFloat(got), canonicalFloat(floatOf(inner)), where);
      return;
    case "complex":
      assert.deepEqual(Object.keys(got), ["real", "imag"], where);
      assert.equal(canonicalFloat(got.real), canonicalFloat(floatOf(inner[0])), where);
      assert.equal(canonicalFloat(got.imag), canonicalFloat(floatOf(inner[1])), where);
      return;
    case "bytes":
    case "bytearray":
      assert.ok(got instanceof Uint8Array, where);
      assert.equal(hex(got), inner, where);
      return;
    case "list":
    case "tuple":
      assert.ok(Array.isArray(got), where);
      assert.equal(got.length, inner.length, where);
      inner.forEach((w, i) => same(got[i], w, `${where}[${i}]`, reprs?.[i]));
      return;
    case "deque":
      same(got, { list: inner[0] }, where, reprs);
      return;
    case "defaultdict":
      same(got, { dict: inner[1] }, where, reprs);
      return;
    case "masked":
      assert.equal(got.pytype, "numpy.ma.MaskedArray", where);
      same(got.data, inner[0], `${where}.data`, reprs?.[0]);
      same(got.mask, inner[1], `${where}.mask`);
      if (inner[2] === null) assert.equal(got.fillValue, null, where);
      else same(got.fillValue, inner[2], `${where}.fillValue`);
      return;
    case "set":
    case "frozenset":
      assert.ok(got instanceof Set, where);
      same([...got], { list: inner }, where, reprs);
      return;
    case "dict":
    case "ordereddict":
    case "counter": {
      const strKeys = inner.every(([k]) => typeof k === "string");
      const entries = strKeys ? Object.entries(got) : [...got.entries()];
      assert.ok(strKeys ? Object.getPrototypeOf(got) === Object.prototype : got instanceof Map, where);
      assert.equal(entries.length, inner.length, where);
      // A plain object lists integer-like keys first; compare by key.
      inner.forEach(([k, v], i) => {
        const match = entries.find(([key]) => { try { same(key, k, "", reprs?.[i]?.[0]); return true; } catch { return false; } });
        assert.ok(match, `${where}: key ${JSON.stringify(k)}`);
        same(match[1], v, `${where}[${JSON.stringify(k)}]`, reprs?.[i]?.[1]);
      });
      return;
    }
    case "ndarray":
      assert.ok(got instanceof NpyArray, where);
      assert.equal(got.descr, inner.descr, where);
      assert.deepEqual([...got.shape], inner.shape, where);
      assert.equal(got.fortranOrder && got.shape.filter((d) => d > 1).length > 1, inner.fortran && inner.shape.filter((d) => d > 1).length > 1, where);
      if (inner.items) same(got.data, { list: inner.items }, where, reprs);
      else assert.equal(hex(got.bytes), inner.hex, where);
      return;
    case "scalar":
      assert.ok(got instanceof NpyArray, where);
      assert.deepEqual([...got.shape], [], where);
      assert.equal(got.descr, inner.descr, where);
      assert.equal(hex(got.bytes), inner.hex, where);
      return;
    case "path":
      assert.equal(got.pytype, `pathlib.${inner[0]}`, where);
      assert.equal(typeof reprs, "string", `${where}: Python gives no repr here`);
      assert.equal(got.repr, reprs, `${where}: not Python's repr()`);
      return;
    default:
      assert.ok(Object.hasOwn(PYTYPES, tag), `${where}: unknown tag ${tag}`);
      assert.equal(got.pytype, PYTYPES[tag], where);
      assert.equal(typeof reprs, "string", `${where}: Python gives no repr here`);
      assert.equal(got.repr, reprs, `${where}: not Python's repr()`);
  }
}

/** Python's repr() trees of every object fixture (object_reprs.py), made once. */
let reprTrees;
function pythonReprs(file) {
  if (reprTrees === undefined) {
    mkdirSync(SCRATCH, { recursive: true });
    const out = join(SCRATCH, `object-reprs-${process.pid}.json`);
    runPython("object_reprs.py", DATA, out);
    reprTrees = JSON.parse(readFileSync(out, "utf8"));
  }
  assert.ok(Object.hasOwn(reprTrees, file), `object_reprs.py gave nothing for ${file}`);
  return reprTrees[file];
}

const manifest = JSON.parse(readFileSync(join(DATA, "manifest.json"), "utf8")).filter((e) => e.file.startsWith("object/"));

test("there are NumPy's object fixtures to read", () => assert.ok(manifest.length >= 40));

for (const entry of manifest) {
  test(`NumPy's ${entry.file}`, () => {
    const bytes = readFileSync(join(DATA, entry.file));
    if (entry.file.endsWith(".npz")) {
      const archive = loadNpz(bytes, { name: entry.file });
      assert.deepEqual(archive.names, entry.members.map((m) => m.name));
      for (const m of entry.members) {
        const a = archive.get(m.name);
        assert.equal(a.descr, m.descr);
        if (m.objects) same(a.data, { list: m.objects }, m.name, pythonReprs(entry.file)[m.name]);
      }
      return;
    }
    const a = load(bytes, { name: entry.file });
    assert.equal(a.descr, entry.descr);
    assert.deepEqual([...a.shape], entry.shape);
    same(a.data, { list: entry.objects }, entry.file, pythonReprs(entry.file));
    assert.deepEqual(a.rows(0, Math.min(2, a.size)), a.data.slice(0, 2));
  });
}

test("pickles that would run code are refused, naming the global and the file", () => {
  // np.save of an object array whose element reduces to os.system('echo hi'), by hand.
  const pickle = Buffer.concat([
    Buffer.from("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00", "latin1"),
    Buffer.from("\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x07echo hi\x94\x85\x94R\x94.", "latin1"),
  ]);
  const header = save({ dtype: "object", data: [null] }).subarray(0, 128);
  const evil = Buffer.concat([header, pickle]);
  assert.throws(
    () => load(evil, { name: "evil.npy" }),
    (e) => e instanceof NpyError && e.kind === "pickle" && e.message.startsWith("reading 'evil.npy'") && /os\.system/.test(e.message),
  );
  // A memo bomb is stopped by the budget, not by the machine's memory.
  assert.throws(() => load(readFileSync(join(DATA, "object", "int.npy")), { maxObjectBytes: 16 }), (e) => e instanceof NpyError && /max_object_bytes|budget|bytes/.test(e.message));
});

/** The tagged value (xtask/object_check.py's encoding) of what a JavaScript value is written as. */
function tag(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number") return { float: Number.isNaN(v) ? "nan" : v === Infinity ? "inf" : v === -Infinity ? "-inf" : Object.is(v, -0) ? "-0.0" : String(v) };
  if (typeof v === "bigint") return { int: String(v) };
  if (v instanceof Uint8Array) return { bytes: hex(v) };
  if (Array.isArray(v)) return { list: v.map(tag) };
  if (v instanceof Map) return { dict: [...v].map(([k, x]) => [tag(k), tag(x)]) };
  if (v instanceof NpyArray) {
    return { py: `np.frombuffer(bytearray.fromhex('${hex(v.bytes)}'), dtype=np.lib.format.descr_to_dtype(${v.descr})).reshape(${JSON.stringify([...v.shape]).replace("[", "(").replace("]", ",)").replace("(,)", "()")})` };
  }
  return { dict: Object.entries(v).map(([k, x]) => [k, tag(x)]) };
}

test("object arrays written from JavaScript values load in NumPy as what they stand for", () => {
  const dir = join(SCRATCH, "object-check");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const ragged = [new Float64Array([1, 2, 3]), new Float64Array([4])].map((d) => load(save(d)));
  const rec = load(save({ dtype: "[('a', '<i4'), ('b', '>f8')]", rows: [{ a: 1, b: 2.5 }] }));
  const values = [
    "text", "", "温度 🌊", null, true, false, 1.5, -0, NaN, Infinity, 1e300, 3n, -(2n ** 70n), 2n ** 63n,
    new Uint8Array([0, 255, 39]), [1.5, ["x", null]], { a: 1.5, b: [null, "z"] }, new Map([[7n, "seven"], ["k", [true]]]),
    ragged[0], ragged[1], rec,
  ];
  const cases = {
    "values.npy": { data: values, shape: [values.length], fortranOrder: false },
    "grid_F.npy": { data: ["r0c0", "r1c0", "r0c1", 4n, null, 2.5], shape: [2, 3], fortranOrder: true },
    "zero_d.npy": { data: [{ config: { lr: 0.001, layers: [64n, 32n] } }], shape: [], fortranOrder: false },
  };
  for (const [file, c] of Object.entries(cases)) {
    const bytes = save({ dtype: "object", ...c });
    writeFileSync(join(dir, file), bytes);
    const sidecar = { file, arrays: [{ name: null, shape: c.shape, fortran: c.fortranOrder, objects: c.data.map(tag) }] };
    writeFileSync(join(dir, `${file.replace(/\.npy$/, "")}.expect.json`), JSON.stringify(sidecar));
    // And back: the package reads what it wrote.
    assert.equal(load(bytes).data.length, c.data.length);
  }
  const archive = new NpzWriter({ compression: "deflate" }).add("labels", { dtype: "object", data: ["a", null] }).add("values", new Float64Array([1, 2])).finish();
  writeFileSync(join(dir, "archive.npz"), archive);
  writeFileSync(
    join(dir, "archive.expect.json"),
    JSON.stringify({ file: "archive.npz", arrays: [{ name: "labels", shape: [2], fortran: false, objects: ["a", null] }, { name: "values", skip: true }] }),
  );
  const report = execFileSync(python(), [join(ROOT, "xtask", "object_check.py"), dir], { encoding: "utf8" });
  assert.match(report, /^4 files checked$/m);
});

test("values no Python value stands for are refused, naming the element", () => {
  assert.throws(() => save({ dtype: "object", data: [1, () => 2] }), (e) => e instanceof NpyError && /element 1: a function/.test(e.message));
  assert.throws(() => save({ dtype: "object", data: [new Date()] }), (e) => e instanceof NpyError && /element 0: .*Date/.test(e.message));
  const loop = [];
  loop.push(loop);
  assert.throws(() => save({ dtype: "object", data: [loop] }), (e) => e instanceof NpyError && /nested deeper than 256/.test(e.message));
});
