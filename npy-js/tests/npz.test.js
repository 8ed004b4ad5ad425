// Archives: what NpzWriter writes (stored, deflated as np.savez_compressed, Zstandard),
// from typed arrays, records described by a dtype string, strings and datetimes, NumPy
// loads with the values given (xtask/npz_check.py, which also runs zip's CRC check);
// members are named and read lazily; a damaged archive is an NpyError naming the member.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { NpyError, NpzWriter, load, loadNpz, save } from "../js/node.js";
import { ROOT, SCRATCH, python } from "./support.js";

/** JSON in which bigints are numbers of any size (as Python's json reads them). */
const json = (value) =>
  JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `\u0000big${v}` : v)).replace(/"\\u0000big(-?\d+)"/g, "$1");

/** npz_check.py's values: floats as numbers, or "nan", "inf", "-inf", "-0.0". */
const float = (x) => (Number.isNaN(x) ? "nan" : x === Infinity ? "inf" : x === -Infinity ? "-inf" : Object.is(x, -0) ? "-0.0" : x);

test("archives NpzWriter writes load in NumPy with the values written", () => {
  const dir = join(SCRATCH, "npz-check");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const f8 = new Float64Array([0.5, -0, NaN, Infinity, 1e-310]);
  const rows = [
    { id: 1, pos: { x: 0.5, y: -2 }, gains: new Float32Array([1, 2, 3]), name: "ab" },
    { id: 2, pos: { x: 1.5, y: 3 }, gains: new Float32Array([4, 5, 6]), name: "温度" },
  ];
  const descr = "[('id', '>u4'), ('pos', [('x', '<f8'), ('y', '<f4')]), ('gains', '<f4', (3,)), ('name', '<U2')]";
  for (const compression of ["stored", "deflate", "zstd"]) {
    const archive = new NpzWriter({ compression })
      .add("f8", f8)
      .add("grid", { dtype: "<i2", shape: [2, 3], fortranOrder: true, data: new Int16Array([1, 4, 2, 5, 3, 6]) })
      .add("records", { dtype: descr, rows })
      .add("when", { dtype: "datetime64[ns]", data: new BigInt64Array([0n, -(2n ** 63n), 1_700_000_000_000_000_000n]) })
      .add("labels", { dtype: "|S3", data: ["a", "", "xyz"] })
      .finish();
    writeFileSync(join(dir, `${compression}.npz`), archive);
    const member = (name, rest) => ({ name, member: `${name}.npy`, compression: compression === "deflate" ? "deflated" : compression, ...rest });
    const sidecar = {
      archive: `${compression}.npz`,
      members: [
        member("f8", { dtype: "<f8", shape: [5], fortran: false, values: [...f8].map(float) }),
        member("grid", { dtype: "<i2", shape: [2, 3], fortran: true, values: [1, 4, 2, 5, 3, 6] }),
        member("records", {
          descr,
          shape: [2],
          fortran: false,
          fields: [["id", [1, 2]], ["pos.x", [0.5, 1.5]], ["pos.y", [-2, 3]], ["gains", [1, 2, 3, 4, 5, 6]], ["name", ["ab", "温度"]]],
        }),
        member("when", { dtype: "<M8[ns]", shape: [3], fortran: false, values: [0n, -(2n ** 63n), 1_700_000_000_000_000_000n] }),
        member("labels", { dtype: "|S3", shape: [3], fortran: false, values: ["61", "", "78797a"] }),
      ],
    };
    writeFileSync(join(dir, `${compression}.expect.json`), json(sidecar));
    // And the package reads its own archive back.
    const back = loadNpz(archive);
    assert.deepEqual(back.names, ["f8", "grid", "records", "when", "labels"]);
    assert.deepEqual(back.members.map((m) => m.compression), Array(5).fill(compression));
    assert.deepEqual(back.get("records").rows(), rows.map((r) => ({ ...r, id: r.id })));
  }
  const report = execFileSync(python(), [join(ROOT, "xtask", "npz_check.py"), dir], { encoding: "utf8" });
  assert.match(report, /^3 archives checked$/m);
});

test("a member is read when asked for, once", () => {
  const archive = loadNpz(new NpzWriter({ compression: "deflate" }).add("a", new Int32Array([1, 2])).add("b", new Uint8Array([3])).finish());
  assert.ok(archive.has("a") && !archive.has("c"));
  assert.deepEqual([archive.member("a").compression, archive.member("b").size], ["deflate", 129]);
  assert.throws(() => archive.member("c"), (e) => e instanceof NpyError && e.kind === "npz");
  assert.equal(archive.get("a"), archive.get("a"));
  assert.deepEqual([...archive].map(([name, a]) => [name, [...a.data]]), [["a", [1, 2]], ["b", [3]]]);
  assert.throws(() => archive.get("c"), (e) => e instanceof NpyError && e.kind === "npz" && /no member 'c' \(members: 'a', 'b'\)/.test(e.message));
});

test("a damaged archive is an NpyError naming the archive and the member", () => {
  const bytes = new NpzWriter({ compression: "deflate" }).add("x", new Float64Array(1000).fill(0.5)).finish();
  const archive = loadNpz(bytes);
  const info = archive.members[0];
  // A flipped byte inside the deflated data: bad data, or a bad CRC-32.
  const bad = bytes.slice();
  bad[info.dataStart + 20] ^= 0xff;
  assert.throws(
    () => loadNpz(bad, { name: "bad.npz" }).get("x"),
    (e) => e instanceof NpyError && e.kind === "npz" && e.file === "bad.npz" && e.member === "x.npy" && /bad (deflate data|CRC-32)/.test(e.message) && e.message.startsWith("reading 'bad.npz'"),
  );
  // Not an archive at all; an archive cut short.
  assert.throws(() => loadNpz(new Uint8Array(100), { name: "zeros.npz" }), (e) => e instanceof NpyError && e.kind === "npz" && /not a zip archive/.test(e.message));
  assert.throws(() => loadNpz(bytes.subarray(0, bytes.length - 30), { name: "cut.npz" }), (e) => e instanceof NpyError && e.kind === "npz" && e.file === "cut.npz");
  // A member that is no .npy file.
  const notNpy = bytes.slice();
  notNpy[info.dataStart] = 0;
  assert.throws(() => loadNpz(notNpy, { name: "x.npz" }).get("x"), (e) => e instanceof NpyError);
  // Limits: members claiming more than a reader allows.
  assert.throws(() => loadNpz(bytes, { maxInflatedSize: 100 }), (e) => e instanceof NpyError && /max_inflated_size/.test(e.message));
});

test("NpzWriter refuses what an archive cannot hold, naming it", () => {
  const w = new NpzWriter();
  w.add("a", new Float64Array(1));
  assert.throws(() => w.add("a", new Float64Array(1)), (e) => e instanceof NpyError && /a\.npy/.test(e.message));
  assert.throws(() => w.add("b", new Float64Array(1), { compression: "lz4" }), (e) => e instanceof NpyError && /unknown compression "lz4"/.test(e.message));
  assert.throws(() => w.add("c", new Float64Array(1), { compression: "deflate", level: 12 }), (e) => e instanceof NpyError && /level 12 is out of range for deflate/.test(e.message));
  const bytes = w.finish();
  assert.deepEqual(loadNpz(bytes).names, ["a"]);
  assert.throws(() => w.finish(), (e) => e instanceof NpyError);
});

test("a member saved from a loaded member is byte for byte the same", () => {
  const original = save({ dtype: "<U3", shape: [2, 2], data: ["a", "bc", "", "def"] });
  const archive = loadNpz(new NpzWriter().add("s", load(original)).finish());
  assert.deepEqual(save(archive.get("s")), original);
});

test("deflated members are the size np.savez_compressed makes them", () => {
  // Arrays of numbers, whose 3-byte matches zlib-rs finds only at level 9 (issue 67).
  const samples = Float32Array.from({ length: 64 * 20_000 }, (_, i) => Math.floor(i / 64) + (i % 64) / 64);
  const ids = Int32Array.from({ length: 100_000 }, (_, i) => i);
  const small = BigInt64Array.from({ length: 200_000 }, (_, i) => BigInt((i * 7919) % 100));
  const path = join(SCRATCH, "deflate-size.npz");
  writeFileSync(path, new NpzWriter({ compression: "deflate" }).add("samples", samples).add("ids", ids).add("small", small).finish());
  // NumPy's archive of the same arrays (loaded from ours): each member's compressed size.
  const script = [
    "import io, json, sys, zipfile, numpy as np",
    "ours = zipfile.ZipFile(sys.argv[1])",
    "with np.load(sys.argv[1]) as f: arrays = {k: f[k] for k in f.files}",
    "out = io.BytesIO(); np.savez_compressed(out, **arrays)",
    "theirs = zipfile.ZipFile(out)",
    "print(json.dumps({i.filename: [i.compress_size, theirs.getinfo(i.filename).compress_size] for i in ours.infolist()}))",
  ].join("\n");
  const sizes = JSON.parse(execFileSync(python(), ["-c", script, path], { encoding: "utf8" }));
  assert.deepEqual(Object.keys(sizes), ["samples.npy", "ids.npy", "small.npy"]);
  for (const [member, [ours, numpys]] of Object.entries(sizes)) {
    assert.ok(ours <= numpys * 1.02, `${member}: ${ours} bytes against NumPy's ${numpys}`);
  }
});
