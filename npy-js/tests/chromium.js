// Debian's Chromium through puppeteer-core, for the tests and the bench that run the
// package in a browser: launched headless with no sandbox (as root), no network but the
// loopback server, nothing in the background; closed, or its process group killed, within
// seconds; every step bounded in time.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { ROOT } from "./support.js";

/** Debian's Chromium (NPY_CHROMIUM names another build; none is ever downloaded). */
export const CHROMIUM = process.env.NPY_CHROMIUM ?? "/usr/bin/chromium";

/** `promise`, or an error naming `what` after `ms`: no step of the test waits forever. */
export function withTimeout(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Chromium through puppeteer-core, or an error naming the fix when either is missing: the
 * test fails then, it never skips.
 */
export async function launch(userDataDir) {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing (${CHROMIUM}): apt-get install chromium`);
  if (!existsSync(join(ROOT, "npy-js", "wasm", "npy_js_bg.wasm"))) throw new Error("npy-js/wasm/ is not built: run `cargo xtask js`");
  let puppeteer;
  try {
    puppeteer = (await import("puppeteer-core")).default;
  } catch (e) {
    throw new Error(`puppeteer-core is missing from npy-js/node_modules: run \`cargo xtask js\` (its npm ci installs it) (${e.message})`);
  }
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir,
    // No sandbox as root; no network but the loopback server: nothing in the background.
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    timeout: 30_000,
    // Bounds every call into the browser, page.evaluate included.
    protocolTimeout: 30_000,
  });
}

/**
 * Closes the browser; when close() does not end in 5 s, kills the process group Chromium
 * leads (puppeteer starts it detached), its renderers with it, and waits for its exit.
 */
export async function closeBrowser(browser) {
  const child = browser.process();
  try {
    await withTimeout(browser.close(), 5000, "browser.close()");
  } catch {
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((ok) => child.once("exit", ok));
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
    await withTimeout(exited, 5000, "Chromium's exit").catch(() => {});
  }
}


/**
 * The viewer page for a browser test: `open` serves `mounts`, launches Chromium with a
 * profile of its own and loads a 1280 x 1000 page at /viewer/ until it is ready for files,
 * its errors kept in `pageErrors`; with `countSlices`, `globalThis.sliced` counts the bytes
 * of every `Blob.slice` the page makes (installed before the page's code: a counter
 * independent of the page's own). `close` keeps a screenshot at `shot` and stops the page,
 * browser and server, whatever `open` got to.
 */
export function viewerSession() {
  const session = {
    /** @type {any} */ server: null,
    /** @type {any} */ browser: null,
    /** @type {any} */ page: null,
    /** @type {string | null} */ profile: null,
    /** @type {string[]} */ pageErrors: [],
    /** @param {{mounts: [string, string][], countSlices?: boolean, timeout?: number}} options */
    async open({ mounts, countSlices = false, timeout = 30_000 }) {
      const { serve } = await import("../viewer/serve.mjs");
      session.server = await serve({ mounts });
      session.profile = mkdtempSync(join(tmpdir(), "npy-viewer-"));
      session.browser = await launch(session.profile);
      const page = await session.browser.newPage();
      session.page = page;
      page.on("pageerror", (/** @type {unknown} */ e) => session.pageErrors.push(String(e)));
      page.setDefaultTimeout(timeout);
      await page.setViewport({ width: 1280, height: 1000 });
      if (countSlices) {
        await page.evaluateOnNewDocument(() => {
          const slice = Blob.prototype.slice;
          /** @type {any} */ (globalThis).sliced = 0;
          Blob.prototype.slice = function (start = 0, end = this.size, type) {
            const a = start < 0 ? Math.max(0, this.size + start) : Math.min(start, this.size);
            const b = end < 0 ? Math.max(0, this.size + end) : Math.min(end, this.size);
            /** @type {any} */ (globalThis).sliced += Math.max(0, b - a);
            return slice.call(this, start, end, type);
          };
        });
      }
      await page.goto(`${session.server.url}/viewer/`, { waitUntil: "load" });
      await page.waitForFunction(() => /** @type {any} */ (globalThis).npyViewer?.ready === true);
    },
    /** @param {string} shot */
    async close(shot) {
      if (session.page && !session.page.isClosed()) {
        await withTimeout(session.page.screenshot({ path: shot, fullPage: true }), 10_000, "screenshot").catch(() => {});
      }
      if (session.browser) await closeBrowser(session.browser);
      if (session.server) await session.server.close();
      if (session.profile) rmSync(session.profile, { recursive: true, force: true });
    },
  };
  return session;
}
