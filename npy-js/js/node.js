// The entry point for Node: the WebAssembly module read from this package's files and
// instantiated synchronously as the package is imported.

import { readFileSync } from "node:fs";
import { initSync } from "../wasm/npy_js.js";
import { ready } from "./wasm.js";

initSync({ module: readFileSync(new URL("../wasm/npy_js_bg.wasm", import.meta.url)) });
ready();

export * from "./api.js";
