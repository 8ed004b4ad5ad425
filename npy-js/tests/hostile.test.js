// Hostile files, the Rust suite's (`cargo test --test hostile --test hostile_npz` writes
// them to target/hostile): every one, through every door of the package (load, loadNpz,
// open, rows, columns), gives its values or an NpyError; never another error, a hang or a
// crash. They run in a child process: a file that takes more than 10 s (a hang) or a
// process that dies (a crash) fails the test, naming the file.
//
// Each file loads or is refused as `npy check --strict` judges it ($NPY_CLI: the `npy`
// cargo xtask builds, or CI's test step built): refused where it finds a problem, loaded
// where it finds none; but for the files of DIFFERENT, each of which must differ as it
// says, for the reason it gives.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { ROOT } from "./support.js";

const DIR = join(ROOT, "target", "hostile");
const CHILD = join(dirname(fileURLToPath(import.meta.url)), "hostile_child.js");
/** Longest a file may take. */
const PATIENCE = 10_000;

/**
 * The files the package judges otherwise than `npy check --strict`, by design: each with
 * what JavaScript does (`loads` or `refused`) and why.
 */
const DIFFERENT = {};
const because = (verdict, why, files) => files.forEach((f) => (DIFFERENT[f] = { verdict, why }));
because("loads", "a b1 array's bytes are given as the file holds them, as NumPy keeps them (for npy check a warning; --strict, a problem)", [
  "bool_2.npy", "bool_7_at_999.npy", "bool_ff.npy", "bool_field.npy", "bool_subarray_field.npy", "view_bool_2.npy",
]);
because("loads", "a U value's lone surrogates are kept, as JavaScript's and Python's strings hold them (for npy check a warning; --strict, a problem)", [
  "ucs4_surrogate.npy", "ucs4_big_endian_surrogate.npy", "ucs4_in_a_string.npy", "view_char_surrogate.npy",
]);
because("loads", "an object array's shape is its pickle's, as np.load takes it; npy check calls the header's other shape a problem", [
  "pickle_header_shape_differs.npy",
]);
because("loads", "a member is read by the name its zip headers give, as NumPy's zipfile reads it; npy check refuses an archive the zip crate reads otherwise (a Unicode Path extra field)", [
  "unicode_path_renames.npz",
]);
because("loads", "a member's part index lies about its data: npy's native whole reads, which inflate the parts at once by it, refuse it, and npy check checks it; JavaScript, as NumPy, inflates the stream itself, which is whole", [
  "part_index_early.npz", "part_index_late.npz", "part_index_past_its_part.npz", "part_index_past_the_data.npz",
  "part_index_too_long.npz", "part_index_version.npz",
]);
because("refused", "WebAssembly is 32-bit: a dimension or element count over 2^31 - 1 is refused, even of an array of no bytes (README: Errors and limits)", [
  "empty_record_1e18.npy", "empty_record_2d.npy", "s0_1e17_as_bytes5.npy", "u0_1e17_as_ucs4.npy", "v0_1e18.npy", "v0_as_f64.npy",
  "v0_isize_max.npy", "view_v0_1e18.npy", "view_zero_axis.npy", "view_zero_axis_range.npy", "zero_axis_isize_max.npy",
  "zero_subarray_field_1e18.npy",
]);

/**
 * `npy check --strict`'s verdict on each file (`loads` where it finds no problem, else
 * `refused`), from one run over them all: its lines `<file>: ... problem: ...`, and its
 * count of files with problems, which must agree.
 */
async function checkVerdicts(npy, files) {
  const out = await new Promise((resolve, reject) => {
    execFile(npy, ["check", "--strict", ...files], { encoding: "utf8", maxBuffer: 1 << 28 }, (error, stdout, stderr) => {
      // Exit 1: problems found, the report on stdout.
      if (error && error.code !== 1) reject(new Error(`npy check --strict failed (${error.code ?? error.signal}): ${stderr}`));
      else resolve(stdout);
    });
  });
  const refused = new Set();
  for (const line of out.split("\n")) {
    const file = files.find((f) => line.startsWith(`${f}: `));
    if (file !== undefined && /: problem: /.test(line)) refused.add(file);
  }
  const summary = /^(\d+) files? checked, (\d+) with problems?$/m.exec(out);
  assert.ok(summary, `npy check printed no summary:\n${out.slice(-2000)}`);
  assert.deepEqual([Number(summary[1]), Number(summary[2])], [files.length, refused.size], "npy check's count of files with problems");
  return new Map(files.map((f) => [f, refused.has(f) ? "refused" : "loads"]));
}

test("every hostile file gives its values or an NpyError, as npy check --strict judges it", { timeout: 300_000 }, async (t) => {
  assert.ok(existsSync(DIR), `no ${DIR}: run \`cargo test --test hostile --test hostile_npz\` first (cargo xtask ci does)`);
  const files = readdirSync(DIR).filter((f) => /\.(npy|npz)$/.test(f)).sort().map((f) => join(DIR, f));
  assert.ok(files.length > 300, `only ${files.length} hostile files`);
  // npy check judges them while JavaScript reads them.
  const npy = process.env.NPY_CLI;
  assert.ok(npy, "NPY_CLI is not set: the hostile files are judged by `npy check --strict` (cargo xtask js --test sets it)");
  assert.ok(existsSync(npy), `NPY_CLI names no file: ${npy}`);
  const judged = checkVerdicts(npy, files);
  judged.catch(() => {}); // its error is thrown where it is awaited
  const child = spawn(process.execPath, ["--max-old-space-size=2048", CHILD], { stdio: ["pipe", "pipe", "inherit"] });
  const results = new Map();
  let current = null;
  let timer;
  const finished = new Promise((resolve, reject) => {
    const watch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`${current ?? "the first file"} did not finish within ${PATIENCE / 1000} s (a hang?)`));
      }, PATIENCE);
    };
    let buffered = "";
    child.stdout.on("data", (chunk) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop();
      for (const line of lines) {
        const start = /^start (.*)$/.exec(line);
        const done = /^done (\S+) (.*)$/.exec(line);
        if (start) current = start[1];
        if (done) {
          results.set(done[1], done[2]);
          current = null;
        }
        watch();
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(undefined);
      else reject(new Error(`the reading process died (${signal ?? `exit ${code}`}) on ${current ?? "no file"} (a crash?)`));
    });
    watch();
  });
  child.stdin.end(files.join("\n"));
  try {
    await finished;
  } finally {
    clearTimeout(timer);
    child.kill("SIGKILL");
  }
  assert.equal(results.size, files.length);
  const other = [...results].filter(([, r]) => r.startsWith("OTHER"));
  assert.deepEqual(other, [], "errors that are not NpyErrors");
  // Each file as npy check --strict judges it, but those of DIFFERENT, as they say.
  const verdicts = await judged;
  const wrong = [];
  for (const file of files) {
    const name = basename(file);
    const js = results.get(file) === "ok" ? "loads" : "refused";
    const check = verdicts.get(file);
    const want = DIFFERENT[name]?.verdict ?? check;
    if (js !== want) wrong.push(`${name}: JavaScript ${js} it, npy check --strict says it ${check}${DIFFERENT[name] ? `, DIFFERENT says ${want}` : ""} (${results.get(file)})`);
    if (DIFFERENT[name] && want === check) wrong.push(`${name}: in DIFFERENT, but npy check --strict says it ${check} too`);
  }
  const missing = Object.keys(DIFFERENT).filter((name) => !files.some((f) => basename(f) === name));
  assert.deepEqual(missing, [], "files of DIFFERENT the hostile tests no longer write");
  assert.deepEqual(wrong, [], "files JavaScript judges otherwise than npy check --strict");
  t.diagnostic(`${files.length} files: ${[...verdicts.values()].filter((v) => v === "refused").length} refused by npy check --strict, ${Object.keys(DIFFERENT).length} judged otherwise by design`);
});
