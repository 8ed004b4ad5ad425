// The API as a caller meets it: views on the caller's memory, the dtype tree, rows and
// columns, saves from typed arrays, values, columns and rows, the errors for what cannot
// be, the instance that survives a panic, and declarations that match the exports.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import * as npy from "../js/node.js";
import { NpyArray, NpyError, load, save } from "../js/node.js";
import { FLOAT16, bound, call } from "../js/wasm.js";
import { CORPUS, ROOT } from "./support.js";

const corpus = (file) => readFileSync(join(CORPUS, file));

test("plain little-endian data is a view on the caller's memory, where alignment allows", () => {
  const file = save(new Float64Array([1.5, 2.5, -3]));
  // Placed at byte 64 of a larger buffer (as Node's pooled Buffers are): a view.
  const big = new Uint8Array(64 + file.length + 16);
  big.set(file, 64);
  const a = load(big.subarray(64, 64 + file.length));
  assert.equal(a.data.buffer, big.buffer);
  assert.deepEqual([...a.data], [1.5, 2.5, -3]);
  // At byte 4, the doubles are not 8-aligned: a copy, the same values.
  const odd = new Uint8Array(4 + file.length);
  odd.set(file, 4);
  const b = load(odd.subarray(4));
  assert.notEqual(b.data.buffer, odd.buffer);
  assert.deepEqual([...b.data], [1.5, 2.5, -3]);
  // Node's Buffer, an ArrayBuffer and a DataView are bytes too.
  for (const input of [Buffer.from(file), file.buffer, new DataView(file.buffer)]) assert.deepEqual([...load(input).data], [1.5, 2.5, -3]);
  // Big-endian data is converted, never a view.
  const be = load(corpus("scalar/be_f8.npy"));
  assert.ok(be.data instanceof Float64Array && be.data.buffer !== be.bytes.buffer);
});

test("values come in the natural typed array of their dtype", () => {
  const kinds = {
    "scalar/le_i8.npy": BigInt64Array,
    "scalar/le_u8.npy": BigUint64Array,
    "scalar/be_u2.npy": Uint16Array,
    "scalar/i1.npy": Int8Array,
    "scalar/b1.npy": Uint8Array,
    "scalar/le_c16.npy": Float64Array,
    "scalar/le_f2.npy": FLOAT16 ? globalThis.Float16Array : Float32Array,
    "datetime/le_M8_ns.npy": BigInt64Array,
    "exotic/longdouble_le.npy": Float64Array,
  };
  for (const [file, T] of Object.entries(kinds)) assert.ok(load(corpus(file)).data instanceof T, file);
  const c16 = load(corpus("scalar/le_c16.npy"));
  assert.equal(c16.data.length, 2 * c16.size);
  assert.equal(load(corpus("datetime/le_M8_ns.npy")).dtype.unit, "ns");
  assert.deepEqual(load(corpus("string/le_U1.npy")).data.slice(0, 3), ["x", "\u00a0", "u"]);
  assert.ok(load(corpus("string/V8.npy")).data.every((v) => v instanceof Uint8Array && v.length === 8));
});

test("the dtype tree shows nested fields, subarrays, byte order, titles and padding", () => {
  const a = load(corpus("struct/aligned_nested.npy"));
  assert.equal(a.dtype.kind, "record");
  assert.deepEqual(a.dtype.fields.map((f) => [f.name, f.offset, f.dtype.kind]), [["a", 0, "scalar"], ["b", 8, "record"], ["e", 24, "subarray"]]);
  assert.deepEqual(a.dtype.padding, [{ offset: 1, size: 7 }, { offset: 30, size: 2 }]);
  assert.deepEqual(a.dtype.fields[1].dtype.padding, [{ offset: 9, size: 7 }]);
  assert.deepEqual(a.dtype.fields[2].dtype.shape, [3]);
  const mixed = load(corpus("struct/mixed_endian.npy"));
  assert.deepEqual(mixed.dtype.fields.slice(0, 2).map((f) => f.dtype.byteOrder), ["<", ">"]);
  const titles = load(corpus("struct/titles.npy"));
  assert.deepEqual(titles.dtype.fields.map((f) => [f.name, f.title]), [["tid", "Trace identifier"], ["amp", "Amplitude (counts)"], ["plain", null]]);
  assert.equal(load(corpus("scalar/le_f8.npy")).dtype.str, "<f8");
});

test("a record's rows are objects, its columns arrays with the subarray dims", () => {
  const a = load(corpus("record/traces_be.npy"));
  const row = a.rows(1, 2)[0];
  assert.deepEqual(Object.keys(row), ["trace_id", "receiver", "t0", "dt", "flags", "samples"]);
  assert.deepEqual(Object.keys(row.receiver), ["x", "y", "z"]);
  assert.ok(row.samples instanceof Float32Array && row.samples.length === 64);
  const samples = a.column("samples");
  assert.deepEqual([...samples.shape], [48, 64]);
  assert.equal(samples.dtype.str, ">f4");
  assert.deepEqual([...samples.data.subarray(64, 128)], [...row.samples]);
  assert.equal(a.column("receiver.x").data[1], row.receiver.x);
  assert.throws(() => a.data, (e) => e instanceof NpyError && e.kind === "usage" && /column\(path\)/.test(e.message));
  assert.throws(() => a.column("receiver"), (e) => e instanceof NpyError && /no field 'receiver'.*'receiver\.x'/.test(e.message));
  assert.throws(() => a.rows(0, 49), (e) => e instanceof NpyError && /out of range/.test(e.message));
  // A column saved is the field as NumPy's a['samples'] would be saved.
  const back = load(save(samples));
  assert.deepEqual([...back.shape], [48, 64]);
  assert.equal(back.descr, "'>f4'");
});

test("save writes np.save's header for typed arrays, values, columns and rows", () => {
  const header = (bytes) => Buffer.from(bytes.subarray(10, bytes[8] + 10)).toString("latin1").trimEnd();
  assert.equal(header(save(new Float64Array(3))), "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
  assert.equal(header(save({ dtype: "int32", shape: [2, 2], data: [1, 2, 3, 4] })), "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }");
  assert.equal(header(save({ dtype: ">f8", shape: [], data: [1.5] })), "{'descr': '>f8', 'fortran_order': False, 'shape': (), }");
  const descr = "[('id', '<u4'), ('t0', '<f8')]";
  const fromRows = save({ dtype: descr, rows: [{ id: 1, t0: 0.5 }, { id: 2, t0: 1.5 }] });
  const fromColumns = save({ dtype: descr, columns: { id: new Uint32Array([1, 2]), t0: [0.5, 1.5] } });
  assert.deepEqual(fromRows, fromColumns);
  assert.deepEqual(load(fromRows).rows(), [{ id: 1, t0: 0.5 }, { id: 2, t0: 1.5 }]);
  // Versions: the oldest that fits, or the one asked for.
  assert.equal(save(new Uint8Array(1), { version: [2, 0] })[6], 2);
  assert.equal(save({ dtype: "[('温度', '<f4')]", rows: [{ 温度: 1 }] })[6], 3);
});

test("save refuses values that are not the dtype's, naming the field and element", () => {
  const refuses = (spec, pattern) => assert.throws(() => save(spec), (e) => e instanceof NpyError && pattern.test(e.message), String(pattern));
  refuses({ dtype: "|u1", data: [1, 256] }, /element 1: 256 is not a \|u1 value \(0 to 255\)/);
  refuses({ dtype: "<i8", data: [1.5] }, /element 0: 1\.5 is not a <i8 value/);
  refuses({ dtype: "<f8", data: ["x"] }, /element 0: string is not a number/);
  refuses({ dtype: "|b1", data: new Uint8Array([2]) }, /invalid value|0 or 1/);
  refuses({ dtype: "<U2", data: ["abc"] }, /element 0: 3 characters do not fit U2/);
  refuses({ dtype: "|S2", data: ["é", "ж"] }, /element 1: character U\+0436 is not a byte/);
  refuses({ dtype: "[('a', '<i4'), ('b', '<f8')]", columns: { a: new Int32Array(2) } }, /field 'b': no values given/);
  refuses({ dtype: "[('a', '<i4'), ('b', '<f8')]", columns: { a: new Int32Array(2), b: new Float64Array(3) } }, /field 'b' holds 3 values, which is not 2 elements/);
  refuses({ dtype: "[('a', '<i4')]", rows: [{ b: 1 }] }, /row 0 has no field 'a'/);
  refuses({ dtype: "<f8", shape: [2, 2], data: new Float64Array(3) }, /3 elements given for shape \[2, 2\]/);
  refuses({ dtype: "<f7", data: [] }, /f7/);
  refuses({ dtype: "<f8", data: [1], columns: {} }, /one of data, columns and rows/);
  assert.throws(() => save("x"), (e) => e instanceof NpyError && e.kind === "usage");
});

test("bad input is an NpyError naming the file, never another error", () => {
  const cases = [
    [new Uint8Array(0), "format", /shorter than the 8-byte magic/],
    [Buffer.from("PK\x03\x04 an archive", "latin1"), "format", /a zip archive \(an \.npz\), not a \.npy file: read it with loadNpz/],
    [Buffer.from("\x89PNG\r\n\x1a\n", "latin1"), "format", /bad magic/],
    [corpus("scalar/le_f8.npy").subarray(0, 100), "format", /header claims 118 bytes but the file has only 100/],
    [corpus("scalar/le_f8.npy").subarray(0, 140), "truncated", /needs 104 data bytes, only 12 present/],
  ];
  for (const [bytes, kind, pattern] of cases) {
    assert.throws(
      () => load(bytes, { name: "bad.npy" }).data,
      (e) => e instanceof NpyError && e.kind === kind && e.file === "bad.npy" && e.message.startsWith("reading 'bad.npy': ") && pattern.test(e.message),
      `${kind} ${pattern}`,
    );
  }
  assert.throws(() => load(123), (e) => e instanceof NpyError && e.kind === "usage" && /not number/.test(e.message));
  // The 2,000-field header is longer than a small limit allows.
  assert.throws(() => load(corpus("struct/fields_2000_v2.npy"), { maxHeaderSize: 10_000 }), (e) => e instanceof NpyError && e.kind === "header_too_large");
  // Code points beyond Unicode: an error when the values are asked for, as NumPy's.
  const invalid = load(corpus("exotic/unicode_invalid_codepoints.npy"), { name: "u.npy" });
  assert.throws(() => invalid.data, (e) => e instanceof NpyError && e.kind === "invalid_value" && /beyond Unicode/.test(e.message));
  assert.equal(invalid.bytes.length, 24);
});

test("after a panic (a bug), the error says so and the next call works", () => {
  assert.throws(() => call(() => bound.panicForTest()), (e) => e instanceof NpyError && e.kind === "internal" && /a panic for the test of panics/.test(e.message));
  assert.deepEqual([...load(save(new Int16Array([7]))).data], [7]);
  assert.throws(() => call(() => bound.panicForTest()), (e) => e instanceof NpyError && e.kind === "internal");
  assert.deepEqual(load(corpus("record/traces_be.npy")).rows(0, 1)[0].trace_id, 1000);
});

test("NpyArrays come only from reading; what they hold does not change", () => {
  assert.throws(() => new NpyArray(Symbol(), {}, new Uint8Array(0), {}), (e) => e instanceof NpyError && e.kind === "usage");
  const a = load(save(new Float64Array([1, 2])));
  assert.throws(() => a.shape.push(3), TypeError);
});

test("the declarations name exactly the package's exports", () => {
  const declared = readFileSync(join(ROOT, "npy-js", "index.d.ts"), "utf8");
  const values = [...declared.matchAll(/^export (?:declare )?(?:function|class) (\w+)/gm)].map((m) => m[1]).sort();
  assert.deepEqual(Object.keys(npy).sort(), values);
});

test("a header read again is the same description, and only what it was read with gives it", () => {
  const a = save(new Float64Array([1, 2, 3]));
  const b = save(new Float64Array([4, 5, 6]));
  // Tiles of one dtype and shape: one description, frozen, shared; their own values.
  const [x, y] = [load(a), load(b)];
  assert.equal(x.dtype, y.dtype);
  assert.ok(Object.isFrozen(x.dtype) && Object.isFrozen(x.leaves[0].dtype) && Object.isFrozen(x.shape));
  assert.deepEqual([...x.data, ...y.data], [1, 2, 3, 4, 5, 6]);
  assert.throws(() => {
    /** @type {any} */ (x.dtype).descr = "<f4";
  }, TypeError);
  // The same header in a file cut short, or read with a smaller maxHeaderSize, is still
  // refused as npy-core refuses it: neither is the description kept.
  assert.throws(() => load(a.subarray(0, a.length - 1)), (e) => e instanceof NpyError && /short|truncated|bytes/.test(e.message));
  assert.throws(() => load(a, { maxHeaderSize: 16 }), (e) => e instanceof NpyError && /header/.test(e.message));
  // A header of other bytes (its shape's digit changed, the data cut to fit) is read anew.
  const two = a.slice(0, a.length - 8);
  const at = new TextDecoder().decode(two.subarray(0, 128)).indexOf("(3,)");
  two[at + 1] = "2".charCodeAt(0);
  assert.deepEqual(load(two).shape, [2]);
  assert.deepEqual(load(a).shape, [3]);
  // A corrupt header of the same length as a kept one is not taken for it.
  const bad = a.slice();
  bad[10] = "[".charCodeAt(0);
  assert.throws(() => load(bad), NpyError);
  // Headers over 4 KiB (kept by none) and many headers in turn (more than are kept) read right.
  const v2 = save({ descr: "<u1", shape: [1], data: new Uint8Array([7]) }, { version: [2, 0] });
  assert.deepEqual([...load(v2).data, ...load(v2).data], [7, 7]);
  let dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }";
  dict = dict.padEnd(64 * 79 - 11) + "\n"; // 5,056 bytes with the preamble, 64-aligned
  const long = new Uint8Array(10 + dict.length + 1);
  long.set([0x93, 78, 85, 77, 80, 89, 1, 0, dict.length & 255, dict.length >> 8]);
  long.set(new TextEncoder().encode(dict), 10);
  long[long.length - 1] = 9;
  assert.ok(dict.length > 4096);
  assert.deepEqual([...load(long).data, ...load(long).data], [9, 9]);
  for (let n = 1; n <= 40; n++) assert.deepEqual(load(save(new Int32Array(n).fill(n))).shape, [n]);
  assert.deepEqual([...load(a).data], [1, 2, 3]);
});
