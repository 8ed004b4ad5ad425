// `open`: files larger than memory read by ranges. NumPy's rows come back whatever the
// source (bytes, a path, a FileHandle, a Blob, a URL by HTTP ranges, any {byteLength,
// slice}); a URL read fetches only the header and the rows' bytes; a header over the
// 4 KiB read first is read whole by a second read; archives' stored members are read by
// ranges and compressed ones streamed, with progress; a source that changes, shrinks or
// fails gives an NpyError naming it. Values are compared with NumPy's (make_files.py).

import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { open as openFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { NpyError, NpzWriter, load, open, save } from "../js/node.js";
import { SCRATCH, assertColumns, numpyExpected, numpyRows, numpyTyped, runPython } from "./support.js";
import { serve } from "../viewer/serve.mjs";

const DIR = join(SCRATCH, "open");
/** @type {Awaited<ReturnType<typeof serve>>} */
let server;

before(async () => {
  mkdirSync(DIR, { recursive: true });
  // NumPy writes the files, and their values: 100,000 records with a nested field and a
  // subarray, a Fortran-order matrix, an archive of a stored and a deflated member, and
  // records of 1,000 fields (a header of 82 KB).
  runPython("make_files.py", "open", DIR);
  server = await serve({ mounts: [["/", DIR]] });
});
after(async () => {
  await server?.close();
});

const records = () => load(readFileSync(join(DIR, "records.npy")));
/** NumPy's values of the records (make_files.py's `expect`), read once. */
let numpyRecords;
const want = () => (numpyRecords ??= numpyExpected(DIR, "records"));

/** Checks that rows `a` to `b` of the records, `part`, are NumPy's: as columns and as row objects. */
function checkPart(part, a, b, what = `rows ${a} to ${b}`) {
  assert.deepEqual([...part.shape], [b - a], what);
  assertColumns(part, want(), a, b, what);
  assert.deepEqual(part.rows(), numpyRows(want(), a, b), what);
}

/** Checks rows `a` to `b` of an opened records file against NumPy's. */
async function checkRows(file, a, b) {
  checkPart(await file.rows(a, b), a, b);
}

test("rows come back the same from every kind of source", async () => {
  const bytes = readFileSync(join(DIR, "records.npy"));
  const handle = await openFile(join(DIR, "records.npy"));
  const sources = [
    ["bytes", bytes],
    ["a path", join(DIR, "records.npy")],
    ["a file: URL", new URL(`file://${join(DIR, "records.npy")}`)],
    ["a FileHandle", handle],
    ["a Blob", new Blob([bytes])],
    ["a URL", `${server.url}/records.npy`],
    ["{byteLength, slice}", { byteLength: bytes.length, slice: async (s, e) => bytes.buffer.slice(bytes.byteOffset + s, bytes.byteOffset + e) }],
  ];
  try {
    for (const [what, source] of sources) {
      const file = await open(source);
      assert.equal(file.kind, "npy", what);
      assert.deepEqual([...file.shape], [100_000], what);
      assert.deepEqual(file.fields, ["id", "pos.x", "pos.y", "samples"], what);
      await checkRows(file, 0, 3);
      await checkRows(file, 99_990, 100_000);
      await file.close();
    }
  } finally {
    await handle.close();
  }
});

test("a URL read fetches the header and the rows' bytes, not the file", async () => {
  const size = readFileSync(join(DIR, "records.npy")).length;
  server.log.length = 0;
  const file = await open(`${server.url}/records.npy`);
  const one = await file.rows(50_000, 50_010);
  checkPart(one, 50_000, 50_010);
  const fetched = server.log.reduce((n, r) => n + r.bytes, 0);
  assert.ok(server.log.every((r) => r.status === 206), "every request was a range");
  assert.ok(fetched < (64 << 10) + 10 * file.dtype.itemsize + 1, `fetched ${fetched} of ${size} bytes`);
  assert.ok(size > 10 * fetched);
});

test("a Fortran-order array's rows are read in stretches", async () => {
  const numpy = numpyExpected(DIR, "fortran");
  const file = await open(join(DIR, "fortran.npy"));
  assert.equal(file.fortranOrder, true);
  const part = await file.rows(7, 12);
  assert.deepEqual([...part.shape], [5, ...numpy.shape.slice(1)]);
  assert.equal(part.fortranOrder, true);
  // Element (i, j) of the part is NumPy's a[7 + i, j], its values in Fortran order.
  const values = numpyTyped(numpy.columns[""]);
  const [n, m] = numpy.shape;
  for (let j = 0; j < m; j++) {
    for (let i = 0; i < 5; i++) assert.equal(part.data[i + 5 * j], values[7 + i + n * j], `(${7 + i}, ${j})`);
  }
  await file.close();
});

test("a header over 4 KiB is read by a second read: from memory, a path, a Blob and a URL", async () => {
  // Over the 4 KiB open and load read first, and over the 64 KiB a URL's first request reads.
  const path = join(DIR, "wide.npy");
  const bytes = readFileSync(path);
  const numpy = numpyExpected(DIR, "wide");
  const whole = load(bytes, { name: "wide.npy" });
  assert.ok(whole.header.length > 64 << 10, `a header of ${whole.header.length} bytes`);
  assert.equal(whole.descr, numpy.descr);
  assertColumns(whole, numpy, 0, numpy.shape[0], "load");
  const sources = [["bytes", bytes], ["a path", path], ["a Blob", new Blob([bytes])], ["a URL", `${server.url}/wide.npy`]];
  for (const [what, source] of sources) {
    server.log.length = 0;
    const file = await open(source);
    try {
      assert.ok(file.dataOffset > 4096, what);
      assert.equal(file.descr, numpy.descr, what);
      assert.deepEqual([...file.shape], numpy.shape, what);
      assert.equal(file.fields.length, 1_000, what);
      assertColumns(await file.rows(17, 151), numpy, 17, 151, `${what}: rows 17 to 151`);
      if (what === "a URL") {
        // Its first 64 KiB, then the whole header, then the rows.
        const requests = server.log.map((r) => [r.status, r.bytes]);
        assert.deepEqual(requests, [[206, 64 << 10], [206, file.dataOffset], [206, 134 * file.dtype.itemsize]]);
      }
    } finally {
      await file.close();
    }
  }
});

test("load and open tell an archive by npy-core's zip magic, an empty one's too", async () => {
  // An archive of no members is its end record alone: PK\x05\x06.
  const empty = new NpzWriter().finish();
  assert.deepEqual([...empty.subarray(0, 4)], [0x50, 0x4b, 0x05, 0x06]);
  assert.throws(
    () => load(empty, { name: "empty.npz" }),
    (e) => e instanceof NpyError && e.kind === "format" && e.message.includes("a zip archive (an .npz), not a .npy file"),
  );
  const opened = await open(empty, { name: "empty.npz" });
  assert.equal(opened.kind, "npz");
  assert.deepEqual(opened.kind === "npz" && opened.names, []);
  // "PK" and then neither signature is no archive: a file that is not a .npy file either.
  const pk = Uint8Array.from([0x50, 0x4b, 0x07, 0x08, ...new Array(124).fill(0x20)]);
  for (const read of [() => load(pk, { name: "pk.npy" }), () => open(pk, { name: "pk.npy" })]) {
    await assert.rejects(async () => read(), (e) => e instanceof NpyError && e.kind !== "npz" && e.message.includes("pk.npy"));
  }
});

test("an archive opens by its directory; stored members by ranges, compressed ones streamed", async () => {
  const bytes = readFileSync(join(DIR, "archive.npz"));
  for (const source of [join(DIR, "archive.npz"), `${server.url}/archive.npz`, new Blob([bytes])]) {
    const archive = await open(source);
    assert.equal(archive.kind, "npz");
    assert.deepEqual(archive.names, ["stored", "deflated"]);
    assert.deepEqual(archive.members.map((m) => m.compression), ["stored", "deflate"]);
    const stored = await archive.open("stored");
    checkPart(await stored.rows(10, 20), 10, 20);
    const progress = [];
    const deflated = await archive.get("deflated", { onProgress: (done, total) => progress.push([done, total]) });
    assertColumns(deflated, want(), 0, 100_000, "the deflated member");
    assert.deepEqual(deflated.rows(0, 5), numpyRows(want(), 0, 5));
    assert.ok(progress.length > 0 && progress.at(-1)[0] === progress.at(-1)[1]);
    const opened = await archive.open("deflated");
    checkPart(await opened.rows(99_999, 100_000), 99_999, 100_000);
    await assert.rejects(archive.get("missing"), (e) => e instanceof NpyError && /no member 'missing'/.test(e.message));
    await archive.close();
  }
});

test("object arrays and 0-d arrays open too", async () => {
  const zero = save({ dtype: "<f8", shape: [], data: new Float64Array([2.5]) });
  const file = await open(zero);
  assert.equal(file.rowCount, 1);
  assert.deepEqual([...(await file.read()).data], [2.5]);
  const objects = save({ dtype: "object", data: ["a", null, 3n, [1.5]] });
  const opened = await open(objects);
  assert.deepEqual((await opened.rows(1, 3)).data, [null, 3]);
});

test("a source that is shorter than it says, changes, or fails is an NpyError naming it", async () => {
  const bytes = readFileSync(join(DIR, "records.npy"));
  // A slice that gives fewer bytes than asked for.
  const short = { byteLength: bytes.length, name: "short.npy", slice: async (s, e) => bytes.subarray(s, Math.min(e, 5000)) };
  const file = await open(short);
  await assert.rejects(file.rows(0, 100), (e) => e instanceof NpyError && e.kind === "truncated" && e.message.startsWith("reading 'short.npy'"));
  // A URL whose file changes after it was opened: its ETag no longer matches.
  const path = join(DIR, "changing.npy");
  writeFileSync(path, bytes);
  const changing = await open(`${server.url}/changing.npy`);
  writeFileSync(path, Buffer.concat([bytes, Buffer.from([0])]));
  await assert.rejects(changing.rows(90_000, 90_001), (e) => e instanceof NpyError && /changed since it was opened/.test(e.message));
  // A missing URL and a missing path.
  await assert.rejects(open(`${server.url}/missing.npy`), (e) => e instanceof NpyError && /HTTP 404/.test(e.message) && e.file.endsWith("/missing.npy"));
  await assert.rejects(open(join(DIR, "missing.npy")), (e) => e instanceof NpyError && e.kind === "io" && e.file.endsWith("missing.npy"));
  // Rows out of range.
  const good = await open(bytes, { name: "records.npy" });
  await assert.rejects(good.rows(99_999, 100_001), (e) => e instanceof NpyError && e.kind === "usage" && /out of range/.test(e.message));
});

test("a server that ignores ranges gives the whole file, read from memory", async () => {
  const plain = await serve({ mounts: [["/", DIR]], ranges: false });
  try {
    const file = await open(`${plain.url}/records.npy`);
    await checkRows(file, 5, 8);
    assert.equal(plain.log.length, 1);
  } finally {
    await plain.close();
  }
});

test("an archive written by NpzWriter opens by ranges", async () => {
  const rec = records();
  const bytes = new NpzWriter({ compression: "stored" }).add("a", rec).add("b", rec.column("pos.x"), { compression: "zstd" }).finish();
  const archive = await open(bytes);
  assert.deepEqual(archive.members.map((m) => m.compression), ["stored", "zstd"]);
  checkPart(await (await archive.open("a")).rows(3, 4), 3, 4);
  assert.deepEqual([...(await archive.get("b")).data], [...numpyTyped(want().columns["pos.x"])]);
});

test("rows of a Fortran-order object array are the rows NumPy's array has", async () => {
  // [[a, b, c], [d, e, f]] in Fortran order: stored a, d, b, e, c, f.
  const bytes = save({ dtype: "object", shape: [2, 3], fortranOrder: true, data: ["a", "d", "b", "e", "c", "f"] });
  const file = await open(bytes);
  assert.deepEqual((await file.rows(1, 2)).data, ["d", "e", "f"]);
  assert.deepEqual((await file.rows(0, 1)).data, ["a", "b", "c"]);
});
