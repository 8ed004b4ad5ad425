// The WebAssembly module, bound once by an entry point (index.js, node.js), and every call
// into it through `call`: errors become NpyErrors, and after a panic (a bug of ours, which
// traps) a new instance replaces the old one before the error is thrown.

import * as bound from "../wasm/npy_js.js";
import { NpyError, translate } from "./errors.js";

/** Whether this platform has `Float16Array` (half floats are given in it, else as Float32Array). */
export const FLOAT16 = typeof (/** @type {any} */ (globalThis).Float16Array) === "function";

/**
 * The message of a panic, handed over before the instance trapped.
 * @type {string | null}
 */
let panicked = null;

/** Tells the instance where to report a panic; run after every (re)instantiation. */
export function ready() {
  bound.onPanic((/** @type {string} */ message) => {
    panicked = message;
  });
}

/**
 * `f()`, a call into WebAssembly: what the WebAssembly side threw becomes an NpyError
 * naming `where`; a trap replaces the instance.
 * @template T
 * @param {() => T} f
 * @param {{file?: string, member?: string}} [where]
 * @returns {T}
 */
export function call(f, where) {
  try {
    return f();
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) {
      const message = panicked ?? e.message;
      panicked = null;
      bound.__wbg_reset_state();
      ready();
      throw new NpyError(
        `internal error in npy's WebAssembly module (a bug: please report it with the file): ${message}`,
        { kind: "internal", file: where?.file, member: where?.member, cause: e },
      );
    }
    throw translate(e, where);
  }
}

export { bound };
