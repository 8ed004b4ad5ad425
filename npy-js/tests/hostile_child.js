// Reads every file named on stdin (one path a line) through every door of the package and
// prints, per file, `start <path>` and then `done <path> ok`, `done <path> NpyError <kind>`
// or `done <path> OTHER <error>`: the parent (hostile.test.js) watches for anything but an
// NpyError, and for a file that never finishes (a hang) or a process that dies (a crash).

import { readFileSync } from "node:fs";

import { NpyError, load, loadNpz, open } from "../js/node.js";

/** What a reader of untrusted archives sets (the Rust suite's bombs are refused under it). */
const LIMITS = { maxInflatedSize: 1 << 30 };

/** Every value of an array: its data, or each column and the first rows. */
function touch(array) {
  if (array.dtype.kind === "record") {
    for (const column of Object.values(array.columns())) void column.data;
    array.rows(0, Math.min(array.size, 10));
  } else {
    void array.data;
  }
}

async function read(path) {
  const bytes = readFileSync(path);
  // An archive or a .npy file by its first bytes, as `open` and `npy check` tell them apart.
  if (bytes[0] === 0x50 && bytes[1] === 0x4b) {
    const archive = loadNpz(bytes, { name: path, ...LIMITS });
    for (const name of archive.names) touch(archive.get(name));
    const opened = await open(bytes, { name: path, ...LIMITS });
    for (const name of opened.names) {
      touch(await opened.get(name));
      const file = await opened.open(name);
      touch(await file.rows(0, Math.min(file.rowCount, 10)));
    }
  } else {
    touch(load(bytes, { name: path }));
    const file = await open(bytes, { name: path });
    touch(await file.rows(0, Math.min(file.rowCount, 10)));
  }
}

const paths = readFileSync(0, "utf8").split("\n").filter(Boolean);
for (const path of paths) {
  console.log(`start ${path}`);
  try {
    await read(path);
    console.log(`done ${path} ok`);
  } catch (e) {
    if (e instanceof NpyError) console.log(`done ${path} NpyError ${e.kind}`);
    else console.log(`done ${path} OTHER ${String(e?.stack ?? e).split("\n").slice(0, 3).join(" | ")}`);
  }
}
