// Hostile files, the Rust suite's (`cargo test --test hostile --test hostile_npz` writes
// them to target/hostile): every one, through every door of the package (load, loadNpz,
// open, rows, columns), gives its values or an NpyError; never another error, a hang or a
// crash. They run in a child process: a file that takes more than 10 s (a hang) or a
// process that dies (a crash) fails the test, naming the file.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { ROOT } from "./support.js";

const DIR = join(ROOT, "target", "hostile");
const CHILD = join(dirname(fileURLToPath(import.meta.url)), "hostile_child.js");
/** Longest a file may take. */
const PATIENCE = 10_000;

test("every hostile file gives its values or an NpyError", { timeout: 300_000 }, async () => {
  assert.ok(existsSync(DIR), `no ${DIR}: run \`cargo test --test hostile --test hostile_npz\` first (cargo xtask ci does)`);
  const files = readdirSync(DIR).filter((f) => /\.(npy|npz)$/.test(f)).sort().map((f) => join(DIR, f));
  assert.ok(files.length > 300, `only ${files.length} hostile files`);
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
  const refused = [...results.values()].filter((r) => r.startsWith("NpyError")).length;
  assert.ok(refused > files.length / 2, `${refused} of ${files.length} refused`);
});
