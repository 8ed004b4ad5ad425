// The viewer's server as README.md's command starts it (`cargo xtask js --viewer` runs
// `node npy-js/viewer/serve.mjs`): the page at /viewer/ (a folder as its index.html, the
// folder without its slash redirected), a directory's files at /files/ by ranges, nothing
// outside its folders, and a clean stop on SIGTERM. The child is killed when a check fails.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { ROOT, SCRATCH } from "./support.js";
import { withTimeout } from "./chromium.js";

const DIR = join(SCRATCH, "serve");

describe("node viewer/serve.mjs", { timeout: 60_000 }, () => {
  /** @type {import("node:child_process").ChildProcess} */ let child;
  let url = "";

  before(async () => {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(join(DIR, "bytes.bin"), Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
    child = spawn(process.execPath, [join(ROOT, "npy-js", "viewer", "serve.mjs"), "--port", "0", "--files", DIR], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    url = await withTimeout(
      new Promise((ok, fail) => {
        child.stdout.on("data", (d) => {
          out += d;
          const found = /npy viewer: (http:\/\/127\.0\.0\.1:\d+)\/viewer\//.exec(out);
          if (found) ok(found[1]);
        });
        child.once("exit", (code) => fail(new Error(`the server exited (${code}): ${out}`)));
      }),
      20_000,
      "the server's start",
    );
  });

  after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((ok) => child.once("exit", ok));
      child.kill("SIGKILL");
      await exited;
    }
  });

  it("serves the page, its folder without the slash redirected", async () => {
    const page = await fetch(`${url}/viewer/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(await page.text(), /<title>npy viewer/);
    const bare = await fetch(`${url}/viewer`, { redirect: "manual" });
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.get("location"), "/viewer/");
    const css = await fetch(`${url}/viewer/viewer.css`);
    assert.match(css.headers.get("content-type") ?? "", /^text\/css/);
    const wasm = await fetch(`${url}/wasm/npy_js_bg.wasm`);
    assert.equal(wasm.headers.get("content-type"), "application/wasm");
  });

  it("serves --files by ranges, and nothing outside its folders", async () => {
    const part = await fetch(`${url}/files/bytes.bin`, { headers: { Range: "bytes=10-13" } });
    assert.equal(part.status, 206);
    assert.deepEqual([...new Uint8Array(await part.arrayBuffer())], [10, 11, 12, 13]);
    for (const path of ["/files/..%2f..%2fCargo.toml", "/files/%2e%2e/serve/bytes.bin/..", "/..%2f..%2fCargo.toml"]) {
      const res = await fetch(`${url}${path}`);
      assert.ok(res.status === 403 || res.status === 404, `${path}: ${res.status}`);
    }
  });

  it("stops on SIGTERM", async () => {
    const exited = new Promise((ok) => child.once("exit", (code, signal) => ok({ code, signal })));
    child.kill("SIGTERM");
    assert.deepEqual(await withTimeout(exited, 10_000, "the server's stop"), { code: 0, signal: null });
  });
});
