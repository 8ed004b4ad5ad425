// Debian's Chromium through puppeteer-core, for the tests and the bench that run the
// package in a browser: launched headless with no sandbox (as root), no network but the
// loopback server, nothing in the background; closed, or its process group killed, within
// seconds; every step bounded in time.

import { existsSync } from "node:fs";
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

