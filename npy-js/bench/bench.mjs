// The speed and size of the npy package next to the JavaScript readers people use, in one
// Node process: node --expose-gc bench.mjs --dir DIR --traces TRACES [--repeat K]
// [--python PYTHON] (`cargo xtask bench --only js` runs it; see xtask/src/bench.rs).
//
// DIR holds what inputs.py makes with NumPy (f8.npy, traces_columns.npz); TRACES is the
// seismic example's file (`cargo run --release --example seismic`: 1,000,000 `Trace`
// records, align=True, 304 bytes each). Every file is read into memory first: the rows
// time what each library does with the bytes, never the disk.
//
// Rows (`bench <name> best=<s> median=<s> bytes=<n>`, as the repository's other bench
// programs print them):
// - f8_npy, f8_npyjs: `load(bytes).data` of 100 MB of `<f8`, and npyjs's `parse` of the
//   same bytes: both a Float64Array over the file's memory. Each run is the mean of
//   INNER calls (a call takes microseconds); `bytes=0`, as a view reads none.
// - small_npy, small_npyjs: the same of a 100-value `<f8` file (`save`'s bytes): what a
//   page loading thousands of small tiles pays a tile, the header parsed by npy-core once.
// - traces_npy: `load(bytes).columns()` of the 1M traces, then every column's `.data` (8
//   typed arrays, 71M values, each column's memory allocated by the call);
//   traces_copy: one copy of the file's bytes, `new Uint8Array(n).set(bytes)`, allocation
//   included as the columns' is. npyjs cannot read the records at all (a `#` line says
//   what it throws).
// - npz_npy: `loadNpz(bytes)`, `get()` of every member and its `.data`, of the deflated
//   archive NumPy wrote (traces_columns.npz); npz_fflate: fflate's `unzipSync` and
//   npyjs's `parse` of every member, what a user of those two writes; npz_unzip_fflate:
//   the `unzipSync` alone (context).
// - zstd_npy: the same columns as an archive of Zstandard members, made by the package's
//   own `new NpzWriter({compression: "zstd"})` (level 8, its default) from the deflated
//   archive's arrays, read as npz_npy reads its archive.
// - wasm_gzip: not a time: the package's module (wasm/npy_js_bg.wasm) after `gzip -9`,
//   its bytes in `bytes=` (best and median 0, which the report reads as a size).
//
// Every timed row runs K times (default 3) after one untimed warm-up round, in rounds
// that interleave npy's run with its peer's (each row of a group first in turn: for a
// pair, npy first in even rounds, the peer in odd ones), so the noise of a shared machine
// falls on both; the garbage collector runs before each run (outside its time), so no run
// pays for the last one's memory.
//
// Before any timing, once: npy's values are checked against the peers' and NumPy's: the
// archive's members against npyjs's parse of them (bytes, shapes, dtypes); the traces'
// columns against those members (NumPy wrote them from the same records) and against
// NumPy's own values of a few records; the Zstandard archive's members against the
// deflated one's. A difference ends the run with an error.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { unzipSync } from "fflate";
import * as npyjs from "npyjs";

import { NpzWriter, load, loadNpz, save } from "../js/node.js";

const here = dirname(fileURLToPath(import.meta.url));
const PACKAGE = resolve(here, "..");
/** Calls timed per run of the f8 rows (a call takes microseconds: one alone is mostly timer and noise). */
const INNER = 10_000;
/** The values of the small file's rows. */
const SMALL = 100;
/** The archive's members: name, and the column of the records that holds the same values. */
const MEMBERS = [
  ["trace_id", "trace_id"],
  ["receiver_x", "receiver.x"],
  ["receiver_y", "receiver.y"],
  ["receiver_z", "receiver.z"],
  ["t0", "t0"],
  ["dt", "dt"],
  ["flags", "flags"],
  ["samples", "samples"],
];
/** Records whose every field is checked against NumPy's own values. */
const RECORDS_CHECKED = [0, 1, 2, 12_345, 499_999, 999_999];

function fail(message) {
  console.error(`bench.mjs: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  const args = { repeat: 3, python: process.env.NPY_PYTHON };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) fail(`${flag} needs a value`);
    if (flag === "--dir") args.dir = value;
    else if (flag === "--traces") args.traces = value;
    else if (flag === "--python") args.python = value;
    else if (flag === "--repeat") args.repeat = Number(value);
    else fail(`unknown argument ${flag}; usage: node --expose-gc bench.mjs --dir DIR --traces TRACES [--repeat K] [--python PYTHON]`);
  }
  if (!args.dir || !args.traces) fail("--dir and --traces are needed");
  if (!Number.isInteger(args.repeat) || args.repeat < 1) fail(`--repeat must be a whole number, at least 1`);
  return args;
}

/** The garbage collector, run before each timed run (`--expose-gc`). */
const gc = globalThis.gc ?? fail("run me with node --expose-gc, so each run starts without the last one's garbage");

/** A file's bytes in an ArrayBuffer of their own (offset 0, as npyjs's `parse` takes them). */
function readBytes(path) {
  if (!existsSync(path)) fail(`${path} is missing (cargo xtask bench --only js makes it; see inputs.py)`);
  const file = readFileSync(path);
  const bytes = new Uint8Array(file.length);
  bytes.set(file);
  return bytes;
}

/** Whether two typed arrays hold the same bytes. */
function sameBytes(a, b) {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** A Uint8Array member as an ArrayBuffer of its own, as npyjs's `parse` needs (a copy only when it is not one). */
function ownBuffer(bytes) {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
}

let sink = 0;

/** One run of `f`: seconds (the mean of `inner` calls). */
function time(f, inner = 1) {
  gc();
  const start = process.hrtime.bigint();
  for (let i = 0; i < inner; i++) sink += f();
  return Number(process.hrtime.bigint() - start) / 1e9 / inner;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function report(name, seconds, bytes) {
  console.log(`bench ${name} best=${Math.min(...seconds).toFixed(9)} median=${median(seconds).toFixed(9)} bytes=${bytes}`);
}

/**
 * Times each group of rows in the same rounds: a warm-up round, then `repeat` timed ones,
 * each running every row of every group, a group's rows in turn first.
 * @param {{rows: {name: string, run: () => number, inner?: number, bytes: number}[]}[]} groups
 */
function rounds(groups, repeat) {
  const times = new Map(groups.flatMap((g) => g.rows.map((r) => [r.name, []])));
  for (let round = 0; round <= repeat; round++) {
    for (const { rows } of groups) {
      const order = rows.map((_, i) => rows[(i + round) % rows.length]);
      for (const row of order) {
        const seconds = time(row.run, row.inner);
        if (round > 0) times.get(row.name).push(seconds);
      }
    }
  }
  for (const { rows } of groups) for (const row of rows) report(row.name, times.get(row.name), row.bytes);
}

/** What `f()` throws (or gives), for the `#` lines about what a peer cannot read. */
function outcome(f) {
  try {
    const got = f();
    return `gives ${got?.dtype === undefined ? typeof got : `dtype ${JSON.stringify(got.dtype)}, shape [${got.shape}]`}`;
  } catch (e) {
    return `throws ${e?.constructor?.name ?? typeof e}: ${e?.message ?? e}`;
  }
}

/** NumPy's values of a few records of the traces, field by field (floats as Python's, exactly). */
function numpyRecords(python, traces) {
  const script = `
import json, sys
import numpy as np
a = np.load(sys.argv[1], mmap_mode="r")
out = {}
for i in json.loads(sys.argv[2]):
    r = a[i]
    out[i] = {"trace_id": int(r["trace_id"]), "receiver.x": float(r["receiver"]["x"]),
              "receiver.y": float(r["receiver"]["y"]), "receiver.z": float(r["receiver"]["z"]),
              "t0": float(r["t0"]), "dt": float(r["dt"]), "flags": int(r["flags"]),
              "samples": [float(s) for s in r["samples"]]}
print(json.dumps({"n": len(a), "records": out}))
`;
  return JSON.parse(execFileSync(python, ["-c", script, traces, JSON.stringify(RECORDS_CHECKED)], { encoding: "utf8" }));
}

/** The checks made once, before any timing (see the module); fails the run on a difference. */
function check({ f8, traces, npz, zstd, python, tracesPath }) {
  // <f8: both readers give the same view.
  const ours = load(f8).data;
  const theirs = npyjs.parse(f8.buffer).data;
  if (!(ours instanceof Float64Array) || ours.buffer !== f8.buffer || !sameBytes(ours, theirs)) {
    fail("the <f8 file: npy's data is not npyjs's (a Float64Array view of the same bytes)");
  }

  // The archive: every member as npyjs parses it.
  const archive = loadNpz(npz);
  const files = unzipSync(npz);
  const names = MEMBERS.map(([m]) => m);
  if (JSON.stringify(archive.names) !== JSON.stringify(names)) fail(`the archive's members are ${archive.names}, not ${names}`);
  const peer = {};
  for (const name of names) {
    const a = archive.get(name);
    const p = npyjs.parse(ownBuffer(files[`${name}.npy`]));
    if (!sameBytes(a.data, p.data) || `${a.shape}` !== `${p.shape}` || a.dtype.type !== p.dtype) {
      fail(`member ${name}: npy gives ${a.dtype.type} [${a.shape}], npyjs ${p.dtype} [${p.shape}], or other values`);
    }
    peer[name] = p.data;
  }

  // The traces: every column against the archive's member NumPy wrote from it, and a few
  // records against NumPy's own values.
  const array = load(traces);
  const columns = array.columns();
  for (const [member, path] of MEMBERS) {
    if (!sameBytes(columns[path].data, peer[member])) fail(`the traces' column ${path} is not the archive's ${member}`);
  }
  if (`${columns.samples.shape}` !== `${array.shape[0]},64`) fail(`samples' shape is [${columns.samples.shape}]`);
  if (python) {
    const numpy = numpyRecords(python, tracesPath);
    if (numpy.n !== array.shape[0]) fail(`NumPy reads ${numpy.n} records, npy ${array.shape[0]}`);
    for (const [i, want] of Object.entries(numpy.records)) {
      for (const [path, value] of Object.entries(want)) {
        const data = columns[path].data;
        const got = path === "samples" ? Array.from(data.subarray(Number(i) * 64, (Number(i) + 1) * 64)) : data[Number(i)];
        if (JSON.stringify(got) !== JSON.stringify(value)) fail(`record ${i}, ${path}: npy gives ${got}, NumPy ${value}`);
      }
    }
    console.log(`# checked: records ${RECORDS_CHECKED.join(", ")} field by field against NumPy's`);
  } else {
    console.log("# not checked against NumPy's records: no --python (or NPY_PYTHON)");
  }

  // The Zstandard archive holds the deflated one's arrays.
  const z = loadNpz(zstd);
  if (z.members.some((m) => m.compression !== "zstd")) fail("the Zstandard archive has other members");
  for (const name of names) {
    if (!sameBytes(z.get(name).data, archive.get(name).data)) fail(`the Zstandard archive's ${name} differs`);
  }
  console.log(
    "# checked: every member of the deflated archive equals npyjs's parse of it; every column of the traces " +
      "equals its member; the Zstandard archive's members equal the deflated ones",
  );

  // What the peers do with the records.
  console.log(`# npyjs on the traces (a record array): ${outcome(() => npyjs.parse(traces.buffer))}`);
}

/** The Zstandard archive of the deflated one's arrays, made by the package (cached in DIR beside its stamp). */
function zstdArchive(dir, npz, npzPath) {
  const path = join(dir, "traces_columns_zstd.npz");
  const stampPath = `${path}.json`;
  const stamp = JSON.stringify({ from: npzPath, bytes: npz.length, writer: "NpzWriter zstd, default level" });
  if (existsSync(path) && existsSync(stampPath) && readFileSync(stampPath, "utf8") === stamp) return readBytes(path);
  const archive = loadNpz(npz);
  const writer = new NpzWriter({ compression: "zstd" });
  for (const name of archive.names) writer.add(name, archive.get(name));
  const bytes = writer.finish();
  writeFileSync(path, bytes);
  writeFileSync(stampPath, stamp);
  return readBytes(path);
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const versions = ["npyjs", "fflate"].map((p) => {
    const pkg = JSON.parse(readFileSync(join(PACKAGE, "node_modules", p, "package.json"), "utf8"));
    return `${p} ${pkg.version}`;
  });
  console.log(`# node ${process.version}; ${versions.join(", ")}; ${args.repeat} runs a row after a warm-up round`);

  const f8 = readBytes(join(args.dir, "f8.npy"));
  const small = save(Float64Array.from({ length: SMALL }, (_, i) => i * 0.5));
  const traces = readBytes(args.traces);
  const npzPath = join(args.dir, "traces_columns.npz");
  const npz = readBytes(npzPath);
  const zstd = zstdArchive(args.dir, npz, npzPath);
  const wasm = join(PACKAGE, "wasm", "npy_js_bg.wasm");
  const gzipped = execFileSync("gzip", ["-9", "-c", wasm], { maxBuffer: 1 << 30 }).length;
  const members = loadNpz(npz).members;
  const columnBytes = members.reduce((n, m) => n + m.size, 0);
  console.log(
    `# inputs: <f8 ${f8.length} bytes; traces ${traces.length} bytes; deflated archive ${npz.length} bytes, ` +
      `Zstandard archive ${zstd.length} bytes, ${columnBytes} bytes of members; module ${readFileSync(wasm).length} bytes, ` +
      `${gzipped} after gzip -9`,
  );
  const copies = Object.values(unzipSync(npz)).filter((b) => ownBuffer(b) !== b.buffer).length;
  console.log(`# fflate's members that npyjs needs copied to an ArrayBuffer of their own: ${copies}`);

  check({ f8, traces, npz, zstd, python: args.python, tracesPath: args.traces });
  if (!sameBytes(load(small).data, npyjs.parse(small.buffer).data)) fail("the small <f8 file: npy's data is not npyjs's");

  const columnsOf = (bytes) => {
    const columns = load(bytes).columns();
    let n = 0;
    for (const path in columns) n += columns[path].data.length;
    return n;
  };
  const archiveOf = (bytes) => {
    const archive = loadNpz(bytes);
    let n = 0;
    for (const name of archive.names) n += archive.get(name).data.length;
    return n;
  };
  rounds(
    [
      {
        rows: [
          // bytes=0: a view reads none of them (a rate would be meaningless).
          { name: "f8_npy", run: () => load(f8).data.length, inner: INNER, bytes: 0 },
          { name: "f8_npyjs", run: () => npyjs.parse(f8.buffer).data.length, inner: INNER, bytes: 0 },
        ],
      },
      {
        rows: [
          { name: "small_npy", run: () => load(small).data.length, inner: INNER, bytes: small.length },
          { name: "small_npyjs", run: () => npyjs.parse(small.buffer).data.length, inner: INNER, bytes: small.length },
        ],
      },
      {
        rows: [
          { name: "traces_npy", run: () => columnsOf(traces), bytes: traces.length },
          {
            name: "traces_copy",
            run: () => {
              const copy = new Uint8Array(traces.length);
              copy.set(traces);
              return copy[copy.length - 1];
            },
            bytes: traces.length,
          },
        ],
      },
      {
        rows: [
          { name: "npz_npy", run: () => archiveOf(npz), bytes: columnBytes },
          {
            name: "npz_fflate",
            run: () => {
              let n = 0;
              for (const bytes of Object.values(unzipSync(npz))) n += npyjs.parse(ownBuffer(bytes)).data.length;
              return n;
            },
            bytes: columnBytes,
          },
          { name: "zstd_npy", run: () => archiveOf(zstd), bytes: columnBytes },
          { name: "npz_unzip_fflate", run: () => Object.keys(unzipSync(npz)).length, bytes: columnBytes },
        ],
      },
    ],
    args.repeat,
  );
  console.log(`bench wasm_gzip best=0 median=0 bytes=${gzipped}`);
  if (sink === 0) console.log("# (nothing read)");
}

main();
