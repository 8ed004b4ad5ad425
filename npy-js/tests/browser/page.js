// The browser test's checks, run in the page: each takes what browser.test.js passes in
// (URLs, NumPy's values), uses the package as a web page would, lists its result in the
// page's table and returns what it saw, which the test asserts again in Node.

import { canonical, canonicalFloat } from "/tests/canonical.js";

const status = /** @type {HTMLElement} */ (document.getElementById("status"));

/** The package, imported from its browser entry once the page has loaded. */
let npy;
try {
  npy = await import("/js/index.js");
  status.textContent = `package imported from /js/index.js; ${navigator.userAgent}`;
  window.npyReady = true;
} catch (e) {
  status.textContent = `the package failed to import: ${e}`;
  window.npyFailed = String(e?.stack ?? e);
}

/** Adds a row to the results table. */
function report(name, ok, detail) {
  const row = document.createElement("tr");
  row.className = ok ? "pass" : "fail";
  for (const [text, cls] of [[name, "name"], [ok ? "passed" : "FAILED", "result"], [detail, "detail"]]) {
    const cell = document.createElement("td");
    cell.className = cls;
    cell.textContent = text;
    row.append(cell);
  }
  document.getElementById("results").append(row);
}

/** Whether two JSON values are equal. */
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * An array's values in numpy_values.py's form: every leaf's values by path (a record's
 * fields, or "" for a plain array), `{error}` where a leaf holds values JavaScript cannot
 * give (NumPy cannot either).
 */
function valuesOf(array) {
  const columns = array.dtype.kind === "record" ? array.columns() : { "": array };
  const out = {};
  for (const [path, column] of Object.entries(columns)) {
    try {
      out[path] = canonical(column.dtype, column.data);
    } catch (e) {
      if (!(e instanceof npy.NpyError) || e.kind !== "invalid_value") throw e;
      out[path] = { error: e.kind };
    }
  }
  return out;
}

/** The class of each leaf's values (Float16Array for half floats: Chromium has it, Node 20 not). */
function typesOf(array) {
  const columns = array.dtype.kind === "record" ? array.columns() : { "": array };
  return Object.fromEntries(Object.entries(columns).map(([path, column]) => [path, column.data.constructor.name]));
}

/** numpy_values.py's entry as `valuesOf` gives it. */
function wantOf(entry) {
  const out = {};
  for (const [path, column] of Object.entries(entry.columns)) out[path] = column.error !== undefined ? { error: "invalid_value" } : column.values;
  return out;
}

/** An absolute URL on the test's server. */
const url = (path) => new URL(path, location.href).href;

async function fetchBytes(path) {
  const res = await fetch(path);
  if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** What the header of an opened file says. */
function headerOf(file) {
  return { kind: file.kind, descr: file.descr, shape: [...file.shape], dataOffset: file.dataOffset, fields: file.fields };
}

/** Rows `ranges` of an opened `.npy` file (an NpyFile), each read by `rows(a, b)`, against NumPy's. */
async function readRanges(label, file, ranges, expected) {
  const rows = [];
  for (const [i, [a, b]] of ranges.entries()) {
    const t = performance.now();
    const got = valuesOf(await file.rows(a, b));
    const ok = same(got, expected[i]);
    report(`${label}: rows(${a}, ${b})`, ok, `${b - a} rows, ${Object.keys(got).length} leaves, ${(performance.now() - t).toFixed(1)} ms`);
    rows.push(got);
  }
  return rows;
}

/** The checks, called by the test through `page.evaluate`. */
window.checks = {
  /**
   * Corpus files fetched whole: `load` of each `.npy`, `loadNpz` of each `.npz` (every
   * member through `get`), against NumPy's entries (a list per file).
   */
  async wholeFiles(expected) {
    const out = {};
    for (const [file, entries] of Object.entries(expected)) {
      const bytes = await fetchBytes(`/corpus/${file}`);
      const got = {};
      if (file.endsWith(".npy")) {
        const array = npy.load(bytes, { name: file });
        got[""] = { descr: array.descr, shape: [...array.shape], types: typesOf(array), values: valuesOf(array) };
      } else {
        const archive = npy.loadNpz(bytes, { name: file });
        for (const m of archive.members) {
          const array = archive.get(m.name);
          got[m.member] = { descr: array.descr, shape: [...array.shape], types: typesOf(array), compression: m.compression, values: valuesOf(array) };
        }
      }
      const want = Object.fromEntries(entries.map((e) => [e.member ?? "", wantOf(e)]));
      const ok = same(Object.keys(got), Object.keys(want)) && Object.keys(want).every((k) => same(got[k].values, want[k]));
      const what = Object.entries(got).map(([k, v]) => `${k || "array"}: ${v.descr} [${v.shape}]${v.compression ? ` ${v.compression}` : ""}`);
      report(`${file.endsWith(".npy") ? "load" : "loadNpz"} ${file}`, ok, `${bytes.length} bytes; ${what.join("; ")}`);
      out[file] = got;
    }
    return out;
  },

  /**
   * `open` of the File the test put in the page's file input: header at once, then rows by
   * ranges (Blob.slice).
   */
  async openFile({ ranges, expected }) {
    const input = /** @type {HTMLInputElement} */ (document.getElementById("file"));
    const blob = input.files[0];
    // The File's slices the package takes, recorded: what it reads of the file.
    const slices = [];
    const slice = Blob.prototype.slice;
    Blob.prototype.slice = function (start, end, type) {
      if (this === blob) slices.push([start, end]);
      return slice.call(this, start, end, type);
    };
    try {
      const file = await npy.open(blob);
      const header = headerOf(file);
      report(`open(File ${blob.name})`, file.kind === "npy", `${blob.size} bytes; ${file.descr} [${file.shape}]`);
      const rows = await readRanges(`File ${blob.name}`, file, ranges, expected);
      return { name: file.name, header, rows, slices };
    } finally {
      Blob.prototype.slice = slice;
    }
  },

  /** `open` of a URL: header by the first range request, then rows by ranges. */
  async openUrl({ path, ranges, expected }) {
    const file = await npy.open(url(path));
    report(`open(${path})`, file.kind === "npy", `${file.descr} [${file.shape}], data at ${file.dataOffset}`);
    return { name: file.name, header: headerOf(file), rows: await readRanges(path, file, ranges, expected) };
  },

  /**
   * `open` of an archive's URL: the directory, then the stored member's rows by ranges
   * (`NpzFile.open`) and the deflated member whole (`NpzFile.get`).
   */
  async openNpzUrl({ path, stored, deflated }) {
    const archive = await npy.open(url(path));
    report(`open(${path})`, archive.kind === "npz", `${archive.byteLength} bytes; ${archive.members.map((m) => `${m.member} ${m.compression}`).join(", ")}`);
    const member = await archive.open(stored.name);
    const rows = await readRanges(`${path} ${stored.name}`, member, stored.ranges, stored.expected);
    let progress = 0;
    const whole = await archive.get(deflated.name, { onProgress: (done) => (progress = done) });
    const values = valuesOf(whole);
    report(`${path}: get(${deflated.name})`, same(values, deflated.expected), `${whole.descr} [${whole.shape}], ${progress} compressed bytes read`);
    return { kind: archive.kind, names: archive.names, members: archive.members, header: headerOf(member), rows, deflated: { shape: [...whole.shape], values } };
  },

  /** Opens `path` and keeps it, for `readKept` after the test changed the file. */
  async keepOpen(path) {
    window.kept = await npy.open(url(path));
    return headerOf(window.kept);
  },

  /** Rows of the file `keepOpen` opened: an NpyError when the file changed on the server since. */
  async readKept([a, b]) {
    try {
      await window.kept.rows(a, b);
      report("a file changed after open", false, "rows read without an error");
      return { threw: false };
    } catch (e) {
      const ok = e instanceof npy.NpyError && /changed/.test(e.message);
      report("a file changed after open", ok, `${e.name} (${e.kind}): ${e.message}`);
      return { threw: true, name: e.name, kind: e.kind, file: e.file, message: e.message };
    }
  },

  /**
   * A Zstandard archive written in the page (NpzWriter), read back from memory (loadNpz)
   * and from the server after an upload (open(url), get), each member against the values
   * written.
   */
  async zstd() {
    const n = 5000;
    const wave = Float32Array.from({ length: 100_000 }, (_, i) => Math.sin(i / 50));
    const rows = Array.from({ length: n }, (_, i) => ({ id: i * 7 - 1000, v: [i, i / 3, -i, i * 0.5] }));
    const labels = Array.from({ length: 3000 }, (_, i) => `L${i % 97}é`);
    const written = {
      records: { id: rows.map((r) => String(r.id)), v: rows.flatMap((r) => r.v.map(canonicalFloat)) },
      wave: { "": Array.from(wave, canonicalFloat) },
      labels: { "": labels },
    };
    let bytes;
    try {
      const writer = new npy.NpzWriter({ compression: "zstd" });
      writer.add("records", { dtype: "[('id', '<i4'), ('v', '<f8', (4,))]", rows });
      writer.add("wave", wave, { compression: "zstd", level: 19 });
      writer.add("labels", { dtype: "<U5", data: labels }, { compression: "deflate" });
      bytes = writer.finish();
    } catch (e) {
      report("NpzWriter zstd", false, `${e.name}: ${e.message}`);
      return { unsupported: `${e.name}: ${e.message}` };
    }
    const archive = npy.loadNpz(bytes, { name: "zstd.npz" });
    const inMemory = Object.fromEntries(archive.names.map((name) => [name, valuesOf(archive.get(name))]));
    report("NpzWriter zstd → loadNpz", same(inMemory, written), archive.members.map((m) => `${m.member} ${m.compression} ${m.compressedSize}/${m.size}`).join(", "));
    const put = await fetch("/upload/zstd.npz", { method: "PUT", body: bytes });
    if (put.status !== 201) throw new Error(`PUT /upload/zstd.npz: HTTP ${put.status}`);
    const opened = await npy.open(url("/scratch/uploads/zstd.npz"));
    const byUrl = {};
    for (const name of opened.names) byUrl[name] = valuesOf(await opened.get(name));
    report("zstd.npz by URL → open, get", same(byUrl, written), `${bytes.length} bytes uploaded and read back by ranges`);
    return { members: archive.members, byteLength: bytes.length, written, inMemory, byUrl };
  },

  /**
   * Files that are no NumPy file's: each must throw an NpyError naming the file; `good`
   * (a corpus file) loads after them, against NumPy's values.
   */
  async hostile({ truncatedPath, missingPath, good, goodExpected }) {
    // 100 bytes of a fixed pseudo-random sequence (a linear congruential generator).
    let seed = 12345;
    const random = Uint8Array.from({ length: 100 }, () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 255);
    const zipLike = new Uint8Array(100);
    zipLike.set(random);
    zipLike.set([0x50, 0x4b, 0x03, 0x04]);
    const goodBytes = await fetchBytes(`/corpus/${good}`);
    const cases = [
      ["load of 100 random bytes", "random-100.bin", () => npy.load(random, { name: "random-100.bin" })],
      ["open(Blob) of 100 random bytes", "random-blob.bin", () => npy.open(new Blob([random]), { name: "random-blob.bin" })],
      ["loadNpz of 'PK\\3\\4' and 96 random bytes", "zip-like.npz", () => npy.loadNpz(zipLike, { name: "zip-like.npz" })],
      ["load of a truncated .npy", "traces_be-1000.npy", () => npy.load(goodBytes.subarray(0, 1000), { name: "traces_be-1000.npy" })],
      ["load of a .npy cut in its header", "traces_be-100.npy", () => npy.load(goodBytes.subarray(0, 100), { name: "traces_be-100.npy" })],
      ["open(url) of a truncated .npy", url(truncatedPath), () => npy.open(url(truncatedPath))],
      ["open(url) of a missing file", url(missingPath), () => npy.open(url(missingPath))],
    ];
    const out = [];
    for (const [what, name, f] of cases) {
      try {
        await f();
        report(what, false, "no error");
        out.push({ what, name, threw: false });
      } catch (e) {
        const ok = e instanceof npy.NpyError && e.message.includes(name);
        report(what, ok, `${e.name} (${e.kind}): ${e.message}`);
        out.push({ what, name, threw: true, isNpyError: e instanceof npy.NpyError, kind: e.kind, file: e.file, message: e.message });
      }
    }
    // The page keeps working: a good file loads with NumPy's values.
    const after = valuesOf(npy.load(goodBytes, { name: good }));
    report(`load ${good} after the errors`, same(after, wantOf(goodExpected)), `${goodBytes.length} bytes`);
    return { cases: out, after };
  },

  /**
   * `save` of a record array given as a dtype string and rows (floats that JSON cannot
   * carry given as "nan", "-0", "inf"), uploaded for NumPy to read; the rows as `load`
   * reads the bytes back. And a Float16Array saved as it is (half.npy).
   */
  async saveRecords({ dtype, rows }) {
    const float = (v) => (v === "nan" ? NaN : v === "-0" ? -0 : v === "inf" ? Infinity : v === "-inf" ? -Infinity : v);
    const decoded = rows.map((r) => ({ ...r, pos: { x: float(r.pos.x), y: float(r.pos.y) }, h: float(r.h) }));
    const bytes = npy.save({ dtype, rows: decoded });
    const put = await fetch("/upload/saved.npy", { method: "PUT", body: bytes });
    if (put.status !== 201) throw new Error(`PUT /upload/saved.npy: HTTP ${put.status}`);
    const back = npy.load(bytes, { name: "saved.npy" });
    const values = valuesOf(back);
    report("save of a record array → PUT", true, `${dtype}: ${bytes.length} bytes`);
    // A Float16Array saved as it is: its dtype is <f2.
    const half = Float16Array.of(1.5, -0.0009765625, 65504, Infinity);
    const halfBytes = npy.save(half);
    const putHalf = await fetch("/upload/half.npy", { method: "PUT", body: halfBytes });
    if (putHalf.status !== 201) throw new Error(`PUT /upload/half.npy: HTTP ${putHalf.status}`);
    report("save of a Float16Array → PUT", true, `${halfBytes.length} bytes`);
    return { byteLength: bytes.length, descr: back.descr, shape: [...back.shape], values, half: Array.from(half, canonicalFloat) };
  },

  /** Records the test's own verdict on something it checked outside the page (NumPy's reading of an upload). */
  note({ name, ok, detail }) {
    report(name, ok, detail);
  },

  /** "N passed, M failed" of the table, shown above it. */
  summary() {
    const passed = document.querySelectorAll("#results tr.pass").length;
    const failed = document.querySelectorAll("#results tr.fail").length;
    status.textContent = `${passed} checks passed, ${failed} failed — ${navigator.userAgent}`;
    return { passed, failed };
  },
};
